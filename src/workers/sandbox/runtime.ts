/**
 * The sandbox worker: runs a user's environment module and evaluates it, inside a classic blob
 * worker started by the opaque-origin sandbox frame (public/sandbox/frame.html). It is bundled with
 * src/envs into one IIFE script at build time (`virtual:tabrl-sandbox-runtime`, see vite.config.ts).
 *
 * The worker has no network (the frame's CSP) and no app storage (opaque origin); it talks to the
 * app only over the MessagePort it is given, with comlink. Model calls cross back to the app. It is
 * not the place for time limits: a blocked worker cannot time itself, so the app's bridge watches
 * it and terminates it (src/workers/sandbox-bridge.ts).
 */
import * as Comlink from 'comlink';
import * as tabrl from '../../envs/index.ts';
import * as tabrlStudio from '../../envs/studio/index.ts';
import { WORKER_CONNECT } from './protocol.ts';
import { createSandboxApi } from './sandbox-api.ts';
import { errorMessage } from '../../common/error-message.ts';
import { moduleExports, moduleRequire, type ModuleFactory } from '../../isolation/environment-module.ts';

declare const self: DedicatedWorkerGlobalScope & { __tabrlDefine?: (factory: ModuleFactory) => void };

/** Modules an environment file may import: the API, the studio, and each built-in file as `tabrl/builtin/<path>`. */
const MODULES = new Map<string, unknown>([
  ['tabrl', tabrl],
  ['tabrl/studio', tabrlStudio],
]);
for (const [path, module] of Object.entries(import.meta.glob(['../../envs/builtin/**/*.ts', '!../../envs/builtin/index.ts'], { eager: true }))) {
  MODULES.set(`tabrl/builtin/${path.replace('../../envs/builtin/', '').replace(/\.ts$/, '')}`, module);
}

const requireModule = moduleRequire(MODULES, "in the sandbox: an environment file imports only from 'tabrl' (and 'tabrl/studio', 'tabrl/builtin/...'); put everything else in the file itself");

/** Runs CommonJS text as a script from a blob (the CSP allows blob: scripts, not eval) and returns its exports. */
function runModule(code: string): Record<string, unknown> {
  let factory: ModuleFactory | undefined;
  self.__tabrlDefine = (defined) => {
    factory = defined;
  };
  const url = URL.createObjectURL(new Blob([`self.__tabrlDefine(function (module, exports, require) {\n${code}\n});\n//# sourceURL=environment.js`], { type: 'text/javascript' }));
  try {
    importScripts(url);
  } catch (error) {
    throw new Error(`the environment file does not parse: ${errorMessage(error)}`);
  } finally {
    URL.revokeObjectURL(url);
    delete self.__tabrlDefine;
  }
  if (!factory) throw new Error('the environment file did not load');
  return moduleExports(factory, requireModule);
}

const api = createSandboxApi(runModule);

self.addEventListener('message', function connect(event: MessageEvent) {
  const data = event.data as { type?: string } | undefined;
  if (data?.type !== WORKER_CONNECT || !event.ports[0]) return;
  self.removeEventListener('message', connect);
  Comlink.expose(api, event.ports[0]);
});
