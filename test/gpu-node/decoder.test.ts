/**
 * The WebGPU decoder in Node + Dawn (test/support/gpu/decoder-cases.ts): kernels against their
 * references, KV-cache logits against a full forward and the CPU decoder, ragged batches, fork,
 * extension, cache limits, LocalChatClient. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { DECODER_CASES } from '../support/gpu/decoder-cases.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node decoder tests' });
});

afterAll(() => context?.device.destroy());

for (const decoderCase of DECODER_CASES) {
  test(decoderCase.name, async () => {
    context.device.pushErrorScope('validation');
    await decoderCase.run(context);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
