/**
 * The WebGPU decoder in real Chromium: the same checks as test/gpu-node/decoder.test.ts
 * (decoder-cases.ts). No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { DECODER_CASES } from '../../support/gpu/decoder-cases.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ label: 'browser decoder tests' });
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
