/**
 * The fast CPU backend's row and elementwise WASM kernels against the references (src/gpu/reference/)
 * on seeded random inputs, in the relaxed-SIMD and the plain-SIMD build, on one thread and split over
 * two worker threads: RMSNorm forward and
 * backward (with and without a weight gradient), log-softmax of the targets at two temperatures and
 * its backward (rows with a zero weight skipped), AdamW over three steps, and the residual add. Sizes
 * are off the SIMD width, and the large ones are above the size where a call is split over threads.
 * Then the resident memory: arrays from allocate() are used in place, give the same results as
 * ordinary arrays, are reused once released, stop at the resident limit (the rest of the memory is
 * for staging), and a plain (unshared) memory hands out none.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFastCpuOps } from '../../../../src/gpu/fast-cpu/fast-ops.ts';
import { createNodeWasmKernels } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { compileKernelModule, createKernelMemory, createWasmKernels, instantiateKernels, WasmKernels, type KernelSimd } from '../../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { adamwUpdate } from '../../../../src/gpu/reference/adamw.ts';
import { logprobsBackward, logprobsForward } from '../../../../src/gpu/reference/logprobs.ts';
import { residualBackward, residualForward } from '../../../../src/gpu/reference/residual.ts';
import { rmsnormBackward, rmsnormForward } from '../../../../src/gpu/reference/rmsnorm.ts';
import { expectClose, randomArray, randomInts } from '../../../support/expect-close.ts';

const RMSNORM_SHAPES: [N: number, C: number][] = [
  [1, 3], // one row narrower than a vector
  [7, 61],
  [1001, 517], // split over threads
];
const LOGPROBS_SHAPES: [N: number, V: number][] = [
  [1, 5],
  [13, 263],
  [333, 307], // split over threads
];
const ELEMENTWISE_LENGTHS = [1, 7, 1001, 2_000_003]; // the last is split over threads

const kernelSets: WasmKernels[] = [];
afterAll(() => kernelSets.forEach((kernels) => kernels.dispose()));

const BUILDS: [threads: number, simd: KernelSimd][] = [
  [1, 'relaxed'],
  [2, 'relaxed'],
  [1, 'plain'],
  [2, 'plain'],
];

describe.each(BUILDS)('fast row kernels on %i thread(s), %s SIMD', (threads, simd) => {
  const kernelsPromise = createNodeWasmKernels(threads, simd).then((kernels) => {
    kernelSets.push(kernels);
    return kernels;
  });

  it.each(RMSNORM_SHAPES)('rmsnorm forward and backward match the reference at N=%i C=%i', async (N, C) => {
    const ops = createFastCpuOps(await kernelsPromise);
    const inp = randomArray(N * C, 1, 3);
    const weight = randomArray(C, 2);
    const expected = { out: new Float32Array(N * C), rstd: new Float32Array(N) };
    const actual = { out: new Float32Array(N * C).fill(Number.NaN), rstd: new Float32Array(N).fill(Number.NaN) };
    rmsnormForward(expected.out, expected.rstd, inp, weight, N, C, 1e-5);
    ops.rmsnormForward(actual.out, actual.rstd, inp, weight, N, C, 1e-5);
    expectClose(actual.out, expected.out, { atol: 1e-6, rtol: 1e-5, label: 'out' });
    expectClose(actual.rstd, expected.rstd, { atol: 0, rtol: 1e-5, label: 'rstd' });

    const dout = randomArray(N * C, 3);
    const start = { dinp: randomArray(N * C, 4), dweight: randomArray(C, 5) };
    const expectedGrads = { dinp: start.dinp.slice(), dweight: start.dweight.slice() };
    const actualGrads = { dinp: start.dinp.slice(), dweight: start.dweight.slice() };
    rmsnormBackward(expectedGrads.dinp, expectedGrads.dweight, dout, inp, weight, expected.rstd, N, C);
    ops.rmsnormBackward(actualGrads.dinp, actualGrads.dweight, dout, inp, weight, expected.rstd, N, C);
    expectClose(actualGrads.dinp, expectedGrads.dinp, { atol: 1e-5, rtol: 1e-4, label: 'dinp' });
    // dweight sums N rows in f32 (the reference in f64)
    expectClose(actualGrads.dweight, expectedGrads.dweight, { atol: 1e-4 * Math.sqrt(N), rtol: 1e-4, label: 'dweight' });

    // a frozen weight (LoRA's base): dinp only
    const onlyDinp = start.dinp.slice();
    ops.rmsnormBackward(onlyDinp, null, dout, inp, weight, expected.rstd, N, C);
    expectClose(onlyDinp, expectedGrads.dinp, { atol: 1e-5, rtol: 1e-4, label: 'dinp without dweight' });
  });

  it.each(LOGPROBS_SHAPES)('logprobs forward and backward match the reference at N=%i V=%i', async (N, V) => {
    const ops = createFastCpuOps(await kernelsPromise);
    const logits = randomArray(N * V, 6, 8); // spread like a trained head's logits
    const targets = randomInts(N, 7, V);
    const dlogprobs = randomArray(N, 8);
    if (N > 1) dlogprobs[1] = 0; // a masked token: its row gets no gradient
    for (const temperature of [1, 0.7]) {
      const expected = new Float32Array(N);
      const actual = new Float32Array(N).fill(Number.NaN);
      logprobsForward(expected, logits, targets, N, V, temperature);
      ops.logprobsForward(actual, logits, targets, N, V, temperature);
      expectClose(actual, expected, { atol: 2e-6, rtol: 1e-6, label: `logprobs at temperature ${temperature}` });

      const start = randomArray(N * V, 9);
      const expectedGrads = start.slice();
      const actualGrads = start.slice();
      logprobsBackward(expectedGrads, dlogprobs, logits, targets, N, V, temperature);
      ops.logprobsBackward(actualGrads, dlogprobs, logits, targets, N, V, temperature);
      expectClose(actualGrads, expectedGrads, { atol: 1e-6, rtol: 1e-5, label: `dlogits at temperature ${temperature}` });
      if (N > 1) expect(actualGrads.subarray(V, 2 * V)).toEqual(start.subarray(V, 2 * V));
    }
  });

  it.each(ELEMENTWISE_LENGTHS)('adamw and the residual add match the reference over %i values', async (n) => {
    const ops = createFastCpuOps(await kernelsPromise);
    const params = randomArray(n, 10);
    const expected = { params: params.slice(), m: new Float32Array(n), v: new Float32Array(n) };
    const actual = { params: params.slice(), m: new Float32Array(n), v: new Float32Array(n) };
    for (let step = 1; step <= 3; step++) {
      const grads = randomArray(n, 10 + step, 0.1);
      const hyperparameters = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step };
      adamwUpdate(expected.params, grads, expected.m, expected.v, n, hyperparameters);
      ops.adamwUpdate(actual.params, grads, actual.m, actual.v, n, hyperparameters);
    }
    expectClose(actual.m, expected.m, { atol: 1e-8, rtol: 1e-5, label: 'm' });
    expectClose(actual.v, expected.v, { atol: 1e-10, rtol: 1e-5, label: 'v' });
    // an update is lr·m̂/(√v̂ + eps), at most lr·(a few) in size: compared to 1e-5 of lr
    expectClose(actual.params, expected.params, { atol: 1e-7, rtol: 1e-5, label: 'params' });

    const a = randomArray(n, 20);
    const b = randomArray(n, 21);
    const expectedSum = new Float32Array(n);
    const actualSum = new Float32Array(n).fill(Number.NaN);
    residualForward(expectedSum, a, b, n);
    ops.residualForward(actualSum, a, b, n);
    const EXACT = { atol: 0, rtol: 0 }; // one f32 add per value
    expectClose(actualSum, expectedSum, { ...EXACT, label: 'a + b' });
    const dout = randomArray(n, 22);
    const expectedDa = a.slice();
    const expectedDb = b.slice();
    const actualDa = a.slice();
    const actualDb = b.slice();
    residualBackward(expectedDa, expectedDb, dout, n);
    ops.residualBackward(actualDa, actualDb, dout, n);
    expectClose(actualDa, expectedDa, { ...EXACT, label: 'da' });
    expectClose(actualDb, expectedDb, { ...EXACT, label: 'db' });
  });

  it('uses resident arrays in place, with the results of ordinary ones', async () => {
    const kernels = await kernelsPromise;
    const [N, C] = [37, 61];
    const inp = randomArray(N * C, 30);
    const weight = randomArray(C, 31);
    const residentInp = kernels.allocate(N * C)!;
    const residentOut = kernels.allocate(N * C)!;
    const residentRstd = kernels.allocate(N)!;
    expect(residentInp).not.toBeNull();
    expect(kernels.isResident(residentInp.subarray(C))).toBe(true); // a view of a resident array is resident
    expect(kernels.isResident(inp)).toBe(false);
    expect(residentOut.every((x) => x === 0)).toBe(true);
    residentInp.set(inp);
    const out = new Float32Array(N * C);
    const rstd = new Float32Array(N);
    kernels.rmsnormForward(out, rstd, inp, weight, N, C, 1e-6);
    kernels.rmsnormForward(residentOut, residentRstd, residentInp, weight, N, C, 1e-6);
    expect(residentOut).toEqual(out);
    expect(residentRstd).toEqual(rstd);

    // a released block is handed out again (zeroed), not new memory
    const offset = residentOut.byteOffset;
    kernels.release(residentOut);
    const again = kernels.allocate(N * C)!;
    expect(again.byteOffset).toBe(offset);
    expect(again.every((x) => x === 0)).toBe(true);
    for (const array of [residentInp, again, residentRstd]) kernels.release(array);
  });

  it('keeps resident arrays valid while the memory grows for a large call', async () => {
    const kernels = await kernelsPromise;
    const kept = kernels.allocate(1000)!;
    kept.set(randomArray(1000, 40));
    const copy = kept.slice();
    const n = 3_000_000; // 36 MB of staged operands: the memory grows
    const a = randomArray(n, 41);
    const out = new Float32Array(n);
    kernels.residualForward(out, a, a, n);
    expect(out[n - 1]).toBe(a[n - 1]! + a[n - 1]!);
    expect(kernels.isResident(kept)).toBe(true);
    expect(kept).toEqual(copy);
    kernels.residualForward(kept, copy, copy, 1000);
    expect(kept).toEqual(copy.map((x) => x + x));
    kernels.release(kept);
  });
});

describe('fast kernels with a resident limit', () => {
  it('hands out resident arrays up to the limit, then none until some are released; calls still run on ordinary arrays', async () => {
    const memory = createKernelMemory(true);
    const kernels = new WasmKernels(await instantiateKernels(await compileKernelModule(true), memory), memory, null, 4096);
    const first = kernels.allocate(512)!; // 2048 bytes
    const second = kernels.allocate(512)!;
    expect(kernels.isResident(first) && kernels.isResident(second)).toBe(true);
    expect(kernels.allocate(1)).toBeNull(); // past 4096 bytes
    const big = new Float32Array(100_000); // staged above the resident arrays
    const a = randomArray(100_000, 60);
    kernels.residualForward(big, a, a, 100_000);
    expect(big[99_999]).toBe(a[99_999]! + a[99_999]!);
    kernels.release(second);
    expect(kernels.allocate(512)?.byteOffset).toBe(second.byteOffset);
  });
});

describe('fast kernels on a plain (unshared) memory', () => {
  it('hands out no resident arrays, and the ops fall back to ordinary ones that are copied per call', async () => {
    const kernels = await createWasmKernels();
    expect(kernels.allocate(16)).toBeNull();
    const ops = createFastCpuOps(kernels);
    const buffer = ops.allocate(16);
    expect(buffer.length).toBe(16);
    expect(kernels.isResident(buffer)).toBe(false);
    const a = randomArray(16, 50);
    ops.residualForward(buffer, a, a, 16);
    expect(buffer).toEqual(a.map((x) => x + x));
    ops.release(buffer); // ignored
  });
});
