/**
 * The offline solver of planted tasks (planting.ts), a transparent rule rather than a model: with
 * tools, it calls the tool whose required arguments the question names ("for tracking_id PX-1 and
 * date 2026-03-20") and answers with the field the question asks for from the tool's result; for a
 * chain ("the tracking_id listed for customer X") it first calls the tool that takes the entry and
 * reads the listed id from its result; for a write ("Reschedule delivery: ..., set date to D") it
 * calls the tool the verb names with the id and the values, then says "done". With a tool result
 * that lacks the field, or without tools (the closed-book test), it does not know. It reads the
 * question shapes `plantBackwardsTasks` writes and nothing else.
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
  if (tools.length === 0) return say(HEURISTIC_TOOL_SOLVER_UNKNOWN);
  const results = messages.filter((message) => message.role === 'tool').map((message) => parseJson(message.content));
  // A chain ("What is the eta for the tracking_id listed for customer ana-123?") or a write
  // ("Reschedule delivery: for the tracking_id listed for customer ana-123, set date to 2026-03-20.")
  // first calls the tool the entry names, then reads the listed id from its result.
  const chain = /What is the (\S+) for the (\S+) listed for (.+?)\? Reply/.exec(question);
  const write = /^(.+?): for (?:the (\S+) listed for (.+?)|(\S+) (\S+)), set (.+?)\. Reply "done"/.exec(question);
  if (chain) {
    const [, field, listed, entry] = chain as unknown as [string, string, string, string];
    if (results.length === 0) return callNamed(`${entry}?`, tools);
    if (results.length === 1) {
      const id = findValue(results[0], listed);
      return id === undefined ? say(HEURISTIC_TOOL_SOLVER_UNKNOWN) : callNamed(`${listed} ${id}?`, tools);
    }
    return say(readField(last, field));
  }
  if (write) {
    const [, verb, listed, entry, directName, directId, setting] = write as unknown as [string, string, string | undefined, string | undefined, string | undefined, string | undefined, string];
    const entity = listed ?? directName!;
    if (listed !== undefined && results.length === 0) return callNamed(`${entry}?`, tools);
    const id = listed !== undefined ? (results.length === 1 ? findValue(results[0], listed) : undefined) : results.length === 0 ? directId : undefined;
    if (id === undefined) return say(results.length > 0 ? 'done' : HEURISTIC_TOOL_SOLVER_UNKNOWN);
    const tool = tools.find((candidate) => candidate.function.name.replace(/_/g, ' ').toLowerCase() === verb.toLowerCase());
    if (!tool) return say(HEURISTIC_TOOL_SOLVER_UNKNOWN);
    const args: Record<string, unknown> = { [entity]: id };
    for (const part of setting.split(' and ')) {
      const match = /^(\S+) to (.+)$/.exec(part);
      if (match) args[match[1]!] = match[2]!;
    }
    return call(tool.function.name, args);
  }
  if (last?.role === 'tool') return say(readField(last, /What is the (\S+) for /.exec(question)?.[1]));
  return callNamed(question, tools);
}

/** Calls the tool whose required arguments all appear in `text` as "name value"; the one naming most wins. */
function callNamed(text: string, tools: readonly ToolSchema[]): Message {
  let best: { name: string; args: Record<string, unknown> } | undefined;
  for (const tool of tools) {
    const parameters = tool.function.parameters as { properties?: Record<string, { type?: string }>; required?: string[] };
    const names = parameters.required ?? Object.keys(parameters.properties ?? {});
    const args: Record<string, unknown> = {};
    for (const name of names) {
      const found = new RegExp(`\\b${name} (.+?)(?: and |\\? |\\?$|$)`).exec(text)?.[1];
      if (found === undefined) break;
      const type = parameters.properties?.[name]?.type;
      args[name] = type === 'integer' || type === 'number' ? Number(found) : found;
    }
    if (Object.keys(args).length === names.length && names.length > 0 && (!best || names.length > Object.keys(best.args).length)) best = { name: tool.function.name, args };
  }
  return best ? call(best.name, best.args) : say(HEURISTIC_TOOL_SOLVER_UNKNOWN);
}

function call(name: string, args: Record<string, unknown>): Message {
  return { role: 'assistant', content: '', tool_calls: [{ id: 'heuristic_call', type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
}

function say(content: string): Message {
  return { role: 'assistant', content };
}

/** The value of `field` in a tool message's JSON object, as text, or the rule's "I do not know". */
function readField(message: Message | undefined, field: string | undefined): string {
  const value = message?.role === 'tool' && field !== undefined ? (parseJson(message.content) as Record<string, unknown> | undefined)?.[field] : undefined;
  return value === undefined || value === null || typeof value === 'object' ? HEURISTIC_TOOL_SOLVER_UNKNOWN : String(value);
}

/** The first string or number under the key `name` anywhere in a JSON value. */
function findValue(value: unknown, name: string): string | undefined {
  if (Array.isArray(value)) return value.map((item) => findValue(item, name)).find((found) => found !== undefined);
  if (typeof value !== 'object' || value === null) return undefined;
  const own = (value as Record<string, unknown>)[name];
  if (typeof own === 'string' || typeof own === 'number') return String(own);
  return Object.values(value)
    .map((item) => findValue(item, name))
    .find((found) => found !== undefined);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
