/**
 * Where a device's tuning results (the matmul trial's choice, the decoder's decode-path verdict)
 * outlive the process: an asynchronous key-value store that the host supplies, since src/gpu assumes
 * no browser storage. The engine worker passes an IndexedDB one (src/workers/engine/tuning-store.ts)
 * through `requestGPUDevice`; Node passes none and keeps only the in-process cache (tuning-cache.ts
 * holds the logic every result shares). Either call may reject or never settle: callers treat the
 * store as a hint and fall back to measuring.
 */

/** An asynchronous key-value store of structured-cloneable values (plain objects of strings and numbers). */
export interface TuningStore {
  /** The value stored under `key`, or undefined when there is none. */
  get(key: string): Promise<unknown>;
  /** Stores `value` under `key`, replacing what was there. */
  set(key: string, value: unknown): Promise<void>;
}
