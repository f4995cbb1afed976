/**
 * Traces as source material: the logs of a deployed agent turned into tasks. Each JSONL line is one
 * conversation, in any of these shapes:
 * - an OpenAI chat-completions log: `{"messages": [...], "tools": [...]}`, or `{"request": {"messages": [...], "tools": [...]}, "response": {"choices": [...]}}`
 *   (also `body` for `request`);
 * - TabRL's and verifiers' results.jsonl: `{"prompt": [...] | "text", "completion": [...] | "text", ...}`.
 * Messages keep their structure (trace-messages.ts): tool calls, `tool_call_id`s, names, the system
 * prompt and earlier turns. A conversation's prompt is everything up to its last user message; its
 * reference (`info.reference`) is the agent's final answer after it — the last assistant message that
 * calls no tool — never a tool call. The tool calls of every line are kept as records
 * (tool-records.ts) with the tools' schemas. Identical prompts become one task (the count is
 * reported). A line that cannot be read is skipped with its line number and the reason; nothing is
 * dropped silently.
 */
import type { Message, Task, ToolSchema } from '../types.ts';
import { errorMessage } from '../../common/error-message.ts';
import { readTraceConversation } from './trace-messages.ts';
import { toolRecordsOf, toolSchemasFor, type ToolRecord } from './tool-records.ts';

/** A task made from a trace. */
export interface TraceTask extends Task {
  prompt: Message[];
  /** The last user message. */
  question: string;
  /** `toolCalls`: the calls the agent made while answering (after the last user message); `tools`: the tools it called anywhere in the conversation. */
  info: { reference: string | null; line: number; duplicates: number; toolCalls: number; tools: string[] };
}

/** What `tasksFromTraces` found. */
export interface TraceParse {
  tasks: TraceTask[];
  /** Non-empty lines read. */
  lines: number;
  /** Lines whose prompt repeated an earlier one. */
  duplicates: number;
  skipped: { line: number; reason: string }[];
  /** Every tool call of the lines read, paired with its result. */
  records: ToolRecord[];
  /** One schema per tool called or logged (logged, else inferred from the calls). */
  tools: ToolSchema[];
}

/** Reads a JSONL of traces into deduplicated tasks; see the module comment. */
export function tasksFromTraces(text: string): TraceParse {
  const tasks: TraceTask[] = [];
  const byPrompt = new Map<string, TraceTask>();
  const skipped: { line: number; reason: string }[] = [];
  const records: ToolRecord[] = [];
  const logged: ToolSchema[] = [];
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
    const conversation = readTraceConversation(value);
    if (typeof conversation === 'string') {
      skipped.push({ line, reason: conversation });
      return;
    }
    const { messages } = conversation;
    const lastUser = messages.map((message) => message.role).lastIndexOf('user');
    if (lastUser < 0) {
      skipped.push({ line, reason: 'the conversation has no user message' });
      return;
    }
    logged.push(...conversation.tools);
    const lineRecords = toolRecordsOf(messages, line);
    records.push(...lineRecords);
    const prompt = messages.slice(0, lastUser + 1);
    const answer = messages.slice(lastUser + 1);
    const reference = answer.filter((message) => message.role === 'assistant' && !message.tool_calls && message.content.trim() !== '').at(-1)?.content ?? null;
    const key = JSON.stringify(prompt.map(({ role, content, tool_calls, tool_call_id }) => [role, content.trim(), tool_calls ?? null, tool_call_id ?? null]));
    const existing = byPrompt.get(key);
    if (existing) {
      duplicates += 1;
      existing.info.duplicates += 1;
      return;
    }
    const toolCalls = answer.reduce((sum, message) => sum + (message.tool_calls?.length ?? 0), 0);
    const tools = [...new Set(messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.function.name)))];
    const task: TraceTask = { prompt, question: prompt[lastUser]!.content, info: { reference, line, duplicates: 0, toolCalls, tools } };
    byPrompt.set(key, task);
    tasks.push(task);
  });
  return { tasks, lines, duplicates, skipped, records, tools: toolSchemasFor(logged, records) };
}

/** One tasks.jsonl line for a trace task. */
export function traceTaskLine(task: TraceTask): string {
  const { reference, line, duplicates, toolCalls, tools } = task.info;
  return `${JSON.stringify({ prompt: task.prompt, question: task.question, reference, line, duplicates, toolCalls, tools })}\n`;
}
