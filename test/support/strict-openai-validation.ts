/**
 * The checks a strict OpenAI-style chat-completions server makes on a request's messages and tools,
 * for tests: roles, an assistant message's tool_calls (id, type "function", name, arguments as a JSON
 * string), every tool message answering a call of the assistant message before it, every call
 * answered before the conversation goes on, and tools declared for the calls made. Returns the first
 * problem in the words of an HTTP 400 body, or undefined for a valid request.
 */
import type { ChatRequest } from '../../src/envs/index.ts';

/** The first reason a strict server would refuse `request` (HTTP 400), or undefined. */
export function strictRequestProblem(request: ChatRequest): string | undefined {
  const declared = new Set<string>();
  for (const [i, tool] of (request.tools ?? []).entries()) {
    if (tool.type !== 'function' || typeof tool.function?.name !== 'string' || typeof tool.function.parameters !== 'object') return `tools[${i}]: expected {type: "function", function: {name, parameters}}`;
    declared.add(tool.function.name);
  }
  let open = new Set<string>();
  for (const [i, message] of request.messages.entries()) {
    if (!['system', 'user', 'assistant', 'tool'].includes(message.role)) return `messages[${i}].role: invalid role`;
    if (message.role === 'tool') {
      if (typeof message.tool_call_id !== 'string' || !open.has(message.tool_call_id)) return `messages[${i}]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'`;
      open.delete(message.tool_call_id);
      continue;
    }
    if (open.size > 0) return `messages[${i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing ${[...open].join(', ')})`;
    if (typeof message.content !== 'string' && !(message.role === 'assistant' && message.tool_calls)) return `messages[${i}].content: expected a string`;
    if (message.role === 'assistant' && message.content === '' && !message.tool_calls) return `messages[${i}]: an assistant message needs content or tool_calls`;
    open = new Set();
    for (const [j, call] of (message.role === 'assistant' ? message.tool_calls ?? [] : []).entries()) {
      if (typeof call.id !== 'string' || call.id === '' || call.type !== 'function') return `messages[${i}].tool_calls[${j}]: expected {id, type: "function", function}`;
      if (typeof call.function.arguments !== 'string') return `messages[${i}].tool_calls[${j}].function.arguments: expected a string`;
      if (!declared.has(call.function.name)) return `messages[${i}].tool_calls[${j}]: tool "${call.function.name}" is not in tools`;
      open.add(call.id);
    }
  }
  if (open.size > 0) return `the last assistant message's tool_calls are not answered (${[...open].join(', ')})`;
  return undefined;
}

/** A completion body whose assistant message calls one tool (the reply shape of an OpenAI server). */
export function toolCallBody(model: string, id: string, name: string, args: Record<string, unknown>): Record<string, unknown> {
  return {
    id: `chatcmpl-${id}`,
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}
