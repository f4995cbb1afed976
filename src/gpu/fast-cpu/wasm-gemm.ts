/**
 * The WASM SIMD gemm of wasm/kernels.c behind a Float32Array interface: it owns the module's linear
 * memory, copies the operands in (each call stages A, B and C above a fixed base), runs the kernel,
 * on one thread or split by rows of C over a `GemmThreads` pool that shares the memory, and copies C
 * back. It knows nothing of models; fast-ops.ts maps a linear layer's matmuls onto it.
 */
import { KERNELS_SHARED_WASM, KERNELS_WASM } from './wasm/kernels.generated.ts';

const PAGE_BYTES = 65536;
const STAGING_BASE_BYTES = 1 << 20; // above the 1 MiB the module declares (its unused stack and no data)
const MAX_PAGES = 32768; // 2 GiB, the module's declared maximum
const MIN_THREADED_FLOPS = 2e6; // a smaller gemm runs on the calling thread (a wake-up costs more)
const ROW_ALIGNMENT = 4; // rows per thread are a multiple of the kernel's MR

/** The kernel's exports: gemm over rows [m0, m1) of C, and the work floats one call needs. */
export interface GemmExports {
  gemm(c: number, ldc: number, a: number, ars: number, acs: number, b: number, brs: number, bcs: number, bias: number, m0: number, m1: number, Ncols: number, K: number, accumulate: number, work: number): void;
  gemm_work_floats(): number;
}

/** The 13 arguments of one gemm call before the row range and work pointer (pointers are byte offsets). */
export type GemmCall = [c: number, ldc: number, a: number, ars: number, acs: number, b: number, brs: number, bcs: number, bias: number, M: number, Ncols: number, K: number, accumulate: number];

/** Worker threads sharing the module's memory: run() splits the rows of one gemm call among them and the caller, and returns when all are done. */
export interface GemmThreads {
  /** Threads in all, the caller included. */
  readonly count: number;
  /** Runs `call` with rows split into `count` ranges (multiples of 4); range 0 runs in `runOwn` on the calling thread; blocks until every range is done. */
  run(call: GemmCall, ranges: Int32Array, runOwn: (m0: number, m1: number) => void): void;
  /** Stops the worker threads. */
  dispose(): void;
}

/** Decodes a base64 string into bytes (atob exists in browsers, workers and Node ≥ 16). */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Compiles the kernel module: the shared-memory build for threads, the plain one otherwise. */
export function compileGemmModule(shared: boolean): Promise<WebAssembly.Module> {
  return WebAssembly.compile(decodeBase64(shared ? KERNELS_SHARED_WASM : KERNELS_WASM));
}

/** Creates the linear memory the module imports (shared when threads will use it). */
export function createGemmMemory(shared: boolean): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: 64, maximum: MAX_PAGES, shared });
}

/** Byte offset of thread i's work area (gemm_work_floats floats each), right above the staging base. */
export function workOffsetBytes(thread: number, workFloats: number): number {
  return STAGING_BASE_BYTES + thread * workFloats * 4;
}

/** A gemm over Float32Arrays on one module instance and, optionally, a pool of threads. */
export class WasmGemm {
  private readonly exports: GemmExports;
  private readonly memory: WebAssembly.Memory;
  private readonly threads: GemmThreads | null;
  private readonly workFloats: number;
  private readonly stagingStart: number; // byte offset where operands go, after every thread's work
  private readonly ranges: Int32Array; // (threads + 1) row boundaries, reused

  /** Wraps an instance of the kernel module over `memory`, with `threads` sharing it (or none). */
  constructor(instance: WebAssembly.Instance, memory: WebAssembly.Memory, threads: GemmThreads | null) {
    this.exports = instance.exports as unknown as GemmExports;
    this.memory = memory;
    this.threads = threads;
    this.workFloats = this.exports.gemm_work_floats();
    this.stagingStart = workOffsetBytes(threads?.count ?? 1, this.workFloats);
    this.ranges = new Int32Array((threads?.count ?? 1) + 1);
  }

  /** Threads a gemm runs on, the caller included. */
  get threadCount(): number {
    return this.threads?.count ?? 1;
  }

  /**
   * C (M, Ncols) = or += A·B (+ bias), with A(m, k) = a[m*ars + k*acs] and B(k, n) = b[k*brs + n*bcs];
   * a and b are read over their first M·K and K·Ncols elements' span, c is written in place.
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
    const aLength = M * K;
    const bLength = K * Ncols;
    const cLength = M * Ncols;
    const aOffset = this.stagingStart;
    const bOffset = aOffset + aLength * 4;
    const cOffset = bOffset + bLength * 4;
    const biasOffset = cOffset + cLength * 4;
    this.ensureBytes(biasOffset + (bias === null ? 0 : Ncols * 4));
    const heap = new Float32Array(this.memory.buffer);
    heap.set(a.subarray(0, aLength), aOffset / 4);
    heap.set(b.subarray(0, bLength), bOffset / 4);
    if (accumulate) heap.set(c.subarray(0, cLength), cOffset / 4);
    if (bias !== null) heap.set(bias.subarray(0, Ncols), biasOffset / 4);
    const call: GemmCall = [cOffset, Ncols, aOffset, ars, acs, bOffset, brs, bcs, bias === null ? 0 : biasOffset, M, Ncols, K, accumulate ? 1 : 0];
    const runOwn = (m0: number, m1: number): void => this.exports.gemm(cOffset, Ncols, aOffset, ars, acs, bOffset, brs, bcs, call[8], m0, m1, Ncols, K, call[12], workOffsetBytes(0, this.workFloats));
    if (this.threads === null || 2 * M * Ncols * K < MIN_THREADED_FLOPS || M < 2 * ROW_ALIGNMENT) {
      runOwn(0, M);
    } else {
      this.splitRows(M);
      this.threads.run(call, this.ranges, runOwn);
    }
    c.set(new Float32Array(this.memory.buffer, cOffset, cLength));
  }

  /** Stops the worker threads, if any; the gemm may not be used afterwards. */
  dispose(): void {
    this.threads?.dispose();
  }

  /** Fills this.ranges with row boundaries that split M rows evenly, in multiples of ROW_ALIGNMENT. */
  private splitRows(M: number): void {
    const count = this.ranges.length - 1;
    const blocks = Math.ceil(M / ROW_ALIGNMENT);
    for (let t = 0; t <= count; t++) this.ranges[t] = Math.min(M, Math.round((blocks * t) / count) * ROW_ALIGNMENT);
  }

  /** Grows the memory to hold `bytes`, or throws saying how much was asked. */
  private ensureBytes(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return;
    const pages = Math.ceil((bytes - have) / PAGE_BYTES);
    if (have / PAGE_BYTES + pages > MAX_PAGES) throw new Error(`a matmul needs ${Math.ceil(bytes / 2 ** 20)} MiB of WASM memory, more than the fast CPU backend's 2 GiB; use the reference CPU backend for this shape`);
    this.memory.grow(pages);
  }
}

/** Instantiates the kernel module over `memory` (the plain build unless `shared`). */
export async function instantiateGemm(module: WebAssembly.Module, memory: WebAssembly.Memory): Promise<WebAssembly.Instance> {
  return WebAssembly.instantiate(module, { env: { memory } });
}

/** A single-threaded WasmGemm on its own memory, for any runtime with WebAssembly SIMD. */
export async function createWasmGemm(): Promise<WasmGemm> {
  const module = await compileGemmModule(false);
  const memory = createGemmMemory(false);
  return new WasmGemm(await instantiateGemm(module, memory), memory, null);
}
