/**
 * Every WGSL kernel against its CPU reference in Node, on the adapter Dawn finds (SwiftShader on a
 * machine without a GPU). The cases are shared with the browser test; no adapter is a failure.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { KERNEL_CASES } from '../browser/gpu/kernel-cases.ts';
import { MATMUL_VARIANT_CASES } from '../browser/gpu/matmul-variant-cases.ts';

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node kernel tests' });
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
