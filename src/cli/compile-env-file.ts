/**
 * Compiles a user's environment file for its isolated process: esbuild bundles it (with its own
 * relative imports and packages, and the built-in modules it imports as 'tabrl/builtin/...') into
 * one CommonJS text whose `require('tabrl')` the child process answers with the library, and
 * bundles that child's runtime (src/cli/isolated-env-child.ts with src/envs) into one ES module.
 * Bundling makes the file a module whatever package.json sits beside it, and esbuild reports
 * syntax errors with file, line and column. What the bundle may contain is confined to the file's
 * folder and the built-in modules (src/cli/env-bundle-guard.ts). Nothing here runs the file.
 */
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Message, type Plugin } from 'esbuild';
import { confineToFolder } from './env-bundle-guard.ts';
import { BUILTIN_DIR, LIBRARY_ENTRY, resolveTabrlSpecifier, unknownTabrlModuleMessage } from './env-modules.ts';

const CHILD_RUNTIME_ENTRY = fileURLToPath(new URL('./isolated-env-child.ts', import.meta.url));

/** Thrown when the file does not compile; the message lists `file:line:col: text` per error. */
export class EnvFileCompileError extends Error {
  override readonly name = 'EnvFileCompileError';
}

/** Bundles the environment file at `path` into CommonJS text ('tabrl' and Node built-ins left as `require` calls, built-in modules bundled in). */
export async function bundleEnvironmentFile(path: string): Promise<string> {
  try {
    const result = await build({
      entryPoints: [path],
      write: false,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      sourcemap: 'inline',
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

/** Bundles the child process's runtime into one ES module at `outFile`. */
export async function bundleChildRuntime(outFile: string): Promise<void> {
  await build({ entryPoints: [CHILD_RUNTIME_ENTRY], outfile: outFile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'silent' });
}

/**
 * Resolves the 'tabrl' names as the playground does (src/cli/env-modules.ts): 'tabrl' stays
 * `require('tabrl')`, a built-in module is bundled in with its own imports of the library
 * ('../index.ts') pointed at that same 'tabrl' (one library in the process, as in the sandbox), and
 * any other 'tabrl/...' name is an error at the import that names it and lists what exists.
 */
function tabrlModules(): Plugin {
  return {
    name: 'tabrl-modules',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^tabrl(\/|$)/ }, ({ path }) => {
        if (path === 'tabrl') return { path, external: true };
        const file = resolveTabrlSpecifier(path);
        return file ? { path: file } : { errors: [{ text: unknownTabrlModuleMessage(path) }] };
      });
      pluginBuild.onResolve({ filter: /^\.\.?\// }, ({ path, importer }) => {
        if (!isInside(BUILTIN_DIR, importer)) return undefined;
        const target = resolve(dirname(importer), path);
        if (target === LIBRARY_ENTRY) return { path: 'tabrl', external: true };
        if (isInside(BUILTIN_DIR, target)) return undefined;
        // A second copy of library code in the bundle would split its classes and state from the child's 'tabrl'.
        return { errors: [{ text: `${importer} imports '${path}': a built-in module imports only '../index.ts' (the library) and files of src/envs/builtin, so that environment files can bundle it` }] };
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
