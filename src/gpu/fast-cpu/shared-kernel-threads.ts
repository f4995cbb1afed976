/**
 * The host-independent half of the kernels' thread pool: the control block that one kernel call is
 * written to, the loop each worker runs (as JavaScript text, so a worker needs no TypeScript loader
 * and no bundler), and the caller's side of a call. A worker instantiates the shared-memory kernel
 * module on the same WebAssembly.Memory and waits (Atomics.wait) on the control block; a call writes
 * its arguments there, wakes the workers, runs its own share and waits until every worker has done
 * its share, so calls stay synchronous and the backend's code does not change. Starting workers is
 * the host's job: node-kernel-threads.ts (worker_threads) and web-kernel-threads.ts (Web Workers).
 */
import {
  chooseKernelSimd,
  compileKernelModule,
  createKernelMemory,
  instantiateKernels,
  KERNEL_FUNCTIONS,
  WasmKernels,
  workOffsetBytes,
  type KernelCall,
  type KernelSimd,
  type KernelThreads,
} from './wasm-kernels.ts';

// Control block (Int32): [0] generation (bumped per call, -1 = quit), [1] workers still running,
// [2] the function's index, [3..16) its arguments, [16..] the share boundaries (threads + 1).
const GENERATION = 0;
const PENDING = 1;
const FUNCTION = 2;
const ARGS = 3;
const MAX_ARGS = 13;
const RANGES = ARGS + MAX_ARGS;

/** What a worker is started with: the compiled shared-memory module, its memory, the control block and its place in the pool. */
export interface KernelWorkerData {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  control: SharedArrayBuffer;
  /** 1 .. threads − 1 (the caller is thread 0). */
  index: number;
  /** Byte offset of this worker's work area. */
  work: number;
  /** KERNEL_FUNCTIONS, by the number the control block carries. */
  names: string[];
}

/**
 * `function runKernelWorker(data, ready)` as JavaScript text: instantiates the module on the shared
 * memory, calls ready() (or ready(message) when that failed), then serves calls until told to quit.
 * gemm takes its row range after its ninth argument; the other kernels take their unit range last, before work.
 * A worker serves each generation once, whatever wakes it: Atomics.wait has returned with the
 * generation unchanged (observed in Node 20 at SFT step 91 of the default lesson, the step whose
 * batch shape reallocates the activations), and serving a call twice adds a share twice and leaves
 * the count of workers still running at −1, on which the caller would wait forever.
 */
export const KERNEL_WORKER_LOOP = `
function runKernelWorker(data, ready) {
  const { module, memory, control, index, work, names } = data;
  const ctl = new Int32Array(control);
  WebAssembly.instantiate(module, { env: { memory } }).then((instance) => {
    const functions = names.map((name) => instance.exports[name]);
    let seen = 0; // the generation before the first call: no call starts until every worker is ready
    ready();
    for (;;) {
      let generation = Atomics.load(ctl, ${GENERATION});
      while (generation === seen) {
        Atomics.wait(ctl, ${GENERATION}, seen);
        generation = Atomics.load(ctl, ${GENERATION});
      }
      seen = generation;
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
  }, (error) => ready(String((error && error.message) || error)));
}
`;

/** Starts one worker per entry of `workers` (resolving once each has called ready) and returns the function that stops them all. */
type StartKernelWorkers = (workers: KernelWorkerData[]) => Promise<() => void>;

/**
 * WasmKernels on `threads` threads, with threads − 1 workers that `startWorkers` starts. More than one
 * thread needs the shared-memory module (`shareMemory`, the default then); one thread may take it too,
 * so that the backend's arrays can stay resident, or the plain module on its own memory where
 * SharedArrayBuffer is unavailable. `canBlock` says whether the calling thread may Atomics.wait
 * (see SharedKernelThreads). `simd` picks the build (chooseKernelSimd: relaxed where it validates).
 */
export async function createPooledWasmKernels(threads: number, canBlock: boolean, startWorkers: StartKernelWorkers, shareMemory: boolean = threads > 1, simd?: KernelSimd): Promise<WasmKernels> {
  if (!(Number.isInteger(threads) && threads >= 1)) throw new Error(`threads must be a positive integer, got ${threads}`);
  if (threads > 1 && !shareMemory) throw new Error(`${threads} threads need a shared memory`);
  // A shared memory also lets one thread keep the backend's arrays resident in it (WasmKernels.allocate).
  const module = await compileKernelModule(shareMemory, chooseKernelSimd(simd));
  const memory = createKernelMemory(shareMemory);
  const instance = await instantiateKernels(module, memory);
  if (threads === 1) return new WasmKernels(instance, memory, null);
  const workFloats = (instance.exports as unknown as { gemm_work_floats(): number }).gemm_work_floats();
  const control = new Int32Array(new SharedArrayBuffer((RANGES + threads + 1) * 4));
  const workers = Array.from({ length: threads - 1 }, (_, i): KernelWorkerData => {
    const index = i + 1;
    return { module, memory, control: control.buffer, index, work: workOffsetBytes(index, workFloats), names: [...KERNEL_FUNCTIONS] };
  });
  const stopWorkers = await startWorkers(workers);
  return new WasmKernels(instance, memory, new SharedKernelThreads(threads, control, canBlock, stopWorkers));
}

/**
 * The caller's side of a pool of count − 1 started workers plus the caller. `canBlock` is false on a
 * browser's main thread, where Atomics.wait is not allowed: the caller then spins on the count of
 * workers still running (tests and benchmarks do that; the app runs the kernels in its engine worker).
 */
class SharedKernelThreads implements KernelThreads {
  readonly count: number;
  private readonly control: Int32Array<SharedArrayBuffer>;
  private readonly canBlock: boolean;
  private readonly stopWorkers: () => void;

  /** Takes the control block of `count` threads whose workers are started, and how to stop them. */
  constructor(count: number, control: Int32Array<SharedArrayBuffer>, canBlock: boolean, stopWorkers: () => void) {
    this.count = count;
    this.control = control;
    this.canBlock = canBlock;
    this.stopWorkers = stopWorkers;
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
    for (let pending = Atomics.load(ctl, PENDING); pending !== 0; pending = Atomics.load(ctl, PENDING)) {
      if (pending < 0)
        throw new Error(`the fast CPU kernels' thread pool counted ${-pending} share(s) more than it handed out; its results are not to be trusted (use one thread, or the reference CPU backend)`);
      if (this.canBlock) Atomics.wait(ctl, PENDING, pending);
    }
  }

  dispose(): void {
    Atomics.store(this.control, GENERATION, -1);
    Atomics.notify(this.control, GENERATION);
    this.stopWorkers();
  }
}
