/**
 * The engine worker's TuningStore (src/gpu/webgpu/tuning-store.ts): IndexedDB through `idb`, which a
 * worker can reach (localStorage it cannot), so that the matmul trial's choice and the decoder's
 * decode-path verdict survive the visit. One object store `tuning` in the database `tabrl-engine`,
 * values keyed by the caller's key. Every failure (no IndexedDB in a private window, a full quota, a
 * blocked open) rejects, and the caller falls back to measuring; a later call tries to open the
 * database again.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { TuningStore } from '../../gpu/webgpu/tuning-store.ts';

/** The database the engine worker keeps its tuning results in. */
export const ENGINE_DB_NAME = 'tabrl-engine';

interface EngineDB extends DBSchema {
  tuning: { key: string; value: unknown };
}

/** A TuningStore in IndexedDB database `name` (default `tabrl-engine`), opened on first use. */
export function indexedDbTuningStore(name: string = ENGINE_DB_NAME): TuningStore {
  let database: Promise<IDBPDatabase<EngineDB>> | undefined;
  const open = (): Promise<IDBPDatabase<EngineDB>> => {
    const opening = (database ??= openDB<EngineDB>(name, 1, {
      upgrade(db) {
        db.createObjectStore('tuning');
      },
      // a newer page wants to upgrade the database: let it, and reopen on the next call
      blocking(_current, _next, event) {
        (event.target as IDBDatabase).close();
        database = undefined;
      },
    }));
    // a failed open is not kept: the next call tries again
    opening.catch(() => {
      if (database === opening) database = undefined;
    });
    return opening;
  };
  return {
    get: async (key) => (await open()).get('tuning', key),
    set: async (key, value) => {
      await (await open()).put('tuning', value, key);
    },
  };
}
