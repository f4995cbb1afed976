/**
 * The policy seen from an environment: the part of OpenAI's `chat.completions.create` that a rollout
 * needs. The in-tab engine, WebLLM and any HTTP endpoint all implement it, so an environment never
 * knows which model it talks to.
 */
import type { FinishReason, Message, SamplingArgs, ToolSchema, TurnTokens } from './types.ts';

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
