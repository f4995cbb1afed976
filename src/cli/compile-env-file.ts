/**
 * Compiles a user's environment file for its isolated process: esbuild bundles it (with its own
 * relative imports and packages, and the built-in modules it imports as 'tabrl/builtin/...') into
 * one CommonJS text whose `require('tabrl')` and `require('tabrl/studio')` the QuickJS engine answers with the library, and
 * bundles the child process's Node shell (src/cli/isolated-env-child.ts) and what runs in its engine
 * (src/cli/quickjs-guest.ts with src/envs).
 * Bundling makes the file a module whatever package.json sits beside it, and esbuild reports
 * syntax errors with file, line and column. What the bundle may contain is confined to the file's
 * folder and the built-in modules (src/cli/env-bundle-guard.ts). Nothing here runs the file.
 */
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Message, type Plugin } from 'esbuild';
import { confineToFolder } from './env-bundle-guard.ts';
import { BUILTIN_DIR, LIBRARY_ENTRY, STUDIO_ENTRY, resolveTabrlSpecifier, unknownTabrlModuleMessage } from './env-modules.ts';

const CHILD_RUNTIME_ENTRY = fileURLToPath(new URL('./isolated-env-child.ts', import.meta.url));
const GUEST_RUNTIME_ENTRY = fileURLToPath(new URL('./quickjs-guest.ts', import.meta.url));
/** The JavaScript the QuickJS engine runs (QuickJS implements ES2023 but for a few corners; esbuild lowers to ES2022). */
const ENGINE_TARGET = 'es2022';

/** Thrown when the file does not compile; the message lists `file:line:col: text` per error. */
export class EnvFileCompileError extends Error {
  override readonly name = 'EnvFileCompileError';
}

/** Bundles the environment file at `path` into CommonJS text, or an ES module (`format`), with 'tabrl', 'tabrl/studio' and Node built-ins left as imports and built-in modules bundled in. */
export async function bundleEnvironmentFile(path: string, format: 'cjs' | 'esm' = 'cjs'): Promise<string> {
  try {
    const result = await build({
      entryPoints: [path],
      write: false,
      bundle: true,
      format,
      platform: 'node',
      target: ENGINE_TARGET,
      logLevel: 'silent',
      // No tsconfig.json is read (its `paths` or `extends` could point anywhere); the file's own folder bounds what is bundled.
      tsconfigRaw: '{}',
      plugins: [tabrlModules(), confineToFolder(path, [BUILTIN_DIR])],
    });
    return result.outputFiles[0]!.text;
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors ?? [];
    if (messages.length === 0) throw error;
    throw new EnvFileCompileError(messages.map(formatMessage).join('\n'));
  }
}

/** Bundles the child process's Node shell (with the QuickJS engine, its WebAssembly inlined) into one ES module at `outFile`. */
export async function bundleChildRuntime(outFile: string): Promise<void> {
  await build({
    entryPoints: [CHILD_RUNTIME_ENTRY],
    outfile: outFile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    // The engine's Emscripten loader is CommonJS and requires Node's modules.
    banner: { js: "import { createRequire as __tabrlCreateRequire } from 'node:module'; const require = __tabrlCreateRequire(import.meta.url);" },
  });
}

/** Bundles what runs inside the QuickJS engine (quickjs-guest.ts with the environment library) into one classic script. */
export async function bundleGuestRuntime(): Promise<string> {
  const result = await build({ entryPoints: [GUEST_RUNTIME_ENTRY], write: false, bundle: true, format: 'iife', platform: 'neutral', target: ENGINE_TARGET, logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

/**
 * Resolves the 'tabrl' names as the playground does (src/cli/env-modules.ts): 'tabrl' and
 * 'tabrl/studio' stay `require(...)`s that the engine answers, a built-in module is bundled in with its own imports of the library
 * ('../index.ts') pointed at that same 'tabrl' (one library in the process, as in the sandbox), and
 * any other 'tabrl/...' name is an error at the import that names it and lists what exists.
 */
function tabrlModules(): Plugin {
  return {
    name: 'tabrl-modules',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^tabrl(\/|$)/ }, ({ path }) => {
        if (path === 'tabrl' || path === 'tabrl/studio') return { path, external: true };
        const file = resolveTabrlSpecifier(path);
        return file ? { path: file } : { errors: [{ text: unknownTabrlModuleMessage(path) }] };
      });
      pluginBuild.onResolve({ filter: /^\.\.?\// }, ({ path, importer }) => {
        if (!isInside(BUILTIN_DIR, importer)) return undefined;
        const target = resolve(dirname(importer), path);
        if (target === LIBRARY_ENTRY) return { path: 'tabrl', external: true };
        if (target === STUDIO_ENTRY) return { path: 'tabrl/studio', external: true };
        if (isInside(BUILTIN_DIR, target)) return undefined;
        // A second copy of library code in the bundle would split its classes and state from the child's 'tabrl'.
        return {
          errors: [{ text: `${importer} imports '${path}': a built-in module imports only '../index.ts' (the library) and files of src/envs/builtin, so that environment files can bundle it` }],
        };
      });
    },
  };
}

function isInside(dir: string, file: string): boolean {
  const path = relative(dir, file);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
}

function formatMessage(message: Message): string {
  const location = message.location;
  return location ? `${location.file}:${location.line}:${location.column + 1}: ${message.text}` : message.text;
}
