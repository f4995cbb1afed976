/**
 * An environment file run in a QuickJS engine inside a child process (isolated-env-child.ts), so
 * that code from a link or a colleague cannot read the API key, reach files or the network, signal
 * processes or hang the command — the CLI's counterpart of the playground's sandbox
 * (src/workers/sandbox-bridge.ts), with the same time limit on every stretch of environment code
 * (loading, setupState, each envResponse, the rubric) and the same watchdog. Every message from the
 * child is checked and capped here (src/isolation/message-check.ts) and every model call it asks for is
 * rebuilt from what it may set (model-call-filter.ts). The messages, the checks, the description of
 * the environment and the failure records are the isolation layer's (src/isolation), shared with the
 * browser sandbox.
 *
 * `IsolatedEnvironment` is an `Environment` whose `rollout` runs in the child: evaluate(), GRPO and
 * the rest use it unchanged. Model calls come back to this process, which answers them with the
 * rollout's client (and the judge lent to `loadEnvironment` as `args.judgeClient`), so keys never
 * leave it. When environment code overruns its limit, or the child dies, the child is killed; the
 * rollouts to blame get an error record, the others run again in a fresh child.
 *
 * Not a general process pool: one child per environment, rollouts multiplexed over its IPC channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  ChatClientError,
  Environment,
  METRIC_KINDS,
  Parser,
  Rubric,
  type ChatClient,
  type MetricKind,
  type RubricScore,
  type RolloutOptions,
  type SamplingArgs,
  type Task,
  type Trajectory,
} from '../envs/index.ts';
import { bundleChildRuntime, bundleGuestRuntime } from './compile-env-file.ts';
import { compileEnvironmentInChild } from './env-compile-process.ts';
import {
  ANSWER_PLACEHOLDER,
  DEFAULT_MAX_MESSAGE_BYTES,
  type ChildMessage,
  type CompletionOutcome,
  type EnvironmentInfo,
  type EnvironmentSetup,
  type HostMessage,
  type SandboxTrajectory,
  type TaskReference,
} from '../isolation/protocol.ts';
import { errorMessage } from '../common/error-message.ts';
import { capText, checkChildMessage } from '../isolation/message-check.ts';
import { failedTrajectory, groupFailureScore, withGroupScore } from '../isolation/failure-records.ts';
import { onAbort } from './abort-fanout.ts';
import { filterModelRequest, ModelErrorLedger } from './model-call-filter.ts';

/** The playground's default time limit on a stretch of environment code (src/ui/features/evaluation/evaluation-slice.ts). */
export const DEFAULT_TIME_LIMIT_MS = 5_000;
/** Time Node gets to start the child and its engine before loading is on the environment's clock (the playground's startup grace). */
const STARTUP_GRACE_MS = 10_000;
/** Memory cap of the engine that runs environment code (the QuickJS runtime's limit, its whole heap). */
const DEFAULT_MEMORY_MB = 1024;
/** Heap cap of the child's Node shell, which holds only tabrl's relay code and messages in flight. */
const SHELL_HEAP_MB = 256;
/** How often a rollout may run again after the child was killed for another rollout's fault. */
const MAX_REPLAYS = 2;
const WATCH_INTERVAL_MS = 100;
/** How much longer than a time limit a child may leave a ping unanswered: its engine interrupts code at the limit, and a loaded machine is slow to say so. */
const SILENCE_GRACE_MS = 1_000;
/** What the child may print to our stderr in all; beyond it, its output is dropped (a terminal is not a disk). */
const MAX_FORWARDED_OUTPUT_BYTES = 4 * 2 ** 20;

/** Limits and lent clients of an isolated environment. */
export interface IsolationOptions {
  /** Milliseconds a stretch of environment code may run without returning (default 5000, the playground's). */
  timeLimitMs?: number;
  /** Milliseconds loading (the module's top level and loadEnvironment) may take once the child runs (default 2 × timeLimitMs). */
  loadTimeLimitMs?: number;
  /** The memory environment code may use in all, in MiB (default 1024): the engine's memory limit. */
  memoryMb?: number;
  /** The largest conversation or rollout the child may send back (default 16 MiB). */
  maxMessageBytes?: number;
  /** A judge held here and lent to `loadEnvironment` as `args.judgeClient`; its calls come back here. */
  judgeClient?: ChatClient;
  /** The model the judge's calls name (environment code cannot choose another; default 'default'). */
  judgeModel?: string;
  /** A tool simulator held here and lent to `loadEnvironment` as `args.simulatorClient`; its calls come back here. */
  simulatorClient?: ChatClient;
  /** The model the simulator's calls name (default 'default'). */
  simulatorModel?: string;
}

/** The lent clients of IsolationOptions, which have no default. */
type LentClientOptions = 'judgeClient' | 'judgeModel' | 'simulatorClient' | 'simulatorModel';

/** Loading the environment file failed: it threw, hung, exited or returned no environment. The message says which. */
export class IsolatedLoadError extends Error {
  override readonly name = 'IsolatedLoadError';
}

/** How one attempt at a rollout in the child ended. */
type RolloutOutcome =
  | { kind: 'done'; trajectory: SandboxTrajectory }
  /** Group rewards scored (a score-group request). */
  | { kind: 'scored'; verdicts: RubricScore[]; passed: boolean[] }
  /**
   * `blame`: 'culprit', this rollout's own code failed; 'suspect', it was one of several rollouts in
   * environment code when the child hung or died, so it may run again once; 'bystander', it was
   * waiting (for the model, or in the child's queue) and runs again.
   */
  | { kind: 'failed'; message: string; blame: Blame; timeout: boolean };

type Blame = 'culprit' | 'suspect' | 'bystander';

interface ActiveRollout {
  taskIndex: number | undefined;
  client: ChatClient;
  /** The model its policy calls name, whatever environment code asks. */
  model: string;
  /** Cancels this rollout's model calls here. */
  calls: AbortController;
  /** Model calls of this rollout in flight: while there are any, the clock of environment code stands still. */
  waitingForModel: number;
  /** When it last entered environment code (the child said so: it started, or got a model reply); undefined while it waits in the child's queue. */
  since: number | undefined;
  settle(outcome: RolloutOutcome): void;
}

interface Loaded {
  info: EnvironmentInfo;
  setup: EnvironmentSetup;
  dataset: Task[];
  evalDataset: Task[] | null;
  demonstrationDataset: Task[] | null;
}

/** Owns the child process: starts it (again after a kill), loads the environment, runs rollouts, watches the clock. */
class ChildSupervisor {
  private child: ChildProcess | undefined;
  private starting: Promise<Loaded> | undefined;
  private readonly active = new Map<number, ActiveRollout>();
  private nextRolloutId = 0;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private loading: { deadline: number; fail(message: string): void; waitingForModel: number } | undefined;
  private stderrTail = '';
  /** The rollout whose code the child last said it runs (-1: none). */
  private running = -1;
  /** When the unanswered ping went out; a child that leaves it unanswered is stuck in synchronous code. */
  private pingSentAt: number | undefined;
  private closed = false;
  /** A load after a restart failed: every later rollout fails with this at once. */
  private broken: string | undefined;
  environmentName: string;

  constructor(
    private readonly dir: string,
    private readonly code: string,
    private readonly guest: string,
    private readonly path: string,
    private readonly args: Record<string, unknown>,
    private readonly limits: Required<Omit<IsolationOptions, LentClientOptions>> & Pick<IsolationOptions, LentClientOptions>,
  ) {
    this.environmentName = basename(path);
  }

  /** Starts a child and loads the environment in it (once at a time). */
  start(): Promise<Loaded> {
    this.starting ??= this.spawnAndLoad().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private spawnAndLoad(): Promise<Loaded> {
    const child = fork(join(this.dir, 'runtime.mjs'), [], {
      execArgv: [...permissionFlags(this.dir), `--max-old-space-size=${SHELL_HEAP_MB}`],
      env: {},
      cwd: this.dir,
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child = child;
    this.stderrTail = '';
    this.running = -1;
    this.pingSentAt = undefined;
    // What environment code prints goes to our stderr, keeping stdout for results (--json), up to a cap.
    let forwarded = 0;
    const forward = (chunk: Buffer) => {
      if (forwarded <= MAX_FORWARDED_OUTPUT_BYTES) {
        forwarded += chunk.length;
        process.stderr.write(
          forwarded <= MAX_FORWARDED_OUTPUT_BYTES ? chunk : `\n[tabrl: the environment process printed over ${MAX_FORWARDED_OUTPUT_BYTES / 2 ** 20} MiB; the rest of its output is dropped]\n`,
        );
      }
      this.stderrTail = (this.stderrTail + chunk.toString('utf8', Math.max(0, chunk.length - 4000))).slice(-4000);
    };
    child.stdout!.on('data', forward);
    child.stderr!.on('data', forward);
    child.on('message', (message: unknown) => this.onRawMessage(child, message));
    child.on('exit', (code, signal) => this.onExit(child, code, signal));
    child.on('error', () => {});
    this.updateRef();
    return new Promise<Loaded>((resolve, reject) => {
      this.loading = {
        deadline: Date.now() + STARTUP_GRACE_MS + this.limits.loadTimeLimitMs,
        waitingForModel: 0,
        fail: (message) => {
          this.loading = undefined;
          reject(new IsolatedLoadError(message));
        },
      };
      this.loadedCallback = (loaded) => {
        this.loading = undefined;
        this.environmentName = loaded.info.name;
        resolve(loaded);
      };
      this.startWatchdog();
      this.send(child, {
        type: 'load',
        code: this.code,
        guest: this.guest,
        filename: this.path,
        args: this.args,
        judge: this.limits.judgeClient !== undefined,
        simulator: this.limits.simulatorClient !== undefined,
        maxMessageBytes: this.limits.maxMessageBytes,
        memoryBytes: this.limits.memoryMb * 2 ** 20,
        timeLimitMs: this.limits.timeLimitMs,
      });
    });
  }

  private loadedCallback: (loaded: Loaded) => void = () => {};

  /** Runs one rollout in the child; resolves with its trajectory or with why it failed. */
  rollout(task: TaskReference, client: ChatClient, samplingArgs: SamplingArgs | undefined, options: RolloutOptions): Promise<RolloutOutcome> {
    return this.run(client, options, (rolloutId) => ({
      type: 'rollout',
      rolloutId,
      task,
      ...(options.taskIndex !== undefined ? { taskIndex: options.taskIndex } : {}),
      ...(samplingArgs ? { samplingArgs } : {}),
      ...(options.model !== undefined ? { model: options.model } : {}),
    }));
  }

  /** Runs the group reward functions on one task's finished rollouts in the child, under the same clock and watchdog as a rollout. */
  scoreGroup(group: SandboxTrajectory[]): Promise<RolloutOutcome> {
    const noPolicy: ChatClient = {
      chat: {
        completions: {
          create: async () => {
            throw new ChatClientError('group reward functions have no policy to call (a judge is args.judgeClient)', 'bad_request');
          },
        },
      },
    };
    return this.run(noPolicy, {}, (rolloutId) => ({ type: 'score-group', rolloutId, group }));
  }

  /** Sends one piece of work (a rollout, or a group to score) to the child and waits for its outcome. */
  private async run(client: ChatClient, options: RolloutOptions, message: (rolloutId: number) => HostMessage): Promise<RolloutOutcome> {
    if (this.closed) return { kind: 'failed', message: `the process of "${this.environmentName}" was shut down`, blame: 'culprit', timeout: false };
    if (this.broken) return { kind: 'failed', message: this.broken, blame: 'culprit', timeout: false };
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null || this.starting) {
      try {
        await this.start();
      } catch (error) {
        this.broken = `${errorMessage(error)} (when it was started again after a failure)`;
        return { kind: 'failed', message: this.broken, blame: 'culprit', timeout: false };
      }
    }
    const child = this.child!;
    const rolloutId = this.nextRolloutId++;
    const calls = new AbortController();
    const abortRollout = () => {
      calls.abort();
      this.send(child, { type: 'abort', rolloutId });
    };
    const stopListening = options.signal ? onAbort(options.signal, abortRollout) : undefined;
    try {
      return await new Promise<RolloutOutcome>((settle) => {
        this.active.set(rolloutId, { taskIndex: options.taskIndex, client, model: options.model ?? 'default', calls, waitingForModel: 0, since: undefined, settle });
        if (child !== this.child || !child.connected) return settle({ kind: 'failed', message: 'the process ended before the rollout started', blame: 'bystander', timeout: false });
        this.startWatchdog();
        this.send(child, message(rolloutId));
      });
    } finally {
      stopListening?.();
      calls.abort();
      this.active.delete(rolloutId);
      this.updateRef();
    }
  }

  /** Checks a message from the child; an invalid one fails the rollout it names and stops the child (the others run again in a fresh one). */
  private onRawMessage(child: ChildProcess, raw: unknown): void {
    if (child !== this.child) return;
    const checked = checkChildMessage(raw, this.limits.maxMessageBytes);
    if (checked.ok) return this.onMessage(child, checked.message);
    this.child = undefined;
    child.kill('SIGKILL');
    this.loading?.fail(`${checked.reason} while loading "${this.environmentName}"; its process was stopped`);
    const named = checked.rolloutId !== undefined ? this.active.get(checked.rolloutId) : undefined;
    this.settleAll(named ? [named] : [], `${checked.reason}; its process was stopped`, false, `${checked.reason}; a fresh process runs the remaining rollouts`, 'culprit');
    this.updateRef();
  }

  private onMessage(child: ChildProcess, message: ChildMessage): void {
    if (message.type === 'ready') {
      if (this.loading) this.loading.deadline = Date.now() + this.limits.loadTimeLimitMs;
    } else if (message.type === 'loaded') {
      this.loadedCallback({ info: message.info, setup: message.setup, dataset: message.dataset, evalDataset: message.evalDataset, demonstrationDataset: message.demonstrationDataset });
    } else if (message.type === 'load-failed') {
      this.loading?.fail(message.message);
      this.kill();
    } else if (message.type === 'entered') {
      const rollout = this.active.get(message.rolloutId);
      if (rollout) rollout.since = Date.now();
    } else if (message.type === 'running') {
      this.running = message.rolloutId;
    } else if (message.type === 'pong') {
      this.pingSentAt = undefined;
    } else if (message.type === 'rollout-done') {
      this.restoreModelErrors(message.trajectory.errors);
      this.active.get(message.rolloutId)?.settle({ kind: 'done', trajectory: message.trajectory });
    } else if (message.type === 'group-scored') {
      for (const verdict of message.verdicts) this.restoreModelErrors(verdict.errors);
      this.active.get(message.rolloutId)?.settle({ kind: 'scored', verdicts: message.verdicts, passed: message.passed });
    } else if (message.type === 'rollout-failed') {
      const text =
        message.timeout === true ? `environment code of "${this.environmentName}" ${message.message}` : `${this.environmentName}: rollout() threw: ${this.modelErrors.restore(message.message)}`;
      this.active.get(message.rolloutId)?.settle({ kind: 'failed', message: text, blame: 'culprit', timeout: message.timeout === true });
    } else if (message.type === 'create-completion') {
      void this.answerModelCall(child, message);
    }
  }

  /** Answers a model call of the child with the rollout's client (or a lent judge or simulator), holding the clock of that rollout still meanwhile. */
  private async answerModelCall(child: ChildProcess, message: Extract<ChildMessage, { type: 'create-completion' }>): Promise<void> {
    const rollout = this.active.get(message.rolloutId);
    const lent =
      message.client === 'judge'
        ? { client: this.limits.judgeClient, model: this.limits.judgeModel }
        : message.client === 'simulator'
          ? { client: this.limits.simulatorClient, model: this.limits.simulatorModel }
          : undefined;
    const client = lent ? lent.client : rollout?.client;
    const filtered = filterModelRequest(message.request, lent ? (lent.model ?? 'default') : (rollout?.model ?? 'default'));
    let outcome: CompletionOutcome;
    if (!client) {
      outcome = {
        ok: false,
        message: lent ? `no ${message.client} was given (tabrl eval --${message.client}-base-url ...)` : 'a model call outside any rollout has no policy to answer it',
        kind: 'bad_request',
      };
    } else if (!filtered.ok) {
      outcome = { ok: false, message: filtered.message, kind: 'bad_request' };
    } else {
      if (rollout) rollout.waitingForModel += 1;
      if (this.loading && message.rolloutId === -1) this.loading.waitingForModel += 1;
      const started = Date.now();
      try {
        const completion = await client.chat.completions.create({ ...filtered.request, ...(rollout ? { signal: rollout.calls.signal } : {}) });
        // A reply to a cancelled rollout is not delivered, even from a client that ignores the signal.
        outcome = rollout?.calls.signal.aborted ? { ok: false, message: 'the request was cancelled', kind: 'aborted' } : { ok: true, completion };
      } catch (error) {
        // The endpoint's own text may echo the request's headers (the key): environment code gets a
        // stand-in, and the rollout's record gets the real text back when it returns (restoreModelErrors).
        outcome = this.modelErrors.record(
          capText(errorMessage(error), 2000),
          error instanceof ChatClientError ? error.kind : 'bad_response',
          error instanceof ChatClientError ? error.status : undefined,
        );
      } finally {
        // The clock starts again when the child says the reply reached the rollout ('entered').
        if (rollout) {
          rollout.waitingForModel -= 1;
          if (rollout.waitingForModel === 0) rollout.since = undefined;
        }
        if (this.loading && message.rolloutId === -1) {
          this.loading.waitingForModel -= 1;
          this.loading.deadline += Date.now() - started;
        }
      }
    }
    this.send(child, { type: 'completion', callId: message.callId, outcome });
  }

  private readonly modelErrors = new ModelErrorLedger();

  /** Puts the real text of failed model calls back into errors that environment code recorded with their stand-ins. */
  private restoreModelErrors(errors: { message: string }[]): void {
    for (const error of errors) error.message = this.modelErrors.restore(error.message);
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return;
    this.child = undefined;
    // The engine's own limit is an exception inside it; this is the Node shell's heap (V8's fatal error).
    const outOfMemory = /heap out of memory|Allocation failed/i.test(this.stderrTail);
    const how = outOfMemory ? `ran out of memory (its Node shell may use ${SHELL_HEAP_MB} MiB)` : signal !== null ? `was ended by ${signal}` : `exited with code ${code}`;
    const message = `the process running environment "${this.environmentName}" ${how}`;
    this.loading?.fail(`${message} while loading it`);
    // Blame the rollout whose code the child last said it ran (it died in it); failing that, the ones
    // in environment code, or any of them.
    const running = this.active.get(this.running);
    const inEnvCode = [...this.active.values()].filter((rollout) => rollout.waitingForModel === 0 && rollout.since !== undefined);
    const blamed = running ? [running] : inEnvCode.length > 0 ? inEnvCode : [...this.active.values()];
    this.settleAll(blamed, message, false, `${message}; a fresh process runs the remaining rollouts`, blamed.length === 1 ? 'culprit' : 'suspect');
    this.updateRef();
  }

  private startWatchdog(): void {
    this.watchdog ??= setInterval(() => this.watch(), WATCH_INTERVAL_MS);
    this.updateRef();
  }

  /** Kills the child when environment code overran its limit; the overrunning rollouts fail, the others run again. */
  private watch(): void {
    const now = Date.now();
    if (this.loading && this.loading.waitingForModel === 0 && now > this.loading.deadline) {
      this.loading.fail(
        `loading environment "${this.environmentName}" took more than ${seconds(this.limits.loadTimeLimitMs)} (an infinite loop at the top level, or a promise that never settles?); its process was stopped`,
      );
      this.kill();
      return;
    }
    const overrun = [...this.active.values()].filter((rollout) => rollout.waitingForModel === 0 && rollout.since !== undefined && now - rollout.since > this.limits.timeLimitMs);
    const sendPing = () => {
      if (!this.child || this.active.size === 0 || this.pingSentAt !== undefined) return;
      this.pingSentAt = now;
      this.send(this.child, { type: 'ping' });
    };
    // A child silent for a whole time limit is stuck even when no rollout's clock says so (its code
    // may have taken the message listener away): blame the rollout it last ran, or every one in it.
    const silent = this.pingSentAt !== undefined && now - this.pingSentAt > this.limits.timeLimitMs + SILENCE_GRACE_MS;
    if (overrun.length === 0 && silent && this.active.size > 0) {
      // Rollouts that never entered environment code in this child were queued behind the trouble: they run again.
      const entered = [...this.active.values()].filter((rollout) => rollout.waitingForModel === 0 && rollout.since !== undefined);
      const child = this.child;
      this.child = undefined;
      child?.kill('SIGKILL');
      const message = `the process running environment "${this.environmentName}" stopped answering for ${seconds(this.limits.timeLimitMs)} (did its code take tabrl's message listener away?); it was stopped and a fresh one runs the remaining rollouts`;
      return this.settleAll(entered, message, true, message, entered.length === 1 ? 'culprit' : 'suspect');
    }
    if (overrun.length === 0) return sendPing();
    // A child that answers pings is not blocked: each overrunning rollout waits on its own promise.
    // A silent one is stuck in the synchronous code of the rollout it last said it runs.
    const blocked = this.pingSentAt !== undefined && now - this.pingSentAt > Math.min(1000, this.limits.timeLimitMs / 2);
    if (this.pingSentAt !== undefined && !blocked) return; // wait for the ping's answer to tell which
    const runningRollout = this.active.get(this.running);
    const culprits = blocked && runningRollout ? [runningRollout] : overrun;
    const child = this.child;
    this.child = undefined;
    child?.kill('SIGKILL');
    const message = `environment code of "${this.environmentName}" ran for more than ${seconds(this.limits.timeLimitMs)} without returning (${blocked ? 'an infinite loop?' : 'a promise that never settles?'}); its process was stopped and a fresh one runs the remaining rollouts`;
    this.settleAll(
      culprits,
      message,
      true,
      'stopped with the process of another rollout',
      blocked && runningRollout !== undefined ? 'culprit' : overrun.length === 1 || !blocked ? 'culprit' : 'suspect',
    );
  }

  /** Settles every active rollout: the blamed ones with `blame`, the others as bystanders that run again. */
  private settleAll(blamed: ActiveRollout[], message: string, timeout: boolean, bystanderMessage: string, blame: Blame): void {
    for (const rollout of this.active.values()) {
      rollout.calls.abort();
      if (!blamed.includes(rollout)) rollout.settle({ kind: 'failed', message: bystanderMessage, blame: 'bystander', timeout: false });
      else rollout.settle({ kind: 'failed', message, blame, timeout });
    }
  }

  /** Keeps this process alive only while the child has work: an idle child never holds a finished command open. */
  private updateRef(): void {
    const busy = this.active.size > 0 || this.loading !== undefined;
    if (!busy && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
    const child = this.child;
    if (!child) return;
    if (busy) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
    for (const stream of [child.stdout, child.stderr] as const) {
      const handle = stream as unknown as { ref?: () => void; unref?: () => void } | null;
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  private send(child: ChildProcess, message: HostMessage): void {
    if (child.connected) child.send(message, () => {});
  }

  private kill(): void {
    const child = this.child;
    this.child = undefined;
    child?.kill('SIGKILL');
    this.updateRef();
  }

  /** Kills the child and removes its files. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.kill();
    for (const rollout of this.active.values()) rollout.settle({ kind: 'failed', message: `the process of "${this.environmentName}" was shut down`, blame: 'culprit', timeout: false });
    if (this.watchdog) clearInterval(this.watchdog);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The host's stand-in for the child's parser: it formats reference answers as the child's would (parsing stays in the child). */
class TemplateParser extends Parser {
  constructor(private readonly template: string) {
    super();
  }

  override formatAnswer(answer: string): string {
    return this.template.split(ANSWER_PLACEHOLDER).join(answer);
  }
}

/** An environment file running in its own locked-down process; `close()` ends the process. */
export class IsolatedEnvironment extends Environment {
  /** What the child learned when it loaded the environment (its class, rewards, tools). */
  readonly info: EnvironmentInfo;
  private readonly verdicts = new WeakMap<Trajectory, boolean>();
  private readonly references = new Map<Task, TaskReference>();

  /** Built by loadIsolatedEnvironment. */
  constructor(
    loaded: Loaded,
    private readonly supervisor: ChildSupervisor,
  ) {
    const { info, setup } = loaded;
    super({
      name: info.name,
      dataset: loaded.dataset,
      ...(loaded.evalDataset ? { evalDataset: loaded.evalDataset } : {}),
      ...(loaded.demonstrationDataset ? { demonstrationDataset: loaded.demonstrationDataset } : {}),
      ...(setup.systemPrompt !== undefined ? { systemPrompt: setup.systemPrompt } : {}),
      fewShot: setup.fewShot,
      samplingArgs: setup.samplingArgs,
      passThreshold: info.passThreshold,
      ...(info.answerTemplate !== undefined ? { parser: new TemplateParser(info.answerTemplate) } : {}),
      // The names and weights of the child's reward functions; scoring itself happens in the child.
      rubric: new Rubric({
        rewards: info.rewardNames.map((name, i) => ({ name, weight: info.rewardWeights[i] ?? 0, ...metricOf(info.metricKinds?.[name], info.rewardWeights[i] ?? 0), fn: () => Number.NaN })),
        groupRewards: (info.groupRewardNames ?? []).map((name, i) => ({ name, weight: info.groupRewardWeights?.[i] ?? 0, fn: () => [] })),
      }),
    });
    this.info = info;
    loaded.demonstrationDataset?.forEach((task, index) => this.references.set(task, { split: 'demonstration', index }));
    loaded.dataset.forEach((task, index) => this.references.set(task, { split: 'train', index }));
    loaded.evalDataset?.forEach((task, index) => this.references.set(task, { split: 'eval', index }));
  }

  /** Runs the rollout in the child; a hang, crash or exit there becomes this rollout's error record. */
  override async rollout(client: ChatClient, task: Task, samplingArgs?: SamplingArgs, options: RolloutOptions = {}): Promise<Trajectory> {
    const started = Date.now();
    const reference = this.references.get(task) ?? { task };
    let replays = 0;
    let suspected = 0;
    for (;;) {
      const outcome = await this.supervisor.rollout(reference, client, samplingArgs, options);
      if (outcome.kind === 'done') {
        const { passed, ...trajectory } = outcome.trajectory;
        this.verdicts.set(trajectory, passed);
        return trajectory;
      }
      if (outcome.kind === 'scored') return this.failedTrajectory(task, options, 'the environment process answered a rollout with group scores', false, started);
      // A suspect runs again once: a second time under suspicion, it is the culprit.
      if (outcome.blame === 'suspect') suspected += 1;
      else if (outcome.blame === 'bystander') replays += 1;
      const again = outcome.blame === 'suspect' ? suspected < 2 : outcome.blame === 'bystander' && replays <= MAX_REPLAYS;
      if (again && !options.signal?.aborted) continue;
      return this.failedTrajectory(task, options, outcome.message, outcome.timeout, started);
    }
  }

  /** Runs the group reward functions in the child; when that fails (a hang, a crash), every rollout of the group gets the error and fails. */
  override async scoreGroup<T extends Trajectory>(group: T[]): Promise<T[]> {
    if (!this.rubric.hasGroupRewards || group.length === 0) return group;
    const plain = group.map((trajectory) => ({ ...trajectory, passed: this.isPassed(trajectory) })) as SandboxTrajectory[];
    let outcome = await this.supervisor.scoreGroup(plain);
    // Stopped with another rollout's process: score again in the fresh one (a few times at most).
    for (let replays = 0; outcome.kind === 'failed' && outcome.blame === 'bystander' && replays < MAX_REPLAYS; replays++) outcome = await this.supervisor.scoreGroup(plain);
    const names = this.rubric.groupRewards.map((reward) => reward.name);
    if (outcome.kind === 'scored' && outcome.verdicts.length !== group.length)
      outcome = { kind: 'failed', message: `the environment process sent ${outcome.verdicts.length} group verdicts for ${group.length} rollouts`, blame: 'culprit', timeout: false };
    return group.map((trajectory, i) => {
      const verdict = outcome.kind === 'scored' ? outcome.verdicts[i]! : groupFailureScore(names, outcome.kind === 'failed' ? outcome.message : 'no verdict');
      const scored = withGroupScore(trajectory, verdict);
      this.verdicts.set(scored, outcome.kind === 'scored' ? outcome.passed[i]! : false);
      return scored;
    });
  }

  /** The child's verdict on a trajectory it returned. */
  override isPassed(trajectory: Trajectory): boolean {
    return this.verdicts.get(trajectory) ?? super.isPassed(trajectory);
  }

  /** Ends the child process (idempotent). */
  close(): void {
    this.supervisor.close();
  }

  private failedTrajectory(task: Task, options: RolloutOptions, message: string, timeout: boolean, started: number): Trajectory {
    return failedTrajectory(this, task, options, { source: `${this.name} (isolated process)`, message, timeout, elapsedMs: Date.now() - started });
  }
}

/** Bundles the environment file at `path`, starts its process, and loads it there with `args`. */
export async function loadIsolatedEnvironment(path: string, args: Record<string, unknown>, options: IsolationOptions = {}, bundle?: string): Promise<IsolatedEnvironment> {
  // Environment code is bundled only in a process without the host's environment (env-compile-process.ts); `bundle` is such a bundle when the caller already has one.
  const [code, guest] = await Promise.all([bundle ?? compileEnvironmentInChild(path).then((compiled) => compiled.bundle!), guestRuntime()]);
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-env-'));
  const supervisor = new ChildSupervisor(dir, code, guest, path, args, {
    timeLimitMs,
    loadTimeLimitMs: options.loadTimeLimitMs ?? 2 * timeLimitMs,
    memoryMb: options.memoryMb ?? DEFAULT_MEMORY_MB,
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    ...(options.judgeClient ? { judgeClient: options.judgeClient } : {}),
    ...(options.judgeModel !== undefined ? { judgeModel: options.judgeModel } : {}),
    ...(options.simulatorClient ? { simulatorClient: options.simulatorClient } : {}),
    ...(options.simulatorModel !== undefined ? { simulatorModel: options.simulatorModel } : {}),
  });
  process.once('exit', () => supervisor.close());
  try {
    await bundleChildRuntime(join(dir, 'runtime.mjs'));
    return new IsolatedEnvironment(await supervisor.start(), supervisor);
  } catch (error) {
    supervisor.close();
    throw error;
  }
}

let guestBundle: Promise<string> | undefined;

/** The engine's script (the environment library and quickjs-guest.ts), bundled once per process. */
function guestRuntime(): Promise<string> {
  guestBundle ??= bundleGuestRuntime().catch((error: unknown) => {
    guestBundle = undefined;
    throw error;
  });
  return guestBundle;
}

/** A reward function's declared metric kind as the child reported it: only for weight 0 and a known kind; anything else stays an undeclared metric (a check). */
function metricOf(kind: unknown, weight: number): { metric?: MetricKind } {
  return weight === 0 && METRIC_KINDS.includes(kind as MetricKind) ? { metric: kind as MetricKind } : {};
}

/**
 * Node's permission model for the child: read access to `dir` (its runtime) only, which also refuses
 * writes, child processes, workers and native addons. The flag is --experimental-permission from
 * Node 20 and --permission from Node 23.5; the warning it prints is silenced where Node can (20.11+).
 */
function permissionFlags(dir: string): string[] {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const stable = major > 23 || (major === 23 && minor >= 5);
  const canSilence = major > 20 || (major === 20 && minor >= 11);
  return [stable ? '--permission' : '--experimental-permission', `--allow-fs-read=${dir}`, ...(canSilence && !stable ? ['--disable-warning=ExperimentalWarning'] : [])];
}

function seconds(ms: number): string {
  return `${+(ms / 1000).toFixed(1)} s`;
}
