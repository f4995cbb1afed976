/**
 * The playground's training actions: start the engine, warm the in-tab model up (demonstrations
 * from a teacher — the built-in's expert, the endpoint or a WebLLM model — made in the sandbox,
 * then SFT in the engine), train it with GRPO (rollouts in the sandbox, the update in the engine),
 * stop, and keep runs (metrics and checkpoints in IndexedDB) that survive a reload and can be
 * reopened or deleted. Components call these.
 */
import type { EvaluationSummary, Message, RolloutRecord } from '../../../envs/index.ts';
import type { EnvironmentInfo } from '../../../workers/sandbox-bridge.ts';
import { CHECKPOINT_FORMAT, type CheckpointState } from '../../../rl/checkpoint.ts';
import { grpoKnobOptions } from '../../../rl/training-options.ts';
import {
  createEngineChatClient,
  onEngineError,
  pauseEngineJob,
  resetEngine,
  restoreEngineCheckpoint,
  saveEngineCheckpoint,
  setEngineWeights,
  startEngine,
  trainGrpoInEngine,
  trainSftInEngine,
  type CheckpointFiles,
  type GrpoStepReport,
  type SftStepMetrics,
} from '../../../workers/engine-bridge.ts';
import { actionState } from '../../store/action-state.ts';
import { auditScoring, rememberTrainingRollouts } from './training-rollouts.ts';
import { createJobController, runJob, stopJob, type JobContext } from '../jobs/job-runner.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { isBuiltinName } from '../environment/builtins.ts';
import { compileModel } from '../environment/monaco-setup.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { pausableClient } from '../jobs/pausable-client.ts';
import * as runStorage from './run-storage.ts';
import { loadChosenModel } from '../models/model-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { appTeacherSources } from './teacher-sources.ts';
import { brokenRewardsMessage, buildTeacher, isDemonstration, noDemonstrationsMessage } from './warmup-teacher.ts';
import { unfinishedJob, type RunEnvironment, type RunEvaluation, type RunJob, type TrainingRun } from './training-slice.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { isBusy as isBusyState } from '../../store/selectors.ts';

const store = usePlayground;
/** An evaluation of fresh weights made before any run: the "before" of the next new run that starts from them. */
interface Baseline {
  evaluation: RunEvaluation;
  environment: string;
  seed: number;
  model: string;
}

/** What the training actions keep between calls (see action-state.ts). */
const training = actionState(() => ({
  /** The warm-up or GRPO job's Stop and pause gate (demonstrations start no new rollout while paused; the engine holds its own gate between steps). */
  jobs: createJobController(),
  /** The run whose weights are in the engine now (null: the engine holds no run's weights). */
  activeRunId: null as string | null,
  /** Writes to IndexedDB, one after another. */
  writes: Promise.resolve() as Promise<void>,
  /** Whether the engine's error listener is installed. */
  listening: false,
  /** The last storage failure (a full quota) of the job in progress, kept for its final note. */
  storageProblem: null as string | null,
  /** The seed of the fresh (never trained) weights the engine holds, or null once it holds a run's, restored or imported ones. */
  freshSeed: null as number | null,
  /** An evaluation of those fresh weights made before any run. */
  baseline: null as Baseline | null,
  /** Asks the person a yes/no question (a browser confirm; tests replace it with `setAskPerson`). */
  askPerson: (question: string): boolean => window.confirm(question),
}));

/** Starts the engine once (GPU device and tiny model) and loads the chosen in-tab model; failures (no WebGPU, no adapter, a download) land in the store with what to do. */
export async function ensureEngine(): Promise<void> {
  if (!training.listening) {
    training.listening = true;
    onEngineError((error) => store.getState().setEngine({ status: 'failed', error }));
  }
  const { engine, settings } = store.getState();
  if (engine.status !== 'ready') {
    store.getState().setEngine({ status: 'starting', error: null });
    try {
      const info = await startEngine(settings.seed);
      store.getState().setEngine({ status: 'ready', info, error: null });
      training.freshSeed = info.seed;
    } catch (error) {
      store.getState().setEngine({ status: 'failed', error: errorMessage(error) });
      throw error;
    }
  }
  // Another model holds none of the open run's weights: its own fresh ones.
  if (await loadChosenModel()) {
    training.activeRunId = null;
    training.freshSeed = store.getState().engine.info?.seed ?? null;
  }
}

/** The id of the model in the engine now ("tiny" until another is loaded). */
function engineModel(): string {
  return store.getState().engine.info?.model ?? 'tiny';
}

/** Reloads the list of stored runs. */
export async function refreshRuns(): Promise<void> {
  try {
    store.getState().setPastRuns(await runStorage.listRuns());
  } catch (error) {
    console.warn(`stored runs could not be read: ${errorMessage(error)}`);
  }
}

function saveLater(write: () => Promise<void>): void {
  training.writes = training.writes.then(write).catch((error: unknown) => {
    training.storageProblem = errorMessage(error);
    store.getState().updateJob({ note: training.storageProblem });
  });
}

function persistRun(): void {
  const run = store.getState().trainingRun;
  if (!run || run.id !== training.activeRunId) return;
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
function advanceJob(run: TrainingRun, lastStep: number): TrainingRun {
  return run.lastJob ? { ...run, lastJob: { ...run.lastJob, nextStep: lastStep + 1 } } : run;
}

/**
 * Stores a full checkpoint of the run whose weights are in the engine: `taken` (files the engine sent
 * between two steps, and the job's next step then), or one taken now (the job has ended).
 */
function saveCheckpoint(taken?: { files: CheckpointFiles; nextStep: number }): void {
  const run = store.getState().trainingRun;
  if (!run || run.id !== training.activeRunId || !run.lastJob) return;
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
  const state = training;
  if (!run || run.id !== state.activeRunId) {
    const environment = store.getState().run.environment?.name;
    state.baseline =
      state.activeRunId === null && state.freshSeed !== null && !store.getState().importedModel && environment
        ? { evaluation: { at: Date.now(), sftSteps: 0, grpoSteps: 0, summary }, environment, seed: state.freshSeed, model: engineModel() }
        : null;
    return;
  }
  store.getState().setTrainingRun({ ...run, evaluations: [...run.evaluations, { at: Date.now(), sftSteps: run.sft.length, grpoSteps: run.grpo.length, summary }] });
  persistRun();
  await training.writes;
}

/** Loads the open run's checkpoint into the engine when the engine holds other weights (so evaluating the in-tab model evaluates that run). */
export async function loadOpenRunWeights(): Promise<void> {
  const run = store.getState().trainingRun;
  // A run of another model stays out of this model: the evaluation is of the model as loaded.
  if (!run || run.id === training.activeRunId || run.checkpointStep === null || (run.model ?? 'tiny') !== engineModel()) return;
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
async function restoreRun(run: TrainingRun): Promise<{ run: TrainingRun; note: string }> {
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
    training.activeRunId = run.id;
    training.freshSeed = null;
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
  training.activeRunId = run.id;
  training.freshSeed = null;
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

/** Replaces how the person is asked before a run goes on with changed code (unit tests answer for them). */
export function setAskPerson(ask: (question: string) => boolean): void {
  training.askPerson = ask;
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
async function ensureRun(name: string, environment: RunEnvironment, continuing: boolean): Promise<{ run: TrainingRun; note: string | null } | null> {
  const { trainingRun, trainingSettings, settings } = store.getState();
  const sameRun = trainingRun && trainingRun.environment === name && (trainingRun.id === training.activeRunId || trainingRun.checkpointStep !== null);
  if (sameRun && !continuing) {
    const previous = changedCode(trainingRun, environment);
    const question =
      `The open run on ${name} (${trainingRun.sft.length} SFT + ${trainingRun.grpo.length} GRPO steps) was trained with other code (from the file “${previous?.label}”) than the open file “${environment.label}” has now. ` +
      'Train this run further with the changed code? Cancel starts nothing; "New run" in the Training tab starts a fresh run with it.';
    if (previous && !training.askPerson(question)) return null;
  }
  if (sameRun && trainingRun.id === training.activeRunId) return { run: trainingRun, note: null };
  if (sameRun) return restoreRun(trainingRun);
  // Weights imported from a file are the new run's starting point (the engine holds them, with a fresh optimizer); otherwise fresh weights.
  const imported = store.getState().importedModel;
  if (!imported) await resetEngine(settings.seed);
  const { baseline } = training;
  const before = !imported && baseline && baseline.seed === settings.seed && baseline.environment === name && baseline.model === engineModel() ? [baseline.evaluation] : [];
  training.baseline = null;
  training.freshSeed = null;
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
  training.activeRunId = run.id;
  store.getState().setImportedModel(null);
  store.getState().setTrainingRun(run);
  store.getState().setLatestRollouts([]);
  persistRun();
  return { run, note: null };
}

/** What a job runs: the environment (the open run's own when continuing its unfinished job, else the open file and the panel's arguments), the run's unfinished job if continued, and a note saying which. */
interface PreparedJob {
  environment: RunEnvironment;
  pending: { run: TrainingRun; job: RunJob } | null;
  note: string | null;
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
      !training.askPerson(
        `The open run (${pending.run.environment}) was stored before runs kept their code. Continue it with the code of the open file “${saved.name}” and the run's own arguments and settings? Cancel starts nothing.`,
      )
    ) {
      store.getState().updateJob({ status: 'idle' });
      return null;
    }
    environment = { label: saved.name, ...(saved.builtin ? { builtin: saved.builtin } : {}), source: model.getValue(), code: compiled.code, args };
  }
  try {
    if (mode === 'warmup' && !isBuiltinName(environment.builtin) && !store.getState().importedWarmup && store.getState().teacher === 'expert')
      throw new Error("The warm-up teacher is the built-in's scripted expert, and this file did not start from a built-in: choose the endpoint or a WebLLM model as the teacher.");
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
function jobDeclined(): void {
  store.getState().updateJob({ status: 'idle', failure: null, note: null });
}

/** Notes joined into one (the empty ones left out), or null. */
function joinNotes(...notes: (string | null)[]): string | null {
  return notes.filter((part): part is string => Boolean(part)).join(' ') || null;
}

function jobFinished(stopped: boolean, ...notes: (string | null)[]): void {
  store.getState().updateJob({ status: 'done', phase: stopped ? 'stopped' : 'finished', note: joinNotes(...notes, training.storageProblem) });
}

/** The open run's unfinished job of `phase`, which Warm up / Train continue (with its settings and arguments). */
function pendingJob<P extends RunJob['phase']>(phase: P): { run: TrainingRun; job: Extract<RunJob, { phase: P }> } | null {
  const run = store.getState().trainingRun;
  const job = unfinishedJob(run);
  return run && job?.phase === phase ? { run, job: job as Extract<RunJob, { phase: P }> } : null;
}

/** Makes the job the run's last one (so checkpoints record it) and shows its progress. */
function beginJob(run: TrainingRun, job: RunJob, label: string, note: string | null): void {
  store.getState().setTrainingRun({ ...run, lastJob: job });
  store.getState().updateJob({ phase: label, done: job.nextStep, doneAtPhaseStart: job.nextStep, total: job.options.steps, phaseStartedAt: Date.now(), note });
  persistRun();
}

/**
 * Warm-up: the chosen teacher (the built-in's expert, the endpoint, or the WebLLM model; see
 * warmup-teacher.ts) rolls out training tasks in the sandbox, passing transcripts are
 * kept, and the engine runs SFT on them. An unfinished warm-up of the open run is continued at its
 * next step, with its settings (the teacher is asked again, with the same seed).
 */
export async function startWarmup(): Promise<void> {
  await runTrainingJob('warmup', null, async ({ signal, prepared, gate, openSession, closeSession }) => {
    const { trainingSettings: ts, settings } = store.getState();
    const { environment, pending } = prepared;
    // Imported warm-up data replaces the expert's demonstrations; the sandbox then only reports the environment (name, tools).
    const imported = store.getState().importedWarmup;
    const teacher = imported ? null : await buildTeacher(store.getState().teacher, appTeacherSources(environment.builtin, environment.args));
    const session = await openSession(imported ? createEngineChatClient() : pausableClient(teacher!.client, gate), (info) => noteUnusedArgs(prepared, info));
    const ensured = await ensureRun(session.info.name, environment, pending !== null && session.info.name === pending.run.environment);
    if (!ensured) return jobDeclined();
    const { run, note: restoredNote } = ensured;
    const resume = pending && pending.run.id === run.id ? unfinishedJob(run) : null;
    const demonstrations = resume?.phase === 'sft' ? resume.demonstrations : ts.demonstrations;
    const demonstrationSeed = resume?.phase === 'sft' ? resume.demonstrationSeed : settings.seed;
    store.getState().updateJob({ phase: 'making demonstrations', done: 0, doneAtPhaseStart: 0, total: Math.min(demonstrations, session.info.numTasks), phaseStartedAt: Date.now() });
    const kept: { taskIndex: number; messages: Message[] }[] = imported ? imported.transcripts.map((messages, taskIndex) => ({ taskIndex, messages })) : [];
    const tried: RolloutRecord[] = [];
    // A model teacher samples with the evaluation settings' temperature and length; the expert needs neither.
    const teacherSampling = teacher && teacher.kind !== 'expert' ? { temperature: settings.temperature, max_tokens: settings.maxTokens } : {};
    const made = imported
      ? { stoppedEarly: undefined }
      : await session.evaluate(
          {
            numTasks: demonstrations,
            rolloutsPerTask: 1,
            concurrency: teacher!.concurrency,
            samplingArgs: { seed: demonstrationSeed, ...teacherSampling },
            model: teacher!.model,
            split: 'demonstration',
          },
          (record, done, total) => {
            tried.push(record);
            if (isDemonstration(record)) kept.push({ taskIndex: record.taskIndex, messages: [...record.prompt, ...record.completion] });
            store.getState().updateJob({ done, total });
          },
        );
    const tools = session.info.tools;
    closeSession();
    if (signal.aborted) return jobFinished(true, 'Stopped while making demonstrations.');
    if (made.stoppedEarly) throw new Error(`The warm-up teacher, ${teacher?.label ?? 'the imported data'}, failed, so nothing was trained: ${made.stoppedEarly}`);
    // Demonstrations are picked by the rewards: ones that measure nothing (src/envs/broken-rewards.ts) pick nothing real.
    const broken = teacher && brokenRewardsMessage(teacher, tried, auditScoring(session.info).weights);
    if (broken) throw new Error(broken);
    if (kept.length === 0) throw new Error(noDemonstrationsMessage(teacher ?? { label: 'the imported data' }, tried));
    // In task order, not the order they finished in, so a continued warm-up sees the same batches.
    const transcripts = kept.sort((a, b) => a.taskIndex - b.taskIndex).map((item) => item.messages);
    store.getState().setLastWarmup(imported ?? { origin: 'made', name: run.environment, transcripts });

    const current = store.getState().trainingRun ?? run;
    const sftJob: RunJob =
      resume?.phase === 'sft'
        ? { ...resume, environment }
        : {
            phase: 'sft',
            offset: current.sft.length,
            nextStep: 0,
            demonstrations,
            demonstrationSeed,
            options: { steps: ts.sftSteps, batchSize: ts.sftBatchSize, lr: ts.sftLr, seed: settings.seed, ...(tools ? { tools } : {}) },
            environment,
          };
    beginJob(current, sftJob, `SFT on ${transcripts.length} demonstrations`, joinNotes(prepared.note, restoredNote));
    const offset = sftJob.offset;
    await trainSftInEngine(
      transcripts,
      { ...sftJob.options, startStep: sftJob.nextStep, checkpointEvery: ts.checkpointEvery },
      {
        signal,
        onSteps: (steps: SftStepMetrics[]) => {
          const renumbered = steps.map((step) => ({ ...step, step: offset + step.step }));
          store.getState().setTrainingRun((latest) => (latest ? advanceJob({ ...latest, sft: [...latest.sft, ...renumbered] }, steps.at(-1)!.step) : latest));
          store.getState().updateJob({ done: steps.at(-1)!.step + 1 });
          persistRun();
        },
        onCheckpoint: (files, nextStep) => saveCheckpoint({ files, nextStep }),
      },
    );
    saveCheckpoint();
    await training.writes;
    jobFinished(signal.aborted, `${transcripts.length} demonstrations kept${signal.aborted ? '; stopped early' : ''}.`, prepared.note, restoredNote);
  });
}

/**
 * GRPO: the engine trains on rollouts of training tasks that the sandbox makes with the in-tab model.
 * An unfinished GRPO job of the open run is continued at its next step, with its settings.
 */
export async function startTraining(): Promise<void> {
  const kept = 'The weights and optimizer state so far are kept as a checkpoint.';
  await runTrainingJob('train', kept, async ({ signal, prepared, openSession }) => {
    const { trainingSettings: ts, settings } = store.getState();
    const { environment, pending } = prepared;
    const session = await openSession(createEngineChatClient(), (info) => noteUnusedArgs(prepared, info));
    const scoring = auditScoring(session.info); // how the Audit panel reads this job's rollouts
    const ensured = await ensureRun(session.info.name, environment, pending !== null && session.info.name === pending.run.environment);
    if (!ensured) return jobDeclined();
    const { run, note: restoredNote } = ensured;
    const resume = pending && pending.run.id === run.id ? unfinishedJob(run) : null;
    const grpoJob: RunJob =
      resume?.phase === 'grpo'
        ? { ...resume, environment }
        : {
            phase: 'grpo',
            offset: run.grpo.length,
            nextStep: 0,
            // The table's conversion (src/rl/training-options.ts): the engine hands these to GrpoTrainer as they are.
            options: { ...grpoKnobOptions(ts), steps: ts.grpoSteps, maxTokens: ts.maxTokens, seed: settings.seed + run.grpo.length },
            environment,
          };
    const previousJob = run.lastJob;
    beginJob(run, grpoJob, 'GRPO', joinNotes(prepared.note, restoredNote));
    const offset = grpoJob.offset;
    await forgettingUntrainedJob(grpoJob, previousJob, () =>
      trainGrpoInEngine(
        {
          name: session.info.name,
          numTasks: session.info.numTasks,
          rollout: (taskIndex, samplingArgs) => session.rollout(taskIndex, samplingArgs, engineModel()),
          // Group rewards run in the sandbox too: the engine sends each finished group back here.
          ...(session.info.groupRewardNames?.length ? { scoreGroup: session.scoreGroup } : {}),
        },
        // The rubric's weights let the engine fail a step whose weighted reward functions all failed (src/envs/broken-rewards.ts).
        { ...grpoJob.options, startStep: grpoJob.nextStep, checkpointEvery: ts.checkpointEvery, rewardWeights: scoring.weights },
        {
          signal,
          onSteps: (reports: GrpoStepReport[]) => {
            const metrics = reports.map((report) => ({ ...report.metrics, step: offset + report.metrics.step }));
            const latest = reports.at(-1)!;
            store.getState().setTrainingRun((current) => (current ? advanceJob({ ...current, grpo: [...current.grpo, ...metrics] }, latest.metrics.step) : current));
            if (latest.rollouts.length > 0) store.getState().setLatestRollouts(latest.rollouts);
            for (const report of reports) rememberTrainingRollouts(session.info.name, offset + report.metrics.step, report.rollouts, scoring);
            store.getState().updateJob({ done: latest.metrics.step + 1 });
            persistRun();
          },
          onCheckpoint: (files, nextStep) => saveCheckpoint({ files, nextStep }),
        },
      ),
    );
    saveCheckpoint();
    await training.writes;
    jobFinished(signal.aborted, signal.aborted ? kept : null, prepared.note, restoredNote);
  });
}

/**
 * Runs `train` (a job's work in the engine); when it fails before `job` took a step, puts the run's
 * last job back to `previous`: the failed job trained nothing, and left as the run's unfinished job,
 * Train would continue it with its own code (a reward function that always failed, say) instead of
 * starting a new job from the open file once the person has fixed it.
 */
async function forgettingUntrainedJob<T>(job: RunJob, previous: RunJob | undefined, train: () => Promise<T>): Promise<T> {
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
async function runTrainingJob(mode: 'warmup' | 'train', stoppedNote: string | null, phase: (context: JobContext<PreparedJob>) => Promise<void>): Promise<void> {
  await runJob<PreparedJob>({
    controller: training.jobs,
    isBusy,
    prepare: (signal) => {
      training.storageProblem = null;
      return prepareJob(mode, signal);
    },
    sandbox: ({ environment }) => ({ code: environment.code, label: environment.label, args: environment.args, timeLimitMs: store.getState().settings.timeLimitMs }),
    phase,
    stoppedBeforeStart: () => jobFinished(true, 'Stopped before the job began; nothing ran and nothing changed.'),
    stoppedWhileLoading: (error) => jobFinished(true, `The environment "${error.environmentName}" was still loading: the sandbox was shut down and nothing ran.`),
    stopped: async () => {
      saveCheckpoint();
      await training.writes;
      jobFinished(true, stoppedNote);
    },
    failed: (error) => store.getState().updateJob({ status: 'failed', failure: errorMessage(error) }),
    ended: () => {
      if (store.getState().job.pausedAt !== undefined) store.getState().updateJob({ pausedAt: undefined });
    },
  });
}

function isBusy(): boolean {
  const { job, run } = store.getState();
  return isBusyState({ job, run });
}

/** Stops the warm-up or training job: the engine stops before its next step and the rollouts in flight are cancelled. */
export function stopTraining(): void {
  if (!training.jobs.stop) return;
  store.getState().updateJob({ status: 'stopping' });
  stopJob(training.jobs);
}

/** Pauses the warm-up or training job: the engine holds between steps (the GPU idles) and no new rollout starts; Stop still works. */
export function pauseTraining(): void {
  const { jobs } = training;
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
  training.jobs.gate.resume();
  void pauseEngineJob(false);
}

/** Opens a stored run to look at its charts; a later Warm up or Train continues it from its checkpoint. */
export function openRun(id: string): void {
  if (isBusy()) return;
  const run = store.getState().pastRuns.find((item) => item.id === id);
  if (!run) return;
  store.getState().setTrainingRun(run);
  store.getState().setLatestRollouts([]);
}

/** Adds the sandbox's warnings about argument keys the file never read to the job's note (shown while it runs and after). */
function noteUnusedArgs(prepared: PreparedJob, info: Pick<EnvironmentInfo, 'unusedArgWarnings'>): void {
  const warnings = (info.unusedArgWarnings ?? []).map((warning) => `${warning}.`);
  if (warnings.length === 0) return;
  prepared.note = joinNotes(prepared.note, ...warnings);
  store.getState().updateJob({ note: joinNotes(store.getState().job.note, ...warnings) });
}

/** Forgets the current run: the next Warm up or Train starts a fresh model. */
export function newRun(): void {
  if (isBusy()) return;
  training.activeRunId = null;
  store.getState().setTrainingRun(null);
  store.getState().setLatestRollouts([]);
  store.getState().updateJob({ status: 'idle', failure: null, note: null });
}

/** Deletes a stored run and its checkpoint. */
export async function deleteRun(id: string): Promise<void> {
  if (isBusy() && id === training.activeRunId) return;
  await runStorage.deleteRun(id);
  if (store.getState().trainingRun?.id === id) {
    if (training.activeRunId === id) training.activeRunId = null;
    store.getState().setTrainingRun(null);
  }
  await refreshRuns();
}
