/**
 * Node worker threads for the WASM kernels: each worker instantiates the shared-memory kernel module
 * on the same WebAssembly.Memory and waits (Atomics.wait) on a control block; a kernel call writes
 * its arguments there, wakes the workers, runs its own share and waits until every worker has done
 * its share. Calls stay synchronous, so the backend's code does not change. Node only; the browser
 * would need Web Workers and cross-origin isolation.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { compileKernelModule, createKernelMemory, instantiateKernels, KERNEL_FUNCTIONS, WasmKernels, workOffsetBytes, type KernelCall, type KernelThreads } from './wasm-kernels.ts';

// Control block (Int32): [0] generation (bumped per call, -1 = quit), [1] workers still running,
// [2] the function's index, [3..16) its arguments, [16..] the share boundaries (threads + 1).
const GENERATION = 0;
const PENDING = 1;
const FUNCTION = 2;
const ARGS = 3;
const MAX_ARGS = 13;
const RANGES = ARGS + MAX_ARGS;

// The worker, as plain JavaScript (eval: true) so it needs no TypeScript loader. gemm takes its row
// range after its ninth argument; the attention kernels take their unit range last, before work.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { module, memory, control, index, workFloats, workBase, names } = workerData;
const ctl = new Int32Array(control);
WebAssembly.instantiate(module, { env: { memory } }).then((instance) => {
  const functions = names.map((name) => instance.exports[name]);
  const work = workBase + index * workFloats * 4;
  let seen = 0; // the generation before the first call: no call starts until every worker is ready
  parentPort.postMessage('ready');
  for (;;) {
    Atomics.wait(ctl, ${GENERATION}, seen);
    seen = Atomics.load(ctl, ${GENERATION});
    if (seen === -1) return;
    const fn = ctl[${FUNCTION}];
    const u0 = ctl[${RANGES} + index], u1 = ctl[${RANGES} + index + 1];
    if (u1 > u0) {
      const a = Array.from(ctl.subarray(${ARGS}, ${RANGES}));
      if (fn === 0) functions[0](...a.slice(0, 9), u0, u1, a[9], a[10], a[11], work);
      else functions[fn](...a.slice(0, functions[fn].length - 3), u0, u1, work); // an export's length is its parameter count
    }
    if (Atomics.sub(ctl, ${PENDING}, 1) === 1) Atomics.notify(ctl, ${PENDING});
  }
});
`;

/** A pool of count − 1 worker threads plus the caller, sharing one memory. */
class NodeKernelThreads implements KernelThreads {
  readonly count: number;
  private readonly control: Int32Array;
  private readonly workers: Worker[];

  /** Takes started workers and their control block. */
  constructor(count: number, control: Int32Array, workers: Worker[]) {
    this.count = count;
    this.control = control;
    this.workers = workers;
  }

  run(call: KernelCall, ranges: Int32Array, runOwn: (u0: number, u1: number) => void): void {
    const ctl = this.control;
    if (call.args.length > MAX_ARGS) throw new Error(`a kernel call has ${call.args.length} arguments, the control block holds ${MAX_ARGS}`);
    ctl[FUNCTION] = call.fn;
    ctl.fill(0, ARGS, RANGES);
    for (let i = 0; i < call.args.length; i++) ctl[ARGS + i] = call.args[i]!;
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

/**
 * WasmKernels on `threads` threads (the caller and threads − 1 workers; 1 = no workers), always on a
 * shared memory, so that the backend's weights, gradients and activations can live in it (allocate()).
 */
export async function createNodeWasmKernels(threads: number = defaultThreadCount()): Promise<WasmKernels> {
  if (!(Number.isInteger(threads) && threads >= 1)) throw new Error(`threads must be a positive integer, got ${threads}`);
  const module = await compileKernelModule(true);
  const memory = createKernelMemory(true);
  const instance = await instantiateKernels(module, memory);
  if (threads === 1) return new WasmKernels(instance, memory, null);
  const workFloats = (instance.exports as unknown as { gemm_work_floats(): number }).gemm_work_floats();
  const control = new Int32Array(new SharedArrayBuffer((RANGES + threads + 1) * 4));
  const workers = await Promise.all(
    Array.from({ length: threads - 1 }, (_, i) => {
      const workerData = { module, memory, control: control.buffer, index: i + 1, workFloats, workBase: workOffsetBytes(0, 0), names: [...KERNEL_FUNCTIONS] };
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
      worker.unref();
      return new Promise<Worker>((resolve, reject) => {
        worker.once('message', () => resolve(worker));
        worker.once('error', reject);
      });
    }),
  );
  return new WasmKernels(instance, memory, new NodeKernelThreads(threads, control, workers));
}
