/**
 * The contract between the app and the sandbox worker: what the worker exposes over comlink
 * (`SandboxApi`), the callbacks the app lends it (`SandboxHost`), and the frame's start-up messages.
 * The data that crosses (environment info, model calls, trajectories) is the isolation layer's, shared
 * with the CLI's isolated process (src/isolation/protocol.ts).
 * Everything here is structured-cloneable; nothing here holds an API key or touches the DOM.
 */
import type { EvaluationSummary, RolloutRecord, SamplingArgs, Task } from '../../envs/index.ts';
import type { CompletionOutcome, EnvironmentInfo, SandboxChatRequest, SandboxTrajectory } from '../../isolation/protocol.ts';

export type { CompletionOutcome, EnvironmentInfo, SandboxChatRequest, SandboxTrajectory } from '../../isolation/protocol.ts';

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

/**
 * The tool simulator the app lends an environment (passed with `Comlink.proxy` to `loadEnvironment`):
 * the sandbox gives it to `loadEnvironment(args)` as `args.simulatorClient`, a client whose calls
 * come here. The app holds the real simulator and any key; a simulator that fails ends the rollout
 * that called it with an environment error (environments with simulated tools record it), as in tabrl.
 */
export interface SandboxSimulatorHost {
  /** Answers one simulator call. */
  simulatorCompletion(request: SandboxChatRequest): Promise<CompletionOutcome>;
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
  /** Who plays: the app's client (default), or the tasks' planted reference paths, played in the sandbox (a warm-up's teacher for tasks planted backwards; `EnvironmentInfo.plantedPaths`). */
  policy?: 'host' | 'planted-paths';
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
   * export with `args`, plus `args.judgeClient` relayed to `judge` and `args.simulatorClient` relayed
   * to `simulator` when the app lends them.
   */
  loadEnvironment(code: string, args: Record<string, unknown>, judge?: SandboxJudgeHost, simulator?: SandboxSimulatorHost): Promise<EnvironmentInfo>;
  /** Evaluates the loaded environment; model calls go back through `host`. */
  evaluate(options: SandboxEvaluateOptions, host: SandboxHost): Promise<SandboxEvaluateResult>;
  /** Rolls out training task `taskIndex` once (for GRPO), or `task` when given (a task of the app's pool, `taskIndex` its place there); model calls go back through `host`. Errors are in the trajectory. */
  rollout(taskIndex: number, samplingArgs: SamplingArgs, model: string, host: SandboxHost, task?: Task): Promise<SandboxTrajectory>;
  /** The loaded environment's training tasks, as plain data (the first pool of training with synthesis). */
  trainingTasks(): Task[];
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
