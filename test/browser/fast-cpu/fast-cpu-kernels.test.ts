/**
 * The fast CPU backend's WASM SIMD kernels in real Chromium, on one thread and split over Web
 * Workers that share the page's WebAssembly.Memory (the test page is cross-origin isolated like the
 * app): the checks of test/support/gpu/fast-cpu-kernel-cases.ts (matmul forward and backward,
 * attention, SwiGLU at sizes off the gemm's blocks and the SIMD width), which
 * test/unit/gpu/fast-cpu/fast-kernels.test.ts runs in Node.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFastCpuOps } from '../../../src/gpu/fast-cpu/fast-ops.ts';
import { createBrowserWasmKernels, fastCpuLabel } from '../../../src/gpu/fast-cpu/web-kernel-threads.ts';
import { relaxedSimdValidates, type WasmKernels } from '../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { FAST_CPU_KERNEL_CASES } from '../../support/gpu/fast-cpu-kernel-cases.ts';

// Three threads (two workers) even on a 2-core machine: a share boundary inside every split.
const THREAD_COUNTS = [1, 3];

const kernelSets: WasmKernels[] = [];
afterAll(() => kernelSets.forEach((kernels) => kernels.dispose()));

it('the test page is cross-origin isolated, as the app is', () => {
  expect(crossOriginIsolated).toBe(true);
});

describe.each(THREAD_COUNTS)('fast CPU kernels in Chromium on %i thread(s)', (threads) => {
  const opsPromise = createBrowserWasmKernels(threads).then((browserKernels) => {
    kernelSets.push(browserKernels.kernels);
    return { ops: createFastCpuOps(browserKernels.kernels), browserKernels };
  });

  it('runs on the threads asked for and names them', async () => {
    const { browserKernels } = await opsPromise;
    expect(browserKernels.kernels.threadCount).toBe(threads);
    expect(browserKernels.singleThreadReason).toBeNull();
    // Chromium ships relaxed SIMD (since 114): the fused multiply-add build runs, and the label says so
    expect(relaxedSimdValidates()).toBe(true);
    expect(browserKernels.kernels.simd).toBe('relaxed');
    expect(fastCpuLabel(browserKernels)).toBe(`CPU (WASM relaxed SIMD, ${threads} thread${threads === 1 ? '' : 's'})`);
  });

  for (const kernelCase of FAST_CPU_KERNEL_CASES) {
    it(kernelCase.name, async () => {
      const { ops } = await opsPromise;
      kernelCase.run(ops);
    });
  }
});
