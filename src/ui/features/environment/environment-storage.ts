/**
 * The user's environments in IndexedDB (through `idb`): each saved file with its name, source and
 * the built-in it started from. API keys are not kept here (see api-key.ts), and neither are runs.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { actionState } from '../../store/action-state.ts';

/** One environment file the user keeps. */
export interface SavedEnvironment {
  id: string;
  name: string;
  source: string;
  /** The built-in environment it started from, if any (its expert policy stays available). */
  builtin?: string;
  updatedAt: number;
}

interface PlaygroundDB extends DBSchema {
  environments: { key: string; value: SavedEnvironment };
}

const DB_NAME = 'tabrl-playground';
/** The page's connection, opened on first use (see action-state.ts). */
const connection = actionState(() => ({ database: undefined as Promise<IDBPDatabase<PlaygroundDB>> | undefined }));

function openDatabase(): Promise<IDBPDatabase<PlaygroundDB>> {
  connection.database ??= openDB<PlaygroundDB>(DB_NAME, 1, {
    upgrade(db) {
      db.createObjectStore('environments', { keyPath: 'id' });
    },
  });
  return connection.database;
}

/** Every saved environment, most recently edited first. */
export async function listEnvironments(): Promise<SavedEnvironment[]> {
  const all = await (await openDatabase()).getAll('environments');
  return all.sort((a, b) => b.updatedAt - a.updatedAt);
}

/** Saves (creates or replaces) an environment. */
export async function putEnvironment(environment: SavedEnvironment): Promise<void> {
  await (await openDatabase()).put('environments', environment);
}

/** Deletes a saved environment. */
export async function deleteEnvironment(id: string): Promise<void> {
  await (await openDatabase()).delete('environments', id);
}
