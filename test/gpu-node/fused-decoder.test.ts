/**
 * The fused multi-step decoder in Node + Dawn on the default adapter (SwiftShader here):
 * test/support/gpu/fused-decoder-cases.ts. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { FUSED_DECODER_CASES } from '../support/gpu/fused-decoder-cases.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node fused decoder tests' });
});

afterAll(() => context?.device.destroy());

for (const fusedCase of FUSED_DECODER_CASES) {
  test(fusedCase.name, async () => {
    context.device.pushErrorScope('validation');
    await fusedCase.run(context);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
