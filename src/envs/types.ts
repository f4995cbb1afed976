/**
 * The data that flows through an environment: chat messages in the OpenAI shape, task rows,
 * sampling arguments, per-rollout state and the trajectory a rollout returns.
 * Plain data only (structured-cloneable), so it crosses worker and sandbox boundaries unchanged.
 */
import type { FinishReason, Message, TurnTokens } from '../chat/protocol.ts';

// The chat messages and sampling arguments live in the leaf module src/chat/protocol.ts (the engine's
// inference code uses them without the environment library); environments see them here too.
export type { FinishReason, Message, SamplingArgs, ToolCall, ToolSchema, TurnTokens } from '../chat/protocol.ts';

/** One row of an environment's dataset (verifiers' schema): a prompt, or a question to build one from. */
export interface Task {
  prompt?: Message[];
  question?: string;
  answer?: string;
  info?: Record<string, unknown>;
  /** Which sub-task this row belongs to, for environments that mix several. */
  task?: string;
}

/** The record of one model call inside a rollout. */
export interface TurnRecord {
  finishReason: FinishReason;
  /** Milliseconds spent waiting for the model. */
  latencyMs: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  tokens?: TurnTokens;
}

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
  /** Why the rollout ended, set once it has: a StopReason, or the name of the stop condition that fired. */
  stopReason?: string;
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
  /** Per model turn, the weighted sum of the rubric's turn reward functions (absent when it has none): GRPO's per-turn credit. */
  turnRewards?: number[];
  errors: RolloutError[];
  stopReason: StopReason;
  /** The name of the stop condition that ended the rollout, when one did (MultiTurnEnv's stopConditions). */
  stopCondition?: string;
  /** True when the rollout ended on the turn limit or the token limit rather than on its own. */
  truncated: boolean;
  turns: TurnRecord[];
  timings: { generationMs: number; scoringMs: number; totalMs: number };
}
