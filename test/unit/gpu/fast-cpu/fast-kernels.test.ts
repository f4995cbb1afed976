/**
 * The WASM SIMD kernels of the fast CPU backend against the references, in both builds (relaxed SIMD
 * with fused multiply-add, and plain SIMD), on one thread and split over two worker threads: the checks of test/support/gpu/fast-cpu-kernel-cases.ts (matmul forward and
 * backward, attention, SwiGLU at sizes off the gemm's blocks and the SIMD width), which
 * test/browser/fast-cpu/fast-cpu-kernels.test.ts runs in Chromium.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFastCpuOps } from '../../../../src/gpu/fast-cpu/fast-ops.ts';
import { createNodeWasmKernels } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import type { KernelSimd, WasmKernels } from '../../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { FAST_CPU_KERNEL_CASES } from '../../../support/gpu/fast-cpu-kernel-cases.ts';

const kernelSets: WasmKernels[] = [];
afterAll(() => kernelSets.forEach((kernels) => kernels.dispose()));

const BUILDS: [threads: number, simd: KernelSimd][] = [
  [1, 'relaxed'],
  [2, 'relaxed'],
  [1, 'plain'],
  [2, 'plain'],
];

describe.each(BUILDS)('fast kernels on %i thread(s), %s SIMD', (threads, simd) => {
  const opsPromise = createNodeWasmKernels(threads, simd).then((kernels) => {
    kernelSets.push(kernels);
    return { ops: createFastCpuOps(kernels), kernels };
  });

  it('uses the number of threads and the build asked for', async () => {
    const { kernels } = await opsPromise;
    expect(kernels.threadCount).toBe(threads);
    expect(kernels.simd).toBe(simd);
  });

  for (const kernelCase of FAST_CPU_KERNEL_CASES) {
    it(kernelCase.name, async () => {
      const { ops } = await opsPromise;
      kernelCase.run(ops);
    });
  }

  it('refuses attention over more tokens than its scratch holds, and says what to use instead', async () => {
    const { kernels } = await opsPromise;
    const tiny = new Float32Array(4);
    expect(() => kernels.attentionForward(tiny, tiny, tiny, tiny, tiny, 1, 65537, 1, 1, 1)).toThrow(
      /attention over 65537 tokens is longer than the fast CPU backend's 65536; use the reference CPU backend/,
    );
    expect(() => kernels.attentionBackward(tiny, tiny, tiny, tiny, tiny, tiny, tiny, tiny, 1, 65537, 1, 1, 1)).toThrow(/use the reference CPU backend/);
  });
});
