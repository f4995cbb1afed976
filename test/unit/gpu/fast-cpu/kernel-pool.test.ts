/**
 * The kernels' thread pool serves each call once, whatever wakes its workers: a wake-up of the
 * workers' wait with no new call (Atomics.wait has returned so in a training run) must neither run
 * the last call's share again (an accumulating kernel would add it twice) nor upset the count of
 * running workers, so the next call still completes with the right result.
 */
import { afterAll, expect, it } from 'vitest';
import { createNodeWasmKernels } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { randomArray } from '../../../support/expect-close.ts';

const kernelsPromise = createNodeWasmKernels(2);
afterAll(async () => (await kernelsPromise).dispose());

// residual_backward counts 2 flops an element; at 2e6 flops the pool splits a call over both threads
const N = 1_000_003;
const GENERATION = 0; // the control block's first slot: the call's generation, which workers wait on
const PENDING = 1; // the count of workers still running the call

/** How many of a's values differ from expected(i) (toEqual on a million floats takes a minute on a loaded machine). */
function mismatches(a: Float32Array, expected: (i: number) => number): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== expected(i)) count++;
  return count;
}

it('a wake-up without a new call runs nothing again, and the next call completes', async () => {
  const kernels = await kernelsPromise;
  expect(kernels.threadCount).toBe(2);
  const control = (kernels as unknown as { threads: { control: Int32Array } }).threads.control; // the pool's private control block
  const dout = randomArray(N, 1);
  const da = new Float32Array(N);
  const db = new Float32Array(N);
  kernels.residualBackward(da, db, dout, N); // da = db = dout, half of it on the worker
  expect(mismatches(da, (i) => dout[i]!)).toBe(0);

  Atomics.notify(control, GENERATION); // wake the worker with the generation unchanged
  for (let waited = 0; waited < 300 && Atomics.load(control, PENDING) === 0; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(Atomics.load(control, PENDING)).toBe(0);
  expect(mismatches(da, (i) => dout[i]!)).toBe(0); // the worker's half was not added a second time
  expect(mismatches(db, (i) => dout[i]!)).toBe(0);

  kernels.residualBackward(da, db, dout, N);
  expect(mismatches(da, (i) => dout[i]! + dout[i]!)).toBe(0);
  expect(mismatches(db, (i) => dout[i]! + dout[i]!)).toBe(0);
});
