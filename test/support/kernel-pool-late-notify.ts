/**
 * A process that drives the kernels' thread pool (2 threads) through the interleaving that stalled
 * two-thread training runs on a loaded machine, made certain by delays instead of left to the
 * scheduler: the worker stays awake a while after each share (as one descheduled there would), so it
 * sees the next call's generation without being notified and serves it; the caller's notify of that
 * call is held back (as if the caller were descheduled between its Atomics.add and its
 * Atomics.notify) until the worker has served it and sleeps in Atomics.wait again, and only then
 * wakes it, with the generation it has served. A worker that serves on any wake-up runs its share a
 * second time and leaves the count of running workers at −1, and the caller then waits forever.
 * Prints one JSON line ({ calls, lateNotifies, mismatches }). Run in a child process by
 * test/unit/gpu/fast-cpu/kernel-pool-late-notify.test.ts, since a pool that gets it wrong blocks
 * this process's only thread for good, where no test timeout can fire.
 */
import { Worker } from 'node:worker_threads';
import { CONTROL_SLOTS, createPooledWasmKernels, KERNEL_WORKER_LOOP } from '../../src/gpu/fast-cpu/shared-kernel-threads.ts';

const WORKER_AWAKE_MS = 50; // how long the worker stays awake after a share before it waits
const CALLS = 8;
const N = 1_000_003; // residual_backward counts 2 flops an element: over the pool's 2 MFLOP threshold, so split
// The probe the worker's wait reports to: [ASLEEP_ON] the generation it is about to sleep on, [ASLEEP] 1 while it does.
const ASLEEP_ON = 0;
const ASLEEP = 1;

// The worker: the pool's own loop, with Atomics.wait delayed and reported to the probe.
const WORKER_SOURCE = `${KERNEL_WORKER_LOOP}
const { workerData, parentPort } = require('node:worker_threads');
const probe = new Int32Array(workerData.probe);
const wait = Atomics.wait;
Atomics.wait = (array, index, value, timeout) => {
  wait(probe, 2, 0, ${WORKER_AWAKE_MS}); // awake for a while: a call published meanwhile is seen without a notify
  if (Atomics.load(array, index) !== value) return 'not-equal';
  Atomics.store(probe, ${ASLEEP_ON}, value);
  Atomics.store(probe, ${ASLEEP}, 1);
  const result = wait(array, index, value, timeout);
  Atomics.store(probe, ${ASLEEP}, 0);
  return result;
};
runKernelWorker(workerData, (error) => parentPort.postMessage(error === undefined ? 'ready' : { error }));
`;

/** Sleeps the calling thread (Atomics.wait may block this process's main thread). */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const probe = new Int32Array(new SharedArrayBuffer(12)); // [2]: never notified, for a timed wait
const started: Worker[] = [];
const kernels = await createPooledWasmKernels(
  2,
  true,
  async (workers) => {
    await Promise.all(
      workers.map((data) => {
        const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...data, probe: probe.buffer } });
        started.push(worker);
        return new Promise((resolve, reject) => worker.once('message', (message) => (message === 'ready' ? resolve(worker) : reject(new Error(String(message))))));
      }),
    );
    return () => started.forEach((worker) => void worker.terminate());
  },
  true,
  'plain',
);
const control = (kernels as unknown as { threads: { control: Int32Array } }).threads.control; // the pool's private control block

// The caller's notify of the generation, held back while the worker can serve the call without it.
let lateNotifies = 0;
const notify = Atomics.notify;
Atomics.notify = (array: Int32Array | BigInt64Array, index: number, count?: number): number => {
  if (array === control && index === CONTROL_SLOTS.generation) {
    const published = Atomics.load(control, CONTROL_SLOTS.generation);
    for (let waited = 0; waited < 5000; waited++) {
      const asleep = Atomics.load(probe, ASLEEP) === 1;
      if (asleep && Atomics.load(probe, ASLEEP_ON) !== published) break; // asleep on the call before: it needs this notify
      if (asleep && Atomics.load(control, CONTROL_SLOTS.pending) <= 0) {
        sleepMs(20); // well inside its Atomics.wait on the generation it has just served
        lateNotifies++;
        break;
      }
      sleepMs(1);
    }
  }
  return notify(array as Int32Array, index, count);
};

const dout = Float32Array.from({ length: N }, (_, i) => (i % 7) - 3); // small integers: sums are exact
const da = new Float32Array(N);
const db = new Float32Array(N);
for (let call = 0; call < CALLS; call++) kernels.residualBackward(da, db, dout, N); // da += dout, db += dout
Atomics.notify = notify;
let mismatches = 0;
for (let i = 0; i < N; i++) if (da[i] !== CALLS * dout[i]! || db[i] !== CALLS * dout[i]!) mismatches++;
kernels.dispose();
console.log(JSON.stringify({ calls: CALLS, lateNotifies, mismatches }));
