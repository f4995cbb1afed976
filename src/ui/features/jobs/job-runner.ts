/**
 * The one runner of the playground's jobs (evaluate, warm-up, train): it refuses while another job
 * runs, makes the stop controller first (so Stop works while compiling, starting the engine or the
 * policy, and loading the environment), prepares the job, opens its pause gate, owns its sandbox
 * session (stopped on Stop, disposed of at the end) and ends it: stopped before it began, stopped
 * while the environment loaded, stopped later, or failed. Each job keeps only its own phase and
 * says how each ending reads in its part of the store.
 */
import type { ChatClient } from '../../../envs/index.ts';
import { PauseGate } from '../../../workers/engine/pause-gate.ts';
import { openSandbox, SandboxStoppedError, type EnvironmentInfo, type SandboxSession } from '../../../workers/sandbox-bridge.ts';
import { buildJudge } from '../judge/judge-actions.ts';
import { buildSimulator } from '../judge/simulator-actions.ts';
import { createIframeSandbox } from './sandbox-frame.ts';

/** What one kind of job keeps between its runs: the Stop of the job in progress and its pause gate. */
export interface JobController {
  /** Aborted by Stop; undefined while no job of this kind runs. */
  stop: AbortController | undefined;
  /** Closed while the person has paused the job: no new rollout starts. */
  readonly gate: PauseGate;
}

/** A controller with no job running and its gate open. */
export function createJobController(): JobController {
  return { stop: undefined, gate: new PauseGate() };
}

/** The environment a job's sandbox loads: compiled code, its label and arguments, and the time limit of environment code. */
export interface JobSandbox {
  code: string;
  label: string;
  args: Record<string, unknown>;
  timeLimitMs: number;
}

/** The models a session lent its environment, by label (absent: none lent, the environment's own stand-in). */
export interface LentModels {
  judge?: string;
  simulator?: string;
}

/** What a job's own phase gets from the runner: the stop signal, what it prepared, its pause gate and its sandbox session. */
export interface JobContext<P> {
  signal: AbortSignal;
  prepared: P;
  gate: PauseGate;
  /** Opens the job's sandbox with `client` as its policy; Stop stops it, and the runner disposes of it at the end. `onLoaded` gets the environment and the models lent to it. */
  openSession(client: ChatClient, onLoaded?: (info: EnvironmentInfo, lent: LentModels) => void): Promise<SandboxSession>;
  /** Disposes of the session before the job ends (the warm-up, once its demonstrations are made). */
  closeSession(): void;
}

/** One kind of job: its controller, its preparation, its own phase, and how each ending reads. */
export interface JobDefinition<P> {
  controller: JobController;
  /** Whether any job runs now (the runner then starts nothing). */
  isBusy(): boolean;
  /** What the job needs before it runs (compiled code, a policy, an engine); null when it cannot run (the reason already shown) or should not. */
  prepare(signal: AbortSignal): Promise<P | null>;
  /** The environment the job's sandbox loads. */
  sandbox(prepared: P): JobSandbox;
  /** The job's own work; it reports its own success. */
  phase(context: JobContext<P>): Promise<void>;
  /** Stop came before the job ran anything. */
  stoppedBeforeStart(): void;
  /** Stop came while the environment was loading: the sandbox was shut down and nothing ran. */
  stoppedWhileLoading(error: SandboxStoppedError): void;
  /** Stop came while the job ran (keep what it made so far). */
  stopped(): Promise<void>;
  /** The job failed with `error`. */
  failed(error: unknown): void;
  /** Always last, after the sandbox is gone and the gate is open again. */
  ended?(): void;
}

/** Runs one job of `definition`'s kind from start to end (see the module comment); returns once it has ended. */
export async function runJob<P>(definition: JobDefinition<P>): Promise<void> {
  if (definition.isBusy()) return;
  const { controller: jobs } = definition;
  const controller = new AbortController();
  jobs.stop = controller;
  const { signal } = controller;
  let session: SandboxSession | undefined;
  const onStop = () => session?.stop();
  try {
    let prepared: P | null;
    try {
      prepared = await definition.prepare(signal);
    } catch (error) {
      if (signal.aborted) return definition.stoppedBeforeStart();
      return definition.failed(error);
    }
    if (!prepared) return;
    if (signal.aborted) return definition.stoppedBeforeStart();
    jobs.gate.resume();
    signal.addEventListener('abort', onStop, { once: true });
    const environment = definition.sandbox(prepared);
    const context: JobContext<P> = {
      signal,
      prepared,
      gate: jobs.gate,
      openSession: async (client, onLoaded) => {
        // The Judge card's judge and the Studio's tool simulator, lent to the environment as args.judgeClient and
        // args.simulatorClient (their calls come back to this page).
        const judge = await buildJudge();
        const simulator = await buildSimulator();
        session = await openSandbox({ ...environment, client, ...(judge ? { judge } : {}), ...(simulator ? { simulator } : {}), createFrame: createIframeSandbox, signal });
        onLoaded?.(session.info, { ...(judge ? { judge: judge.label } : {}), ...(simulator ? { simulator: simulator.label } : {}) });
        return session;
      },
      closeSession: () => {
        session?.dispose();
        session = undefined;
      },
    };
    try {
      await definition.phase(context);
    } catch (error) {
      if (error instanceof SandboxStoppedError) return definition.stoppedWhileLoading(error);
      if (signal.aborted) return await definition.stopped();
      definition.failed(error);
    }
  } finally {
    signal.removeEventListener('abort', onStop);
    session?.dispose();
    jobs.stop = undefined;
    jobs.gate.resume();
    definition.ended?.();
  }
}

/** Stops the job of `controller` in progress; false when none runs. */
export function stopJob(controller: JobController): boolean {
  if (!controller.stop) return false;
  controller.stop.abort();
  return true;
}
