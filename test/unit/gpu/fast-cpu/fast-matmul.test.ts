/**
 * The WASM SIMD matmuls of the fast CPU backend against the references (src/gpu/reference/matmul.ts)
 * on seeded random inputs, at sizes that are multiples of none of the kernel's blocks (MR 4, NR 8,
 * MC 64, KC 256, NC 256), on one thread and split over two worker threads: forward with and without
 * bias, and backward accumulating into non-zero gradients, with any of them switched off.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFastMatmulOps } from '../../../../src/gpu/fast-cpu/fast-ops.ts';
import { createNodeWasmGemm } from '../../../../src/gpu/fast-cpu/node-gemm-threads.ts';
import type { WasmGemm } from '../../../../src/gpu/fast-cpu/wasm-gemm.ts';
import { matmulBackward, matmulForward } from '../../../../src/gpu/reference/matmul.ts';
import { expectClose, randomArray } from '../expect-close.ts';

// f32 sums against the reference's f64: |error| grows with √K·|terms|; inputs are in [-1, 1).
const TOLERANCE = { atol: 2e-4, rtol: 1e-4 };
const SHAPES: [N: number, IC: number, OC: number][] = [
  [1, 7, 5], // one token, as decoding runs
  [13, 29, 11],
  [67, 261, 263], // K and Ncols past one block
  [130, 300, 70], // big enough to be split over threads
];

const gemms: WasmGemm[] = [];
afterAll(() => gemms.forEach((gemm) => gemm.dispose()));

describe.each([1, 2])('fast matmul on %i thread(s)', (threads) => {
  const opsPromise = createNodeWasmGemm(threads).then((gemm) => {
    gemms.push(gemm);
    return { ops: createFastMatmulOps(gemm), gemm };
  });

  it('uses the number of threads asked for', async () => {
    const { gemm } = await opsPromise;
    expect(gemm.threadCount).toBe(threads);
  });

  it.each(SHAPES)('matmul_forward matches reference at N=%i IC=%i OC=%i, with and without bias', async (N, IC, OC) => {
    const { ops } = await opsPromise;
    const inp = randomArray(N * IC, 1);
    const weight = randomArray(OC * IC, 2);
    const bias = randomArray(OC, 3);
    for (const b of [bias, null]) {
      const expected = new Float32Array(N * OC);
      const actual = new Float32Array(N * OC).fill(Number.NaN); // forward overwrites whatever was there
      matmulForward(expected, inp, weight, b, N, IC, OC);
      ops.matmulForward(actual, inp, weight, b, N, IC, OC);
      expectClose(actual, expected, { ...TOLERANCE, label: `out (bias ${b === null ? 'off' : 'on'})` });
    }
  });

  it.each(SHAPES)('matmul_backward accumulates like the reference at N=%i IC=%i OC=%i', async (N, IC, OC) => {
    const { ops } = await opsPromise;
    const inp = randomArray(N * IC, 4);
    const weight = randomArray(OC * IC, 5);
    const dout = randomArray(N * OC, 6);
    const start = { dinp: randomArray(N * IC, 7), dweight: randomArray(OC * IC, 8), dbias: randomArray(OC, 9) };
    const expected = { dinp: start.dinp.slice(), dweight: start.dweight.slice(), dbias: start.dbias.slice() };
    const actual = { dinp: start.dinp.slice(), dweight: start.dweight.slice(), dbias: start.dbias.slice() };
    matmulBackward(expected.dinp, expected.dweight, expected.dbias, dout, inp, weight, N, IC, OC);
    ops.matmulBackward(actual.dinp, actual.dweight, actual.dbias, dout, inp, weight, N, IC, OC);
    expectClose(actual.dinp, expected.dinp, { ...TOLERANCE, label: 'dinp' });
    expectClose(actual.dweight, expected.dweight, { ...TOLERANCE, label: 'dweight' });
    expectClose(actual.dbias, expected.dbias, { ...TOLERANCE, label: 'dbias' });

    // a frozen weight (LoRA's base): dinp only, dweight untouched
    const onlyDinp = start.dinp.slice();
    ops.matmulBackward(onlyDinp, null, null, dout, inp, weight, N, IC, OC);
    expectClose(onlyDinp, expected.dinp, { ...TOLERANCE, label: 'dinp without dweight' });
  });
});
