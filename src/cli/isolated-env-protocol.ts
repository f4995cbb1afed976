/**
 * The messages between `tabrl` and the child process that runs an environment file
 * (src/cli/isolated-env-child.ts, which relays them to and from the QuickJS engine that runs the
 * environment's code, src/cli/quickjs-guest.ts), over Node's IPC channel.
 * The data shapes are the browser sandbox's (src/workers/sandbox/protocol.ts): what loading learns,
 * a model call as plain data and its outcome, a finished rollout with its verdict. Only the
 * transport differs: Node IPC messages instead of comlink over a MessagePort.
 */
import type { Message, RubricScore, SamplingArgs, Task } from '../envs/index.ts';
import type { CompletionOutcome, EnvironmentInfo, SandboxChatRequest, SandboxTrajectory } from '../workers/sandbox/protocol.ts';

export type { CompletionOutcome, EnvironmentInfo, SandboxChatRequest, SandboxTrajectory } from '../workers/sandbox/protocol.ts';

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

/** Host → child. */
export type HostMessage =
  /**
   * Start the engine with `guest` (the environment library and quickjs-guest.ts as one script), run the bundled environment
   * (CommonJS text) in it and call its default export with `args`; `judge` adds `args.judgeClient`, `simulator` adds `args.simulatorClient`. The engine may use
   * `memoryBytes` in all, and each stretch of its code may run `timeLimitMs`.
   */
  | { type: 'load'; code: string; guest: string; filename: string; args: Record<string, unknown>; judge: boolean; simulator: boolean; maxMessageBytes: number; memoryBytes: number; timeLimitMs: number }
  | { type: 'rollout'; rolloutId: number; task: TaskReference; taskIndex?: number; samplingArgs?: SamplingArgs; model?: string }
  | { type: 'completion'; callId: number; outcome: CompletionOutcome }
  /** Run the rubric's group reward functions on the finished rollouts of one task (`rolloutId` names this piece of work, as a rollout's). */
  | { type: 'score-group'; rolloutId: number; group: SandboxTrajectory[] }
  /** Cancel a rollout (the run was interrupted). */
  | { type: 'abort'; rolloutId: number }
  /** Are you there? A child that does not answer is stuck in synchronous code. */
  | { type: 'ping' };

/** Child → host. */
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
