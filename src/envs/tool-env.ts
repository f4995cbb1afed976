/**
 * A tool-using environment. Tools are plain TypeScript functions with a JSON-schema description of
 * their arguments; the model calls them in the OpenAI `tool_calls` format (or, for models without
 * native tool calling, with `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in its text,
 * the Qwen/Hermes convention). A tool that throws answers the model with its error text; the
 * episode ends when the model replies without calling a tool.
 */
import { MultiTurnEnv, type MultiTurnEnvOptions } from './multiturn-env.ts';
import type { Message, State, ToolCall, ToolSchema } from './types.ts';
import { errorMessage } from '../common/error-message.ts';

/** A tool: a function the model may call, described by a JSON schema of its arguments. */
export interface Tool<Args = Record<string, unknown>, S extends State = State> {
  name: string;
  description: string;
  /** JSON schema of the arguments object (`{ type: 'object', properties, required }`). */
  parameters: Record<string, unknown>;
  /** Runs the tool; the result is sent to the model as text (strings as they are, anything else as JSON). */
  run(args: Args, state: S): unknown | Promise<unknown>;
}

/** Declares a tool with typed arguments (an identity function that keeps the types). */
export function defineTool<Args = Record<string, unknown>, S extends State = State>(tool: Tool<Args, S>): Tool<Args, S> {
  return tool;
}

/** State of a tool environment: counts of tool calls and of the ones that failed. */
export interface ToolState extends State {
  toolCalls: number;
  toolErrors: number;
}

/** Options of a tool environment. */
export interface ToolEnvOptions<S extends ToolState = ToolState> extends MultiTurnEnvOptions<S> {
  // Tool argument types vary per tool; each tool is checked where it is defined.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: Tool<any, S>[];
  /** Read `<tool_call>` blocks from the message text when the model made no native call (default true). */
  parseTextToolCalls?: boolean;
}

const TEXT_TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/** The model calls tools until it answers without one; every call is run and its result (or error) returned. */
export class ToolEnv<S extends ToolState = ToolState> extends MultiTurnEnv<S> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly toolsByName: Map<string, Tool<any, S>>;
  readonly parseTextToolCalls: boolean;

  constructor(options: ToolEnvOptions<S>) {
    super(options);
    this.toolsByName = new Map();
    for (const tool of options.tools) {
      if (this.toolsByName.has(tool.name)) throw new Error(`${this.name}: two tools are named "${tool.name}"`);
      this.toolsByName.set(tool.name, tool);
    }
    this.parseTextToolCalls = options.parseTextToolCalls ?? true;
  }

  /** The tools' schemas, sent with every request. */
  override get tools(): ToolSchema[] {
    return [...this.toolsByName.values()].map(({ name, description, parameters }) => ({
      type: 'function',
      function: { name, description, parameters },
    }));
  }

  /** Starts the tool counters. */
  override setupState(state: State): S | Promise<S> {
    return { ...state, toolCalls: 0, toolErrors: 0 } as S;
  }

  /** Runs the calls in the model's last message, one tool message per call. */
  override async envResponse(messages: Message[], state: S): Promise<Message[]> {
    const calls = this.toolCallsOf(messages.at(-1));
    const replies: Message[] = [];
    for (const call of calls) {
      state.toolCalls += 1;
      const { content, failed } = await this.runToolCall(call, state);
      if (failed) state.toolErrors += 1;
      replies.push({ role: 'tool', tool_call_id: call.id, name: call.function.name, content });
    }
    return replies;
  }

  /** Done when the model's last message called no tool. */
  override isCompleted(messages: Message[], _state: S): boolean {
    const last = messages.at(-1);
    return last?.role === 'assistant' && this.toolCallsOf(last).length === 0;
  }

  /** The tool calls of an assistant message: native ones, else (optionally) those written as text. */
  toolCallsOf(message: Message | undefined): ToolCall[] {
    if (!message || message.role !== 'assistant') return [];
    if (message.tool_calls && message.tool_calls.length > 0) return message.tool_calls;
    if (!this.parseTextToolCalls) return [];
    return [...message.content.matchAll(TEXT_TOOL_CALL)].map((match, i) => textToolCall(match[1]!, `text_call_${i}`));
  }

  /** Runs one call; never throws: bad JSON, unknown tools and tool errors become the reply text. */
  private async runToolCall(call: ToolCall, state: S): Promise<{ content: string; failed: boolean }> {
    const tool = this.toolsByName.get(call.function.name);
    if (!tool) {
      const known = [...this.toolsByName.keys()].join(', ');
      return { content: `Error: unknown tool "${call.function.name}". Available tools: ${known}.`, failed: true };
    }
    let args: unknown;
    try {
      args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
    } catch (error) {
      return { content: `Error: the arguments of ${tool.name} are not valid JSON (${errorMessage(error)}).`, failed: true };
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { content: `Error: the arguments of ${tool.name} must be a JSON object.`, failed: true };
    }
    const missing = requiredFields(tool.parameters).filter((field) => !(field in (args as object)));
    if (missing.length > 0) return { content: `Error: ${tool.name} is missing required argument(s): ${missing.join(', ')}.`, failed: true };
    try {
      const result = await tool.run(args as Record<string, unknown>, state);
      return { content: typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null'), failed: false };
    } catch (error) {
      return { content: `Error: ${errorMessage(error)}`, failed: true };
    }
  }
}

function requiredFields(schema: Record<string, unknown>): string[] {
  const required = schema.required;
  return Array.isArray(required) ? required.filter((field): field is string => typeof field === 'string') : [];
}

/** A `<tool_call>` block as a ToolCall; unparseable JSON becomes a call whose arguments fail to parse. */
function textToolCall(body: string, id: string): ToolCall {
  try {
    const parsed = JSON.parse(body) as { name?: unknown; arguments?: unknown };
    const args = typeof parsed.arguments === 'string' ? parsed.arguments : JSON.stringify(parsed.arguments ?? {});
    return { id, type: 'function', function: { name: String(parsed.name ?? ''), arguments: args } };
  } catch {
    return { id, type: 'function', function: { name: '(unparseable tool call)', arguments: body } };
  }
}
