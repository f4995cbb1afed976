/** Fake TuningStores for the tuning caches' tests (matmul choice, decode path): nothing here touches IndexedDB. */
import type { AdapterDescription } from '../../../src/gpu/webgpu/device.ts';
import type { TuningStore } from '../../../src/gpu/webgpu/tuning-store.ts';

/** The adapter the cache tests tune for. */
export const GPU: AdapterDescription = { vendor: 'acme', architecture: 'rdna9', device: '0x1234', description: 'Acme R9', isFallbackAdapter: false };
/** Another adapter, which must not reuse GPU's results. */
export const OTHER_GPU: AdapterDescription = { ...GPU, device: '0x5678' };

/** A Map behind the TuningStore interface, with its contents visible (values are cloned both ways, as IndexedDB does). */
export function memoryStore(): TuningStore & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return {
    values,
    get: async (key) => structuredClone(values.get(key)),
    set: async (key, value) => void values.set(key, structuredClone(value)),
  };
}

/** Stores that fail: one whose calls reject (a full quota), one whose calls throw (no IndexedDB at all). */
export function brokenStores(): TuningStore[] {
  const noIndexedDb = () => {
    throw new Error('indexedDB is not defined');
  };
  return [
    { get: () => Promise.reject(new Error('QuotaExceededError')), set: () => Promise.reject(new Error('QuotaExceededError')) },
    { get: noIndexedDb, set: noIndexedDb },
  ];
}

/** A store whose calls never settle (IndexedDB blocked by another tab's upgrade). */
export function silentStore(): TuningStore {
  return { get: () => new Promise(() => {}), set: () => new Promise(() => {}) };
}
