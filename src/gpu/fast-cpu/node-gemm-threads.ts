/**
 * Node worker threads for the WASM gemm: each worker instantiates the shared-memory kernel module on
 * the same WebAssembly.Memory and waits (Atomics.wait) on a control block; a gemm call writes its
 * arguments there, wakes the workers, runs rows of its own and waits until every worker has done its
 * rows. Calls stay synchronous, so the backend's code does not change. Node only; the browser would
 * need Web Workers and cross-origin isolation.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { compileGemmModule, createGemmMemory, instantiateGemm, WasmGemm, workOffsetBytes, type GemmCall, type GemmThreads } from './wasm-gemm.ts';

// Control block (Int32): [0] generation (bumped per call, -1 = quit), [1] workers still running,
// [2..14] the GemmCall, [15..] row boundaries (threads + 1).
const GENERATION = 0;
const PENDING = 1;
const CALL = 2;
const RANGES = 15;

// The worker, as plain JavaScript (eval: true) so it needs no TypeScript loader.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { module, memory, control, index, workFloats, workBase } = workerData;
const ctl = new Int32Array(control);
WebAssembly.instantiate(module, { env: { memory } }).then((instance) => {
  const gemm = instance.exports.gemm;
  const work = workBase + index * workFloats * 4;
  let seen = 0; // the generation before the first call: no call starts until every worker is ready
  parentPort.postMessage('ready');
  for (;;) {
    Atomics.wait(ctl, 0, seen);
    seen = Atomics.load(ctl, 0);
    if (seen === -1) return;
    const m0 = ctl[${RANGES} + index], m1 = ctl[${RANGES} + index + 1];
    if (m1 > m0) gemm(ctl[2], ctl[3], ctl[4], ctl[5], ctl[6], ctl[7], ctl[8], ctl[9], ctl[10], m0, m1, ctl[12], ctl[13], ctl[14], work);
    if (Atomics.sub(ctl, 1, 1) === 1) Atomics.notify(ctl, 1);
  }
});
`;

/** A pool of count − 1 worker threads plus the caller, sharing `memory`. */
class NodeGemmThreads implements GemmThreads {
  readonly count: number;
  private readonly control: Int32Array;
  private readonly workers: Worker[];

  /** Takes started workers and their control block. */
  constructor(count: number, control: Int32Array, workers: Worker[]) {
    this.count = count;
    this.control = control;
    this.workers = workers;
  }

  run(call: GemmCall, ranges: Int32Array, runOwn: (m0: number, m1: number) => void): void {
    const ctl = this.control;
    for (let i = 0; i < call.length; i++) ctl[CALL + i] = call[i]!;
    for (let i = 0; i < ranges.length; i++) ctl[RANGES + i] = ranges[i]!;
    Atomics.store(ctl, PENDING, this.count - 1);
    Atomics.add(ctl, GENERATION, 1);
    Atomics.notify(ctl, GENERATION);
    runOwn(ranges[0]!, ranges[1]!);
    for (let pending = Atomics.load(ctl, PENDING); pending !== 0; pending = Atomics.load(ctl, PENDING)) Atomics.wait(ctl, PENDING, pending);
  }

  dispose(): void {
    Atomics.store(this.control, GENERATION, -1);
    Atomics.notify(this.control, GENERATION);
    for (const worker of this.workers) void worker.terminate();
  }
}

/** The number of threads the fast CPU backend uses by default in Node: every core the OS offers. */
export function defaultThreadCount(): number {
  return availableParallelism();
}

/** A WasmGemm on `threads` threads (the caller and threads − 1 workers; 1 = no workers). */
export async function createNodeWasmGemm(threads: number = defaultThreadCount()): Promise<WasmGemm> {
  if (!(Number.isInteger(threads) && threads >= 1)) throw new Error(`threads must be a positive integer, got ${threads}`);
  const shared = threads > 1;
  const module = await compileGemmModule(shared);
  const memory = createGemmMemory(shared);
  const instance = await instantiateGemm(module, memory);
  if (!shared) return new WasmGemm(instance, memory, null);
  const workFloats = (instance.exports as unknown as { gemm_work_floats(): number }).gemm_work_floats();
  const control = new Int32Array(new SharedArrayBuffer((RANGES + threads + 1) * 4));
  const workers = await Promise.all(
    Array.from({ length: threads - 1 }, (_, i) => {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, memory, control: control.buffer, index: i + 1, workFloats, workBase: workOffsetBytes(0, 0) } });
      worker.unref();
      return new Promise<Worker>((resolve, reject) => {
        worker.once('message', () => resolve(worker));
        worker.once('error', reject);
      });
    }),
  );
  return new WasmGemm(instance, memory, new NodeGemmThreads(threads, control, workers));
}
