/**
 * The training tab's user actions: warm up, train, stop, pause and resume a job, and open, start
 * afresh or delete a run; and the engine and run calls other features make (start the engine, load
 * the open run's weights, record an evaluation). The work lives in engine-state.ts (the engine),
 * training-jobs.ts with warmup-job.ts and grpo-job.ts (the jobs) and run-records.ts (the runs in
 * IndexedDB). Components call these.
 */
import { usePlayground } from '../../store/index.ts';
import { engineState } from './engine-state.ts';
import { refreshRuns } from './run-records.ts';
import * as runStorage from './run-storage.ts';
import { isBusy } from './training-jobs.ts';

export { ensureEngine } from './engine-state.ts';
export { loadOpenRunWeights, recordEvaluation, refreshRuns } from './run-records.ts';
export { pauseTraining, resumeTraining, setAskPerson, stopTraining } from './training-jobs.ts';
export { startWarmup } from './warmup-job.ts';
export { startTraining } from './grpo-job.ts';

const store = usePlayground;

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
  engineState.activeRunId = null;
  store.getState().setTrainingRun(null);
  store.getState().setLatestRollouts([]);
  store.getState().updateJob({ status: 'idle', failure: null, note: null });
}

/** Deletes a stored run and its checkpoint. */
export async function deleteRun(id: string): Promise<void> {
  if (isBusy() && id === engineState.activeRunId) return;
  await runStorage.deleteRun(id);
  if (store.getState().trainingRun?.id === id) {
    if (engineState.activeRunId === id) engineState.activeRunId = null;
    store.getState().setTrainingRun(null);
  }
  await refreshRuns();
}
