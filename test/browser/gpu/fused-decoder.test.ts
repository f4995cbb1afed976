/**
 * The fused multi-step decoder in real Chromium: a subset of the checks test/gpu-node/fused-decoder.test.ts
 * runs (FUSED_DECODER_BROWSER_CASES in fused-decoder-cases.ts). No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { FUSED_DECODER_BROWSER_CASES } from '../../support/gpu/fused-decoder-cases.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ label: 'browser fused decoder tests' });
});

afterAll(() => context?.device.destroy());

for (const decoderCase of FUSED_DECODER_BROWSER_CASES) {
  test(decoderCase.name, async () => {
    context.device.pushErrorScope('validation');
    await decoderCase.run(context);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
