/**
 * The data that flows through an environment: chat messages in the OpenAI shape, task rows,
 * sampling arguments, per-rollout state and the trajectory a rollout returns.
 * Plain data only (structured-cloneable), so it crosses worker and sandbox boundaries unchanged.
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

/** One row of an environment's dataset (verifiers' schema): a prompt, or a question to build one from. */
export interface Task {
  prompt?: Message[];
  question?: string;
  answer?: string;
  info?: Record<string, unknown>;
  /** Which sub-task this row belongs to, for environments that mix several. */
  task?: string;
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
  /** Version of the weights the tokens were sampled with (the in-tab engine counts weight syncs). */
  policyVersion?: number;
}

/** The record of one model call inside a rollout. */
export interface TurnRecord {
  finishReason: FinishReason;
  /** Milliseconds spent waiting for the model. */
  latencyMs: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  tokens?: TurnTokens;
}

/** Why the model stopped producing a message. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/**
 * Per-rollout state. Environments extend it with their own fields (`interface WordleState extends State`);
 * it lives for one rollout only, never in module globals.
 */
export interface State {
  prompt: Message[];
  completion: Message[];
  answer?: string;
  task?: string;
  info: Record<string, unknown>;
  /** Model turns taken so far. */
  turn: number;
  /** Index of the task in the dataset, when known. */
  taskIndex?: number;
  [key: string]: unknown;
}

/** Where an error in a rollout came from. */
export type RolloutErrorSource = 'client' | 'env' | 'reward' | 'parser';

/** An error recorded on a rollout instead of aborting the run. */
export interface RolloutError {
  source: RolloutErrorSource;
  /** The reward function, or the environment hook, that failed. */
  name: string;
  message: string;
  /** True when every other rollout would fail the same way (bad key, unreachable endpoint). */
  fatal?: boolean;
  /** What kind of failure: a ChatClientError's kind for client errors ('timeout', 'server', ...), 'timeout' for environment code stopped by its time limit. */
  kind?: string;
}

/** Why a rollout ended. */
export type StopReason = 'completed' | 'max_turns' | 'length' | 'error' | 'aborted';

/** Everything one rollout produced: the transcript, rewards, errors, timings and token data. */
export interface Trajectory {
  taskIndex?: number;
  prompt: Message[];
  completion: Message[];
  answer?: string;
  task?: string;
  info: Record<string, unknown>;
  /** The final state, as the environment left it (kept JSON-safe by the caller when serialising). */
  state: State;
  /** Weighted sum of the rubric's reward functions. */
  reward: number;
  /** Each reward function's raw score, by name (weight-0 metrics included). */
  scores: Record<string, number>;
  errors: RolloutError[];
  stopReason: StopReason;
  /** True when the rollout ended on the turn limit or the token limit rather than on its own. */
  truncated: boolean;
  turns: TurnRecord[];
  timings: { generationMs: number; scoringMs: number; totalMs: number };
}
