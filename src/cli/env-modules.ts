/**
 * The module names an environment file may import, as the playground answers them
 * (src/workers/sandbox/runtime.ts and the editor's declarations in vite.config.ts): 'tabrl' is the
 * library (src/envs/index.ts), 'tabrl/studio' the environment studio (src/envs/studio/index.ts), and 'tabrl/builtin/<path>' is each file of src/envs/builtin (its
 * subfolders included, its registry index.ts not) without the `.ts`, e.g. 'tabrl/builtin/random' or
 * 'tabrl/builtin/data/wordle-words'. The CLI's type check and bundler resolve names with this module
 * alone, so both accept and refuse the same names; every other 'tabrl/...' name is refused with a
 * message that names it and lists what exists.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The library's entry, what 'tabrl' names. */
export const LIBRARY_ENTRY = fileURLToPath(new URL('../envs/index.ts', import.meta.url));
/** The environment studio's entry, what 'tabrl/studio' names. */
export const STUDIO_ENTRY = fileURLToPath(new URL('../envs/studio/index.ts', import.meta.url));
/** The folder of the built-in modules, what 'tabrl/builtin/...' names. */
export const BUILTIN_DIR = fileURLToPath(new URL('../envs/builtin', import.meta.url));
const BUILTIN_REGISTRY = join(BUILTIN_DIR, 'index.ts');
const BUILTIN_PREFIX = 'tabrl/builtin/';

let builtinFiles: ReadonlyMap<string, string> | undefined;

/** The built-in modules an environment file may import: module name ('tabrl/builtin/random') → absolute path, sorted by name. */
export function builtinModuleFiles(): ReadonlyMap<string, string> {
  if (builtinFiles) return builtinFiles;
  const found: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && path !== BUILTIN_REGISTRY) {
        found.push([`${BUILTIN_PREFIX}${relative(BUILTIN_DIR, path).split(sep).join('/').replace(/\.ts$/, '')}`, path]);
      }
    }
  };
  walk(BUILTIN_DIR);
  builtinFiles = new Map(found.sort(([a], [b]) => (a < b ? -1 : 1)));
  return builtinFiles;
}

/** True when `specifier` is a name in the 'tabrl' namespace ('tabrl' or 'tabrl/...'), which only this module resolves. */
export function isTabrlSpecifier(specifier: string): boolean {
  return specifier === 'tabrl' || specifier.startsWith('tabrl/');
}

/** The file a 'tabrl' name resolves to (the library, the studio, or a built-in module), or undefined when the playground refuses the name too. */
export function resolveTabrlSpecifier(specifier: string): string | undefined {
  if (specifier === 'tabrl') return LIBRARY_ENTRY;
  if (specifier === 'tabrl/studio') return STUDIO_ENTRY;
  return builtinModuleFiles().get(specifier);
}

/** What to tell a person whose file imports `specifier`, a 'tabrl/...' name that does not exist. */
export function unknownTabrlModuleMessage(specifier: string): string {
  const names = [...builtinModuleFiles().keys()];
  const withoutTs = specifier.replace(/\.ts$/, '');
  const hint = withoutTs !== specifier && names.includes(withoutTs) ? ` (write '${withoutTs}', without .ts)` : '';
  const modules = names.map((name) => name.slice(BUILTIN_PREFIX.length)).join(', ');
  return `cannot import "${specifier}"${hint}: an environment file imports 'tabrl', 'tabrl/studio', 'tabrl/builtin/<module>' where <module> is one of ${modules}, and its own files; put everything else in the file or beside it`;
}
