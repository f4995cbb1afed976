/**
 * The esbuild plugin that confines bundling an environment file to what the file may see: the files
 * of its own folder (and below it) and TabRL's built-in modules. Every import is resolved here and its
 * real path (symlinks resolved) checked; absolute paths, paths that leave the folder, import
 * attributes (`with { type: 'text' }`) and files that esbuild would inline as text, bytes or a data
 * URL are refused with a message naming the import and what to do. Every file esbuild loads is
 * checked again, whatever resolved it, so nothing outside those folders reaches the bundle — the
 * host's files, /proc/self/environ (its API keys) included.
 *
 * It does not resolve the 'tabrl' names (compile-env-file.ts does, before this plugin) and runs nothing.
 */
import { realpathSync } from 'node:fs';
import { dirname, extname, isAbsolute, relative } from 'node:path';
import type { OnLoadArgs, OnResolveArgs, OnResolveResult, Plugin } from 'esbuild';

/** The extensions esbuild may load: code and JSON (data an environment may ship beside it). */
const LOADABLE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs', '.jsx', '.json']);
/** Marks the plugin's own resolve calls, so they do not come back to it. */
const INNER_RESOLVE = Symbol('tabrl-confine-inner-resolve');

/** An esbuild plugin that refuses every import and file outside `entryFile`'s folder and `libraryDirs`. */
export function confineToFolder(entryFile: string, libraryDirs: readonly string[]): Plugin {
  const roots = [dirname(realPath(entryFile)), ...libraryDirs.map(realPath)];
  const folder = roots[0]!;
  const allowed = (path: string) => roots.some((root) => isInside(root, path));
  const what = (args: { path: string; importer?: string }) => `${args.importer ? `${args.importer} imports` : 'import of'} '${args.path}'`;
  return {
    name: 'tabrl-confine-to-folder',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args: OnResolveArgs): Promise<OnResolveResult | undefined> => {
        if ((args.pluginData as Record<symbol, unknown> | undefined)?.[INNER_RESOLVE]) return undefined;
        if (Object.keys(args.with).length > 0) {
          return refuse(
            `${what(args)} with import attributes (${JSON.stringify(args.with)}): an environment file imports code and JSON without attributes; read data into the file as a string or JSON beside it instead`,
          );
        }
        if (args.kind === 'entry-point') return undefined;
        if (isAbsolute(args.path) || /^(file|data|https?):/i.test(args.path) || /^[a-zA-Z]:[\\/]/.test(args.path) || args.path.startsWith('\\\\')) {
          return refuse(
            `${what(args)}, an absolute path or URL: an environment file imports only 'tabrl', 'tabrl/builtin/...' and files of its own folder (${folder}) by relative path; copy what it needs into that folder`,
          );
        }
        const result = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { [INNER_RESOLVE]: true } });
        if (result.errors.length > 0) return { errors: result.errors };
        // Node's built-in modules stay `require` calls, which the isolated runtime refuses with its own message.
        if (result.external) return { path: result.path, external: true };
        const real = realPath(result.path);
        if (!allowed(real)) {
          return refuse(
            `${what(args)}, which resolves to ${real}, outside the environment's folder ${folder} (symlinks count where they point): an environment file sees only its own folder; copy the file into it`,
          );
        }
        return { path: result.path, ...(result.sideEffects === false ? { sideEffects: false } : {}) };
      });
      build.onLoad({ filter: /.*/ }, (args: OnLoadArgs) => {
        if (Object.keys(args.with).length > 0) return refuse(`${args.path} is imported with import attributes (${JSON.stringify(args.with)}); import it without them`);
        const real = realPath(args.path);
        if (!allowed(real)) return refuse(`${args.path} (${real}) is outside the environment's folder ${folder}; an environment file sees only its own folder`);
        if (!LOADABLE_EXTENSIONS.has(extname(real).toLowerCase())) {
          return refuse(`${args.path}: an environment file imports code (.ts, .js, ...) and .json only, not files as text, bytes or URLs; put the data in a .json file or a string in a .ts file`);
        }
        return undefined;
      });
    },
  };
}

function refuse(text: string): { errors: { text: string }[] } {
  return { errors: [{ text }] };
}

/** The path with every symlink resolved; a path that does not exist stays as given (esbuild reports it). */
function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function isInside(dir: string, file: string): boolean {
  const path = relative(dir, file);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
}
