/**
 * Training runs in IndexedDB (through `idb`, database `tabrl-runs`): each run's record (settings,
 * metrics per step, evaluation summaries) and, beside it, its latest checkpoint: the bytes of a full
 * checkpoint's files (weights, AdamW state, state.json; src/rl/checkpoint.ts), so a run continues
 * exactly where it stopped. A full storage quota becomes a `StorageFullError` that says what to do.
 * Environments live in storage.ts; API keys never live here.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { actionState } from '../../store/action-state.ts';
import type { NamedTensors } from '../../../workers/engine-bridge.ts';
import type { TrainingRun } from './training-slice.ts';

/** A stored checkpoint: a run after `step` steps (SFT + GRPO), as the files of `serializeCheckpoint`. */
export interface StoredCheckpoint {
  runId: string;
  step: number;
  savedAt: number;
  /** weights.safetensors, optimizer.safetensors and state.json, by name. */
  files?: Record<string, Uint8Array>;
  /** Checkpoints stored before full checkpoints held only the weights. */
  weights?: NamedTensors;
}

/** The browser refused to store more: the quota is full. */
export class StorageFullError extends Error {
  override readonly name = 'StorageFullError';
}

interface RunsDB extends DBSchema {
  runs: { key: string; value: TrainingRun };
  checkpoints: { key: string; value: StoredCheckpoint };
}

/** The page's connection, opened on first use (see action-state.ts). */
const connection = actionState(() => ({ database: undefined as Promise<IDBPDatabase<RunsDB>> | undefined }));

function openDatabase(): Promise<IDBPDatabase<RunsDB>> {
  connection.database ??= openDB<RunsDB>('tabrl-runs', 1, {
    upgrade(db) {
      db.createObjectStore('runs', { keyPath: 'id' });
      db.createObjectStore('checkpoints', { keyPath: 'runId' });
    },
  });
  return connection.database;
}

async function guardQuota<T>(what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const name = (error as { name?: string } | null)?.name;
    if (name === 'QuotaExceededError' || /quota/i.test(String(error))) {
      throw new StorageFullError(
        `Browser storage is full, so the ${what} could not be saved. Delete old runs in the Runs list (or free space for this site in the browser's settings); the run goes on in memory.`,
      );
    }
    throw error;
  }
}

/** Every stored run, newest first. */
export async function listRuns(): Promise<TrainingRun[]> {
  const runs = await (await openDatabase()).getAll('runs');
  return runs.sort((a, b) => b.createdAt - a.createdAt);
}

/** Saves (creates or replaces) a run's record. */
export async function putRun(run: TrainingRun): Promise<void> {
  await guardQuota("run's metrics", async () => {
    await (await openDatabase()).put('runs', run);
  });
}

/** Saves a run's checkpoint, replacing its previous one. */
export async function putCheckpoint(checkpoint: StoredCheckpoint): Promise<void> {
  await guardQuota('checkpoint', async () => {
    await (await openDatabase()).put('checkpoints', checkpoint);
  });
}

/** A run's latest checkpoint, if it has one. */
export async function getCheckpoint(runId: string): Promise<StoredCheckpoint | undefined> {
  return (await openDatabase()).get('checkpoints', runId);
}

/** Deletes a run and its checkpoint. */
export async function deleteRun(runId: string): Promise<void> {
  const db = await openDatabase();
  const transaction = db.transaction(['runs', 'checkpoints'], 'readwrite');
  await Promise.all([transaction.objectStore('runs').delete(runId), transaction.objectStore('checkpoints').delete(runId), transaction.done]);
}
