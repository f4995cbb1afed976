/**
 * Every matmul kernel variant, forced, on Mesa's lavapipe, the second CPU Vulkan driver (see
 * f16-weights.test.ts for how it is found): the checks of test/browser/gpu/matmul-variant-cases.ts on an
 * adapter with other rounding and scheduling than SwiftShader. No lavapipe is a failure, never a skip.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { MATMUL_VARIANT_CASES } from '../browser/gpu/matmul-variant-cases.ts';

const LAVAPIPE_ICD = new URL('../../node_modules/.cache/tabrl-lavapipe/lvp_icd.json', import.meta.url).pathname;

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  if (!existsSync(LAVAPIPE_ICD)) {
    throw new Error(`no lavapipe ICD at ${LAVAPIPE_ICD}: run node scripts/ensure-lavapipe.mjs (npm test runs it) and see what it reports`);
  }
  process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node matmul variant tests on lavapipe' });
  if (!/llvmpipe/.test(context.adapter.architecture + context.adapter.description)) {
    throw new Error(`expected lavapipe, got ${context.adapter.vendor} ${context.adapter.architecture} ${context.adapter.description}`);
  }
  kernels = new Kernels(context);
});

afterAll(() => context?.device.destroy());

for (const matmulCase of MATMUL_VARIANT_CASES) {
  test(matmulCase.name, async () => {
    context.device.pushErrorScope('validation');
    await matmulCase.run(kernels);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
