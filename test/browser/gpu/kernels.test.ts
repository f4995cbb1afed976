/**
 * Every WGSL kernel against its CPU reference in real Chromium on its WebGPU adapter (SwiftShader
 * in CI): the contract that every kernel is tested for real. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../../src/gpu/webgpu/kernels.ts';
import { KERNEL_CASES } from '../../support/gpu/kernel-cases.ts';
import { MATMUL_VARIANT_CASES } from '../../support/gpu/matmul-variant-cases.ts';

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  context = await requestGPUDevice({ label: 'browser kernel tests' });
  kernels = new Kernels(context);
});

afterAll(() => context?.device.destroy());

// the forced-variant cases come last: the final one forces a variant on the shared Kernels
for (const kernelCase of [...KERNEL_CASES, ...MATMUL_VARIANT_CASES]) {
  test(kernelCase.name, async () => {
    context.device.pushErrorScope('validation');
    await kernelCase.run(kernels);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
