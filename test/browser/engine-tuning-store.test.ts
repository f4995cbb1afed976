/**
 * The engine worker remembers its matmul kernel choice across visits (a worker has no localStorage, so
 * before IndexedDB every visit timed the kernels again: ~6–7 s of a 7 s engine start on SwiftShader,
 * against ~0.3 s once remembered). The first start stores the choice in IndexedDB `tabrl-engine`; a
 * second worker reads it instead of timing: the entry, replaced in between by a marker that differs
 * from the trial's choice in every product, is still the marker afterwards (a trial would overwrite it).
 * The decoder's 'auto' path verdict is kept the same way: a visit that samples once times the decode
 * paths (on the first decodeSteps of the batch bucket) and stores the verdict; the next such visit
 * samples with a stored marker, the other path, and leaves it in place (on SwiftShader a start and one
 * 2-token completion take ~2.0 s with the trial, ~0.8 s with the stored verdict).
 */
import * as Comlink from 'comlink';
import { deleteDB, openDB } from 'idb';
import { expect, test } from 'vitest';
import { decodePathVersion } from '../../src/gpu/webgpu/decode-path-cache.ts';
import { matmulChoiceVersion } from '../../src/gpu/webgpu/matmul-choice-cache.ts';
import { FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS } from '../../src/gpu/webgpu/matmul-variants.ts';
import type { EngineApi } from '../../src/workers/engine/protocol.ts';
import { ENGINE_DB_NAME, indexedDbTuningStore } from '../../src/workers/engine/tuning-store.ts';

/** Starts an engine worker on the tiny model (and samples `sample` completions of 2 tokens) and stops it: one visit. */
async function visit(sample = 0): Promise<void> {
  const worker = new Worker(new URL('../../src/workers/engine.worker.ts', import.meta.url), { type: 'module' });
  try {
    const engine = Comlink.wrap<EngineApi>(worker);
    expect((await engine.start(1, Comlink.proxy(() => {}))).model).toBe('tiny');
    for (let i = 0; i < sample; i++) {
      const outcome = await engine.complete(i + 1, { model: 'policy', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, temperature: 1, seed: i });
      expect(outcome.ok).toBe(true);
    }
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

test('the engine stores its decode path verdict in IndexedDB, and the next visit samples with it without a trial', async () => {
  // keep a stored matmul choice (the test above leaves one): only the decode path is timed here
  const store = indexedDbTuningStore();
  const decodePathKeys = async (): Promise<string[]> => (await storedKeys()).filter((key) => key.startsWith('decode-path:'));
  const db = await openDB(ENGINE_DB_NAME, 1, { upgrade: (upgrading) => void upgrading.createObjectStore('tuning') });
  try {
    for (const key of await db.getAllKeys('tuning')) if (String(key).startsWith('decode-path:')) await db.delete('tuning', key);
  } finally {
    db.close();
  }
  await visit(1);
  const keys = await decodePathKeys();
  expect(keys).toHaveLength(1);
  const tried = (await store.get(keys[0]!)) as { version: string; path: string };
  expect(tried).toEqual({ version: decodePathVersion(), path: expect.stringMatching(/^(fused|layered)$/) });

  const marker = { version: decodePathVersion(), path: tried.path === 'fused' ? 'layered' : 'fused' };
  await store.set(keys[0]!, marker);
  await visit(1);
  expect(await decodePathKeys()).toEqual(keys);
  expect(await store.get(keys[0]!)).toEqual(marker);
});
