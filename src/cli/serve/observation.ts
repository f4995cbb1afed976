/**
 * Turns what a served rollout holds into what the client reads: the observation built from a parked
 * model request (mid-episode) or from the finished, scored trajectory (the last step), and the
 * client's step data into the assistant message the environment's loop receives. Pure functions of
 * plain data; no sockets, no environment code.
 */
import type { Message, ToolCall, ToolSchema, Trajectory } from '../../envs/index.ts';
import { WireError, type Observation, type Split, type StepResult } from './wire.ts';

/** Where an observation's episode stands: its task, split and tools. */
export interface EpisodeContext {
  taskIndex: number;
  split: Split;
  info: Record<string, unknown> | undefined;
  tools: ToolSchema[] | undefined;
}

/** The observation of a turn the model must take: `messages` is the request's whole conversation (the request's own copy, not copied again). */
export function turnObservation(messages: readonly Message[], context: EpisodeContext): StepResult {
  const turn = countAssistantMessages(messages);
  const prompt = turn === 0 ? lastUserText(messages) : textAfterLastAssistant(messages);
  return { observation: observationOf(prompt, messages, turn, context), reward: null, done: false, terminated: false, truncated: false };
}

/** The last observation of an episode: the rubric's total as the reward, with each function's score. */
export function finalObservation(trajectory: Trajectory, context: EpisodeContext, metricNames: readonly string[]): StepResult {
  const messages = [...trajectory.prompt, ...trajectory.completion];
  const observation = observationOf(textAfterLastAssistant(messages), messages, countAssistantMessages(messages), context);
  const scores: Record<string, number> = {};
  const metrics: Record<string, number> = {};
  for (const name in trajectory.scores) (metricNames.includes(name) ? metrics : scores)[name] = trajectory.scores[name]!;
  observation.scores = scores;
  observation.metrics = metrics;
  observation.stop_reason = trajectory.stopCondition ?? trajectory.stopReason;
  if (trajectory.errors.length > 0) observation.error = trajectory.errors.map((error) => `${error.source} ${error.name}: ${error.message}`).join('\n');
  const truncated = trajectory.truncated;
  return { observation, reward: trajectory.reward, done: true, terminated: !truncated, truncated };
}

/** An observation's fields in their wire order, with every optional one present (undefined is left out of the JSON), so every observation has one shape. */
function observationOf(prompt: string, messages: readonly Message[], turn: number, context: EpisodeContext): Observation {
  return {
    prompt,
    messages: messages as Message[],
    tools: context.tools && context.tools.length > 0 ? context.tools : undefined,
    task_index: context.taskIndex,
    split: context.split,
    info: context.info,
    turn,
    scores: undefined,
    metrics: undefined,
    stop_reason: undefined,
    error: undefined,
  };
}

function countAssistantMessages(messages: readonly Message[]): number {
  let count = 0;
  for (const message of messages) if (message.role === 'assistant') count += 1;
  return count;
}

/** The text of the last user message, "" when none. */
function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content ?? '';
  return '';
}

/** The text of the messages after the last assistant message (the environment's reply), "" when none. */
function textAfterLastAssistant(messages: readonly Message[]): string {
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      start = i + 1;
      break;
    }
  }
  // The non-empty texts joined by blank lines (a missing content counts as a text, written as "", as Array.join writes it).
  let text = '';
  let parts = 0;
  for (let i = start; i < messages.length; i++) {
    const content = messages[i]!.content;
    if (content === '') continue;
    text = parts === 0 ? `${content ?? ''}` : `${text}\n\n${content ?? ''}`;
    parts += 1;
  }
  return text;
}

/**
 * The assistant message a step's data stands for: `{"message": text}`, optionally with OpenAI
 * `tool_calls`, or `{"type":"call_tool","tool_name","arguments"}` (one call, for tool environments).
 * Bad data is a VALIDATION_ERROR that says what the action takes.
 */
export function assistantMessageOf(data: unknown, turn: number, hasTools: boolean): Message {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw invalidAction(`the step's data must be a JSON object, got ${describe(data)}`);
  const action = data as Record<string, unknown>;
  if (action.type === 'call_tool') {
    if (!hasTools) throw invalidAction('this environment offers no tools; send {"message": "<the reply>"}');
    const extra = Object.keys(action).filter((key) => !['type', 'tool_name', 'arguments'].includes(key));
    if (extra.length > 0) throw invalidAction(`a call_tool action takes type, tool_name and arguments; remove ${extra.join(', ')}`);
    if (typeof action.tool_name !== 'string' || action.tool_name === '') throw invalidAction('a call_tool action needs "tool_name", a non-empty string');
    const args = action.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalidAction(`the "arguments" of a call_tool action must be a JSON object, got ${describe(args)}`);
    return { role: 'assistant', content: '', tool_calls: [{ id: `call_${turn}_0`, type: 'function', function: { name: action.tool_name, arguments: JSON.stringify(args) } }] };
  }
  const extra = Object.keys(action).filter((key) => key !== 'message' && key !== 'tool_calls');
  if (extra.length > 0)
    throw invalidAction(
      `an action takes "message" (and "tool_calls" for tool environments), or type "call_tool"; unknown field${extra.length > 1 ? 's' : ''} ${extra.map((key) => `"${key}"`).join(', ')}`,
    );
  if (typeof action.message !== 'string') throw invalidAction(`an action needs "message", the model's reply as a string, got ${describe(action.message)}`);
  if (action.tool_calls === undefined || (Array.isArray(action.tool_calls) && action.tool_calls.length === 0)) return { role: 'assistant', content: action.message };
  if (!hasTools) throw invalidAction('this environment offers no tools; leave out "tool_calls"');
  if (!Array.isArray(action.tool_calls)) throw invalidAction(`"tool_calls" must be a list of OpenAI tool calls, got ${describe(action.tool_calls)}`);
  return { role: 'assistant', content: action.message, tool_calls: action.tool_calls.map((call, i) => toolCallOf(call, i)) };
}

function toolCallOf(value: unknown, index: number): ToolCall {
  const call = value as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
  const fn = typeof call === 'object' && call !== null ? call.function : undefined;
  if (typeof fn !== 'object' || fn === null || typeof fn.name !== 'string' || typeof fn.arguments !== 'string' || (call!.type !== undefined && call!.type !== 'function')) {
    throw invalidAction(`tool_calls[${index}] must be {"id": "...", "type": "function", "function": {"name": "...", "arguments": "<JSON text>"}}`);
  }
  return { id: typeof call!.id === 'string' && call!.id !== '' ? call!.id : `call_${index}`, type: 'function', function: { name: fn.name, arguments: fn.arguments } };
}

function invalidAction(message: string): WireError {
  return new WireError('VALIDATION_ERROR', message);
}

/** A short description of a JSON value's kind, for error messages. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value).slice(0, 40)}`;
}
