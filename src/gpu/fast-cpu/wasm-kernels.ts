/**
 * The WASM SIMD kernels of wasm/kernels.c behind a Float32Array interface: it owns the module's
 * linear memory, copies a call's operands in (staged above a fixed base), runs the kernel on one
 * thread or split over a `KernelThreads` pool that shares the memory, and copies the outputs back.
 * Kernels: gemm (C = or += A·B through strides), causal grouped-query attention forward and
 * backward, and SwiGLU forward and backward. It knows nothing of models; fast-ops.ts maps the backend's ops onto it.
 */
import { KERNELS_SHARED_WASM, KERNELS_WASM } from './wasm/kernels.generated.ts';

const PAGE_BYTES = 65536;
const STAGING_BASE_BYTES = 1 << 20; // above the 1 MiB the module declares (its unused stack and no data)
const MAX_PAGES = 32768; // 2 GiB, the module's declared maximum
const MIN_THREADED_FLOPS = 2e6; // a smaller call runs on the calling thread (waking workers costs more)
const ROW_ALIGNMENT = 4; // gemm rows per thread are a multiple of the kernel's MR

/** The kernel functions a pool can run, by the number the control block carries. */
export const KERNEL_FUNCTIONS = ['gemm', 'attention_forward', 'attention_backward', 'swiglu_forward', 'swiglu_backward'] as const;

/** One kernel call as a pool runs it: the function's index in KERNEL_FUNCTIONS and its arguments before the (u0, u1, work) it ends with. */
export interface KernelCall {
  fn: number;
  args: number[];
}

/** Worker threads sharing the module's memory: run() splits one call's units among them and the caller, and returns when all are done. */
export interface KernelThreads {
  /** Threads in all, the caller included. */
  readonly count: number;
  /** Runs `call` over `ranges` (count + 1 boundaries); range 0 runs in `runOwn` on the calling thread; blocks until every range is done. */
  run(call: KernelCall, ranges: Int32Array, runOwn: (u0: number, u1: number) => void): void;
  /** Stops the worker threads. */
  dispose(): void;
}

/** One operand of a call: copied in before it when `read`, copied back after it when `write`. */
interface Operand {
  data: Float32Array;
  length: number;
  read: boolean;
  write: boolean;
}

type KernelFunction = (...args: number[]) => void;

/** Decodes a base64 string into bytes (atob exists in browsers, workers and Node ≥ 16). */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Compiles the kernel module: the shared-memory build for threads, the plain one otherwise. */
export function compileKernelModule(shared: boolean): Promise<WebAssembly.Module> {
  return WebAssembly.compile(decodeBase64(shared ? KERNELS_SHARED_WASM : KERNELS_WASM));
}

/** Creates the linear memory the module imports (shared when threads will use it). */
export function createKernelMemory(shared: boolean): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: 64, maximum: MAX_PAGES, shared });
}

/** Byte offset of thread i's work area (workFloats floats each), right above the staging base. */
export function workOffsetBytes(thread: number, workFloats: number): number {
  return STAGING_BASE_BYTES + thread * workFloats * 4;
}

/** Instantiates the kernel module over `memory`. */
export async function instantiateKernels(module: WebAssembly.Module, memory: WebAssembly.Memory): Promise<WebAssembly.Instance> {
  return WebAssembly.instantiate(module, { env: { memory } });
}

/** The WASM kernels over Float32Arrays on one module instance and, optionally, a pool of threads. */
export class WasmKernels {
  private readonly functions: KernelFunction[];
  private readonly memory: WebAssembly.Memory;
  private readonly threads: KernelThreads | null;
  private readonly workFloats: number; // per thread: the gemm's packs and tile, also the attention's row of T
  private readonly stagingStart: number; // byte offset where operands go, after every thread's work
  private readonly ranges: Int32Array; // (threads + 1) unit boundaries, reused
  private offsets: number[] = []; // byte offsets of the staged operands of the call under way

  /** Wraps an instance of the kernel module over `memory`, with `threads` sharing it (or none). */
  constructor(instance: WebAssembly.Instance, memory: WebAssembly.Memory, threads: KernelThreads | null) {
    const exports = instance.exports as Record<string, KernelFunction>;
    this.functions = KERNEL_FUNCTIONS.map((name) => exports[name]!);
    this.memory = memory;
    this.threads = threads;
    this.workFloats = (exports.gemm_work_floats as () => number)();
    this.stagingStart = workOffsetBytes(threads?.count ?? 1, this.workFloats);
    this.ranges = new Int32Array((threads?.count ?? 1) + 1);
  }

  /** Threads a call runs on, the caller included. */
  get threadCount(): number {
    return this.threads?.count ?? 1;
  }

  /** Floats of work each thread has: an attention call needs T of them. */
  get workFloatsPerThread(): number {
    return this.workFloats;
  }

  /**
   * C (M, Ncols) = or += A·B (+ bias), with A(m, k) = a[m*ars + k*acs] and B(k, n) = b[k*brs + n*bcs];
   * a and b are read over their first M·K and K·Ncols elements, c is written in place.
   */
  gemm(
    c: Float32Array, // (M, Ncols)
    a: Float32Array, // A through (ars, acs)
    ars: number,
    acs: number,
    b: Float32Array, // B through (brs, bcs)
    brs: number,
    bcs: number,
    bias: Float32Array | null, // (Ncols)
    M: number,
    Ncols: number,
    K: number,
    accumulate: boolean,
  ): void {
    if (M === 0 || Ncols === 0) return;
    const operands: Operand[] = [
      { data: c, length: M * Ncols, read: accumulate, write: true },
      { data: a, length: M * K, read: true, write: false },
      { data: b, length: K * Ncols, read: true, write: false },
    ];
    if (bias !== null) operands.push({ data: bias, length: Ncols, read: true, write: false });
    const [cp, ap, bp, biasp] = this.stageIn(operands);
    const units = Math.ceil(M / ROW_ALIGNMENT); // the pool splits units; gemm takes rows
    const call: KernelCall = { fn: 0, args: [cp!, Ncols, ap!, ars, acs, bp!, brs, bcs, biasp ?? 0] };
    this.runUnits(call, units, 2 * M * Ncols * K, ROW_ALIGNMENT, M, [Ncols, K, accumulate ? 1 : 0]);
    this.stageOut(operands);
  }

  /** Causal GQA attention forward (see attention.ts in the references): writes out (B, T, NH, HS) and att (B, NH, T, T). */
  attentionForward(out: Float32Array, att: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, B: number, T: number, NH: number, KVH: number, HS: number): void {
    this.checkAttentionWork(T);
    const operands: Operand[] = [
      { data: out, length: B * T * NH * HS, read: false, write: true },
      { data: att, length: B * NH * T * T, read: false, write: true },
      { data: q, length: B * T * NH * HS, read: true, write: false },
      { data: k, length: B * T * KVH * HS, read: true, write: false },
      { data: v, length: B * T * KVH * HS, read: true, write: false },
    ];
    const call: KernelCall = { fn: 1, args: [...this.stageIn(operands), B, T, NH, KVH, HS] };
    this.runUnits(call, B * KVH, 2 * B * NH * T * T * HS, 1, B * KVH, []);
    this.stageOut(operands);
  }

  /** Causal GQA attention backward: accumulates into dq, dk and dv from dout and the saved att. */
  attentionBackward(dq: Float32Array, dk: Float32Array, dv: Float32Array, dout: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, att: Float32Array, B: number, T: number, NH: number, KVH: number, HS: number): void {
    this.checkAttentionWork(T);
    const qLength = B * T * NH * HS;
    const kvLength = B * T * KVH * HS;
    const operands: Operand[] = [
      { data: dq, length: qLength, read: true, write: true },
      { data: dk, length: kvLength, read: true, write: true },
      { data: dv, length: kvLength, read: true, write: true },
      { data: dout, length: qLength, read: true, write: false },
      { data: q, length: qLength, read: true, write: false },
      { data: k, length: kvLength, read: true, write: false },
      { data: v, length: kvLength, read: true, write: false },
      { data: att, length: B * NH * T * T, read: true, write: false },
    ];
    const call: KernelCall = { fn: 2, args: [...this.stageIn(operands), B, T, NH, KVH, HS] };
    this.runUnits(call, B * KVH, 4 * B * NH * T * T * HS, 1, B * KVH, []);
    this.stageOut(operands);
  }

  /** SwiGLU forward (see swiglu.ts in the references): out = silu(gate)·up over N values. */
  swigluForward(out: Float32Array, gate: Float32Array, up: Float32Array, N: number): void {
    const operands: Operand[] = [
      { data: out, length: N, read: false, write: true },
      { data: gate, length: N, read: true, write: false },
      { data: up, length: N, read: true, write: false },
    ];
    const call: KernelCall = { fn: 3, args: this.stageIn(operands) };
    this.runUnits(call, Math.ceil(N / 4), 20 * N, 4, N, []);
    this.stageOut(operands);
  }

  /** SwiGLU backward: accumulates into dgate and dup over N values. */
  swigluBackward(dgate: Float32Array, dup: Float32Array, dout: Float32Array, gate: Float32Array, up: Float32Array, N: number): void {
    const operands: Operand[] = [
      { data: dgate, length: N, read: true, write: true },
      { data: dup, length: N, read: true, write: true },
      { data: dout, length: N, read: true, write: false },
      { data: gate, length: N, read: true, write: false },
      { data: up, length: N, read: true, write: false },
    ];
    const call: KernelCall = { fn: 4, args: this.stageIn(operands) };
    this.runUnits(call, Math.ceil(N / 4), 30 * N, 4, N, []);
    this.stageOut(operands);
  }

  /** Stops the worker threads, if any; the kernels may not be used afterwards. */
  dispose(): void {
    this.threads?.dispose();
  }

  /**
   * Runs call over `units` work units split among the threads (one thread when flops is small); a
   * thread's [u0, u1) becomes [u0·unitSize, min(u1·unitSize, limit)) followed by `tail` arguments.
   */
  private runUnits(call: KernelCall, units: number, flops: number, unitSize: number, limit: number, tail: number[]): void {
    const fn = this.functions[call.fn]!;
    const work = workOffsetBytes(0, this.workFloats);
    const count = this.threads === null || flops < MIN_THREADED_FLOPS || units < 2 ? 1 : Math.min(this.threads.count, units);
    if (call.fn === 0) {
      // gemm's signature puts the row range before (Ncols, K, accumulate)
      const runOwn = (m0: number, m1: number): void => fn(...call.args, m0, m1, ...tail, work);
      if (count === 1) return runOwn(0, limit);
      this.split(units, count, unitSize, limit);
      return this.threads!.run({ fn: 0, args: [...call.args, ...tail] }, this.ranges, runOwn);
    }
    const runOwn = (u0: number, u1: number): void => fn(...call.args, u0, u1, work);
    if (count === 1) return runOwn(0, limit);
    this.split(units, count, unitSize, limit);
    this.threads!.run(call, this.ranges, runOwn);
  }

  /** Fills this.ranges with `count` even shares of `units`, in elements (× unitSize, capped at limit); unused threads get empty ranges. */
  private split(units: number, count: number, unitSize: number, limit: number): void {
    const threads = this.ranges.length - 1;
    for (let t = 0; t <= threads; t++) this.ranges[t] = Math.min(limit, Math.round((units * Math.min(t, count)) / count) * unitSize);
  }

  /** Throws when a row of T scores does not fit one thread's work area. */
  private checkAttentionWork(T: number): void {
    if (T + 4 > this.workFloats) throw new Error(`attention over ${T} tokens needs more than the fast CPU backend's ${this.workFloats} floats of work per thread; use the reference CPU backend`);
  }

  /** Copies the operands that are read into the staging area (growing the memory as needed); returns their byte offsets. */
  private stageIn(operands: Operand[]): number[] {
    let offset = this.stagingStart;
    const offsets = operands.map((operand) => {
      const at = offset;
      offset += Math.ceil(operand.length / 4) * 16; // 16-byte aligned
      return at;
    });
    this.ensureBytes(offset);
    const heap = new Float32Array(this.memory.buffer);
    operands.forEach((operand, i) => {
      if (operand.data.length < operand.length) throw new Error(`a fast CPU kernel got ${operand.data.length} values where it reads ${operand.length}`);
      if (operand.read) heap.set(operand.data.subarray(0, operand.length), offsets[i]! / 4);
    });
    this.offsets = offsets;
    return offsets;
  }

  /** Copies the written operands back out of the staging area. */
  private stageOut(operands: Operand[]): void {
    const buffer = this.memory.buffer;
    operands.forEach((operand, i) => {
      if (operand.write) operand.data.set(new Float32Array(buffer, this.offsets[i]!, operand.length));
    });
  }

  /** Grows the memory to hold `bytes`, or throws saying how much was asked. */
  private ensureBytes(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return;
    const pages = Math.ceil((bytes - have) / PAGE_BYTES);
    if (have / PAGE_BYTES + pages > MAX_PAGES) throw new Error(`a fast CPU kernel needs ${Math.ceil(bytes / 2 ** 20)} MiB of WASM memory, more than its 2 GiB; use the reference CPU backend for this shape`);
    this.memory.grow(pages);
  }
}

/** Single-threaded WasmKernels on their own memory, for any runtime with WebAssembly SIMD. */
export async function createWasmKernels(): Promise<WasmKernels> {
  const module = await compileKernelModule(false);
  const memory = createKernelMemory(false);
  return new WasmKernels(await instantiateKernels(module, memory), memory, null);
}
