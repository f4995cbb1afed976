/**
 * Every WGSL kernel against its CPU reference in Node, on the adapter Dawn finds (SwiftShader on a
 * machine without a GPU). The cases are shared with the browser test; no adapter is a failure.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { KERNEL_CASES } from '../browser/gpu/kernel-cases.ts';

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node kernel tests' });
  kernels = new Kernels(context);
});

afterAll(() => context?.device.destroy());

for (const kernelCase of KERNEL_CASES) {
  test(kernelCase.name, async () => {
    context.device.pushErrorScope('validation');
    await kernelCase.run(kernels);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}
