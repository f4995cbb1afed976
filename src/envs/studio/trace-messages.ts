/**
 * Reads one trace line's conversation with its structure intact: roles, text, an assistant's
 * `tool_calls` (ids, names, arguments as JSON text), a tool message's `tool_call_id` and `name`,
 * and the request's `tools` schemas. It checks what a strict OpenAI-style server checks — every tool
 * message answers a call of the assistant message before it, and every call is answered before the
 * conversation goes on — so a conversation it returns can be sent as a prompt as it is. It makes no
 * tasks (traces.ts does) and runs no tools.
 */
import type { Message, ToolCall, ToolSchema } from '../types.ts';

/** A conversation read from one trace line: its messages and the tool schemas logged with it. */
export interface TraceConversation {
  messages: Message[];
  /** The request's `tools`, when the line has them (an OpenAI log); empty otherwise. */
  tools: ToolSchema[];
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** The conversation of one parsed trace line (prompt then reply), or why there is none. */
export function readTraceConversation(value: unknown): TraceConversation | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const record = value as Record<string, unknown>;
  const request = (record.request ?? record.body) as Record<string, unknown> | undefined;
  const requestObject = typeof request === 'object' && request !== null ? request : undefined;
  const tools = readTools(record.tools ?? requestObject?.tools);
  if (typeof tools === 'string') return tools;
  let messages: Message[] | string;
  const logged = record.messages ?? requestObject?.messages;
  if (logged !== undefined) {
    messages = readMessages(logged, 'messages');
    if (typeof messages === 'string') return messages;
    const reply = readResponse(record.response ?? record.completion);
    if (typeof reply === 'string') return reply;
    if (reply) messages.push(reply);
  } else if (record.prompt !== undefined) {
    messages = typeof record.prompt === 'string' ? [{ role: 'user', content: record.prompt }] : readMessages(record.prompt, 'prompt');
    if (typeof messages === 'string') return messages;
    const completion = record.completion;
    if (typeof completion === 'string') messages.push({ role: 'assistant', content: completion });
    else if (Array.isArray(completion)) {
      const rest = readMessages(completion, 'completion');
      if (typeof rest === 'string') return rest;
      messages.push(...rest);
    }
  } else {
    return 'no "messages", "request.messages" or "prompt" field (expected an OpenAI chat log or a results.jsonl line)';
  }
  const problem = toolTurnProblem(messages);
  return problem ?? { messages, tools };
}

/** Whether the tool turns are paired as the OpenAI API requires; the first problem, or undefined. */
export function toolTurnProblem(messages: readonly Message[]): string | undefined {
  let open: Set<string> | undefined;
  for (const [i, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (!open || message.tool_call_id === undefined || !open.has(message.tool_call_id)) {
        return `message ${i} is a tool message whose tool_call_id ${JSON.stringify(message.tool_call_id ?? null)} answers no call of the assistant message before it`;
      }
      open.delete(message.tool_call_id);
      continue;
    }
    if (open && open.size > 0) return `the tool call(s) ${[...open].join(', ')} before message ${i} are never answered by a tool message`;
    open = message.role === 'assistant' && message.tool_calls ? new Set(message.tool_calls.map((call) => call.id)) : undefined;
  }
  return undefined;
}

function readMessages(value: unknown, field: string): Message[] | string {
  if (!Array.isArray(value)) return `"${field}" is not an array of messages`;
  const messages: Message[] = [];
  for (const [i, item] of value.entries()) {
    const message = readMessage(item, `${field}[${i}]`);
    if (typeof message === 'string') return message;
    messages.push(message);
  }
  return messages;
}

function readMessage(item: unknown, where: string): Message | string {
  const raw = item as { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown; name?: unknown; function_call?: unknown } | null;
  if (typeof raw !== 'object' || raw === null || typeof raw.role !== 'string' || !ROLES.has(raw.role)) return `${where} has no valid role (system, user, assistant or tool)`;
  const message: Message = { role: raw.role as Message['role'], content: contentText(raw.content) };
  if (typeof raw.name === 'string') message.name = raw.name;
  if (raw.role === 'assistant' && raw.tool_calls !== undefined && raw.tool_calls !== null) {
    if (!Array.isArray(raw.tool_calls)) return `${where}.tool_calls is not an array`;
    const calls: ToolCall[] = [];
    for (const [j, call] of raw.tool_calls.entries()) {
      const read = readToolCall(call, `${where}.tool_calls[${j}]`);
      if (typeof read === 'string') return read;
      calls.push(read);
    }
    if (calls.length > 0) message.tool_calls = calls;
  }
  if (raw.role === 'tool') {
    if (typeof raw.tool_call_id !== 'string' || raw.tool_call_id === '') return `${where} is a tool message without a tool_call_id (the id of the call it answers)`;
    message.tool_call_id = raw.tool_call_id;
  }
  return message;
}

function readToolCall(value: unknown, where: string): ToolCall | string {
  const call = value as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
  if (typeof call !== 'object' || call === null) return `${where} is not an object`;
  if (typeof call.id !== 'string' || call.id === '') return `${where} has no id`;
  const fn = call.function;
  if (typeof fn !== 'object' || fn === null || typeof fn.name !== 'string' || fn.name === '') return `${where} has no function name`;
  const args = fn.arguments === undefined ? '{}' : typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments);
  return { id: call.id, type: 'function', function: { name: fn.name, arguments: args } };
}

function readTools(value: unknown): ToolSchema[] | string {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return '"tools" is not an array of tool schemas';
  const tools: ToolSchema[] = [];
  for (const [i, item] of value.entries()) {
    const fn = (item as { function?: { name?: unknown; description?: unknown; parameters?: unknown } } | null)?.function;
    if (typeof fn !== 'object' || fn === null || typeof fn.name !== 'string' || fn.name === '')
      return `tools[${i}] has no function name (expected {"type": "function", "function": {"name": ..., "parameters": {...}}})`;
    const parameters = typeof fn.parameters === 'object' && fn.parameters !== null ? (fn.parameters as Record<string, unknown>) : { type: 'object', properties: {} };
    tools.push({ type: 'function', function: { name: fn.name, description: typeof fn.description === 'string' ? fn.description : '', parameters } });
  }
  return tools;
}

/** Message content as text: a string, or the text parts of a content array (null and absent are ''). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  return '';
}

/** The assistant message of a chat-completions response (or a bare string); undefined when there is none. */
function readResponse(value: unknown): Message | string | undefined {
  if (typeof value === 'string') return { role: 'assistant', content: value };
  if (typeof value !== 'object' || value === null) return undefined;
  const choices = (value as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) return undefined;
  const message = (choices[0] as { message?: unknown } | undefined)?.message;
  if (message === undefined) return undefined;
  return readMessage({ role: 'assistant', ...(message as object) }, 'response.choices[0].message');
}
