/**
 * The fused multi-step decoder on Mesa's lavapipe, the second CPU Vulkan driver: a subset of
 * test/support/gpu/fused-decoder-cases.ts (FUSED_DECODER_LAVAPIPE_CASES: LLVM compiles the kernel
 * slowly, so not every config and workgroup size). No lavapipe is a failure, never a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { GPUContext } from '../../src/gpu/webgpu/device.ts';
import { requestLavapipeDevice } from '../support/lavapipe.ts';
import { FUSED_DECODER_LAVAPIPE_CASES } from '../support/gpu/fused-decoder-cases.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestLavapipeDevice('gpu-node fused decoder tests (lavapipe)');
});

afterAll(() => context?.device.destroy());

for (const fusedCase of FUSED_DECODER_LAVAPIPE_CASES) {
  test(fusedCase.name, { timeout: 600_000 }, async () => {
    context.device.pushErrorScope('validation');
    await fusedCase.run(context);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
