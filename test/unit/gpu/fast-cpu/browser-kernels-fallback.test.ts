/**
 * The browser's fast CPU kernels where memory cannot be shared (a page that is not cross-origin
 * isolated; Node has no `crossOriginIsolated` at all, so it stands in for one): asked for several
 * threads, they run on one, say why, and still compute.
 */
import { expect, it } from 'vitest';
import { createFastCpuOps } from '../../../../src/gpu/fast-cpu/fast-ops.ts';
import { relaxedSimdValidates } from '../../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { canShareMemory, createBrowserWasmKernels, fastCpuLabel, NOT_ISOLATED_REASON } from '../../../../src/gpu/fast-cpu/web-kernel-threads.ts';
import { matmulForward } from '../../../../src/gpu/reference/matmul.ts';
import { expectClose, randomArray } from '../../../support/expect-close.ts';

it('without cross-origin isolation, four threads asked for become one thread that says why', async () => {
  expect(canShareMemory()).toBe(false);
  const browserKernels = await createBrowserWasmKernels(4);
  try {
    expect(browserKernels.kernels.threadCount).toBe(1);
    expect(browserKernels.singleThreadReason).toBe(NOT_ISOLATED_REASON);
    // the browser's kernels take the relaxed build exactly where the runtime validates it (here: whether this process turned V8's flag on)
    expect(browserKernels.kernels.simd).toBe(relaxedSimdValidates() ? 'relaxed' : 'plain');
    expect(fastCpuLabel(browserKernels)).toBe(`CPU (${relaxedSimdValidates() ? 'WASM relaxed SIMD' : 'WASM SIMD'}, 1 thread: page not cross-origin isolated)`);
    const [N, IC, OC] = [130, 300, 70];
    const inp = randomArray(N * IC, 1);
    const weight = randomArray(OC * IC, 2);
    const expected = new Float32Array(N * OC);
    const actual = new Float32Array(N * OC).fill(Number.NaN);
    matmulForward(expected, inp, weight, null, N, IC, OC);
    createFastCpuOps(browserKernels.kernels).matmulForward(actual, inp, weight, null, N, IC, OC);
    expectClose(actual, expected, { atol: 2e-4, rtol: 1e-4, label: 'out' });
  } finally {
    browserKernels.kernels.dispose();
  }
});
