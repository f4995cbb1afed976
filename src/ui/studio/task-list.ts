/** Filtering a generated environment file's tasks: its `export const TASKS: Task[] = [...]` list replaced by another. */
import type { Task } from '../../envs/index.ts';

/** Replaces the `TASKS` list of a generated environment file with `tasks`, or returns undefined when the file has none. */
export function withTasksList(source: string, tasks: readonly Task[]): string | undefined {
  const start = source.search(/export const TASKS: Task\[\] = \[/);
  if (start < 0) return undefined;
  const open = source.indexOf('[', source.indexOf('=', start));
  const close = source.indexOf('\n];', open);
  if (close < 0) return undefined;
  return `${source.slice(0, open)}${JSON.stringify(tasks, null, 2)}${source.slice(close + 2)}`;
}
