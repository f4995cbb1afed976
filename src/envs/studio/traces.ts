/**
 * Traces as source material: the logs of a deployed agent turned into tasks. Each JSONL line is one
 * conversation, in any of these shapes:
 * - an OpenAI chat-completions log: `{"messages": [...]}`, or `{"request": {"messages": [...]}, "response": {"choices": [...]}}`
 *   (also `body` for `request`);
 * - TabRL's and verifiers' results.jsonl: `{"prompt": [...] | "text", "completion": [...] | "text", ...}`.
 * A conversation's prompt is everything up to its last user message, its final assistant answer
 * dropped from the prompt and kept as the task's reference (`info.reference`). Identical prompts
 * become one task (the count is reported). A line that cannot be read is skipped with its line
 * number and the reason; nothing is dropped silently.
 */
import type { Message, Task } from '../types.ts';
import { errorMessage } from '../../common/error-message.ts';

/** A task made from a trace. */
export interface TraceTask extends Task {
  prompt: Message[];
  /** The last user message. */
  question: string;
  info: { reference: string | null; line: number; duplicates: number };
}

/** What `tasksFromTraces` found. */
export interface TraceParse {
  tasks: TraceTask[];
  /** Non-empty lines read. */
  lines: number;
  /** Lines whose prompt repeated an earlier one. */
  duplicates: number;
  skipped: { line: number; reason: string }[];
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Reads a JSONL of traces into deduplicated tasks; see the module comment. */
export function tasksFromTraces(text: string): TraceParse {
  const tasks: TraceTask[] = [];
  const byPrompt = new Map<string, TraceTask>();
  const skipped: { line: number; reason: string }[] = [];
  let lines = 0;
  let duplicates = 0;
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    lines += 1;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      skipped.push({ line, reason: `not JSON (${errorMessage(error)})` });
      return;
    }
    const conversation = readConversation(value);
    if (typeof conversation === 'string') {
      skipped.push({ line, reason: conversation });
      return;
    }
    const lastUser = conversation.map((message) => message.role).lastIndexOf('user');
    if (lastUser < 0) {
      skipped.push({ line, reason: 'the conversation has no user message' });
      return;
    }
    const prompt = conversation.slice(0, lastUser + 1);
    const reply = conversation.slice(lastUser + 1).filter((message) => message.role === 'assistant').at(-1)?.content ?? null;
    const key = JSON.stringify(prompt.map((message) => [message.role, message.content.trim()]));
    const existing = byPrompt.get(key);
    if (existing) {
      duplicates += 1;
      existing.info.duplicates += 1;
      return;
    }
    const task: TraceTask = { prompt, question: prompt[lastUser]!.content, info: { reference: reply, line, duplicates: 0 } };
    byPrompt.set(key, task);
    tasks.push(task);
  });
  return { tasks, lines, duplicates, skipped };
}

/** The messages of one trace line (prompt then reply), or why there are none. */
function readConversation(value: unknown): Message[] | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const record = value as Record<string, unknown>;
  const request = (record.request ?? record.body) as Record<string, unknown> | undefined;
  const messages = record.messages ?? (typeof request === 'object' && request !== null ? request.messages : undefined);
  if (messages !== undefined) {
    const prompt = readMessages(messages, 'messages');
    if (typeof prompt === 'string') return prompt;
    const reply = readResponse(record.response ?? record.completion);
    return reply === undefined ? prompt : [...prompt, { role: 'assistant', content: reply }];
  }
  if (record.prompt !== undefined) {
    const prompt = typeof record.prompt === 'string' ? [{ role: 'user' as const, content: record.prompt }] : readMessages(record.prompt, 'prompt');
    if (typeof prompt === 'string') return prompt;
    const completion = record.completion;
    if (typeof completion === 'string') return [...prompt, { role: 'assistant', content: completion }];
    if (Array.isArray(completion)) {
      const rest = readMessages(completion, 'completion');
      return typeof rest === 'string' ? rest : [...prompt, ...rest];
    }
    return prompt;
  }
  return 'no "messages", "request.messages" or "prompt" field (expected an OpenAI chat log or a results.jsonl line)';
}

function readMessages(value: unknown, field: string): Message[] | string {
  if (!Array.isArray(value)) return `"${field}" is not an array of messages`;
  const messages: Message[] = [];
  for (const [i, item] of value.entries()) {
    const message = item as { role?: unknown; content?: unknown } | null;
    if (typeof message !== 'object' || message === null || typeof message.role !== 'string' || !ROLES.has(message.role)) return `${field}[${i}] has no valid role (system, user, assistant or tool)`;
    messages.push({ role: message.role as Message['role'], content: contentText(message.content) });
  }
  return messages;
}

/** Message content as text: a string, or the text parts of a content array. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  return '';
}

/** The assistant text of a chat-completions response object (or a bare string). */
function readResponse(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return undefined;
  const choices = (value as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) return undefined;
  const message = (choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  return message ? contentText(message.content) : undefined;
}

/** One tasks.jsonl line for a trace task. */
export function traceTaskLine(task: TraceTask): string {
  return `${JSON.stringify({ prompt: task.prompt, question: task.question, reference: task.info.reference, line: task.info.line, duplicates: task.info.duplicates })}\n`;
}
