/**
 * The reference path of a task planted backwards: the calls that reach its end state, read from
 * the task itself — its planted records (`info.planted`, in the order a solving agent reaches them:
 * a listing, the entity's record, and for a write the goal write) — then the final reply (the
 * planted answer, or "done" for a write). `tabrl validate` plays it to check that a write task's
 * goal is reachable, and the lesson's warm-up plays it to make demonstrations (the tool calls in
 * the harness's format, then the answer). It reads tasks; it calls no tool and no model.
 */
import type { ScriptedPolicy, ScriptedReply } from '../scripted-client.ts';
import type { Message, Task } from '../types.ts';
import type { SimulatedCall } from './tool-simulator.ts';

/** The final reply of a write task's path (the question asks for "done"). */
export const PLANTED_WRITE_REPLY = 'done';

/** A planted task's reference path: the calls in order, then the final reply. */
export interface PlantedPath {
  calls: SimulatedCall[];
  reply: string;
}

/** The reference path of a planted task (one with `info.planted` records), or undefined for any other task or malformed records (environment data is untrusted). */
export function plantedPathOf(task: Pick<Task, 'answer' | 'info'>): PlantedPath | undefined {
  const planted = task.info?.planted;
  if (!Array.isArray(planted) || planted.length === 0) return undefined;
  const calls: SimulatedCall[] = [];
  for (const item of planted) {
    const record = item as { tool?: unknown; arguments?: unknown } | null;
    if (typeof record !== 'object' || record === null || typeof record.tool !== 'string' || typeof record.arguments !== 'object' || record.arguments === null || Array.isArray(record.arguments))
      return undefined;
    calls.push({ tool: record.tool, arguments: record.arguments as Record<string, unknown> });
  }
  const goal = task.info?.goal;
  // A field task is reached by its one call; a chain by all of its; a write ends with the goal write.
  const reply = typeof task.answer === 'string' && task.answer !== '' ? task.answer : goal !== undefined ? PLANTED_WRITE_REPLY : undefined;
  return reply === undefined ? undefined : { calls, reply };
}

/** The question a conversation asks: its first user message (what tells one task's episode from another's). */
function questionOf(messages: readonly Message[]): string | undefined {
  return messages.find((message) => message.role === 'user')?.content;
}

/**
 * A scripted policy that plays each task's reference path: on the turn after k tool replies it
 * makes the path's call k+1, then gives the final reply (through `formatReply`, e.g. the parser's
 * format). Tasks are told apart by their question; a conversation whose question is no path's gets
 * `unknownReply`.
 */
export function plantedPathPolicy(tasks: readonly Task[], formatReply: (reply: string) => string = (reply) => reply, unknownReply = ''): ScriptedPolicy {
  const paths = new Map<string, PlantedPath>();
  for (const task of tasks) {
    const path = plantedPathOf(task);
    const question = questionOf(task.prompt ?? []) ?? task.question;
    if (path && question !== undefined && !paths.has(question)) paths.set(question, path);
  }
  return (messages): ScriptedReply => {
    const question = questionOf(messages);
    const path = question === undefined ? undefined : paths.get(question);
    if (!path) return unknownReply;
    const made = messages.filter((message) => message.role === 'tool').length;
    const next = path.calls[made];
    if (!next) return formatReply(path.reply);
    return { content: '', tool_calls: [{ id: `call_${made}`, type: 'function', function: { name: next.tool, arguments: JSON.stringify(next.arguments) } }] };
  };
}
