/**
 * Runs an environment file's bundled module and checks what it gives, the same way wherever the
 * file runs (the browser sandbox's worker, the CLI's QuickJS guest): the CommonJS factory is called
 * with a `require` that knows only the modules the host offers, the default export must be a
 * function, and what it returns for `args` (with a lent judge as `args.judgeClient`, a lent tool
 * simulator as `args.simulatorClient`) must be an
 * environment. Argument keys it never reads are noted, as `tabrl eval --env-args` notes them.
 *
 * How the module's text becomes a factory (a blob script, the engine's eval) is the host's part;
 * this module never sees the text.
 */
import type { ChatClient, Environment } from '../envs/index.ts';
import { errorMessage } from '../common/error-message.ts';
import { watchEnvArgs } from '../common/unused-env-args.ts';

/** A bundled environment file as CommonJS: `(module, exports, require) => void`. */
export type ModuleFactory = (module: { exports: Record<string, unknown> }, exports: Record<string, unknown>, require: (name: string) => unknown) => void;

/** A loaded environment and the argument warnings its loading produced. */
export interface LoadedModule {
  environment: Environment;
  /** One line per argument key loadEnvironment never read (see watchEnvArgs). */
  unusedArgWarnings: string[];
}

/** A `require` that answers the names in `modules` (a trailing `.ts` ignored) and refuses any other with `cannot import "<name>" <refusal>`. */
export function moduleRequire(modules: ReadonlyMap<string, unknown>, refusal: string): (name: string) => unknown {
  return (name) => {
    const module = modules.get(name.replace(/\.ts$/, ''));
    if (module === undefined) throw new Error(`cannot import "${name}" ${refusal}`);
    return module;
  };
}

/** Calls a module's factory and returns its exports (CommonJS `module.exports`). */
export function moduleExports(factory: ModuleFactory, require: (name: string) => unknown): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  factory(module, module.exports, require);
  return module.exports;
}

/** The models a host lends to an environment file: a judge, a tool simulator (both optional). */
export interface LentClients {
  judgeClient?: ChatClient;
  simulatorClient?: ChatClient;
}

/** Calls the module's default export with `args` (plus the lent clients as `args.judgeClient` / `args.simulatorClient`) and checks that it returned an environment. */
export async function loadEnvironmentModule(exports: Record<string, unknown>, args: Record<string, unknown>, lent: LentClients = {}): Promise<LoadedModule> {
  const load = exports.default;
  if (typeof load !== 'function') {
    throw new Error('the environment file has no default export; it ends with `export default function loadEnvironment(args) { ... }`');
  }
  // A lent client replaces any same-named key in args (plain data cannot hold a client anyway).
  const withClients = { ...args, ...(lent.judgeClient ? { judgeClient: lent.judgeClient } : {}), ...(lent.simulatorClient ? { simulatorClient: lent.simulatorClient } : {}) };
  const watched = watchEnvArgs(withClients, ['judgeClient', 'judgeModel', 'simulatorClient', 'simulatorModel']);
  let loaded: unknown;
  try {
    loaded = await (load as (args: Record<string, unknown>) => unknown)(watched.args);
  } catch (error) {
    throw new Error(`loadEnvironment(${safeJson(args)}) threw: ${errorMessage(error)}`);
  }
  if (!isEnvironment(loaded)) throw new Error(`loadEnvironment() must return an environment (a SingleTurnEnv, MultiTurnEnv, ToolEnv, ...), got ${describeValue(loaded)}`);
  return { environment: loaded, unusedArgWarnings: watched.unusedWarnings('The environment argument') };
}

/** True for what quacks like an environment: a rollout method and a dataset array (a class from another realm passes too). */
function isEnvironment(value: unknown): value is Environment {
  const candidate = value as Partial<Environment> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.rollout === 'function' && Array.isArray(candidate.dataset);
}

/** A few words on what `value` is (for messages about a value environment code gave where another was due). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object with keys ${Object.keys(value).slice(0, 5).join(', ') || '(none)'}`;
  return typeof value;
}

/** `value` as JSON for a message, or a note when it cannot be written (a cycle, a BigInt). */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '…';
  }
}
