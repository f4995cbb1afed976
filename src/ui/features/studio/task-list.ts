/** A generated environment file's task list (`export const TASKS: Task[] = [...]`): read it, or replace it by another. */
import type { Task } from '../../../envs/index.ts';

/** Replaces the `TASKS` list of a generated environment file with `tasks`, or returns undefined when the file has none. */
export function withTasksList(source: string, tasks: readonly Task[]): string | undefined {
  const start = source.search(/export const TASKS: Task\[\] = \[/);
  if (start < 0) return undefined;
  const open = source.indexOf('[', source.indexOf('=', start));
  const close = source.indexOf('\n];', open);
  if (close < 0) return undefined;
  return `${source.slice(0, open)}${JSON.stringify(tasks, null, 2)}${source.slice(close + 2)}`;
}

/** The tasks of a generated environment file (its `export const TASKS: Task[] = [...]` JSON), or undefined when it has none. */
export function tasksFromSource(source: string): Task[] | undefined {
  const start = source.search(/export const TASKS: Task\[\] = \[/);
  if (start < 0) return undefined;
  const open = source.indexOf('[', source.indexOf('=', start));
  const close = source.indexOf('\n];', open);
  if (close < 0) return undefined;
  try {
    const value: unknown = JSON.parse(source.slice(open, close + 2));
    return Array.isArray(value) ? (value as Task[]) : undefined;
  } catch {
    return undefined;
  }
}
