/**
 * What crosses the boundary around untrusted environment code, for both places it runs: the
 * browser sandbox (a worker in an opaque-origin frame, comlink over a MessagePort, src/workers/sandbox)
 * and the CLI's isolated process (a QuickJS engine in a forked child, Node IPC, src/cli). The data
 * shapes are one set: what loading learns (`EnvironmentInfo`), a model call as plain data and its
 * outcome, a finished rollout with its verdict. The process transport's own messages (`HostMessage`,
 * `ChildMessage`) are here too, beside the shapes they carry; the browser's comlink API is in
 * src/workers/sandbox/protocol.ts.
 *
 * Everything here is plain, structured-cloneable data; nothing holds an API key, a signal or a class
 * instance. What a message from environment code must satisfy is message-check.ts's job.
 */
import type { ChatClientErrorKind, ChatCompletion, ChatRequest, Message, MetricKind, RubricScore, SamplingArgs, Task, ToolSchema, Trajectory } from '../envs/index.ts';

/** What a host learns from loading an environment file (describeEnvironment in environment-info.ts builds it). */
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
  /** How many of the demonstration tasks were planted backwards with a reference path (`info.planted`), which a warm-up can play; absent when none. */
  plantedPaths?: number;
}

/** What `answerTemplate` holds in place of the answer. */
export const ANSWER_PLACEHOLDER = '\u0000ANSWER\u0000';

/** The largest conversation or rollout environment code may send back across the boundary (16 MiB), in either host. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 2 ** 20;

/** A chat request as it crosses to the host: the cancel signal stays behind with the environment. */
export type SandboxChatRequest = Omit<ChatRequest, 'signal'>;

/** The host's answer to a model call: a completion, or the error in plain data (class identity does not survive the crossing). */
export type CompletionOutcome = { ok: true; completion: ChatCompletion } | { ok: false; message: string; kind: ChatClientErrorKind; status?: number };

/** One finished rollout, JSON-safe, with the environment's verdict (a ScoredTrajectory of src/rl). */
export interface SandboxTrajectory extends Trajectory {
  passed: boolean;
}

/** Which task a rollout runs: one of the environment's own (by split and index), or a task given as data. */
export type TaskReference = { split: 'train' | 'eval' | 'demonstration'; index: number } | { task: Task };

/** Which client a model call is for: the rollout's policy, or a model the host lent `loadEnvironment` (`args.judgeClient`, `args.simulatorClient`). */
export type ModelCallClient = 'policy' | 'judge' | 'simulator';

/** The environment's prompt settings, so the host can build a task's prompt without asking the child. */
export interface EnvironmentSetup {
  systemPrompt?: string;
  fewShot: Message[];
  samplingArgs: SamplingArgs;
}

/** Host → child, in the CLI's isolated process (Node IPC to the shell, JSON into its QuickJS engine). */
export type HostMessage =
  /**
   * Start the engine with `guest` (the environment library and quickjs-guest.ts as one script), run the bundled environment
   * (CommonJS text) in it and call its default export with `args`; `judge` adds `args.judgeClient`, `simulator` adds `args.simulatorClient`. The engine may use
   * `memoryBytes` in all, and each stretch of its code may run `timeLimitMs`.
   */
  | {
      type: 'load';
      code: string;
      guest: string;
      filename: string;
      args: Record<string, unknown>;
      judge: boolean;
      simulator: boolean;
      maxMessageBytes: number;
      memoryBytes: number;
      timeLimitMs: number;
    }
  | { type: 'rollout'; rolloutId: number; task: TaskReference; taskIndex?: number; samplingArgs?: SamplingArgs; model?: string }
  | { type: 'completion'; callId: number; outcome: CompletionOutcome }
  /** Run the rubric's group reward functions on the finished rollouts of one task (`rolloutId` names this piece of work, as a rollout's). */
  | { type: 'score-group'; rolloutId: number; group: SandboxTrajectory[] }
  /** Cancel a rollout (the run was interrupted). */
  | { type: 'abort'; rolloutId: number }
  /** Are you there? A child that does not answer is stuck in synchronous code. */
  | { type: 'ping' };

/** Child → host, in the CLI's isolated process; every one is checked by checkChildMessage (message-check.ts). */
export type ChildMessage =
  /** Node started and the engine runs the library: from here on, loading is on the environment's clock. */
  | { type: 'ready' }
  /** The environment loaded: what the sandbox reports, plus what the host needs to format prompts, and the tasks as data. */
  | { type: 'loaded'; info: EnvironmentInfo; setup: EnvironmentSetup; dataset: Task[]; evalDataset: Task[] | null; demonstrationDataset: Task[] | null }
  | { type: 'load-failed'; message: string }
  /** A model call of rollout `rolloutId` (-1: outside any rollout, e.g. at load time). */
  | { type: 'create-completion'; callId: number; rolloutId: number; client: ModelCallClient; request: SandboxChatRequest }
  /** Rollout `rolloutId` is back in environment code: it started, or its model reply reached it. Until then it waits in the child's queue, and its clock stands still. */
  | { type: 'entered'; rolloutId: number }
  /** The child now runs code of rollout `rolloutId` (-1: of none); sent when that changes, so when the child falls silent the last one names the rollout that blocks it. */
  | { type: 'running'; rolloutId: number }
  | { type: 'pong' }
  | { type: 'rollout-done'; rolloutId: number; trajectory: SandboxTrajectory }
  /** The group functions' verdict on each rollout of a group, and whether each rollout passes with it. */
  | { type: 'group-scored'; rolloutId: number; verdicts: RubricScore[]; passed: boolean[] }
  /** The environment's own rollout() threw (the library's never does), or its code ran past the time limit (`timeout`); the message says what. */
  | { type: 'rollout-failed'; rolloutId: number; message: string; timeout?: boolean };
