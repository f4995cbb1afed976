/**
 * The fast CPU backend's WASM SIMD kernels in real Chromium, on one thread and split over Web
 * Workers that share the page's WebAssembly.Memory (the test page is cross-origin isolated like the
 * app), against the references (src/gpu/reference/) on seeded random inputs at sizes that are
 * multiples of none of the gemm's blocks (MR 4, NR 8, MC 64, KC 256, NC 256) or the SIMD width.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFastCpuOps } from '../../../src/gpu/fast-cpu/fast-ops.ts';
import { createBrowserWasmKernels, fastCpuLabel } from '../../../src/gpu/fast-cpu/web-kernel-threads.ts';
import { relaxedSimdValidates, type WasmKernels } from '../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { attentionBackward, attentionForward } from '../../../src/gpu/reference/attention.ts';
import { matmulBackward, matmulForward } from '../../../src/gpu/reference/matmul.ts';
import { swigluBackward, swigluForward } from '../../../src/gpu/reference/swiglu.ts';
import { expectClose, randomArray } from '../../support/expect-close.ts';

// f32 sums against the reference's f64; inputs are in [-1, 1).
const TOLERANCE = { atol: 2e-4, rtol: 1e-4 };
const MATMUL_SHAPES: [N: number, IC: number, OC: number][] = [
  [1, 7, 5], // one token, as decoding runs
  [67, 261, 263], // K and Ncols past one block
  [130, 300, 70], // big enough to be split over the workers
];
const ATTENTION_SHAPES: [B: number, T: number, NH: number, KVH: number, HS: number][] = [
  [2, 13, 4, 2, 6],
  [3, 70, 6, 2, 20], // big enough to be split over the workers
];
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

  it.each(MATMUL_SHAPES)('matmul_forward and matmul_backward match reference at N=%i IC=%i OC=%i', async (N, IC, OC) => {
    const { ops } = await opsPromise;
    const inp = randomArray(N * IC, 1);
    const weight = randomArray(OC * IC, 2);
    const bias = randomArray(OC, 3);
    const expectedOut = new Float32Array(N * OC);
    const actualOut = new Float32Array(N * OC).fill(Number.NaN); // forward overwrites whatever was there
    matmulForward(expectedOut, inp, weight, bias, N, IC, OC);
    ops.matmulForward(actualOut, inp, weight, bias, N, IC, OC);
    expectClose(actualOut, expectedOut, { ...TOLERANCE, label: 'out' });

    const dout = randomArray(N * OC, 6);
    const start = { dinp: randomArray(N * IC, 7), dweight: randomArray(OC * IC, 8), dbias: randomArray(OC, 9) };
    const expected = { dinp: start.dinp.slice(), dweight: start.dweight.slice(), dbias: start.dbias.slice() };
    const actual = { dinp: start.dinp.slice(), dweight: start.dweight.slice(), dbias: start.dbias.slice() };
    matmulBackward(expected.dinp, expected.dweight, expected.dbias, dout, inp, weight, N, IC, OC);
    ops.matmulBackward(actual.dinp, actual.dweight, actual.dbias, dout, inp, weight, N, IC, OC);
    expectClose(actual.dinp, expected.dinp, { ...TOLERANCE, label: 'dinp' });
    expectClose(actual.dweight, expected.dweight, { ...TOLERANCE, label: 'dweight' });
    expectClose(actual.dbias, expected.dbias, { ...TOLERANCE, label: 'dbias' });
  });

  it.each([7, 200003])('swiglu_forward and swiglu_backward match reference over %i values', async (N) => {
    const { ops } = await opsPromise;
    const gate = randomArray(N, 18, 12); // sigmoid's saturated tails included
    const up = randomArray(N, 19);
    const expected = new Float32Array(N);
    const actual = new Float32Array(N).fill(Number.NaN);
    swigluForward(expected, gate, up, N);
    ops.swigluForward(actual, gate, up, N);
    expectClose(actual, expected, { atol: 1e-6, rtol: 1e-5, label: 'out' });
    const dout = randomArray(N, 20);
    const start = [randomArray(N, 21), randomArray(N, 22)] as const;
    const expectedGrads = start.map((x) => x.slice());
    const actualGrads = start.map((x) => x.slice());
    swigluBackward(expectedGrads[0]!, expectedGrads[1]!, dout, gate, up, N);
    ops.swigluBackward(actualGrads[0]!, actualGrads[1]!, dout, gate, up, N);
    expectClose(actualGrads[0]!, expectedGrads[0]!, { atol: 1e-6, rtol: 1e-5, label: 'dgate' });
    expectClose(actualGrads[1]!, expectedGrads[1]!, { atol: 1e-6, rtol: 1e-5, label: 'dup' });
  });

  it.each(ATTENTION_SHAPES)('attention_forward and attention_backward match reference at B=%i T=%i NH=%i KVH=%i HS=%i', async (B, T, NH, KVH, HS) => {
    const { ops } = await opsPromise;
    const q = randomArray(B * T * NH * HS, 11);
    const k = randomArray(B * T * KVH * HS, 12);
    const v = randomArray(B * T * KVH * HS, 13);
    const expectedOut = new Float32Array(B * T * NH * HS);
    const expectedAtt = new Float32Array(B * NH * T * T);
    const actualOut = new Float32Array(B * T * NH * HS).fill(Number.NaN);
    const actualAtt = new Float32Array(B * NH * T * T).fill(Number.NaN); // forward writes every probability, zeros included
    attentionForward(expectedOut, expectedAtt, q, k, v, B, T, NH, KVH, HS);
    ops.attentionForward(actualOut, actualAtt, q, k, v, B, T, NH, KVH, HS);
    expectClose(actualAtt, expectedAtt, { atol: 1e-6, rtol: 1e-5, label: 'att' });
    expectClose(actualOut, expectedOut, { atol: 1e-5, rtol: 1e-4, label: 'out' });

    const dout = randomArray(B * T * NH * HS, 14);
    const start = [randomArray(B * T * NH * HS, 15), randomArray(B * T * KVH * HS, 16), randomArray(B * T * KVH * HS, 17)] as const;
    const expected = start.map((x) => x.slice());
    const actual = start.map((x) => x.slice());
    attentionBackward(expected[0]!, expected[1]!, expected[2]!, dout, q, k, v, expectedAtt, B, T, NH, KVH, HS);
    ops.attentionBackward(actual[0]!, actual[1]!, actual[2]!, dout, q, k, v, expectedAtt, B, T, NH, KVH, HS);
    ['dq', 'dk', 'dv'].forEach((label, i) => expectClose(actual[i]!, expected[i]!, { atol: 1e-4, rtol: 1e-4, label }));
  });
});
