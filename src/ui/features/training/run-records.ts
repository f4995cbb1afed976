/**
 * The training runs' records as the tab keeps them: each run's record (settings, metrics,
 * evaluations, its job) and its latest full checkpoint, written to IndexedDB (run-storage.ts) one
 * after another; restoring a run's checkpoint into the engine; the evaluations added to the open run.
 */
import type { EvaluationSummary } from '../../../envs/index.ts';
import { CHECKPOINT_FORMAT, type CheckpointState } from '../../../rl/checkpoint.ts';
import { resetEngine, restoreEngineCheckpoint, saveEngineCheckpoint, setEngineWeights, type CheckpointFiles } from '../../../workers/engine-bridge.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';
import { usePlayground } from '../../store/index.ts';
import { engineModel, engineState } from './engine-state.ts';
import * as runStorage from './run-storage.ts';
import type { RunJob, TrainingRun } from './training-slice.ts';

const store = usePlayground;

/** What the run records keep between calls (see action-state.ts). */
const records = actionState(() => ({
  /** Writes to IndexedDB, one after another. */
  writes: Promise.resolve() as Promise<void>,
  /** The last storage failure (a full quota) of the job in progress, kept for its final note. */
  storageProblem: null as string | null,
}));

/** Resolves once every write queued so far has ended. */
export function settledWrites(): Promise<void> {
  return records.writes;
}

/** The last storage failure of the job in progress (null: none). */
export function storageProblem(): string | null {
  return records.storageProblem;
}

/** Forgets the last storage failure (a new job starts). */
export function clearStorageProblem(): void {
  records.storageProblem = null;
}

/** Reloads the list of stored runs. */
export async function refreshRuns(): Promise<void> {
  try {
    store.getState().setPastRuns(await runStorage.listRuns());
  } catch (error) {
    console.warn(`stored runs could not be read: ${errorMessage(error)}`);
  }
}

/** Queues a write to IndexedDB after the ones before it; a failure (a full quota) becomes the job's note. */
function saveLater(write: () => Promise<void>): void {
  records.writes = records.writes.then(write).catch((error: unknown) => {
    records.storageProblem = errorMessage(error);
    store.getState().updateJob({ note: records.storageProblem });
  });
}

/** Stores the open run's record when its weights are the engine's (after each change of its metrics or job). */
export function persistRun(): void {
  const run = store.getState().trainingRun;
  if (!run || run.id !== engineState.activeRunId) return;
  const snapshot = { ...run, updatedAt: Date.now() };
  saveLater(async () => {
    await runStorage.putRun(snapshot);
    await refreshRuns();
  });
}

/** What a run's checkpoint records beside the weights and the optimizer (state.json's `run`). */
interface CheckpointRunRecord {
  runId: string;
  environment: string;
  args: Record<string, unknown>;
  seed: number;
  /** The run's SFT and GRPO steps that the weights have taken. */
  sftSteps: number;
  grpoSteps: number;
  /** The job in progress, with `nextStep` = the checkpoint's. */
  job: RunJob;
}

/** The state.json of a checkpoint of `run` taken before step `job.nextStep` of its job. */
function checkpointState(run: TrainingRun, job: RunJob): CheckpointState & { run: CheckpointRunRecord } {
  return {
    format: CHECKPOINT_FORMAT,
    phase: job.phase,
    nextStep: job.nextStep,
    run: {
      runId: run.id,
      environment: run.environment,
      args: run.args,
      seed: run.seed,
      sftSteps: job.phase === 'sft' ? job.offset + job.nextStep : run.sft.length,
      grpoSteps: job.phase === 'grpo' ? job.offset + job.nextStep : run.grpo.length,
      job,
    },
  };
}

/** The run's job with its next step after `steps` (metrics of the job, numbered from the job's start). */
export function advanceJob(run: TrainingRun, lastStep: number): TrainingRun {
  return run.lastJob ? { ...run, lastJob: { ...run.lastJob, nextStep: lastStep + 1 } } : run;
}

/**
 * Stores a full checkpoint of the run whose weights are in the engine: `taken` (files the engine sent
 * between two steps, and the job's next step then), or one taken now (the job has ended).
 */
export function saveCheckpoint(taken?: { files: CheckpointFiles; nextStep: number }): void {
  const run = store.getState().trainingRun;
  if (!run || run.id !== engineState.activeRunId || !run.lastJob) return;
  const state = checkpointState(run, taken ? { ...run.lastJob, nextStep: taken.nextStep } : run.lastJob);
  const step = state.run.sftSteps + state.run.grpoSteps;
  saveLater(async () => {
    const files = new Map(taken?.files ?? (await saveEngineCheckpoint(state)));
    files.set('state.json', new TextEncoder().encode(`${JSON.stringify(state, null, 2)}\n`));
    await runStorage.putCheckpoint({ runId: run.id, step, savedAt: Date.now(), files: Object.fromEntries(files) });
    store.getState().setTrainingRun((current) => (current && current.id === run.id ? { ...current, checkpointStep: step } : current));
    await runStorage.putRun({ ...store.getState().trainingRun!, updatedAt: Date.now() });
    await refreshRuns();
  });
}

/**
 * Appends an evaluation of the in-tab model to the run whose weights are in the engine (creating
 * none). With no run there, an evaluation of fresh weights is kept as the baseline of the next new
 * run that starts from the same weights (same seed, model and environment).
 */
export async function recordEvaluation(summary: EvaluationSummary): Promise<void> {
  const run = store.getState().trainingRun;
  const state = engineState;
  if (!run || run.id !== state.activeRunId) {
    const environment = store.getState().run.environment?.name;
    state.baseline =
      state.activeRunId === null && state.freshSeed !== null && !store.getState().importedModel && environment
        ? { evaluation: { at: Date.now(), sftSteps: 0, grpoSteps: 0, summary }, environment, seed: state.freshSeed, model: engineModel() }
        : null;
    return;
  }
  const simulator = store.getState().run.simulator;
  store.getState().setTrainingRun({
    ...run,
    evaluations: [...run.evaluations, { at: Date.now(), sftSteps: run.sft.length, grpoSteps: run.grpo.length, summary, ...(simulator !== undefined ? { simulator } : {}) }],
  });
  persistRun();
  await records.writes;
}

/** Loads the open run's checkpoint into the engine when the engine holds other weights (so evaluating the in-tab model evaluates that run). */
export async function loadOpenRunWeights(): Promise<void> {
  const run = store.getState().trainingRun;
  // A run of another model stays out of this model: the evaluation is of the model as loaded.
  if (!run || run.id === engineState.activeRunId || run.checkpointStep === null || (run.model ?? 'tiny') !== engineModel()) return;
  await restoreRun(run);
}

/** A stored checkpoint that cannot be used; the run's record is untouched. */
function checkpointProblem(run: TrainingRun, what: string): Error {
  return new Error(
    `The checkpoint of the open run (${run.environment}, ${run.sft.length} SFT + ${run.grpo.length} GRPO steps) ${what}, so it cannot be continued. Its metrics and evaluations are kept; press "New run" in the Training tab to train from fresh weights.`,
  );
}

/**
 * Loads a stored run's checkpoint into the engine: weights and AdamW state, and the run's position
 * from state.json (metrics past the checkpoint are dropped from the open run, since those steps will
 * be taken again). Returns the run as restored and a note saying from where it continues.
 */
export async function restoreRun(run: TrainingRun): Promise<{ run: TrainingRun; note: string }> {
  const trainedOn = run.model ?? 'tiny';
  if (trainedOn !== engineModel()) {
    throw new Error(
      `The open run was trained on ${trainedOn}, but the in-tab model is now ${engineModel()}: its weights cannot be loaded into another model. ` +
        `Choose ${trainedOn} in the Policy card to continue or evaluate it, or press "New run" in the Training tab to train ${engineModel()} from its own weights.`,
    );
  }
  let stored;
  try {
    stored = await runStorage.getCheckpoint(run.id);
  } catch (error) {
    throw checkpointProblem(run, `could not be read from browser storage (${errorMessage(error)})`);
  }
  if (!stored) throw checkpointProblem(run, 'is missing from browser storage');
  if (!stored.files) {
    // Stored before checkpoints were full: the weights only, so the optimizer starts fresh.
    if (!stored.weights) throw checkpointProblem(run, 'is empty');
    await resetEngine(run.seed);
    await setEngineWeights(stored.weights);
    engineState.activeRunId = run.id;
    engineState.freshSeed = null;
    store.getState().setImportedModel(null);
    const { lastJob: _dropped, ...restored } = run;
    store.getState().setTrainingRun(restored);
    return { run: restored, note: `Continued from an older weights-only checkpoint (step ${stored.step}); the optimizer starts fresh.` };
  }
  let state: CheckpointState;
  let optimizerStep: number;
  try {
    ({ state, optimizerStep } = await restoreEngineCheckpoint(new Map(Object.entries(stored.files))));
  } catch (error) {
    throw checkpointProblem(run, `is corrupt (${errorMessage(error)})`);
  }
  const record = state.run as Partial<CheckpointRunRecord>;
  if (record.runId !== run.id || typeof record.sftSteps !== 'number' || typeof record.grpoSteps !== 'number' || !record.job) {
    throw checkpointProblem(run, 'is corrupt (its state.json does not describe this run)');
  }
  engineState.activeRunId = run.id;
  engineState.freshSeed = null;
  store.getState().setImportedModel(null);
  const restored: TrainingRun = {
    ...run,
    sft: run.sft.slice(0, record.sftSteps),
    grpo: run.grpo.slice(0, record.grpoSteps),
    lastJob: { ...record.job, nextStep: state.nextStep },
    checkpointStep: record.sftSteps + record.grpoSteps,
  };
  store.getState().setTrainingRun(restored);
  const phase = state.phase === 'sft' ? 'SFT' : 'GRPO';
  return { run: restored, note: `Continued from the checkpoint before ${phase} step ${state.nextStep + 1} of ${record.job.options.steps} (optimizer step ${optimizerStep} restored).` };
}
