/**
 * The kernels' thread pool's checks on 2 threads, written once and run by two test files:
 * test/unit/gpu/fast-cpu/kernel-pool.test.ts (Node worker threads) and
 * test/browser/fast-cpu/kernel-pool.test.ts (Web Workers in Chromium; the page's main thread spins
 * instead of Atomics.wait). The pool serves each call once and never leaves its caller waiting for good:
 * - a wake-up of the worker's wait with no new call (the caller's notify arriving after the worker
 *   served the call on its own, as under load) neither runs the last call's share again (an
 *   accumulating kernel would add it twice) nor upsets the count of running workers, so the next call
 *   still completes with the right result;
 * - the generation wraps around 2³² calls (to −1, once the quit value) and the worker keeps serving;
 * - a worker's share that throws (a trap) comes back as the caller's error, the pool still working;
 * - a caller's own share that throws still waits for the worker before the error leaves the call.
 * Where the old pool would block the caller for good, a case publishes the call itself and polls the
 * count of running workers, so it fails instead of hanging.
 */
import { expect } from 'vitest';
import { CONTROL_SLOTS } from '../../src/gpu/fast-cpu/shared-kernel-threads.ts';
import { KERNEL_FUNCTIONS, type KernelThreads, type WasmKernels } from '../../src/gpu/fast-cpu/wasm-kernels.ts';
import { randomArray } from './expect-close.ts';

/** One check of a pool of 2 threads: a name for the test and a body that fails through expect. */
export interface KernelPoolCase {
  name: string;
  run: (kernels: WasmKernels) => Promise<void>;
}

// residual_backward counts 2 flops an element; at 2e6 flops the pool splits a call over both threads
const N = 1_000_003;
const GENERATION = CONTROL_SLOTS.generation; // the call's generation, which workers wait on
const PENDING = CONTROL_SLOTS.pending; // the count of workers still running the call

/** The pool's private control block and caller side. */
function poolOf(kernels: WasmKernels): { control: Int32Array; threads: KernelThreads } {
  const threads = (kernels as unknown as { threads: KernelThreads & { control: Int32Array } }).threads;
  return { control: threads.control, threads };
}

/**
 * Publishes a call as the pool's caller does, without running a share of it here: the worker's range is
 * [u0, u1); the generation becomes `generation` (default: the next one). Returns at once.
 */
function publishCall(control: Int32Array, fn: number, args: number[], u0: number, u1: number, generation?: number): void {
  control[CONTROL_SLOTS.fn] = fn;
  args.forEach((arg, i) => (control[CONTROL_SLOTS.args + i] = arg));
  control[CONTROL_SLOTS.ranges] = 0;
  control[CONTROL_SLOTS.ranges + 1] = u0;
  control[CONTROL_SLOTS.ranges + 2] = u1;
  Atomics.store(control, PENDING, 1);
  if (generation === undefined) Atomics.add(control, GENERATION, 1);
  else Atomics.store(control, GENERATION, generation);
  Atomics.notify(control, GENERATION);
}

/** The count of running workers once it reaches 0, or as it stands after about 5 s (polling, so a stuck worker fails the test instead of blocking it). */
async function settledPending(control: Int32Array): Promise<number> {
  for (let waited = 0; waited < 5000 && Atomics.load(control, PENDING) !== 0; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  return Atomics.load(control, PENDING);
}

/** How many of a's values differ from expected(i) (toEqual on a million floats takes a minute on a loaded machine). */
function mismatches(a: Float32Array, expected: (i: number) => number): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== expected(i)) count++;
  return count;
}

/** The checks, in an order each leaves the pool working for the next. */
export const KERNEL_POOL_CASES: KernelPoolCase[] = [
  {
    name: 'a wake-up without a new call runs nothing again, and the next call completes',
    run: async (kernels) => {
      expect(kernels.threadCount).toBe(2);
      const { control } = poolOf(kernels);
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
    },
  },
  {
    name: 'the generation wraps around to −1 and past it, and the worker keeps serving',
    run: async (kernels) => {
      const { control } = poolOf(kernels);
      const residualForward = KERNEL_FUNCTIONS.indexOf('residual_forward');
      publishCall(control, residualForward, [0, 0, 0], 0, 0, -2); // where 2³² − 2 calls leave it, with no work for the worker
      expect(await settledPending(control)).toBe(0);
      publishCall(control, residualForward, [0, 0, 0], 0, 0); // −2 + 1: the generation that once meant quit
      expect(Atomics.load(control, GENERATION)).toBe(-1);
      expect(await settledPending(control)).toBe(0);

      const dout = Float32Array.from({ length: N }, (_, i) => (i % 5) - 2);
      const da = new Float32Array(N);
      const db = new Float32Array(N);
      kernels.residualBackward(da, db, dout, N); // generation 0 again, split over both threads
      expect(Atomics.load(control, GENERATION)).toBe(0);
      expect(mismatches(da, (i) => dout[i]!)).toBe(0);
      expect(mismatches(db, (i) => dout[i]!)).toBe(0);
    },
  },
  {
    name: "a worker's share that traps is the caller's error, and the pool keeps working",
    run: async (kernels) => {
      const { control, threads } = poolOf(kernels);
      const residualForward = KERNEL_FUNCTIONS.indexOf('residual_forward');
      const outOfBounds = 2 ** 31 - 2 ** 16; // inside the memory's 2 GiB maximum, far above what it holds
      expect(outOfBounds).toBeGreaterThan((kernels as unknown as { memory: WebAssembly.Memory }).memory.buffer.byteLength);

      // Published by hand first: a worker that dies on the trap never counts itself done (polled, not waited on).
      publishCall(control, residualForward, [outOfBounds, outOfBounds, outOfBounds], 0, 64);
      expect(await settledPending(control)).toBe(0);
      expect(Atomics.load(control, CONTROL_SLOTS.failed)).toBe(1);
      Atomics.store(control, CONTROL_SLOTS.failed, 0);

      const ranges = Int32Array.from([0, 0, 64]); // nothing for the caller, 64 values for the worker
      let ownShares = 0;
      expect(() => threads.run({ fn: residualForward, args: [outOfBounds, outOfBounds, outOfBounds] }, ranges, () => ownShares++)).toThrow(
        /worker thread failed on its share of residual_forward: worker 1: .*out of bounds.*not to be trusted/,
      );
      expect(ownShares).toBe(1);
      expect(Atomics.load(control, PENDING)).toBe(0);

      const dout = Float32Array.from({ length: N }, (_, i) => (i % 3) - 1);
      const da = new Float32Array(N);
      const db = new Float32Array(N);
      kernels.residualBackward(da, db, dout, N); // the same worker, alive, and the failure not reported again
      expect(mismatches(da, (i) => dout[i]!)).toBe(0);
      expect(mismatches(db, (i) => dout[i]!)).toBe(0);
    },
  },
  {
    name: "a caller's own share that throws leaves the call only after the worker's share is done",
    run: async (kernels) => {
      const { control, threads } = poolOf(kernels);
      // C (M, M) = A·B with A and B all ones, K = M: the worker's half (1 GFLOP, tenths of a second) is
      // still running when the caller's share throws at once.
      const M = 1024;
      const c = kernels.allocate(M * M)!;
      const a = kernels.allocate(M * M)!.fill(1);
      const b = kernels.allocate(M * M)!.fill(1);
      const ranges = Int32Array.from([0, M / 2, M]); // rows: none run by the caller, the second half by the worker
      const call = { fn: KERNEL_FUNCTIONS.indexOf('gemm'), args: [c.byteOffset, M, a.byteOffset, M, 1, b.byteOffset, M, 1, 0, M, M, 0] };
      expect(() =>
        threads.run(call, ranges, () => {
          throw new Error('our share failed');
        }),
      ).toThrow('our share failed');
      expect(Atomics.load(control, PENDING)).toBe(0); // the worker is done: the next call may reuse the slots
      expect(mismatches(c.subarray((M / 2) * M), () => M)).toBe(0);
      expect(mismatches(c.subarray(0, (M / 2) * M), () => 0)).toBe(0);
      [a, b, c].forEach((array) => kernels.release(array));
    },
  },
];
