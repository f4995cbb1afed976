/**
 * What a model call from environment code may ask of the host's clients, and what it hears back.
 * A request is rebuilt from the fields a policy or judge request may set — messages, tools and
 * sampling within limits — with the model named by the host (the rollout's, or the judge's), so an
 * environment cannot pick another model, ask for many choices, stream, or spend unlimited tokens on
 * the user's key. A failed call comes back as its kind and HTTP status with a fixed explanation:
 * never the endpoint's own text, which may echo request headers (the key).
 *
 * It is not the transport (isolated-environment.ts sends and receives) and does not judge replies.
 */
import type { ChatClientErrorKind, Message, SamplingArgs, ToolCall, ToolSchema } from '../envs/index.ts';
import type { CompletionOutcome, SandboxChatRequest } from '../isolation/protocol.ts';

/** The most tokens one model call of environment code may ask for. */
export const MAX_REQUEST_TOKENS = 32_768;
/** The most messages, tools and stop strings one call may carry. */
const MAX_MESSAGES = 4096;
const MAX_TOOLS = 128;
const MAX_STOP_STRINGS = 16;
const MAX_STOP_CHARS = 256;
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** A model call request rebuilt from its allowed fields, or why it was refused. */
type FilteredRequest = { ok: true; request: SandboxChatRequest } | { ok: false; message: string };

/** Rebuilds environment code's chat request from the fields it may set, for `model` (the host's choice). */
export function filterModelRequest(raw: unknown, model: string): FilteredRequest {
  try {
    if (!isRecord(raw)) throw new Error('the request is not an object');
    if (!Array.isArray(raw.messages) || raw.messages.length > MAX_MESSAGES) throw new Error(`messages must be an array of at most ${MAX_MESSAGES} messages`);
    const request: SandboxChatRequest = { model, messages: raw.messages.map(toMessage), ...toSampling(raw) };
    if (raw.tools !== undefined) {
      if (!Array.isArray(raw.tools) || raw.tools.length > MAX_TOOLS) throw new Error(`tools must be an array of at most ${MAX_TOOLS} tool schemas`);
      request.tools = raw.tools.map(toToolSchema);
    }
    if (raw.logprobs === true) request.logprobs = true;
    return { ok: true, request };
  } catch (error) {
    return { ok: false, message: `tabrl refused the model call: ${(error as Error).message}` };
  }
}

/** What environment code hears of a failed model call: its kind and status with a fixed explanation, none of the endpoint's text. */
export function modelCallFailure(kind: ChatClientErrorKind, status?: number): Extract<CompletionOutcome, { ok: false }> {
  const http = status !== undefined ? ` (HTTP ${status})` : '';
  return { ok: false, message: `the model call failed${http}: ${KIND_EXPLANATIONS[kind] ?? 'the endpoint failed'}`, kind, ...(status !== undefined ? { status } : {}) };
}

/**
 * Remembers the real text of each failed model call behind the text environment code got, so that
 * the rollout's record (written by tabrl, read by the user) carries the endpoint's real message again.
 */
export class ModelErrorLedger {
  private readonly texts = new Map<string, string>();
  private next = 0;

  constructor(private readonly capacity = 1000) {}

  /** The outcome to give environment code for a call that failed with `realText`; its message is unique, so `restore` finds it. */
  record(realText: string, kind: ChatClientErrorKind, status?: number): Extract<CompletionOutcome, { ok: false }> {
    const failure = modelCallFailure(kind, status);
    failure.message = `${failure.message} [model call ${++this.next}]`;
    this.texts.set(failure.message, realText);
    if (this.texts.size > this.capacity) this.texts.delete(this.texts.keys().next().value!);
    return failure;
  }

  /** `text` with every stand-in this ledger gave out replaced by the real text it stands for. */
  restore(text: string): string {
    if (!text.includes('[model call ')) return text;
    return text.replace(/the model call failed[^[]*\[model call \d+\]/g, (standIn) => this.texts.get(standIn) ?? standIn);
  }
}

const KIND_EXPLANATIONS: Record<ChatClientErrorKind, string> = {
  network: 'the endpoint could not be reached',
  timeout: 'the endpoint did not answer in time',
  auth: 'the endpoint refused the key',
  not_found: 'the endpoint or the model was not found',
  rate_limit: 'the endpoint limits the request rate',
  server: 'the endpoint had an internal error',
  bad_request: 'the endpoint refused the request',
  bad_response: 'the endpoint gave an answer that is not a chat completion',
  aborted: 'the request was cancelled',
  device: 'the local model lost its device',
};

function toMessage(raw: unknown, index: number): Message {
  if (!isRecord(raw) || typeof raw.role !== 'string' || !ROLES.has(raw.role) || typeof raw.content !== 'string') {
    throw new Error(`messages[${index}] must be { role: 'system' | 'user' | 'assistant' | 'tool', content: string }`);
  }
  const message: Message = { role: raw.role as Message['role'], content: raw.content };
  if (typeof raw.name === 'string') message.name = raw.name;
  if (typeof raw.tool_call_id === 'string') message.tool_call_id = raw.tool_call_id;
  if (Array.isArray(raw.tool_calls)) message.tool_calls = raw.tool_calls.map((call, i) => toToolCall(call, `messages[${index}].tool_calls[${i}]`));
  return message;
}

function toToolCall(raw: unknown, where: string): ToolCall {
  const fn = isRecord(raw) ? raw.function : undefined;
  if (!isRecord(raw) || typeof raw.id !== 'string' || !isRecord(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') {
    throw new Error(`${where} must be { id, type: 'function', function: { name, arguments } } with strings`);
  }
  return { id: raw.id, type: 'function', function: { name: fn.name, arguments: fn.arguments } };
}

function toToolSchema(raw: unknown, index: number): ToolSchema {
  const fn = isRecord(raw) ? raw.function : undefined;
  if (!isRecord(fn) || typeof fn.name !== 'string' || (fn.description !== undefined && typeof fn.description !== 'string') || !isRecord(fn.parameters)) {
    throw new Error(`tools[${index}] must be { type: 'function', function: { name, description, parameters } }`);
  }
  return { type: 'function', function: { name: fn.name, description: typeof fn.description === 'string' ? fn.description : '', parameters: fn.parameters } };
}

/** The sampling fields, each checked against its range; absent ones stay absent. */
function toSampling(raw: Record<string, unknown>): SamplingArgs {
  const sampling: SamplingArgs = {};
  const number = (name: keyof SamplingArgs, low: number, high: number, integer: boolean): number | undefined => {
    const value = raw[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < low || value > high || (integer && !Number.isInteger(value))) {
      throw new Error(`${name} must be ${integer ? 'an integer' : 'a number'} from ${low} to ${high}, got ${JSON.stringify(value)?.slice(0, 40)}`);
    }
    return value;
  };
  const temperature = number('temperature', 0, 2, false);
  const topP = number('top_p', 0, 1, false);
  const topK = number('top_k', 0, 1_000_000, true);
  const maxTokens = number('max_tokens', 1, MAX_REQUEST_TOKENS, true);
  const seed = number('seed', -(2 ** 53), 2 ** 53, true);
  if (temperature !== undefined) sampling.temperature = temperature;
  if (topP !== undefined) sampling.top_p = topP;
  if (topK !== undefined) sampling.top_k = topK;
  if (maxTokens !== undefined) sampling.max_tokens = maxTokens;
  if (seed !== undefined) sampling.seed = seed;
  if (raw.stop !== undefined && raw.stop !== null) {
    const stop = typeof raw.stop === 'string' ? [raw.stop] : raw.stop;
    if (!Array.isArray(stop) || stop.length > MAX_STOP_STRINGS || !stop.every((item) => typeof item === 'string' && item.length <= MAX_STOP_CHARS)) {
      throw new Error(`stop must be at most ${MAX_STOP_STRINGS} strings of at most ${MAX_STOP_CHARS} characters`);
    }
    sampling.stop = stop as string[];
  }
  return sampling;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
