/**
 * The offline solver of planted tasks (backwards.ts), a transparent rule rather than a model: with
 * tools, it calls the tool whose required arguments the question names ("for tracking_id PX-1 and
 * date 2026-03-20") and answers with the field the question asks for from the tool's result; with a
 * tool result that lacks the field, or without tools (the closed-book test), it does not know. It
 * reads the question shape `plantBackwardsTasks` writes and nothing else.
 */
import type { ChatClient, ChatCompletion, ChatRequest } from '../client.ts';
import type { Message, ToolSchema } from '../types.ts';

/** What the rule says when it cannot answer. */
export const HEURISTIC_TOOL_SOLVER_UNKNOWN = 'I do not know.';

/** A ChatClient that solves planted tasks by rule; see the module comment. */
export class HeuristicToolSolverClient implements ChatClient {
  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => {
        const message = solveByRule(request.messages, request.tools ?? []);
        return { id: 'heuristic-tool-solver', model: request.model, choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }] };
      },
    },
  };
}

function solveByRule(messages: readonly Message[], tools: readonly ToolSchema[]): Message {
  const question = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
  const last = messages.at(-1);
  if (tools.length === 0) return { role: 'assistant', content: HEURISTIC_TOOL_SOLVER_UNKNOWN };
  if (last?.role === 'tool') {
    const field = /What is the (\S+) for /.exec(question)?.[1];
    try {
      const value = field === undefined ? undefined : (JSON.parse(last.content) as Record<string, unknown>)[field];
      return { role: 'assistant', content: value === undefined ? HEURISTIC_TOOL_SOLVER_UNKNOWN : String(value) };
    } catch {
      return { role: 'assistant', content: HEURISTIC_TOOL_SOLVER_UNKNOWN };
    }
  }
  let best: { name: string; args: Record<string, unknown> } | undefined;
  for (const tool of tools) {
    const parameters = tool.function.parameters as { properties?: Record<string, { type?: string }>; required?: string[] };
    const names = parameters.required ?? Object.keys(parameters.properties ?? {});
    const args: Record<string, unknown> = {};
    for (const name of names) {
      const found = new RegExp(`\\b${name} (.+?)(?: and |\\? |\\?$|$)`).exec(question)?.[1];
      if (found === undefined) break;
      const type = parameters.properties?.[name]?.type;
      args[name] = type === 'integer' || type === 'number' ? Number(found) : found;
    }
    if (Object.keys(args).length === names.length && names.length > 0 && (!best || names.length > Object.keys(best.args).length)) best = { name: tool.function.name, args };
  }
  if (!best) return { role: 'assistant', content: HEURISTIC_TOOL_SOLVER_UNKNOWN };
  return { role: 'assistant', content: '', tool_calls: [{ id: 'heuristic_call', type: 'function', function: { name: best.name, arguments: JSON.stringify(best.args) } }] };
}
