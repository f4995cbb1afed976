/**
 * The WASM SIMD kernels of the fast CPU backend against the references on one thread and split over
 * two worker threads: the checks of test/support/gpu/fast-cpu-kernel-cases.ts (matmul forward and
 * backward, attention, SwiGLU at sizes off the gemm's blocks and the SIMD width), which
 * test/browser/fast-cpu/fast-cpu-kernels.test.ts runs in Chromium.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFastCpuOps } from '../../../../src/gpu/fast-cpu/fast-ops.ts';
import { createNodeWasmKernels } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import type { WasmKernels } from '../../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { FAST_CPU_KERNEL_CASES } from '../../../support/gpu/fast-cpu-kernel-cases.ts';

const kernelSets: WasmKernels[] = [];
afterAll(() => kernelSets.forEach((kernels) => kernels.dispose()));

describe.each([1, 2])('fast kernels on %i thread(s)', (threads) => {
  const opsPromise = createNodeWasmKernels(threads).then((kernels) => {
    kernelSets.push(kernels);
    return { ops: createFastCpuOps(kernels), kernels };
  });

  it('uses the number of threads asked for', async () => {
    const { kernels } = await opsPromise;
    expect(kernels.threadCount).toBe(threads);
  });

  for (const kernelCase of FAST_CPU_KERNEL_CASES) {
    it(kernelCase.name, async () => {
      const { ops } = await opsPromise;
      kernelCase.run(ops);
    });
  }
});
