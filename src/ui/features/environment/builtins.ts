/**
 * The built-in environments as the playground shows them: each one's source file, with its
 * relative imports rewritten to the module names an environment file uses ('../index.ts' becomes
 * 'tabrl', a sibling helper './random.ts' becomes 'tabrl/builtin/random'), and its scripted expert
 * from the registry. The expert runs in the app (it is trusted code); the environment itself
 * always runs in the sandbox, from its source, like any user file.
 */
import { BUILTIN_ENVIRONMENTS, BUILTIN_ENVIRONMENT_NAMES, type BuiltinEnvironmentEntry, type BuiltinEnvironmentName } from '../../../envs/builtin/index.ts';
import type { ScriptedPolicy } from '../../../envs/index.ts';

const RAW_SOURCES = import.meta.glob<string>('../../../envs/builtin/*.ts', { query: '?raw', import: 'default', eager: true });

/** A built-in environment as a starting point for the editor. */
export interface BuiltinEnvironment {
  name: BuiltinEnvironmentName;
  description: string;
  /** Its source, importing from 'tabrl' as a user's file does. */
  source: string;
}

/** Rewrites the relative imports of a file in src/envs/builtin to the module names of the sandbox. */
function toUserFacingSource(source: string): string {
  return source.replace(/(from\s+|import\s+)(['"])(\.\.?\/[^'"]+)\2/g, (match, keyword: string, quote: string, path: string) => {
    if (path === '../index.ts') return `${keyword}${quote}tabrl${quote}`;
    if (path.startsWith('./')) return `${keyword}${quote}tabrl/builtin/${path.slice(2).replace(/\.ts$/, '')}${quote}`;
    return match;
  });
}

/** The built-in environments, in registry order. */
export const BUILTINS: readonly BuiltinEnvironment[] = BUILTIN_ENVIRONMENT_NAMES.flatMap((name) => {
  const raw = RAW_SOURCES[`../../../envs/builtin/${name}.ts`];
  return raw === undefined ? [] : [{ name, description: BUILTIN_ENVIRONMENTS[name].description, source: toUserFacingSource(raw) }];
});

/** True when `name` is a built-in environment. */
export function isBuiltinName(name: string | undefined): name is BuiltinEnvironmentName {
  return name !== undefined && (BUILTIN_ENVIRONMENT_NAMES as string[]).includes(name);
}

/** The scripted expert of a built-in environment, built for its tasks under `args`. */
export async function loadBuiltinExpert(name: BuiltinEnvironmentName, args: Record<string, unknown>): Promise<ScriptedPolicy> {
  // Each entry takes its own argument type; the playground passes the user's JSON arguments through.
  const entry = BUILTIN_ENVIRONMENTS[name] as unknown as BuiltinEnvironmentEntry;
  return entry.expert(await entry.load(args));
}
