/**
 * The chat protocol every model speaks in TabRL, as a leaf module with no imports: messages and tool
 * calls in the OpenAI shape, sampling arguments, token-level data of a turn, and the part of
 * `chat.completions.create` a rollout needs (ChatClient) with its error. The environment library
 * (src/envs) re-exports it; the engine's inference code (src/gpu) and the workers import it from
 * here, so no layer needs the environment library for it. Plain data only, structured-cloneable.
 */

/** A function call the model asked for, in the OpenAI `tool_calls` format. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One chat message in the OpenAI chat-completions shape. */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant messages only: the tools the model called. */
  tool_calls?: ToolCall[];
  /** Tool messages only: which call this message answers. */
  tool_call_id?: string;
  /** Optional speaker name (OpenAI `name`). */
  name?: string;
}

/** A JSON schema describing a tool's arguments, as sent in the OpenAI `tools` field. */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Sampling arguments passed through to the chat client (OpenAI names). */
export interface SamplingArgs {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  max_tokens?: number;
  stop?: string[];
  seed?: number;
}

/** Token-level data of one model turn, returned by clients that know it (the in-tab engine). */
export interface TurnTokens {
  /** Tokens fed to the model for this turn that it did not sample itself (prompt or environment delta). */
  promptIds: number[];
  /** Tokens the model sampled this turn. */
  completionIds: number[];
  /** Log-probability of each sampled token under the sampling distribution. */
  completionLogprobs: number[];
  /** Entropy of the sampling distribution at each sampled token, when the sampler reports it (the WebGPU decoder does). */
  completionEntropies?: number[];
  /** Version of the weights the tokens were sampled with (the in-tab engine counts weight syncs). */
  policyVersion?: number;
}

/** Why the model stopped producing a message. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/** A chat-completions request (OpenAI field names). */
export interface ChatRequest extends SamplingArgs {
  model: string;
  messages: Message[];
  n?: number;
  tools?: ToolSchema[];
  logprobs?: boolean;
  /** Cancels the request. */
  signal?: AbortSignal;
}

/** One choice of a chat completion. */
export interface ChatChoice {
  index: number;
  message: Message;
  finish_reason: FinishReason;
  /** Per-token log-probabilities, when requested and supported (OpenAI shape). */
  logprobs?: { content: { token: string; logprob: number }[] } | null;
  /** Token-level data from clients that have it (the in-tab engine); absent for HTTP endpoints. */
  tokens?: TurnTokens;
}

/** A chat completion (OpenAI shape). */
export interface ChatCompletion {
  id: string;
  model: string;
  choices: ChatChoice[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number };
}

/** Anything that answers chat-completions requests. */
export interface ChatClient {
  chat: { completions: { create(request: ChatRequest): Promise<ChatCompletion> } };
}

/** What kind of failure a client hit ('device': an in-browser model's GPU device was lost or ran out of memory); `fatal` kinds stop an evaluation since every rollout would fail alike. */
export type ChatClientErrorKind = 'network' | 'timeout' | 'auth' | 'not_found' | 'rate_limit' | 'server' | 'bad_request' | 'bad_response' | 'aborted' | 'device';

/** A failed model call, with what was tried and what to do about it. */
export class ChatClientError extends Error {
  override readonly name = 'ChatClientError';

  constructor(
    message: string,
    readonly kind: ChatClientErrorKind,
    readonly status?: number,
  ) {
    super(message);
  }

  /** True when retrying the run would fail the same way (bad key, wrong URL, unknown model, no server, a lost GPU device). */
  get fatal(): boolean {
    return this.kind === 'auth' || this.kind === 'not_found' || this.kind === 'network' || this.kind === 'device';
  }
}
