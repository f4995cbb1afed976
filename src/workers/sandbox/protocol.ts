/**
 * The contract between the app and the sandbox worker: what the worker exposes over comlink
 * (`SandboxApi`), the callbacks the app lends it (`SandboxHost`), and the plain data that crosses.
 * Everything here is structured-cloneable; nothing here holds an API key or touches the DOM.
 */
import type { ChatClientErrorKind, ChatCompletion, ChatRequest, EvaluationSummary, MetricKind, RolloutRecord, SamplingArgs, ToolSchema, Trajectory } from '../../envs/index.ts';

/** What the sandbox learned from loading an environment file. */
export interface EnvironmentInfo {
  name: string;
  /** The class the environment is built from (SingleTurnEnv, MultiTurnEnv, ...). */
  kind: string;
  numTasks: number;
  numEvaluationTasks: number;
  rewardNames: string[];
  rewardWeights: number[];
  /** What each weight-0 function's score means, by name (`rubric.metricKinds`), for reward-hack audits. */
  metricKinds?: Record<string, MetricKind>;
  passThreshold: number;
  /** The tools a multi-turn environment offers the model (its chat template renders them), if any. */
  tools?: ToolSchema[];
  /** The parser's reply for the answer ANSWER_PLACEHOLDER (`parser.formatAnswer`), so a host can format reference answers. */
  answerTemplate?: string;
  /** The names of the rubric's group reward functions (they need the whole group of a task's rollouts). */
  groupRewardNames?: string[];
  /** Their weights, in the same order. */
  groupRewardWeights?: number[];
  /** One warning per argument key that loadEnvironment(args) never read (with the key it likely meant); absent when every key was read. */
  unusedArgWarnings?: string[];
}

/** What `answerTemplate` holds in place of the answer. */
export const ANSWER_PLACEHOLDER = '\u0000ANSWER\u0000';

/** A chat request as it crosses to the app: the cancel signal stays behind in the sandbox. */
export type SandboxChatRequest = Omit<ChatRequest, 'signal'>;

/** The app's answer to a model call: a completion, or the error in plain data (class identity does not survive postMessage). */
export type CompletionOutcome =
  | { ok: true; completion: ChatCompletion }
  | { ok: false; message: string; kind: ChatClientErrorKind; status?: number };

/** A rollout the sandbox started: `rolloutId` is unique within one evaluation. */
export interface RolloutStart {
  rolloutId: number;
  taskIndex: number;
  rolloutIndex: number;
}

/** Callbacks the app lends the sandbox for one evaluation (passed with `Comlink.proxy`). */
export interface SandboxHost {
  /** Answers one model call of rollout `rolloutId`; the app holds the policy and any key. */
  createCompletion(rolloutId: number, request: SandboxChatRequest): Promise<CompletionOutcome>;
  rolloutStarted(start: RolloutStart): void;
  rolloutFinished(rolloutId: number): void;
  /** One finished rollout, JSON-safe, with how many of how many are done. */
  recordFinished(record: RolloutRecord, done: number, total: number): void;
}

/**
 * The judge the app lends an environment (passed with `Comlink.proxy` to `loadEnvironment`): the
 * sandbox gives it to `loadEnvironment(args)` as `args.judgeClient`, a client whose calls come here.
 * The app holds the real judge and any key; a judge that fails stops the run (see sandbox-bridge.ts).
 */
export interface SandboxJudgeHost {
  /** Answers one judge call. */
  judgeCompletion(request: SandboxChatRequest): Promise<CompletionOutcome>;
}

/** Evaluation settings, as `evaluate` takes them minus the callbacks. */
export interface SandboxEvaluateOptions {
  numTasks?: number;
  rolloutsPerTask: number;
  concurrency: number;
  samplingArgs: SamplingArgs;
  model: string;
  /** Which tasks: the held-out evaluation set (default), the training set, or the environment's demonstration tasks (for warm-up demonstrations; the training set unless it sets them apart). */
  split?: 'eval' | 'train' | 'demonstration';
}

/** One finished training rollout, JSON-safe, with the environment's verdict (a ScoredTrajectory of src/rl). */
export interface SandboxTrajectory extends Trajectory {
  passed: boolean;
}

/** What an evaluation in the sandbox returns (the records already streamed through `recordFinished`). */
export interface SandboxEvaluateResult {
  summary: EvaluationSummary;
  stoppedEarly?: string;
  wallMs: number;
}

/** The API the sandbox worker exposes on its MessagePort. */
export interface SandboxApi {
  /**
   * Runs an environment module (CommonJS text, `require('tabrl')` available) and calls its default
   * export with `args`, plus `args.judgeClient` relayed to `judge` when the app lends one.
   */
  loadEnvironment(code: string, args: Record<string, unknown>, judge?: SandboxJudgeHost): Promise<EnvironmentInfo>;
  /** Evaluates the loaded environment; model calls go back through `host`. */
  evaluate(options: SandboxEvaluateOptions, host: SandboxHost): Promise<SandboxEvaluateResult>;
  /** Rolls out training task `taskIndex` once (for GRPO); model calls go back through `host`. Errors are in the trajectory. */
  rollout(taskIndex: number, samplingArgs: SamplingArgs, model: string, host: SandboxHost): Promise<SandboxTrajectory>;
  /**
   * Adds the rubric's group rewards to one task's finished training rollouts (for GRPO), in order.
   * Never throws on a reward's error: a group function that throws or fails scores 0 on every
   * rollout of the group, with its error (and any `fatal` mark) on each.
   */
  scoreGroup(group: SandboxTrajectory[]): Promise<SandboxTrajectory[]>;
  /** Asks a running evaluation, and the training rollouts in flight, to stop. */
  abort(): void;
}

/** The first message the frame sends its parent once its script runs. */
export const FRAME_READY = 'tabrl-sandbox-frame-ready';
/** Parent → frame: start the worker from `runtime` (script text) and hand it `port`. */
export const FRAME_START = 'tabrl-sandbox-start';
/** Frame → parent: the worker failed to start or crashed (`message`). */
export const FRAME_WORKER_ERROR = 'tabrl-sandbox-worker-error';
/** Parent → worker, through the frame: the port to expose the API on. */
export const WORKER_CONNECT = 'tabrl-sandbox-connect';
