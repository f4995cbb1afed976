/**
 * The WebGPU backend in Node + Dawn: against the CPU backend on tiny random models, the overfit
 * check, and against the PyTorch golden fixtures (logits, log-probs, loss, every gradient, 10 AdamW
 * steps). No adapter is a failure, not a skip.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { checkBackendAgainstGolden, GOLDEN_VARIANTS, parseGoldenFixture } from '../unit/gpu/golden-fixture.ts';
import { BACKEND_CASES, TINY_CONFIG } from '../support/gpu/backend-cases.ts';

const FIXTURE_DIR = new URL('../fixtures/golden/', import.meta.url);

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node backend tests' });
});

afterAll(() => context?.device.destroy());

async function withValidation(body: () => Promise<void>): Promise<void> {
  context.device.pushErrorScope('validation');
  await body();
  const error = await context.device.popErrorScope();
  expect(error?.message, 'WebGPU validation error').toBeUndefined();
}

for (const backendCase of BACKEND_CASES) {
  test(backendCase.name, () => withValidation(() => backendCase.run(context)));
}

for (const variant of GOLDEN_VARIANTS) {
  test(`webgpu backend matches the PyTorch golden fixture: ${variant}`, () =>
    withValidation(async () => {
      const fixture = parseGoldenFixture(
        readFileSync(new URL(`${variant}.json`, FIXTURE_DIR), 'utf8'),
        new Uint8Array(readFileSync(new URL(`${variant}.safetensors`, FIXTURE_DIR))),
      );
      await checkBackendAgainstGolden(fixture, (config, tensors) => createWebGPUBackend(context, config, { tensors }));
    }));
}

test('a model whose tensor exceeds one storage binding fails with the limit named, before allocating', async () => {
  const limit = context.device.limits.maxStorageBufferBindingSize;
  const C = TINY_CONFIG.hidden_size;
  const vocab = Math.ceil(limit / 4 / C / 4) * 4 + 4; // embed_tokens one row past the limit
  await expect(createWebGPUBackend(context, { ...TINY_CONFIG, vocab_size: vocab }, { seed: 0 })).rejects.toThrow(/maxStorageBufferBindingSize/);
});
