/**
 * The training jobs (a warm-up or GRPO) around their work: prepared (the environment, a ready
 * engine, the open run's unfinished job to continue), given a run (the open one, from its
 * checkpoint, or a new one), run by the one job runner, and stopped, paused or resumed. The work
 * itself is in warmup-job.ts and grpo-job.ts.
 */
import type { EnvironmentInfo } from '../../../workers/sandbox-bridge.ts';
import { pauseEngineJob, resetEngine } from '../../../workers/engine-bridge.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';
import { usePlayground } from '../../store/index.ts';
import { isBusy as isBusyState } from '../../store/selectors.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { compileModel } from '../environment/monaco-setup.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { createJobController, runJob, stopJob, type JobContext, type LentModels } from '../jobs/job-runner.ts';
import { engineModel, engineState, ensureEngine } from './engine-state.ts';
import { clearStorageProblem, persistRun, restoreRun, saveCheckpoint, settledWrites, storageProblem } from './run-records.ts';
import { unfinishedJob, type RunEnvironment, type RunJob, type TrainingRun } from './training-slice.ts';

const store = usePlayground;

/** What the training jobs keep between calls (see action-state.ts). */
const jobState = actionState(() => ({
  /** The warm-up or GRPO job's Stop and pause gate (demonstrations start no new rollout while paused; the engine holds its own gate between steps). */
  jobs: createJobController(),
  /** Asks the person a yes/no question (a browser confirm; tests replace it with `setAskPerson`). */
  askPerson: (question: string): boolean => window.confirm(question),
}));

/** Replaces how the person is asked before a run goes on with changed code (unit tests answer for them). */
export function setAskPerson(ask: (question: string) => boolean): void {
  jobState.askPerson = ask;
}

/** The environment the open run's last job trained on, when it has one and its code differs from `environment`'s. */
function changedCode(run: TrainingRun, environment: RunEnvironment): RunEnvironment | null {
  const previous = run.lastJob?.environment;
  return previous && previous.source !== environment.source ? previous : null;
}

/**
 * Makes sure the engine holds the weights of a run for this environment: the open one (from its
 * checkpoint) or a new one. A new job on the open run with other code than its last job's asks
 * first; null when the person declines (nothing changed).
 */
export async function ensureRun(name: string, environment: RunEnvironment, continuing: boolean): Promise<{ run: TrainingRun; note: string | null } | null> {
  const { trainingRun, trainingSettings, settings } = store.getState();
  const sameRun = trainingRun && trainingRun.environment === name && (trainingRun.id === engineState.activeRunId || trainingRun.checkpointStep !== null);
  if (sameRun && !continuing) {
    const previous = changedCode(trainingRun, environment);
    const question =
      `The open run on ${name} (${trainingRun.sft.length} SFT + ${trainingRun.grpo.length} GRPO steps) was trained with other code (from the file “${previous?.label}”) than the open file “${environment.label}” has now. ` +
      'Train this run further with the changed code? Cancel starts nothing; "New run" in the Training tab starts a fresh run with it.';
    if (previous && !jobState.askPerson(question)) return null;
  }
  if (sameRun && trainingRun.id === engineState.activeRunId) return { run: trainingRun, note: null };
  if (sameRun) return restoreRun(trainingRun);
  // Weights imported from a file are the new run's starting point (the engine holds them, with a fresh optimizer); otherwise fresh weights.
  const imported = store.getState().importedModel;
  if (!imported) await resetEngine(settings.seed);
  const { baseline } = engineState;
  const before = !imported && baseline && baseline.seed === settings.seed && baseline.environment === name && baseline.model === engineModel() ? [baseline.evaluation] : [];
  engineState.baseline = null;
  engineState.freshSeed = null;
  const now = Date.now();
  const run: TrainingRun = {
    id: `run-${now.toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
    environment: name,
    args: environment.args,
    settings: trainingSettings,
    seed: settings.seed,
    createdAt: now,
    updatedAt: now,
    sft: [],
    grpo: [],
    evaluations: before,
    checkpointStep: null,
    model: engineModel(),
    ...(imported ? { startedFrom: imported } : {}),
  };
  engineState.activeRunId = run.id;
  store.getState().setImportedModel(null);
  store.getState().setTrainingRun(run);
  store.getState().setLatestRollouts([]);
  persistRun();
  return { run, note: null };
}

/** What a job runs: the environment (the open run's own when continuing its unfinished job, else the open file and the panel's arguments), the run's unfinished job if continued, and a note saying which. */
export interface PreparedJob {
  environment: RunEnvironment;
  pending: { run: TrainingRun; job: RunJob } | null;
  note: string | null;
  /** The tool simulator the job's sandbox lent its environment (its label), once the environment has loaded. */
  simulator?: string;
}

/**
 * What a job needs before it starts: the environment to run and a ready engine; null (with the
 * failure shown, or nothing started when the person declined) when something is missing.
 * Continuing the open run's unfinished job uses the code, arguments and settings it started with,
 * never the open file's; a job stored before jobs kept their code asks before using the open file.
 */
async function prepareJob(mode: 'warmup' | 'train', signal: AbortSignal): Promise<PreparedJob | null> {
  const saved = currentEnvironment();
  if (!saved) return null;
  const now = Date.now();
  store.getState().updateJob({ status: 'running', mode, phase: 'compiling', done: 0, total: 0, startedAt: now, phaseStartedAt: now, failure: null, note: null });
  const fail = (failure: string) => {
    store.getState().updateJob({ status: 'failed', failure });
    return null;
  };
  const pending = pendingJob(mode === 'warmup' ? 'sft' : 'grpo');
  const model = environmentModel(saved.id, saved.source);
  let environment: RunEnvironment;
  let note: string | null = null;
  if (pending?.job.environment) {
    environment = pending.job.environment;
    const differs = model.getValue() !== environment.source;
    note = `Continuing the run with its own code (from the file “${environment.label}”), arguments and settings${differs ? `; the open file “${saved.name}” differs and is not used` : ''}.`;
  } else {
    const compiled = await compileModel(model);
    if (!compiled.ok) return fail(`${compiled.problems.length} compile error(s) — fix them first. Line ${compiled.problems[0]!.line}: ${compiled.problems[0]!.message}`);
    let args: Record<string, unknown>;
    try {
      args = pending ? pending.run.args : parseArgs(store.getState().settings.argsJson);
    } catch (error) {
      return fail(errorMessage(error));
    }
    if (
      pending &&
      !jobState.askPerson(
        `The open run (${pending.run.environment}) was stored before runs kept their code. Continue it with the code of the open file “${saved.name}” and the run's own arguments and settings? Cancel starts nothing.`,
      )
    ) {
      store.getState().updateJob({ status: 'idle' });
      return null;
    }
    environment = { label: saved.name, ...(saved.builtin ? { builtin: saved.builtin } : {}), source: model.getValue(), code: compiled.code, args };
  }
  try {
    // A warm-up whose teacher is the expert needs a built-in or tasks planted backwards; the loaded environment says which (warmup-job.ts).
    if (signal.aborted) throw new Error('stopped');
    store.getState().updateJob({ phase: 'starting the engine' });
    await ensureEngine();
  } catch (error) {
    if (signal.aborted) {
      jobFinished(true, 'Stopped before the job began; nothing ran and nothing changed.');
      return null;
    }
    return fail(errorMessage(error));
  }
  if (signal.aborted) {
    jobFinished(true, 'Stopped before the job began; nothing ran and nothing changed.');
    return null;
  }
  return { environment, pending, note };
}

/** Ends a job the person declined to start (nothing ran, nothing changed). */
export function jobDeclined(): void {
  store.getState().updateJob({ status: 'idle', failure: null, note: null });
}

/** The engine job's memory budget from the panel's knob (WebGPU; empty: absent, so the engine takes the GPU's default budget). */
export function memoryBudgetOption(memoryBudget: number | null): { memoryBudgetMiB?: number } {
  return memoryBudget === null ? {} : { memoryBudgetMiB: memoryBudget };
}

/** Notes joined into one (the empty ones left out), or null. */
export function joinNotes(...notes: (string | null)[]): string | null {
  return notes.filter((part): part is string => Boolean(part)).join(' ') || null;
}

/** Ends a job as done: stopped or finished, with its notes (and the last storage failure, if any). */
export function jobFinished(stopped: boolean, ...notes: (string | null)[]): void {
  store.getState().updateJob({ status: 'done', phase: stopped ? 'stopped' : 'finished', note: joinNotes(...notes, storageProblem()) });
}

/** The open run's unfinished job of `phase`, which Warm up / Train continue (with its settings and arguments). */
export function pendingJob<P extends RunJob['phase']>(phase: P): { run: TrainingRun; job: Extract<RunJob, { phase: P }> } | null {
  const run = store.getState().trainingRun;
  const job = unfinishedJob(run);
  return run && job?.phase === phase ? { run, job: job as Extract<RunJob, { phase: P }> } : null;
}

/** Makes the job the run's last one (so checkpoints record it) and shows its progress. */
export function beginJob(run: TrainingRun, job: RunJob, label: string, note: string | null): void {
  store.getState().setTrainingRun({ ...run, lastJob: job });
  store.getState().updateJob({ phase: label, done: job.nextStep, doneAtPhaseStart: job.nextStep, total: job.options.steps, phaseStartedAt: Date.now(), note });
  persistRun();
}

/**
 * Runs `train` (a job's work in the engine); when it fails before `job` took a step, puts the run's
 * last job back to `previous`: the failed job trained nothing, and left as the run's unfinished job,
 * Train would continue it with its own code (a reward function that always failed, say) instead of
 * starting a new job from the open file once the person has fixed it.
 */
export async function forgettingUntrainedJob<T>(job: RunJob, previous: RunJob | undefined, train: () => Promise<T>): Promise<T> {
  try {
    return await train();
  } catch (error) {
    const untrained = (run: TrainingRun | null) => run?.lastJob?.phase === job.phase && run.lastJob.offset === job.offset && run.lastJob.nextStep === job.nextStep;
    if (untrained(store.getState().trainingRun)) {
      store.getState().setTrainingRun((current) => {
        if (!current || !untrained(current)) return current;
        const { lastJob: _failed, ...rest } = current;
        return previous ? { ...rest, lastJob: previous } : rest;
      });
      persistRun();
    }
    throw error;
  }
}

/**
 * Runs a warm-up or GRPO job with the one job runner (job-runner.ts): prepared by `prepareJob`,
 * ended as stopped (a checkpoint of the steps so far, then `stoppedNote`) or failed in the job's
 * part of the store. `phase` is the job's own work and reports its own success.
 */
export async function runTrainingJob(mode: 'warmup' | 'train', stoppedNote: string | null, phase: (context: JobContext<PreparedJob>) => Promise<void>): Promise<void> {
  await runJob<PreparedJob>({
    controller: jobState.jobs,
    isBusy,
    prepare: (signal) => {
      clearStorageProblem();
      return prepareJob(mode, signal);
    },
    sandbox: ({ environment }) => ({ code: environment.code, label: environment.label, args: environment.args, timeLimitMs: store.getState().settings.timeLimitMs }),
    phase,
    stoppedBeforeStart: () => jobFinished(true, 'Stopped before the job began; nothing ran and nothing changed.'),
    stoppedWhileLoading: (error) => jobFinished(true, `The environment "${error.environmentName}" was still loading: the sandbox was shut down and nothing ran.`),
    stopped: async () => {
      saveCheckpoint();
      await settledWrites();
      jobFinished(true, stoppedNote);
    },
    failed: (error) => store.getState().updateJob({ status: 'failed', failure: errorMessage(error) }),
    ended: () => {
      if (store.getState().job.pausedAt !== undefined) store.getState().updateJob({ pausedAt: undefined });
    },
  });
}

/** Whether a job (evaluation, warm-up or GRPO) is running now. */
export function isBusy(): boolean {
  const { job, run } = store.getState();
  return isBusyState({ job, run });
}

/** Stops the warm-up or training job: the engine stops before its next step and the rollouts in flight are cancelled. */
export function stopTraining(): void {
  if (!jobState.jobs.stop) return;
  store.getState().updateJob({ status: 'stopping' });
  stopJob(jobState.jobs);
}

/** Pauses the warm-up or training job: the engine holds between steps (the GPU idles) and no new rollout starts; Stop still works. */
export function pauseTraining(): void {
  const { jobs } = jobState;
  if (!jobs.stop || store.getState().job.status !== 'running' || store.getState().job.pausedAt !== undefined) return;
  jobs.gate.pause();
  void pauseEngineJob(true);
  store.getState().updateJob({ pausedAt: Date.now() });
}

/** Resumes a paused job where it held; its clocks leave out the pause, so the ETA stays honest. */
export function resumeTraining(): void {
  const { pausedAt, startedAt, phaseStartedAt } = store.getState().job;
  if (pausedAt === undefined) return;
  const paused = Date.now() - pausedAt;
  store.getState().updateJob({ pausedAt: undefined, startedAt: startedAt + paused, phaseStartedAt: phaseStartedAt + paused });
  jobState.jobs.gate.resume();
  void pauseEngineJob(false);
}

/** Keeps the tool simulator lent to the job's environment (the Studio's choice, lent as the Judge card's judge is) and says so in the job's note. */
export function noteLentSimulator(prepared: PreparedJob, lent: LentModels): void {
  if (lent.simulator === undefined) return;
  prepared.simulator = lent.simulator;
  const note = `The tools are simulated by ${lent.simulator} (lent as args.simulatorClient).`;
  prepared.note = joinNotes(prepared.note, note);
  store.getState().updateJob({ note: joinNotes(store.getState().job.note, note) });
}

/** The job with the simulator lent this time (a continued job may run with another than it started with). */
export function withLentSimulator<J extends RunJob>(job: J, prepared: PreparedJob): J {
  const { simulator: _before, ...rest } = job;
  return (prepared.simulator !== undefined ? { ...rest, simulator: prepared.simulator } : rest) as J;
}

/** Adds the sandbox's warnings about argument keys the file never read to the job's note (shown while it runs and after). */
export function noteUnusedArgs(prepared: PreparedJob, info: Pick<EnvironmentInfo, 'unusedArgWarnings'>): void {
  const warnings = (info.unusedArgWarnings ?? []).map((warning) => `${warning}.`);
  if (warnings.length === 0) return;
  prepared.note = joinNotes(prepared.note, ...warnings);
  store.getState().updateJob({ note: joinNotes(store.getState().job.note, ...warnings) });
}
