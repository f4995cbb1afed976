/**
 * The engine worker remembers its matmul kernel choice across visits (a worker has no localStorage, so
 * before IndexedDB every visit timed the kernels again: ~6–7 s of a 7 s engine start on SwiftShader,
 * against ~0.3 s once remembered). The first start stores the choice in IndexedDB `tabrl-engine`; a
 * second worker reads it instead of timing: the entry, replaced in between by a marker that differs
 * from the trial's choice in every product, is still the marker afterwards (a trial would overwrite it).
 */
import * as Comlink from 'comlink';
import { deleteDB, openDB } from 'idb';
import { expect, test } from 'vitest';
import { matmulChoiceVersion } from '../../src/gpu/webgpu/matmul-choice-cache.ts';
import { FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS } from '../../src/gpu/webgpu/matmul-variants.ts';
import type { EngineApi } from '../../src/workers/engine/protocol.ts';
import { ENGINE_DB_NAME, indexedDbTuningStore } from '../../src/workers/engine/tuning-store.ts';

/** Starts an engine worker on the tiny model and stops it: one visit. */
async function visit(): Promise<void> {
  const worker = new Worker(new URL('../../src/workers/engine.worker.ts', import.meta.url), { type: 'module' });
  try {
    expect((await Comlink.wrap<EngineApi>(worker).start(1, Comlink.proxy(() => {}))).model).toBe('tiny');
  } finally {
    worker.terminate();
  }
}

/** The keys of the engine's tuning store. */
async function storedKeys(): Promise<string[]> {
  const db = await openDB(ENGINE_DB_NAME);
  try {
    return (await db.getAllKeys('tuning')) as string[];
  } finally {
    db.close();
  }
}

test('the engine stores its matmul choice in IndexedDB, and the next visit uses it without a trial', async () => {
  await deleteDB(ENGINE_DB_NAME);
  await visit();
  const keys = await storedKeys();
  expect(keys).toEqual([expect.stringMatching(/^matmul-choice:/)]);
  const store = indexedDbTuningStore();
  const tried = (await store.get(keys[0]!)) as Record<string, string>;
  expect(tried).toMatchObject({ version: matmulChoiceVersion() });

  const other = (variants: readonly string[], chosen: string | undefined): string => variants.find((variant) => variant !== chosen)!;
  const marker = { version: matmulChoiceVersion(), forward: other(FORWARD_VARIANTS, tried.forward), inputGrad: other(INPUT_GRAD_VARIANTS, tried.inputGrad), weightGrad: other(WEIGHT_GRAD_VARIANTS, tried.weightGrad) };
  await store.set(keys[0]!, marker);
  await visit();
  expect(await store.get(keys[0]!)).toEqual(marker);
});
