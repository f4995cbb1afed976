/**
 * The engine worker's IndexedDB TuningStore (src/workers/engine/tuning-store.ts) in real Chromium: in a
 * module worker (no localStorage there) a stored matmul choice survives a "later visit" (a cleared
 * in-process cache and a new connection) so the trial is skipped, and the page sees the same entry.
 */
import { deleteDB } from 'idb';
import { afterEach, expect, test } from 'vitest';
import { matmulChoiceVersion } from '../../../src/gpu/webgpu/matmul-choice-cache.ts';
import { indexedDbTuningStore } from '../../../src/workers/engine/tuning-store.ts';

/** A database of this test's own, deleted afterwards, so that the engine's `tabrl-engine` is never touched. */
const DB_NAME = `tabrl-engine-test-${Date.now()}`;

afterEach(async () => {
  await deleteDB(DB_NAME);
});

test('a matmul choice stored through IndexedDB in a worker is read back on a later visit without a trial', async () => {
  const worker = new Worker(new URL('./tuning-store.worker.ts', import.meta.url), { type: 'module' });
  try {
    const reply = await new Promise<{ ok: boolean; message: string; runs?: number; later?: unknown }>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<{ ok: boolean; message: string }>) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(`worker failed to start: ${event.message}`));
      worker.postMessage({ name: DB_NAME });
    });
    expect(reply.ok, reply.message).toBe(true);
    expect(reply.runs).toBe(1);
    expect(reply.later).toEqual({ forward: 'tile8x16', inputGrad: 'tile16x16', weightGrad: 'splitk', source: 'cached' });
  } finally {
    worker.terminate();
  }
  const stored = await indexedDbTuningStore(DB_NAME).get('matmul-choice:test|worker|idb|tuning store round trip|');
  expect(stored).toEqual({ version: matmulChoiceVersion(), forward: 'tile8x16', inputGrad: 'tile16x16', weightGrad: 'splitk' });
});
