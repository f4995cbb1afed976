/**
 * The playground app: a static site built by Vite; `npm start` builds it and serves `dist/`.
 *
 * Two build-time products of src/envs feed the playground (see docs/playground.md):
 * - `virtual:tabrl-types`: the type definitions of the `tabrl` API (src/envs/index.ts, the studio as
 *   `tabrl/studio`, and the built-in environments as `tabrl/builtin/<file>`) as one declaration string for Monaco,
 *   emitted by the TypeScript compiler.
 * - `virtual:tabrl-sandbox-runtime`: the sandbox worker (src/workers/sandbox/runtime.ts with
 *   src/envs bundled in) as the source text of one classic IIFE script, because the sandbox
 *   frame can only start classic blob workers.
 * The sandbox frame (public/sandbox/frame.html) gets its Content-Security-Policy header here in
 * dev and preview; the page also carries it in a meta tag for any static host. Every response is
 * cross-origin isolated (COOP + COEP, scripts/cross-origin-isolation.ts) so that the fast CPU
 * backend's workers can share memory; public/_headers says the same to static hosts (docs/deploy.md).
 */
import { fileURLToPath } from 'node:url';
import { dirname, relative, resolve } from 'node:path';
import { readdirSync } from 'node:fs';
import ts from 'typescript';
import { build, defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { CROSS_ORIGIN_ISOLATION_HEADERS } from './scripts/cross-origin-isolation.ts';

const ROOT = dirname(fileURLToPath(import.meta.url));
const ENVS_DIR = resolve(ROOT, 'src/envs');
const SANDBOX_DIR = resolve(ROOT, 'src/workers/sandbox');

/** The policy the sandbox frame runs under: no network, scripts only inline or from blobs (docs/environments.md, what environment code may do). */
export const SANDBOX_CSP = "default-src 'none'; script-src 'unsafe-inline' blob:; worker-src blob:; connect-src 'none'";

const TYPES_ID = 'virtual:tabrl-types';
const RUNTIME_ID = 'virtual:tabrl-sandbox-runtime';

/** Every .ts file under src/envs/builtin except its registry, as paths relative to src/envs without extension. */
function builtinModules(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = resolve(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && path !== resolve(ENVS_DIR, 'builtin/index.ts')) found.push(path);
    }
  };
  walk(resolve(ENVS_DIR, 'builtin'));
  return found.sort();
}

/** Emits the declarations of src/envs into one string of `declare module 'tabrl' {...}` blocks. */
function emitTabrlDeclarations(): string {
  const outputs: string[] = [];
  const program = ts.createProgram([resolve(ENVS_DIR, 'index.ts'), resolve(ENVS_DIR, 'studio/index.ts'), ...builtinModules()], {
    declaration: true,
    emitDeclarationOnly: true,
    outFile: resolve(ROOT, 'tabrl.d.ts'),
    module: ts.ModuleKind.AMD,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    // src, not src/envs: the API re-exports the chat protocol's leaf module (src/chat/protocol.ts).
    rootDir: resolve(ROOT, 'src'),
    lib: ['lib.es2023.d.ts', 'lib.webworker.d.ts'],
    types: [],
  });
  const emitted = program.emit(undefined, (_name, text) => outputs.push(text));
  if (emitted.emitSkipped || outputs.length !== 1) {
    const messages = emitted.diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    throw new Error(`tabrl types: the declaration emit of src/envs failed:\n${messages.join('\n')}`);
  }
  // AMD names are paths relative to src: "envs/index" is the API, "envs/studio/index" the studio, "envs/builtin/x" the built-ins, the rest
  // (src/envs's other files and the chat protocol, "chat/protocol") internal.
  const rename = (name: string) => {
    const inEnvs = name.replace(/^envs\//, '');
    if (name === 'envs/index') return 'tabrl';
    if (name === 'envs/studio/index') return 'tabrl/studio';
    return name.startsWith('envs/builtin/') ? `tabrl/${inEnvs}` : `tabrl/_internal/${inEnvs}`;
  };
  return outputs[0]!.replace(/(declare module |from |import\()"([^"]+)"/g, (_match, prefix: string, name: string) => `${prefix}"${rename(name)}"`);
}

/** Bundles the sandbox runtime as one classic script and returns its text. */
async function buildSandboxRuntime(): Promise<string> {
  const output = await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      write: false,
      // Not minified: function names are part of the API (a reward function's name is its metric's name).
      minify: false,
      target: 'es2022',
      sourcemap: false,
      lib: { entry: resolve(SANDBOX_DIR, 'runtime.ts'), formats: ['iife'], name: 'TabRLSandboxRuntime', fileName: () => 'runtime.js' },
    },
  });
  const bundles = Array.isArray(output) ? output : [output];
  for (const bundle of bundles) {
    if (!('output' in bundle)) continue;
    const chunk = bundle.output.find((item) => item.type === 'chunk');
    if (chunk && chunk.type === 'chunk') return chunk.code;
  }
  throw new Error('sandbox runtime: the IIFE build produced no script');
}

/** Serves the two generated modules and rebuilds them when src/envs or the sandbox runtime change. */
function tabrlPlaygroundPlugin(): Plugin {
  return {
    name: 'tabrl-playground',
    resolveId(id) {
      if (id === TYPES_ID || id === RUNTIME_ID) return `\0${id}`;
      return undefined;
    },
    async load(id) {
      if (id === `\0${TYPES_ID}`) return `export default ${JSON.stringify(emitTabrlDeclarations())};`;
      if (id === `\0${RUNTIME_ID}`) return `export default ${JSON.stringify(await buildSandboxRuntime())};`;
      return undefined;
    },
    handleHotUpdate({ file, server }) {
      const inside = (dir: string) => !relative(dir, file).startsWith('..');
      if (!inside(ENVS_DIR) && !inside(SANDBOX_DIR)) return;
      for (const id of [TYPES_ID, RUNTIME_ID]) {
        const module = server.moduleGraph.getModuleById(`\0${id}`);
        if (module) server.moduleGraph.invalidateModule(module);
      }
    },
    configureServer(server) {
      server.middlewares.use((request, response, next) => {
        if (request.url?.startsWith('/sandbox/')) response.setHeader('Content-Security-Policy', SANDBOX_CSP);
        next();
      });
    },
    configurePreviewServer(server) {
      server.middlewares.use((request, response, next) => {
        if (request.url?.startsWith('/sandbox/')) response.setHeader('Content-Security-Policy', SANDBOX_CSP);
        next();
      });
    },
  };
}

export default defineConfig({
  plugins: [react(), tabrlPlaygroundPlugin()],
  build: {
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 8000,
    // Reward functions are named by their function names (Rubric.addReward): minifying must keep them.
    rolldownOptions: { output: { keepNames: true } },
  },
  worker: { format: 'es' },
  server: { headers: { ...CROSS_ORIGIN_ISOLATION_HEADERS } },
  preview: { headers: { ...CROSS_ORIGIN_ISOLATION_HEADERS } },
});
