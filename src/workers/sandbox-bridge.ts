/**
 * The one module that owns the sandbox: it starts a fresh sandbox (an isolated frame running the
 * runtime in a worker) for each job, talks to it over comlink, answers its model calls with the
 * app's policy, and watches it. Every call into environment code has a time limit: a rollout that
 * stays in environment code too long, or a worker that stops answering while no model call is
 * pending, gets the sandbox terminated and reported as a `SandboxTimeoutError` naming the
 * environment and the rollout. What the sandbox returns (the environment's description, rollouts,
 * scored groups) is checked as the CLI checks its isolated process's messages
 * (src/isolation/message-check.ts); data that fails stops the sandbox with a `SandboxDataError`.
 * Stop asks the sandbox to finish, then terminates it after a grace period.
 *
 * One shape of use: `openSandbox`, a session that stays up for a whole job: it evaluates (the
 * playground's evaluation, or a warm-up's demonstrations), rolls out training tasks one at a time for
 * GRPO, and scores each finished group with the rubric's group rewards (under the same time limit).
 *
 * It does not build the frame itself (that needs the DOM, which this layer does not see): the caller
 * passes a `CreateSandboxFrame`, e.g. src/ui/features/jobs/sandbox-frame.ts.
 */
import * as Comlink from 'comlink';
import runtimeSource from 'virtual:tabrl-sandbox-runtime';
import type { ChatClient, EvaluationSummary, RolloutRecord, SamplingArgs, Task } from '../envs/index.ts';
import type {
  CompletionOutcome,
  EnvironmentInfo,
  RolloutStart,
  SandboxApi,
  SandboxChatRequest,
  SandboxEvaluateOptions,
  SandboxHost,
  SandboxJudgeHost,
  SandboxSimulatorHost,
  SandboxTrajectory,
} from './sandbox/protocol.ts';
import { answerCall } from '../isolation/relay.ts';
import { checkEnvironmentInfo, checkTasks, checkTrajectories, type CheckedValue } from '../isolation/message-check.ts';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../isolation/protocol.ts';

export type { EnvironmentInfo, SandboxEvaluateOptions, SandboxTrajectory } from './sandbox/protocol.ts';

/** A started sandbox frame: the port its worker listens on, and how to destroy it (terminating the worker). */
export interface SandboxFrame {
  port: MessagePort;
  /** Registers a listener for errors the frame reports (worker failed to start, uncaught error). */
  onError(listener: (message: string) => void): void;
  dispose(): void;
}

/** Creates an isolated frame that runs `runtime` (script text) as a classic worker. */
export type CreateSandboxFrame = (runtime: string) => Promise<SandboxFrame>;

/** The person stopped the job while the environment was loading; the sandbox was shut down and nothing ran. */
export class SandboxStoppedError extends Error {
  override readonly name = 'SandboxStoppedError';

  constructor(readonly environmentName: string) {
    super(`Stopped while the environment "${environmentName}" was loading; the sandbox was shut down and nothing ran.`);
  }
}

/** Environment code ran past its time limit, or the sandbox stopped answering; the sandbox was terminated. */
export class SandboxTimeoutError extends Error {
  override readonly name = 'SandboxTimeoutError';

  constructor(
    message: string,
    readonly environmentName: string,
    readonly rollout?: { taskIndex: number; rolloutIndex: number },
  ) {
    super(message);
  }
}

/** The sandbox returned data that fails the isolation layer's check (forged, malformed or too large); the sandbox was shut down. */
export class SandboxDataError extends Error {
  override readonly name = 'SandboxDataError';

  constructor(
    message: string,
    readonly environmentName: string,
  ) {
    super(message);
  }
}

/** The judge failed to answer (unreachable, refused, a 4xx): the run was stopped rather than scoring rollouts 0. */
export class JudgeFailedError extends Error {
  override readonly name = 'JudgeFailedError';

  constructor(
    readonly judgeLabel: string,
    readonly reason: string,
    readonly kind: string,
  ) {
    super(
      `The judge (${judgeLabel}) failed: ${reason}. The run stopped: a judge that cannot answer would score every rollout 0, which is no reward. Check the Judge card (URL, model, key), or choose the offline heuristic judge.`,
    );
  }
}

/** A judge the app lends the environment: its client stays here; the sandbox gets `args.judgeClient`, whose calls come back to it. */
export interface LentJudge {
  client: ChatClient;
  /** The model name the environment receives as `args.judgeModel`. */
  model: string;
  /** What the person picked, for messages ("endpoint gpt-4o-mini at https://..."). */
  label: string;
}

/** A tool simulator the app lends the environment: its client stays here; the sandbox gets `args.simulatorClient` (with `args.simulatorModel`), whose calls come back to it. */
export interface LentSimulator {
  client: ChatClient;
  /** The model name the environment receives as `args.simulatorModel`. */
  model: string;
  /** What the person picked, for messages and the run's record ("endpoint qwen at https://..."). */
  label: string;
}

/** What a sandbox session needs: the environment file, its arguments and the policy that answers its model calls. */
export interface SandboxSessionRequest {
  /** The environment module as CommonJS JavaScript (`require('tabrl')`, `exports.default`). */
  code: string;
  /** A name for messages until the environment reports its own. */
  label: string;
  args: Record<string, unknown>;
  /** The policy, held by the app: model calls from the sandbox are answered with it. */
  client: ChatClient;
  /** A judge to lend the environment as `args.judgeClient` (with `args.judgeModel`); its failure stops the session with a `JudgeFailedError`. */
  judge?: LentJudge;
  /** A tool simulator to lend the environment as `args.simulatorClient` (with `args.simulatorModel`); its failures end the rollouts that called it, as environment errors. */
  simulator?: LentSimulator;
  /** Milliseconds environment code may run without returning (default 5000). */
  timeLimitMs?: number;
  createFrame: CreateSandboxFrame;
  onRolloutStarted?: (start: RolloutStart) => void;
  /** Stops the job: while the environment loads, the sandbox is shut down at once (top-level code may never yield); later, evaluations and rollouts stop as `stop()` does. */
  signal?: AbortSignal;
}

/** One evaluation to run in a fresh sandbox. */
/** How long an evaluation waits for records still on their way after its result arrived. */
const RECORD_GRACE_MS = 5_000;

/** How an evaluation in the sandbox ended; `summary` is absent when it failed before finishing. */
export interface SandboxEvaluation {
  info?: EnvironmentInfo;
  summary?: EvaluationSummary;
  stoppedEarly?: string;
  wallMs: number;
}

/** A sandbox with an environment loaded, kept up across calls (a training run); every call keeps the time limits. */
export interface SandboxSession {
  readonly info: EnvironmentInfo;
  /** Evaluates the environment (evaluation or training split); records stream through `onRecord`. */
  evaluate(options: SandboxEvaluateOptions, onRecord?: (record: RolloutRecord, done: number, total: number) => void): Promise<Omit<SandboxEvaluation, 'info'>>;
  /** Rolls out training task `taskIndex` (or `task`, a task of the app's pool) once with the session's policy; rejects when the sandbox fails or is stopped. */
  rollout(taskIndex: number, samplingArgs: SamplingArgs, model: string, task?: Task): Promise<SandboxTrajectory>;
  /** The environment's training tasks as plain data, checked (the first pool of training with synthesis). */
  trainingTasks(): Promise<Task[]>;
  /**
   * Adds the group rewards to one task's finished rollouts (returned as they came when the rubric has
   * none). A throwing group function is an error on the group's rollouts; one that runs past the time
   * limit terminates the sandbox (a `SandboxTimeoutError`), as a rollout does.
   */
  scoreGroup(group: SandboxTrajectory[]): Promise<SandboxTrajectory[]>;
  /** Cancels the model calls in flight and asks the environment to stop; after a grace period the sandbox is terminated. */
  stop(): void;
  /** Terminates the sandbox. */
  dispose(): void;
}

const DEFAULT_TIME_LIMIT_MS = 5_000;
/** How long the fresh worker may take to parse the runtime and answer its first call (before any environment code runs). */
const STARTUP_GRACE_MS = 10_000;
/** How long a stopped evaluation may take to wind down before the sandbox is terminated. */
const STOP_GRACE_MS = 3_000;
const WATCH_INTERVAL_MS = 100;

interface ActiveRollout extends RolloutStart {
  /** Set for a group being scored: what runs, for the time-out message ("the group rewards of task 3"). */
  group?: string;
  waitingForModel: boolean;
  /** When it last entered environment code (started, or got a model reply). */
  since: number;
}

/** Starts a fresh sandbox, loads the environment in it and returns the session; the caller disposes of it. */
export async function openSandbox(request: SandboxSessionRequest): Promise<SandboxSession> {
  const timeLimitMs = request.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  const frame = await request.createFrame(runtimeSource);
  const api = Comlink.wrap<SandboxApi>(frame.port);
  const modelCalls = new AbortController();
  const active = new Map<number, ActiveRollout>();
  let environmentName = request.label;
  let phase: 'loading' | 'running' = 'loading';
  let stopping = false;
  let disposed = false;
  let lastSignOfLife = Date.now() + STARTUP_GRACE_MS;
  let pendingModelCalls = 0;
  /** Calls to the lent models (judge, simulator) in flight: they are made from environment code, so the rollouts' clocks wait for them. */
  let pendingLentCalls = 0;
  /** Calls into the sandbox in flight: while there are none, silence is no sign of a stuck worker. */
  let callsInFlight = 0;
  /** Ids of the groups being scored, in the watchdog's table next to the rollouts (negative: the sandbox's own ids are not). */
  let nextGroupId = -2;

  let fail: (error: Error) => void = () => {};
  const failed = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  frame.onError((message) => fail(new Error(`the sandbox failed: ${message}`)));

  const stall = (what: string, rollout?: ActiveRollout) => {
    const where = rollout?.group ? ` in ${rollout.group}` : rollout ? ` in task ${rollout.taskIndex}, rollout ${rollout.rolloutIndex}` : '';
    fail(
      new SandboxTimeoutError(
        `Environment "${environmentName}" was stopped: ${what}${where} ran for more than ${(timeLimitMs / 1000).toFixed(1)} s without returning (an infinite loop?). The sandbox was shut down; the next run starts a fresh one.`,
        environmentName,
        rollout && !rollout.group ? { taskIndex: rollout.taskIndex, rolloutIndex: rollout.rolloutIndex } : undefined,
      ),
    );
  };
  const watchdog = setInterval(() => {
    const now = Date.now();
    const envRollouts = [...active.values()].filter((rollout) => !rollout.waitingForModel).sort((a, b) => a.since - b.since);
    const oldest = envRollouts[0];
    if (oldest && pendingLentCalls === 0 && now - oldest.since > timeLimitMs) return stall('environment code', oldest);
    if (callsInFlight > 0 && pendingModelCalls === 0 && now - lastSignOfLife > timeLimitMs && !stopping) {
      return stall(phase === 'loading' ? 'loading the environment' : 'environment code', oldest);
    }
  }, WATCH_INTERVAL_MS);
  const alive = () => {
    lastSignOfLife = Math.max(lastSignOfLife, Date.now());
  };

  const host: SandboxHost = {
    async createCompletion(rolloutId, chatRequest): Promise<CompletionOutcome> {
      alive();
      const rollout = active.get(rolloutId);
      if (rollout) rollout.waitingForModel = true;
      pendingModelCalls += 1;
      try {
        return await answerCall(request.client, chatRequest, modelCalls.signal);
      } finally {
        pendingModelCalls -= 1;
        if (rollout) {
          rollout.waitingForModel = false;
          rollout.since = Date.now();
        }
        alive();
      }
    },
    rolloutStarted(start) {
      alive();
      active.set(start.rolloutId, { ...start, waitingForModel: false, since: Date.now() });
      request.onRolloutStarted?.(start);
    },
    rolloutFinished(rolloutId) {
      alive();
      active.delete(rolloutId);
    },
    recordFinished() {
      alive();
    },
  };
  const hostProxy = Comlink.proxy(host);

  // The lent models (the judge, the tool simulator): their calls come from environment code (a
  // rubric, a simulated tool) without saying which rollout makes them, so while any is in flight no
  // rollout's clock runs, and each restarts when it returns. A worker stuck in a loop cannot make
  // such calls, so the watchdog still catches it after that. One relay answers both roles; only what
  // a failure means differs: the judge's stops the run, the simulator's is the rollout's (the
  // environment records a SimulatorError).
  const relayLentCalls =
    (lent: { client: ChatClient }, onFailure?: (outcome: Extract<CompletionOutcome, { ok: false }>) => void) =>
    async (lentRequest: SandboxChatRequest): Promise<CompletionOutcome> => {
      alive();
      pendingModelCalls += 1;
      pendingLentCalls += 1;
      try {
        const outcome = await answerCall(lent.client, lentRequest, modelCalls.signal);
        if (!outcome.ok && outcome.kind !== 'aborted' && !stopping && !disposed) onFailure?.(outcome);
        return outcome;
      } finally {
        pendingModelCalls -= 1;
        pendingLentCalls -= 1;
        const now = Date.now();
        for (const rollout of active.values()) if (!rollout.waitingForModel) rollout.since = Math.max(rollout.since, now);
        alive();
      }
    };
  const lentJudge = request.judge;
  const judgeHost: SandboxJudgeHost | undefined = lentJudge && {
    judgeCompletion: relayLentCalls(lentJudge, (outcome) => fail(new JudgeFailedError(lentJudge.label, outcome.message, outcome.kind))),
  };
  const lentSimulator = request.simulator;
  const simulatorHost: SandboxSimulatorHost | undefined = lentSimulator && { simulatorCompletion: relayLentCalls(lentSimulator) };

  /** Runs one call into the sandbox, under the watchdog, failing fast when the sandbox fails. */
  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    if (disposed) throw new Error(`the sandbox of "${environmentName}" was shut down`);
    callsInFlight += 1;
    alive();
    try {
      return await Promise.race([run(), failed]);
    } finally {
      callsInFlight -= 1;
    }
  };
  /** The value a check passed, or the sandbox failed with a `SandboxDataError` saying why (thrown here too). */
  const checked = <T>(result: CheckedValue<T>): T => {
    if (result.ok) return result.value;
    const error = new SandboxDataError(`Environment "${environmentName}" was stopped: ${result.reason}. The sandbox was shut down; the next run starts a fresh one.`, environmentName);
    fail(error);
    throw error;
  };
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    clearInterval(watchdog);
    modelCalls.abort();
    fail(new Error('stopped'));
    frame.dispose();
  };

  // Stop while loading: top-level code may never yield, so the sandbox goes at once.
  const stopLoading = () => {
    fail(new SandboxStoppedError(environmentName));
    dispose();
  };
  let info: EnvironmentInfo;
  try {
    if (request.signal?.aborted) {
      stopLoading();
      await failed;
    }
    request.signal?.addEventListener('abort', stopLoading, { once: true });
    // The runtime's first answer (abort() is a no-op while nothing runs) says it is parsed and listening;
    // only then does loading start, with the plain time limit the failure message states.
    await call(() => api.abort());
    lastSignOfLife = Date.now();
    const args = { ...request.args, ...(lentJudge ? { judgeModel: lentJudge.model } : {}), ...(lentSimulator ? { simulatorModel: lentSimulator.model } : {}) };
    info = checked(
      checkEnvironmentInfo(await call(() => api.loadEnvironment(request.code, args, judgeHost && Comlink.proxy(judgeHost), simulatorHost && Comlink.proxy(simulatorHost))), DEFAULT_MAX_MESSAGE_BYTES),
    );
  } catch (error) {
    dispose();
    throw error;
  } finally {
    request.signal?.removeEventListener('abort', stopLoading);
  }
  environmentName = info.name;
  phase = 'running';

  return {
    info,
    async evaluate(options, onRecord) {
      const started = Date.now();
      // Records come through their own proxy port, the result through the main one: the result can
      // arrive before the last records, so wait for them (a warm-up would otherwise miss demonstrations).
      let delivered = 0;
      let expected = Infinity;
      let allDelivered: () => void = () => {};
      const evaluationHost: SandboxHost = {
        ...host,
        recordFinished(record, done, total) {
          alive();
          delivered++;
          onRecord?.(record, done, total);
          if (delivered >= expected) allDelivered();
        },
      };
      const result = await call(() => api.evaluate(options, Comlink.proxy(evaluationHost)));
      expected = result.summary?.numRollouts ?? 0;
      if (delivered < expected) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, RECORD_GRACE_MS);
          allDelivered = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return { ...result, wallMs: Date.now() - started };
    },
    async rollout(taskIndex, samplingArgs, model, task) {
      const trajectory = await call(() => api.rollout(taskIndex, samplingArgs, model, hostProxy, task));
      return checked(checkTrajectories([trajectory], 1, DEFAULT_MAX_MESSAGE_BYTES))[0]!;
    },
    async trainingTasks() {
      return checked(checkTasks(await call(() => api.trainingTasks()), DEFAULT_MAX_MESSAGE_BYTES));
    },
    async scoreGroup(group) {
      if (!info.groupRewardNames?.length || group.length === 0) return group;
      // Group functions are environment code with no model calls of their own: the watchdog times
      // them like a rollout in environment code (a lent judge's calls pause the clock, as for rollouts).
      const groupId = nextGroupId--;
      const taskIndex = group[0]!.taskIndex ?? -1;
      active.set(groupId, { rolloutId: groupId, taskIndex, rolloutIndex: 0, group: `the group rewards of task ${taskIndex}`, waitingForModel: false, since: Date.now() });
      try {
        return checked(checkTrajectories(await call(() => api.scoreGroup(group)), group.length, DEFAULT_MAX_MESSAGE_BYTES));
      } finally {
        active.delete(groupId);
      }
    },
    stop() {
      if (stopping || disposed) return;
      stopping = true;
      modelCalls.abort();
      void api.abort().catch(() => {});
      setTimeout(() => fail(new Error('stopped')), STOP_GRACE_MS);
    },
    dispose,
  };
}
