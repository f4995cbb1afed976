/**
 * tuneMatmul with a TuningStore on a real device (Node + Dawn, SwiftShader): the first "visit" times
 * the candidates and stores the choice; a later one (a fresh device, the in-process cache cleared, the
 * same store) reads it back and compiles no pipeline at all. One trial: ~3 s of CPU.
 */
import { afterEach, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { clearMatmulChoiceCache, matmulChoiceVersion } from '../../src/gpu/webgpu/matmul-choice-cache.ts';
import { tuneMatmul } from '../../src/gpu/webgpu/matmul-tuning.ts';
import { adapterKey } from '../../src/gpu/webgpu/matmul-variants.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import type { TuningStore } from '../../src/gpu/webgpu/tuning-store.ts';

const gpu = createNodeGPU();
const contexts: GPUContext[] = [];

/** A fresh device (a new visit's) with `store`, and a cleared in-process cache. */
async function visit(store: TuningStore): Promise<Kernels> {
  clearMatmulChoiceCache();
  const context = await requestGPUDevice({ gpu, label: 'matmul choice store test', tuningStore: store });
  contexts.push(context);
  return new Kernels(context);
}

afterEach(() => {
  for (const context of contexts.splice(0)) context.device.destroy();
  clearMatmulChoiceCache();
});

function mapStore(): TuningStore & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return { values, get: async (key) => values.get(key), set: async (key, value) => void values.set(key, value) };
}

test('a stored choice of the current kernel set is used without a trial', async () => {
  const store = mapStore();
  const first = await visit(store);
  // not the software default (16×16 everywhere), so only the store can have supplied it
  store.values.set(`matmul-choice:${adapterKey(first.gpu.adapter)}`, { version: matmulChoiceVersion(), forward: 'tile4x4', inputGrad: 'tile8x16', weightGrad: 'splitk' });
  const choice = await tuneMatmul(first);
  expect(choice).toEqual({ forward: 'tile4x4', inputGrad: 'tile8x16', weightGrad: 'splitk', source: 'cached' });
  expect(first.matmul).toEqual(choice);
  expect(first.pipelineKeys()).toEqual([]);
});

test('the first visit runs the trial and stores its choice; the next visit skips the trial', async () => {
  const store = mapStore();
  const first = await visit(store);
  const tried = await tuneMatmul(first);
  expect(tried.source).toBe('trial');
  expect(first.pipelineKeys().length).toBeGreaterThan(0);
  expect([...store.values.values()]).toEqual([{ version: matmulChoiceVersion(), forward: tried.forward, inputGrad: tried.inputGrad, weightGrad: tried.weightGrad }]);

  const later = await visit(store);
  expect(await tuneMatmul(later)).toEqual({ ...tried, source: 'cached' });
  expect(later.pipelineKeys()).toEqual([]);
});
