/**
 * Mesa's lavapipe, the second CPU Vulkan driver the gpu-node tests run on (scripts/ensure-lavapipe.mjs
 * puts it in node_modules/.cache): opening a device on it, and running a list of kernel cases there.
 * No lavapipe is a failure, never a skip.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels, kernelsFor } from '../../src/gpu/webgpu/kernels.ts';
import { forceMatmul } from '../../src/gpu/webgpu/matmul-tuning.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';

/** Where ensure-lavapipe.mjs writes the ICD file that VK_ICD_FILENAMES points Dawn at. */
export const LAVAPIPE_ICD = new URL('../../node_modules/.cache/tabrl-lavapipe/lvp_icd.json', import.meta.url).pathname;

/**
 * Opens a WebGPU device on lavapipe (this process's Vulkan loader is pointed at it), failing with what
 * to run when it is missing or another adapter answers. Backends built on it run the 4×4 matmul
 * tiles without a timed trial: the trial compiles every candidate, and Mesa spends 10–35 s of LLVM on
 * each unrolled 16×16 tile when its shader cache is cold (a fresh machine); matmul-lavapipe.test.ts
 * checks every variant on its own.
 */
export async function requestLavapipeDevice(label: string): Promise<GPUContext> {
  if (!existsSync(LAVAPIPE_ICD)) {
    throw new Error(`no lavapipe ICD at ${LAVAPIPE_ICD}: run node scripts/ensure-lavapipe.mjs (npm test runs it) and see what it reports`);
  }
  process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
  const context = await requestGPUDevice({ gpu: createNodeGPU(), label });
  if (!/llvmpipe/.test(context.adapter.architecture + context.adapter.description)) {
    context.device.destroy();
    throw new Error(`expected lavapipe, got ${context.adapter.vendor} ${context.adapter.architecture} ${context.adapter.description}`);
  }
  forceMatmul(kernelsFor(context), { forward: 'tile4x4', inputGrad: 'tile4x4', weightGrad: 'tile4x4' });
  return context;
}

/** A named check that runs kernels and asserts on their results (the shared cases of test/browser/gpu). */
export interface KernelCase {
  name: string;
  run(kernels: Kernels): Promise<void>;
}

/** Declares one test per case, run on a lavapipe device opened once for the file; a WebGPU validation error fails the case. */
export function testKernelCasesOnLavapipe(label: string, cases: readonly KernelCase[]): void {
  let context: GPUContext;
  let kernels: Kernels;
  beforeAll(async () => {
    context = await requestLavapipeDevice(label);
    kernels = new Kernels(context);
  });
  afterAll(() => context?.device.destroy());
  for (const kernelCase of cases) {
    test(kernelCase.name, async () => {
      context.device.pushErrorScope('validation');
      await kernelCase.run(kernels);
      const error = await context.device.popErrorScope();
      expect(error?.message, 'WebGPU validation error').toBeUndefined();
    });
  }
}
