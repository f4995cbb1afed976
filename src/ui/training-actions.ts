/**
 * The playground's training actions: start the engine, warm the in-tab model up (demonstrations
 * from the built-in's expert, made in the sandbox, then SFT in the engine), train it with GRPO
 * (rollouts in the sandbox, the update in the engine), stop, and keep runs (metrics and checkpoints
 * in IndexedDB) that survive a reload and can be reopened or deleted. Components call these.
 */
import { ScriptedClient, type EvaluationSummary, type Message } from '../envs/index.ts';
import {
  createEngineChatClient,
  getEngineWeights,
  onEngineError,
  resetEngine,
  setEngineWeights,
  startEngine,
  trainGrpoInEngine,
  trainSftInEngine,
  type GrpoStepReport,
  type SftStepMetrics,
} from '../workers/engine-bridge.ts';
import { openSandbox, type SandboxSession } from '../workers/sandbox-bridge.ts';
import { currentEnvironment, parseArgs } from './actions.ts';
import { isBuiltinName, loadBuiltinExpert } from './builtins.ts';
import { compileModel } from './editor/monaco-setup.ts';
import { environmentModel } from './editor/models.ts';
import * as runStorage from './run-storage.ts';
import { createIframeSandbox } from './sandbox-frame.ts';
import { usePlayground } from './store/index.ts';
import type { TrainingRun } from './store/training-slice.ts';

const store = usePlayground;
let stopController: AbortController | undefined;
/** The run whose weights are in the engine now (null: the engine holds no run's weights). */
let activeRunId: string | null = null;
/** Writes to IndexedDB, one after another. */
let writes: Promise<void> = Promise.resolve();
let listening = false;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Starts the engine once (GPU device and tiny model); failures (no WebGPU, no adapter) land in the store with what to do. */
export async function ensureEngine(): Promise<void> {
  if (!listening) {
    listening = true;
    onEngineError((error) => store.getState().setEngine({ status: 'failed', error }));
  }
  const { engine, settings } = store.getState();
  if (engine.status === 'ready') return;
  store.getState().setEngine({ status: 'starting', error: null });
  try {
    const info = await startEngine(settings.seed);
    store.getState().setEngine({ status: 'ready', info, error: null });
  } catch (error) {
    store.getState().setEngine({ status: 'failed', error: message(error) });
    throw error;
  }
}

/** Reloads the list of stored runs. */
export async function refreshRuns(): Promise<void> {
  try {
    store.getState().setPastRuns(await runStorage.listRuns());
  } catch (error) {
    console.warn(`stored runs could not be read: ${message(error)}`);
  }
}

function saveLater(write: () => Promise<void>): void {
  writes = writes.then(write).catch((error: unknown) => {
    store.getState().updateJob({ note: message(error) });
  });
}

function persistRun(): void {
  const run = store.getState().trainingRun;
  if (!run || run.id !== activeRunId) return;
  const snapshot = { ...run, updatedAt: Date.now() };
  saveLater(async () => {
    await runStorage.putRun(snapshot);
    await refreshRuns();
  });
}

function saveCheckpoint(): void {
  const run = store.getState().trainingRun;
  if (!run || run.id !== activeRunId) return;
  const step = run.sft.length + run.grpo.length;
  saveLater(async () => {
    const weights = await getEngineWeights();
    await runStorage.putCheckpoint({ runId: run.id, step, savedAt: Date.now(), weights });
    store.getState().setTrainingRun((current) => (current && current.id === run.id ? { ...current, checkpointStep: step } : current));
    await runStorage.putRun({ ...store.getState().trainingRun!, updatedAt: Date.now() });
    await refreshRuns();
  });
}

/** Appends an evaluation of the in-tab model to the run whose weights are in the engine (creating none). */
export async function recordEvaluation(summary: EvaluationSummary): Promise<void> {
  const run = store.getState().trainingRun;
  if (!run || run.id !== activeRunId) return;
  store.getState().setTrainingRun({ ...run, evaluations: [...run.evaluations, { at: Date.now(), sftSteps: run.sft.length, grpoSteps: run.grpo.length, summary }] });
  persistRun();
  await writes;
}

/** Loads the open run's checkpoint into the engine when the engine holds other weights (so evaluating the in-tab model evaluates that run). */
export async function loadOpenRunWeights(): Promise<void> {
  const run = store.getState().trainingRun;
  if (!run || run.id === activeRunId || run.checkpointStep === null) return;
  const checkpoint = await runStorage.getCheckpoint(run.id);
  if (!checkpoint) return;
  await setEngineWeights(checkpoint.weights);
  activeRunId = run.id;
}

/** Makes sure the engine holds the weights of a run for this environment: the open one (from its checkpoint) or a new one. */
async function ensureRun(environment: string, args: Record<string, unknown>): Promise<TrainingRun> {
  const { trainingRun, trainingSettings, settings } = store.getState();
  if (trainingRun && trainingRun.id === activeRunId && trainingRun.environment === environment) return trainingRun;
  if (trainingRun && trainingRun.environment === environment && trainingRun.checkpointStep !== null) {
    const checkpoint = await runStorage.getCheckpoint(trainingRun.id);
    if (checkpoint) {
      await setEngineWeights(checkpoint.weights);
      activeRunId = trainingRun.id;
      return trainingRun;
    }
  }
  await resetEngine(settings.seed);
  const now = Date.now();
  const run: TrainingRun = {
    id: `run-${now.toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
    environment,
    args,
    settings: trainingSettings,
    seed: settings.seed,
    createdAt: now,
    updatedAt: now,
    sft: [],
    grpo: [],
    evaluations: [],
    checkpointStep: null,
  };
  activeRunId = run.id;
  store.getState().setTrainingRun(run);
  store.getState().setLatestRollouts([]);
  persistRun();
  return run;
}

/** What a job needs before it starts: the compiled environment, its arguments and a ready engine; null (with the failure shown) when something is missing. */
async function prepareJob(mode: 'warmup' | 'train'): Promise<{ code: string; label: string; builtin: string | undefined; args: Record<string, unknown> } | null> {
  const saved = currentEnvironment();
  if (!saved) return null;
  const now = Date.now();
  store.getState().updateJob({ status: 'running', mode, phase: 'compiling', done: 0, total: 0, startedAt: now, phaseStartedAt: now, failure: null, note: null });
  const fail = (failure: string) => {
    store.getState().updateJob({ status: 'failed', failure });
    return null;
  };
  const compiled = await compileModel(environmentModel(saved.id, saved.source));
  if (!compiled.ok) return fail(`${compiled.problems.length} compile error(s) — fix them first. Line ${compiled.problems[0]!.line}: ${compiled.problems[0]!.message}`);
  let args: Record<string, unknown>;
  try {
    args = parseArgs(store.getState().settings.argsJson);
    if (mode === 'warmup' && !isBuiltinName(saved.builtin)) throw new Error('Warm-up demonstrations come from a built-in environment\'s scripted expert, and this file did not start from a built-in.');
    store.getState().updateJob({ phase: 'starting the engine' });
    await ensureEngine();
  } catch (error) {
    return fail(message(error));
  }
  return { code: compiled.code, label: saved.name, builtin: saved.builtin, args };
}

function jobFinished(stopped: boolean, note: string | null): void {
  store.getState().updateJob({ status: 'done', phase: stopped ? 'stopped' : 'finished', note });
}

/** Warm-up: the built-in's expert rolls out training tasks in the sandbox, passing transcripts are kept, and the engine runs SFT on them. */
export async function startWarmup(): Promise<void> {
  if (isBusy()) return;
  const job = await prepareJob('warmup');
  if (!job) return;
  const { trainingSettings: ts, settings } = store.getState();
  stopController = new AbortController();
  const signal = stopController.signal;
  let session: SandboxSession | undefined;
  try {
    const expert = new ScriptedClient(await loadBuiltinExpert(job.builtin as Parameters<typeof loadBuiltinExpert>[0], job.args));
    session = await openSandbox({ code: job.code, label: job.label, args: job.args, client: expert, timeLimitMs: settings.timeLimitMs, createFrame: createIframeSandbox });
    const run = await ensureRun(session.info.name, job.args);
    const onStop = () => session?.stop();
    signal.addEventListener('abort', onStop, { once: true });
    store.getState().updateJob({ phase: 'making demonstrations', done: 0, total: Math.min(ts.demonstrations, session.info.numTasks), phaseStartedAt: Date.now() });
    const transcripts: Message[][] = [];
    const made = await session.evaluate(
      { numTasks: ts.demonstrations, rolloutsPerTask: 1, concurrency: 16, samplingArgs: { seed: settings.seed }, model: 'expert', split: 'train' },
      (record, done, total) => {
        if (record.passed && record.errors.every((error) => error.source === 'reward')) transcripts.push([...record.prompt, ...record.completion]);
        store.getState().updateJob({ done, total });
      },
    );
    signal.removeEventListener('abort', onStop);
    const tools = session.info.tools;
    session.dispose();
    session = undefined;
    if (signal.aborted || made.stoppedEarly) return jobFinished(true, 'Stopped while making demonstrations.');
    if (transcripts.length === 0) throw new Error('None of the expert\'s rollouts passed, so there is nothing to warm up on.');

    const offset = run.sft.length;
    store.getState().updateJob({ phase: `SFT on ${transcripts.length} demonstrations`, done: 0, total: ts.sftSteps, phaseStartedAt: Date.now() });
    let sinceCheckpoint = 0;
    await trainSftInEngine(transcripts, { steps: ts.sftSteps, batchSize: ts.sftBatchSize, lr: ts.sftLr, seed: settings.seed, ...(tools ? { tools } : {}) }, {
      signal,
      onSteps: (steps: SftStepMetrics[]) => {
        const renumbered = steps.map((step) => ({ ...step, step: offset + step.step }));
        store.getState().setTrainingRun((current) => (current ? { ...current, sft: [...current.sft, ...renumbered] } : current));
        store.getState().updateJob({ done: steps.at(-1)!.step + 1 });
        persistRun();
        sinceCheckpoint += steps.length;
        if (sinceCheckpoint >= ts.checkpointEvery) {
          sinceCheckpoint = 0;
          saveCheckpoint();
        }
      },
    });
    saveCheckpoint();
    await writes;
    jobFinished(signal.aborted, `${transcripts.length} demonstrations kept${signal.aborted ? '; stopped early' : ''}.`);
  } catch (error) {
    if (signal.aborted) {
      saveCheckpoint();
      await writes;
      return jobFinished(true, 'Stopped.');
    }
    store.getState().updateJob({ status: 'failed', failure: message(error) });
  } finally {
    session?.dispose();
    stopController = undefined;
  }
}

/** GRPO: the engine trains on rollouts of training tasks that the sandbox makes with the in-tab model. */
export async function startTraining(): Promise<void> {
  if (isBusy()) return;
  const job = await prepareJob('train');
  if (!job) return;
  const { trainingSettings: ts, settings } = store.getState();
  stopController = new AbortController();
  const signal = stopController.signal;
  let session: SandboxSession | undefined;
  const onStop = () => session?.stop();
  try {
    session = await openSandbox({ code: job.code, label: job.label, args: job.args, client: createEngineChatClient(), timeLimitMs: settings.timeLimitMs, createFrame: createIframeSandbox });
    const run = await ensureRun(session.info.name, job.args);
    signal.addEventListener('abort', onStop, { once: true });
    const offset = run.grpo.length;
    store.getState().updateJob({ phase: 'GRPO', done: 0, total: ts.grpoSteps, phaseStartedAt: Date.now() });
    let sinceCheckpoint = 0;
    const active = session;
    await trainGrpoInEngine(
      { name: session.info.name, numTasks: session.info.numTasks, rollout: (taskIndex, samplingArgs) => active.rollout(taskIndex, samplingArgs, 'tiny') },
      { steps: ts.grpoSteps, tasksPerStep: ts.tasksPerStep, groupSize: ts.groupSize, lr: ts.grpoLr, maxTokens: ts.maxTokens, maxAsync: ts.maxAsync, temperature: ts.temperature, seed: settings.seed + offset },
      {
        signal,
        onSteps: (reports: GrpoStepReport[]) => {
          const metrics = reports.map((report) => ({ ...report.metrics, step: offset + report.metrics.step }));
          store.getState().setTrainingRun((current) => (current ? { ...current, grpo: [...current.grpo, ...metrics] } : current));
          const latest = reports.at(-1)!;
          if (latest.rollouts.length > 0) store.getState().setLatestRollouts(latest.rollouts);
          store.getState().updateJob({ done: latest.metrics.step + 1 });
          persistRun();
          sinceCheckpoint += reports.length;
          if (sinceCheckpoint >= ts.checkpointEvery) {
            sinceCheckpoint = 0;
            saveCheckpoint();
          }
        },
      },
    );
    saveCheckpoint();
    await writes;
    jobFinished(signal.aborted, signal.aborted ? 'Stopped; the weights so far are kept as a checkpoint.' : null);
  } catch (error) {
    if (signal.aborted) {
      saveCheckpoint();
      await writes;
      return jobFinished(true, 'Stopped; the weights so far are kept as a checkpoint.');
    }
    store.getState().updateJob({ status: 'failed', failure: message(error) });
  } finally {
    signal.removeEventListener('abort', onStop);
    session?.dispose();
    stopController = undefined;
  }
}

function isBusy(): boolean {
  const { job, run } = store.getState();
  return job.status === 'running' || job.status === 'stopping' || run.status === 'running' || run.status === 'compiling' || run.status === 'stopping';
}

/** Stops the warm-up or training job: the engine stops before its next step and the rollouts in flight are cancelled. */
export function stopTraining(): void {
  if (!stopController) return;
  store.getState().updateJob({ status: 'stopping' });
  stopController.abort();
}

/** Opens a stored run to look at its charts; a later Warm up or Train continues it from its checkpoint. */
export function openRun(id: string): void {
  if (isBusy()) return;
  const run = store.getState().pastRuns.find((item) => item.id === id);
  if (!run) return;
  store.getState().setTrainingRun(run);
  store.getState().setLatestRollouts([]);
}

/** Forgets the current run: the next Warm up or Train starts a fresh model. */
export function newRun(): void {
  if (isBusy()) return;
  activeRunId = null;
  store.getState().setTrainingRun(null);
  store.getState().setLatestRollouts([]);
  store.getState().updateJob({ status: 'idle', failure: null, note: null });
}

/** Deletes a stored run and its checkpoint. */
export async function deleteRun(id: string): Promise<void> {
  if (isBusy() && id === activeRunId) return;
  await runStorage.deleteRun(id);
  if (store.getState().trainingRun?.id === id) {
    if (activeRunId === id) activeRunId = null;
    store.getState().setTrainingRun(null);
  }
  await refreshRuns();
}
