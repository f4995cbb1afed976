/**
 * The GPU sampler (sample_tokens.wgsl) in Node + Dawn on the default adapter (SwiftShader here):
 * the checks of test/support/gpu/sampler-cases.ts. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { SAMPLER_CASES } from '../support/gpu/sampler-cases.ts';

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node sampler tests' });
  kernels = new Kernels(context);
});

afterAll(() => context?.device.destroy());

for (const samplerCase of SAMPLER_CASES) {
  test(samplerCase.name, async () => {
    context.device.pushErrorScope('validation');
    await samplerCase.run(kernels);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
