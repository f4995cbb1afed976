/**
 * The WebGPU decoder's 'auto' path with a TuningStore on a real device (Node + Dawn, SwiftShader):
 * the first "visit" times both paths on the tiny model and stores the verdict; a later one (a fresh
 * device, the in-process cache cleared, the same store) decodes with the stored path and times
 * nothing. One trial: ~1.5 s of CPU.
 */
import { afterEach, expect, test } from 'vitest';
import { TINY_CONFIG } from '../../src/gpu/inference/presets.ts';
import { clearDecodePathCache, decodePathVersion } from '../../src/gpu/webgpu/decode-path-cache.ts';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import type { TuningStore } from '../../src/gpu/webgpu/tuning-store.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder, type WebGPUDecoder } from '../../src/gpu/webgpu/webgpu-decoder.ts';

const gpu = createNodeGPU();
const contexts: GPUContext[] = [];
const decoders: WebGPUDecoder[] = [];

/** A fresh device (a new visit's) with `store`, a cleared in-process cache, and an 'auto' decoder on the tiny model (matmul kernels forced: no matmul trial). */
async function visit(store: TuningStore): Promise<WebGPUDecoder> {
  clearDecodePathCache();
  const context = await requestGPUDevice({ gpu, label: 'decode path store test', tuningStore: store });
  contexts.push(context);
  const backend = await createWebGPUBackend(context, TINY_CONFIG, { seed: 1 }, { matmul: {} });
  const decoder = await createWebGPUDecoder(backend, { cacheBytes: 2 ** 20, maxSequenceLength: 64 });
  decoders.push(decoder);
  return decoder;
}

afterEach(() => {
  for (const decoder of decoders.splice(0)) decoder.dispose();
  for (const context of contexts.splice(0)) context.device.destroy();
  clearDecodePathCache();
});

test('the first visit times the decode paths and stores the verdict; the next visit decodes with it and times nothing', async () => {
  const values = new Map<string, unknown>();
  const store: TuningStore = { get: async (key) => values.get(key), set: async (key, value) => void values.set(key, value) };
  const first = await visit(store);
  expect(first.fusedProblem).toBeNull();
  const trial = await first.pathTrial(3);
  expect(trial).not.toBeNull();
  const entries = [...values].filter(([key]) => key.startsWith('decode-path:'));
  expect(entries).toEqual([[expect.stringMatching(/\|B4\|/), { version: decodePathVersion(), path: trial!.path }]]);

  // the other path than the trial's, so only the store can have supplied it
  const marker = trial!.path === 'fused' ? 'layered' : 'fused';
  const key = entries[0]![0];
  values.set(key, { version: decodePathVersion(), path: marker });
  const later = await visit(store);
  expect(await later.pathFor(4)).toBe(marker);
  expect(await later.pathTrial(4)).toBeNull();
  expect(values.get(key)).toEqual({ version: decodePathVersion(), path: marker });
  const seqs = [later.newSequence(), later.newSequence(), later.newSequence()]; // bucket 4, as above
  await later.prefill(seqs, [[1, 2, 3], [4, 5], [6]]);
  const drawn = await later.decodeSteps(seqs, [6, 7, 8], seqs.map(() => ({ params: { temperature: 0 }, uniforms: [0, 0, 0], stopIds: [], maxDraws: 3 })), 3);
  expect(drawn.map((result) => result.ids.length)).toEqual([3, 3, 3]);
  expect(await later.pathTrial(3)).toBeNull(); // still no trial in this process
});
