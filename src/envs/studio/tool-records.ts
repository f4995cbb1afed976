/**
 * The recorded tool calls of traces: each assistant tool call paired with the tool message that
 * answered it (`tool_call_id`), as `{tool, arguments, result}` records that retrieval and the
 * simulator read, and the tools' schemas — the ones logged with the requests, else a schema inferred
 * from the arguments the calls used. It reads conversations already checked by trace-messages.ts; it
 * does not retrieve or simulate.
 */
import type { Message, ToolSchema } from '../types.ts';

/** One recorded call of a tool and the result it gave. */
export interface ToolRecord {
  tool: string;
  /** The call's arguments (an object; text that was not a JSON object is kept under `_raw`). */
  arguments: Record<string, unknown>;
  /** The tool's reply, as the tool message's text. */
  result: string;
  /** The trace line it came from (1-based), when it came from a file. */
  line?: number;
}

/** The calls of a conversation paired with their results, in order; a call without an answer is left out. */
export function toolRecordsOf(messages: readonly Message[], line?: number): ToolRecord[] {
  const records: ToolRecord[] = [];
  for (const [i, message] of messages.entries()) {
    for (const call of message.role === 'assistant' ? (message.tool_calls ?? []) : []) {
      const answer = messages.slice(i + 1).find((later) => later.role === 'tool' && later.tool_call_id === call.id);
      if (!answer) continue;
      records.push({ tool: call.function.name, arguments: parseArguments(call.function.arguments), result: answer.content, ...(line !== undefined ? { line } : {}) });
    }
  }
  return records;
}

/** A call's arguments text as an object: `{}` for empty text, `{_raw: text}` for text that is not a JSON object. */
export function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // kept as raw text below
  }
  return { _raw: text };
}

/**
 * One schema per tool name, in first-seen order: the logged schema when a request had one, else one
 * inferred from the recorded calls (each argument typed by its first value; required when every call
 * gave it).
 */
export function toolSchemasFor(logged: readonly ToolSchema[], records: readonly ToolRecord[]): ToolSchema[] {
  const byName = new Map<string, ToolSchema>();
  for (const schema of logged) if (!byName.has(schema.function.name)) byName.set(schema.function.name, schema);
  const calls = new Map<string, ToolRecord[]>();
  for (const record of records) calls.set(record.tool, [...(calls.get(record.tool) ?? []), record]);
  for (const [name, list] of calls) {
    if (byName.has(name)) continue;
    const properties: Record<string, { type: string }> = {};
    for (const record of list) for (const [key, value] of Object.entries(record.arguments)) properties[key] ??= { type: jsonType(value) };
    const required = Object.keys(properties).filter((key) => list.every((record) => key in record.arguments));
    byName.set(name, {
      type: 'function',
      function: { name, description: `(no schema in the traces; inferred from ${list.length} recorded call${list.length === 1 ? '' : 's'})`, parameters: { type: 'object', properties, required } },
    });
  }
  return [...byName.values()];
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value === 'object' ? 'object' : typeof value === 'boolean' ? 'boolean' : 'string';
}
