/**
 * The host-independent half of the kernels' thread pool: the control block that one kernel call is
 * written to, the loop each worker runs (as JavaScript text, so a worker needs no TypeScript loader
 * and no bundler), and the caller's side of a call. A worker instantiates the shared-memory kernel
 * module on the same WebAssembly.Memory and waits (Atomics.wait) on the control block; a call writes
 * its arguments there, wakes the workers, runs its own share and waits until every worker has done
 * its share, so calls stay synchronous and the backend's code does not change. Starting workers is
 * the host's job: node-kernel-threads.ts (worker_threads) and web-kernel-threads.ts (Web Workers).
 *
 * The protocol, and what keeps it correct for any interleaving of the threads:
 * - The caller publishes a call: it writes the call's slots, sets the count of workers still running
 *   to threads − 1, then bumps the generation (Atomics.add; that store publishes the slots), and only
 *   then notifies. A worker reads the slots only after it has seen a generation other than the one
 *   it last served, and decrements the count once per generation it serves; the caller writes the
 *   next call only after it has read the count at 0, so no slot is reused before every worker is done
 *   with it. The generation wraps around (2³² calls): only "differs from the one served" matters.
 * - Every wait is a loop that re-reads its value: the generation (worker) and the count (caller) are
 *   compared with what was last seen, and Atomics.wait is passed that value, so a notify that comes
 *   before the wait is not lost (the wait returns at once) and one that comes late wakes nothing new.
 *   A late notify is ordinary under load: the caller can be descheduled between its Atomics.add and
 *   its Atomics.notify while the worker, still awake after the previous call, sees the new generation,
 *   serves it and waits again; the caller's notify then wakes it with the generation it has served.
 *   Until commit 30056f8 the worker served on any wake-up: it ran that share a second time (added
 *   twice by an accumulating kernel) and left the count at −1, on which the caller waited forever, both
 *   threads in futex_do_wait: the stalls of two-thread training runs on a loaded machine that
 *   BENCHMARKS.md records, all on code before that commit. test/support/kernel-pool-late-notify.ts
 *   forces this interleaving.
 * - Quitting is its own slot, not a generation value (−1 was one, which a wrapped generation reaches).
 * - A share that throws in a worker (a trap) is recorded with its message and counted done like any
 *   other, so the caller throws that message instead of waiting forever for a worker that died; a
 *   caller's own share that throws still waits for the workers before the error leaves run(), so the
 *   next call never overwrites slots a worker is reading. (A worker ended from outside, by
 *   terminate() or for lack of memory, is not noticed: its caller would wait.)
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

const MAX_ARGS = 13;
const FAILURE_MESSAGE_CHARS = 240; // UTF-16 code units of a failed share's message that the control block keeps

/**
 * Slots of the control block (an Int32Array over a SharedArrayBuffer). generation: bumped per call,
 * wrapping; pending: workers still running the call; quit: 1 once the pool is disposed; failed: 0, or
 * the index of the first worker whose share threw, whose message (UTF-16 code units, 0-terminated)
 * is in the message slots; then the call's function index, its arguments and the share boundaries.
 */
export const CONTROL_SLOTS = {
  generation: 0,
  pending: 1,
  quit: 2,
  failed: 3,
  fn: 4,
  args: 5,
  message: 5 + MAX_ARGS,
  ranges: 5 + MAX_ARGS + FAILURE_MESSAGE_CHARS + 1,
} as const;
const { generation: GENERATION, pending: PENDING, quit: QUIT, failed: FAILED, fn: FUNCTION, args: ARGS, message: MESSAGE, ranges: RANGES } = CONTROL_SLOTS;

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
 * It serves each generation once, whatever wakes it (see the protocol above), and a share that throws
 * leaves its message in the control block instead of ending the worker.
 */
export const KERNEL_WORKER_LOOP = `
function runKernelWorker(data, ready) {
  const { module, memory, control, index, work, names } = data;
  const ctl = new Int32Array(control);
  WebAssembly.instantiate(module, { env: { memory } }).then((instance) => {
    const functions = names.map((name) => instance.exports[name]);
    let served = Atomics.load(ctl, ${GENERATION}); // no call is published before every worker is ready
    ready();
    for (;;) {
      // Invariant: served is the last generation this worker ran (or the one before the first call);
      // a wake-up with the generation still equal to it is a late or spurious one, and waits again.
      let generation = Atomics.load(ctl, ${GENERATION});
      while (generation === served) {
        Atomics.wait(ctl, ${GENERATION}, served);
        generation = Atomics.load(ctl, ${GENERATION});
      }
      served = generation;
      if (Atomics.load(ctl, ${QUIT}) !== 0) return;
      const fn = ctl[${FUNCTION}];
      const u0 = ctl[${RANGES} + index], u1 = ctl[${RANGES} + index + 1];
      try {
        if (u1 > u0) {
          const a = Array.from(ctl.subarray(${ARGS}, ${ARGS + MAX_ARGS}));
          if (fn === 0) functions[0](...a.slice(0, 9), u0, u1, a[9], a[10], a[11], work);
          else functions[fn](...a.slice(0, functions[fn].length - 3), u0, u1, work); // an export's length is its parameter count
        }
      } catch (error) {
        if (Atomics.compareExchange(ctl, ${FAILED}, 0, index) === 0) {
          const text = String((error && error.message) || error).slice(0, ${FAILURE_MESSAGE_CHARS});
          for (let i = 0; i < text.length; i++) ctl[${MESSAGE} + i] = text.charCodeAt(i);
          ctl[${MESSAGE} + text.length] = 0;
        }
      }
      // Done with the call's slots: the caller may write the next call once the count reaches 0.
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
    ctl.fill(0, ARGS, ARGS + MAX_ARGS);
    for (let i = 0; i < call.args.length; i++) ctl[ARGS + i] = call.args[i]!;
    for (let i = 0; i < ranges.length; i++) ctl[RANGES + i] = ranges[i]!;
    Atomics.store(ctl, PENDING, this.count - 1);
    Atomics.add(ctl, GENERATION, 1); // publishes the slots above; wraps around after 2³² calls
    Atomics.notify(ctl, GENERATION); // may come after a worker has served this call already: it then waits again
    let failure: string | null = null;
    try {
      runOwn(ranges[0]!, ranges[1]!);
    } finally {
      this.waitForWorkers(); // even when our share threw: the next call must not overwrite slots a worker still reads
      failure = this.takeWorkerFailure();
    }
    if (failure !== null)
      throw new Error(
        `a fast CPU kernel worker thread failed on its share of ${KERNEL_FUNCTIONS[call.fn] ?? `kernel ${call.fn}`}: ${failure}; the call's results are not to be trusted (use one thread, or the reference CPU backend)`,
      );
  }

  /** Returns once every worker has counted its share of the call done (blocking, or spinning where the thread may not block). */
  private waitForWorkers(): void {
    const ctl = this.control;
    // Invariant: pending is the count as last read; Atomics.wait sleeps only while it still holds, so a
    // worker's decrement between the read and the wait is not missed, and a late notify only loops.
    for (let pending = Atomics.load(ctl, PENDING); pending !== 0; pending = Atomics.load(ctl, PENDING)) {
      if (pending < 0)
        throw new Error(`the fast CPU kernels' thread pool counted ${-pending} share(s) more than it handed out; its results are not to be trusted (use one thread, or the reference CPU backend)`);
      if (this.canBlock) Atomics.wait(ctl, PENDING, pending);
    }
  }

  /** The message of the first worker share of the last call that threw (clearing it), or null. */
  private takeWorkerFailure(): string | null {
    const ctl = this.control;
    const worker = Atomics.load(ctl, FAILED);
    if (worker === 0) return null;
    let message = '';
    for (let i = MESSAGE; i < RANGES && ctl[i] !== 0; i++) message += String.fromCharCode(ctl[i]!);
    Atomics.store(ctl, FAILED, 0);
    return `worker ${worker}: ${message}`;
  }

  dispose(): void {
    Atomics.store(this.control, QUIT, 1);
    Atomics.add(this.control, GENERATION, 1); // a generation the workers have not served: they wake, see quit and return
    Atomics.notify(this.control, GENERATION);
    this.stopWorkers();
  }
}
