/**
 * Notices environment-argument keys an environment never looked at (`{"numtasks": 50}` for numTasks),
 * which would otherwise be ignored without a word: the arguments go in behind a Proxy that records
 * every key the environment reads, present or not, which is also the list of keys it knows. The CLI
 * (--env-args) and the playground's sandbox (the run panel's arguments) share this rule.
 */
import { closestName } from './closest-name.ts';

/** Arguments that record the keys read from them, and what was given but never read. */
export interface WatchedArgs {
  /** The arguments to pass to loadEnvironment. */
  readonly args: Record<string, unknown>;
  /** One warning line per given key that was never read (with the read key it likely meant), or none; `label` names where the arguments came from. */
  unusedWarnings(label?: string): string[];
}

/** Wraps `args`; keys in `ignore` (ones the CLI adds itself) are never reported. */
export function watchEnvArgs(args: Record<string, unknown>, ignore: readonly string[] = []): WatchedArgs {
  const read = new Set<string>();
  const proxy = new Proxy(args, {
    get(target, key, receiver) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
  return {
    args: proxy,
    unusedWarnings: (label = '--env-args') => {
      const known = [...read].filter((key) => !ignore.includes(key));
      return Object.keys(args)
        .filter((key) => !read.has(key) && !ignore.includes(key))
        .map((key) => {
          const guess = closestName(key, known);
          return `${label} "${key}" was not used by the environment${guess ? `; did you mean "${guess}"?` : known.length > 0 ? ` (it reads ${known.join(', ')})` : ''}`;
        });
    },
  };
}
