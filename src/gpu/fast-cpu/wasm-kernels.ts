/**
 * The WASM SIMD kernels of wasm/kernels.c behind a Float32Array interface: it owns the module's
 * linear memory, runs a kernel on one thread or split over a `KernelThreads` pool that shares the
 * memory, and passes operands by address. An operand that lives in the memory already (an array
 * from allocate(), or a view of one: weights, gradients, optimizer moments and activations kept
 * resident) is used in place; any other is copied into a staging area above the resident arrays
 * before the call and, when written, back out after it. Resident arrays need a shared memory (one that
 * grows without detaching the arrays already handed out); on a plain memory allocate() returns null,
 * and past a limit (half the memory by default, the other half kept for staging) it does too.
 * Kernels: gemm (C = or += A·B through strides) and gemmDot (the same for a few rows, by dot products), causal grouped-query attention forward and
 * backward, SwiGLU, RMSNorm, log-softmax of the targets, AdamW and the residual add, forward and
 * backward. Each comes in two builds of the same source: relaxed SIMD (fused multiply-add, chosen
 * wherever the runtime validates it) and plain SIMD. It knows nothing of models; fast-ops.ts maps the
 * backend's ops onto it.
 */
import { KERNELS_RELAXED_SHARED_WASM, KERNELS_RELAXED_WASM, KERNELS_SHARED_WASM, KERNELS_WASM } from './wasm/kernels.generated.ts';

const PAGE_BYTES = 65536;
const STAGING_BASE_BYTES = 1 << 20; // above the 1 MiB the module declares (its unused stack and no data)
const MAX_PAGES = 32768; // 2 GiB, the module's declared maximum
const MIN_THREADED_FLOPS = 2e6; // a smaller call runs on the calling thread (waking workers costs more)
const ROW_ALIGNMENT = 4; // gemm rows per thread are a multiple of the kernel's MR
const FEW_ROWS = 4; // gemm() of at most this many rows takes dot products (gemmDot), not packs
const DOT_COLUMNS = 4; // gemm_dot's columns per unit: threads split the columns in blocks of its SIMD width
const BLOCK_ALIGNMENT_BYTES = 64; // resident arrays start on a cache line
const HYPER_FLOATS = 8; // the scalar parameters of a call (eps, 1/temperature, AdamW's), staged like an operand
/** Bytes of the memory that resident arrays may take by default: half its 2 GiB, so the other half stays for staging what does not fit. */
export const DEFAULT_RESIDENT_LIMIT_BYTES = 2 ** 30;

/** The kernel functions a pool can run, by the number the control block carries. */
export const KERNEL_FUNCTIONS = [
  'gemm',
  'attention_forward',
  'attention_backward',
  'swiglu_forward',
  'swiglu_backward',
  'rmsnorm_forward',
  'rmsnorm_backward',
  'logprobs_forward',
  'logprobs_backward',
  'adamw_update',
  'residual_forward',
  'residual_backward',
  'gemm_dot',
] as const;

/** A gemm's operands as staged: C (M, Ncols) written (and read when accumulating), A's first M·K and B's first K·Ncols elements read, and the bias (Ncols) when there is one. */
function gemmOperands(c: Float32Array, a: Float32Array, b: Float32Array, bias: Float32Array | null, M: number, Ncols: number, K: number, accumulate: boolean): Operand[] {
  const operands: Operand[] = [
    { data: c, length: M * Ncols, read: accumulate, write: true },
    { data: a, length: M * K, read: true, write: false },
    { data: b, length: K * Ncols, read: true, write: false },
  ];
  if (bias !== null) operands.push({ data: bias, length: Ncols, read: true, write: false });
  return operands;
}

/** Index of a kernel function in KERNEL_FUNCTIONS. */
const kernelIndex = (name: (typeof KERNEL_FUNCTIONS)[number]): number => KERNEL_FUNCTIONS.indexOf(name);

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

/** One operand of a call: unless resident, copied in before it when `read`, copied back after it when `write`. */
interface Operand {
  data: Float32Array | Int32Array;
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

/** Which build of the kernels runs: relaxed SIMD (its multiply-adds fused where the CPU has FMA) or plain SIMD. */
export type KernelSimd = 'relaxed' | 'plain';

/** How the backend's label names each build. */
const KERNEL_SIMD_NAMES: Record<KernelSimd, string> = { relaxed: 'WASM relaxed SIMD', plain: 'WASM SIMD' };

/** Whether this runtime validates the relaxed-SIMD build (Chrome ≥ 114, Node ≥ 22, or Node 20 with --experimental-wasm-relaxed-simd). */
export function relaxedSimdValidates(): boolean {
  return WebAssembly.validate(decodeBase64(KERNELS_RELAXED_WASM));
}

/** The build to run: `requested`, or relaxed where the runtime validates it and plain otherwise; throws when relaxed is asked for and cannot run. */
export function chooseKernelSimd(requested?: KernelSimd): KernelSimd {
  if (requested === 'plain') return 'plain';
  if (relaxedSimdValidates()) return 'relaxed';
  if (requested === 'relaxed')
    throw new Error('this runtime does not validate relaxed WebAssembly SIMD (Chrome 114+, Node 22+, or Node 20 with --experimental-wasm-relaxed-simd); use the plain SIMD kernels');
  return 'plain';
}

/** Compiles the kernel module: the shared-memory build for threads, the non-shared one otherwise, each as relaxed or plain SIMD. */
export function compileKernelModule(shared: boolean, simd: KernelSimd = 'plain'): Promise<WebAssembly.Module> {
  const base64 = simd === 'relaxed' ? (shared ? KERNELS_RELAXED_SHARED_WASM : KERNELS_RELAXED_WASM) : shared ? KERNELS_SHARED_WASM : KERNELS_WASM;
  return WebAssembly.compile(decodeBase64(base64));
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
  private readonly workFloats: number; // per thread: the gemm's packs and tile, then attention backward's block of probability gradients
  private readonly attentionMaxTokens: number; // the longest sequence the attention kernels take
  private readonly ranges: Int32Array; // (threads + 1) unit boundaries, reused
  private offsets: number[] = []; // byte offsets of the operands of the call under way
  private readonly resident: ResidentArena | null; // arrays living in the memory; null on a plain memory
  private readonly hyper = new Float32Array(HYPER_FLOATS); // a call's scalars, staged as an operand
  private readonly stagingBase: number; // byte offset of the staging area on a plain memory
  /** Which build of the kernels this instance runs (the module says). */
  readonly simd: KernelSimd;

  /** Wraps an instance of the kernel module over `memory`, with `threads` sharing it (or none); resident arrays take at most residentLimitBytes of it. */
  constructor(instance: WebAssembly.Instance, memory: WebAssembly.Memory, threads: KernelThreads | null, residentLimitBytes: number = DEFAULT_RESIDENT_LIMIT_BYTES) {
    const exports = instance.exports as Record<string, KernelFunction>;
    this.functions = KERNEL_FUNCTIONS.map((name) => exports[name]!);
    this.memory = memory;
    this.threads = threads;
    this.workFloats = (exports.gemm_work_floats as () => number)();
    this.attentionMaxTokens = (exports.attention_max_tokens as () => number)();
    this.simd = (exports.kernels_relaxed_simd as () => number)() === 1 ? 'relaxed' : 'plain';
    this.ranges = new Int32Array((threads?.count ?? 1) + 1);
    const base = workOffsetBytes(threads?.count ?? 1, this.workFloats);
    this.resident = memory.buffer instanceof SharedArrayBuffer ? new ResidentArena(memory, base, residentLimitBytes, (bytes) => this.ensureBytes(bytes)) : null;
    this.stagingBase = base;
  }

  /**
   * A zeroed Float32Array of `length` floats living in the kernels' memory, so calls use it in place
   * (no copy); null on a plain memory or past the resident limit (the caller then uses an ordinary
   * array, which calls copy). Give it back with release() when done.
   */
  allocate(length: number): Float32Array | null {
    return this.resident?.allocate(length) ?? null;
  }

  /** Returns an array from allocate() to the memory; any other array is ignored. */
  release(array: Float32Array): void {
    this.resident?.release(array);
  }

  /** Whether `array` lives in the kernels' memory (allocate()'s arrays and their views). */
  isResident(array: Float32Array | Int32Array): boolean {
    return this.resident?.contains(array) ?? false;
  }

  /** Threads a call runs on, the caller included. */
  get threadCount(): number {
    return this.threads?.count ?? 1;
  }

  /** How a label names what runs: "WASM relaxed SIMD" or "WASM SIMD". */
  get simdName(): string {
    return KERNEL_SIMD_NAMES[this.simd];
  }

  /** Floats of work each thread has (the gemm's packs and attention backward's scratch). */
  get workFloatsPerThread(): number {
    return this.workFloats;
  }

  /**
   * C (M, Ncols) = or += A·B (+ bias), with A(m, k) = a[m*ars + k*acs] and B(k, n) = b[k*brs + n*bcs];
   * a and b are read over their first M·K and K·Ncols elements, c is written in place. A product of at
   * most FEW_ROWS rows with rows of A and columns of B contiguous along k goes to gemmDot (packing B
   * would cost as much as reading it once); any other is packed, its threads splitting the rows.
   * Either way a row's arithmetic depends only on which of the two it took.
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
    if (M <= FEW_ROWS && acs === 1 && brs === 1) return this.gemmDot(c, a, ars, b, bcs, bias, M, Ncols, K, accumulate);
    this.gemmPacked(c, a, ars, acs, b, brs, bcs, bias, M, Ncols, K, accumulate);
  }

  /**
   * gemm by packed blocks whatever M (the Goto-style kernel; threads split the rows): a row's result
   * is the same bits whatever other rows share the call and however the threads split them.
   */
  gemmPacked(
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
    const operands = gemmOperands(c, a, b, bias, M, Ncols, K, accumulate);
    const [cp, ap, bp, biasp] = this.stageIn(operands);
    const units = Math.ceil(M / ROW_ALIGNMENT); // the pool splits units; gemm takes rows
    const call: KernelCall = { fn: kernelIndex('gemm'), args: [cp!, Ncols, ap!, ars, acs, bp!, brs, bcs, biasp ?? 0] };
    this.runUnits(call, units, 2 * M * Ncols * K, ROW_ALIGNMENT, M, [Ncols, K, accumulate ? 1 : 0]);
    this.stageOut(operands);
  }

  /**
   * C (M, Ncols) = or += A·B (+ bias) by one dot product per element, with A(m, k) = a[m*ars + k] and
   * B(k, n) = b[n*bcs + k] (a linear's forward: B is the weight, row n its output n), whatever M; the
   * threads split the columns. A row's result is the same bits whatever other rows share the call and
   * however the threads split the columns: the decoder's rows and LM head take it, so a sequence
   * samples the same tokens alone or batched.
   */
  gemmDot(
    c: Float32Array, // (M, Ncols)
    a: Float32Array, // (M, K) through ars
    ars: number,
    b: Float32Array, // (Ncols, K) through bcs
    bcs: number,
    bias: Float32Array | null, // (Ncols)
    M: number,
    Ncols: number,
    K: number,
    accumulate: boolean,
  ): void {
    if (M === 0 || Ncols === 0) return;
    const operands = gemmOperands(c, a, b, bias, M, Ncols, K, accumulate);
    const [cp, ap, bp, biasp] = this.stageIn(operands);
    const call: KernelCall = { fn: kernelIndex('gemm_dot'), args: [cp!, Ncols, ap!, ars, bp!, bcs, biasp ?? 0, M, K, accumulate ? 1 : 0] };
    this.runUnits(call, Math.ceil(Ncols / DOT_COLUMNS), 2 * M * Ncols * K, DOT_COLUMNS, Ncols, []);
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
    const call: KernelCall = { fn: kernelIndex('attention_forward'), args: [...this.stageIn(operands), B, T, NH, KVH, HS] };
    this.runUnits(call, B * KVH, 2 * B * NH * T * T * HS, 1, B * KVH, []);
    this.stageOut(operands);
  }

  /** Causal GQA attention backward: accumulates into dq, dk and dv from dout and the saved att. */
  attentionBackward(
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    dout: Float32Array,
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    att: Float32Array,
    B: number,
    T: number,
    NH: number,
    KVH: number,
    HS: number,
  ): void {
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
    const call: KernelCall = { fn: kernelIndex('attention_backward'), args: [...this.stageIn(operands), B, T, NH, KVH, HS] };
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
    const call: KernelCall = { fn: kernelIndex('swiglu_forward'), args: this.stageIn(operands) };
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
    const call: KernelCall = { fn: kernelIndex('swiglu_backward'), args: this.stageIn(operands) };
    this.runUnits(call, Math.ceil(N / 4), 30 * N, 4, N, []);
    this.stageOut(operands);
  }

  /** RMSNorm forward over N rows of C (see rmsnorm.ts in the references): writes out (N, C) and rstd (N). */
  rmsnormForward(out: Float32Array, rstd: Float32Array, inp: Float32Array, weight: Float32Array, N: number, C: number, eps: number): void {
    const operands: Operand[] = [
      { data: out, length: N * C, read: false, write: true },
      { data: rstd, length: N, read: false, write: true },
      { data: inp, length: N * C, read: true, write: false },
      { data: weight, length: C, read: true, write: false },
      this.hyperOperand([eps]),
    ];
    const call: KernelCall = { fn: kernelIndex('rmsnorm_forward'), args: [...this.stageIn(operands), C] };
    this.runUnits(call, N, 4 * N * C, 1, N, []);
    this.stageOut(operands);
  }

  /** RMSNorm backward: accumulates into dinp and (unless null) dweight; on one thread when dweight is given (its sums span every row). */
  rmsnormBackward(dinp: Float32Array, dweight: Float32Array | null, dout: Float32Array, inp: Float32Array, weight: Float32Array, rstd: Float32Array, N: number, C: number): void {
    const operands: Operand[] = [
      { data: dinp, length: N * C, read: true, write: true },
      ...(dweight === null ? [] : [{ data: dweight, length: C, read: true, write: true }]),
      { data: dout, length: N * C, read: true, write: false },
      { data: inp, length: N * C, read: true, write: false },
      { data: weight, length: C, read: true, write: false },
      { data: rstd, length: N, read: true, write: false },
    ];
    const staged = this.stageIn(operands);
    if (dweight === null) staged.splice(1, 0, 0); // a null dweight
    const call: KernelCall = { fn: kernelIndex('rmsnorm_backward'), args: [...staged, C] };
    this.runUnits(call, N, dweight === null ? 8 * N * C : 0, 1, N, []);
    this.stageOut(operands);
  }

  /** logprobs[n] = log_softmax(logits[n,:]/temperature)[targets[n]] over N rows of V (see logprobs.ts in the references). */
  logprobsForward(logprobs: Float32Array, logits: Float32Array, targets: Int32Array, N: number, V: number, temperature: number): void {
    const operands: Operand[] = [
      { data: logprobs, length: N, read: false, write: true },
      { data: logits, length: N * V, read: true, write: false },
      { data: targets, length: N, read: true, write: false },
      this.hyperOperand([1 / temperature]),
    ];
    const call: KernelCall = { fn: kernelIndex('logprobs_forward'), args: [...this.stageIn(operands), V] };
    this.runUnits(call, N, 20 * N * V, 1, N, []);
    this.stageOut(operands);
  }

  /** Accumulates the gradient of logprobsForward, weighted by dlogprobs (N), into dlogits (N, V). */
  logprobsBackward(dlogits: Float32Array, dlogprobs: Float32Array, logits: Float32Array, targets: Int32Array, N: number, V: number, temperature: number): void {
    const operands: Operand[] = [
      { data: dlogits, length: N * V, read: true, write: true },
      { data: dlogprobs, length: N, read: true, write: false },
      { data: logits, length: N * V, read: true, write: false },
      { data: targets, length: N, read: true, write: false },
      this.hyperOperand([1 / temperature]),
    ];
    const call: KernelCall = { fn: kernelIndex('logprobs_backward'), args: [...this.stageIn(operands), V] };
    this.runUnits(call, N, 40 * N * V, 1, N, []);
    this.stageOut(operands);
  }

  /** One AdamW step over n values in place (see adamw.ts in the references), in f32. */
  adamwUpdate(
    params: Float32Array,
    grads: Float32Array,
    m: Float32Array,
    v: Float32Array,
    n: number,
    hyper: { lr: number; beta1: number; beta2: number; eps: number; weightDecay: number; step: number },
  ): void {
    const { lr, beta1, beta2, eps, weightDecay, step } = hyper;
    const scalars = [beta1, 1 - beta1, beta2, 1 - beta2, 1 - lr * weightDecay, lr / (1 - Math.pow(beta1, step)), Math.sqrt(1 - Math.pow(beta2, step)), eps];
    const operands: Operand[] = [
      { data: params, length: n, read: true, write: true },
      { data: grads, length: n, read: true, write: false },
      { data: m, length: n, read: true, write: true },
      { data: v, length: n, read: true, write: true },
      this.hyperOperand(scalars),
    ];
    const call: KernelCall = { fn: kernelIndex('adamw_update'), args: this.stageIn(operands) };
    this.runUnits(call, Math.ceil(n / 4), 12 * n, 4, n, []);
    this.stageOut(operands);
  }

  /** out = a + b over N values. */
  residualForward(out: Float32Array, a: Float32Array, b: Float32Array, N: number): void {
    const operands: Operand[] = [
      { data: out, length: N, read: false, write: true },
      { data: a, length: N, read: true, write: false },
      { data: b, length: N, read: true, write: false },
    ];
    const call: KernelCall = { fn: kernelIndex('residual_forward'), args: this.stageIn(operands) };
    this.runUnits(call, Math.ceil(N / 4), N, 4, N, []);
    this.stageOut(operands);
  }

  /** da += dout and db += dout over N values. */
  residualBackward(da: Float32Array, db: Float32Array, dout: Float32Array, N: number): void {
    const operands: Operand[] = [
      { data: da, length: N, read: true, write: true },
      { data: db, length: N, read: true, write: true },
      { data: dout, length: N, read: true, write: false },
    ];
    const call: KernelCall = { fn: kernelIndex('residual_backward'), args: this.stageIn(operands) };
    this.runUnits(call, Math.ceil(N / 4), 2 * N, 4, N, []);
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
    if (call.fn === kernelIndex('gemm')) {
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

  /** Throws when a row of T probability gradients does not fit one thread's attention scratch. */
  private checkAttentionWork(T: number): void {
    if (T > this.attentionMaxTokens) throw new Error(`attention over ${T} tokens is longer than the fast CPU backend's ${this.attentionMaxTokens}; use the reference CPU backend`);
  }

  /** The scalars of a call as an operand (at most HYPER_FLOATS, rounded to f32). */
  private hyperOperand(values: number[]): Operand {
    this.hyper.fill(0);
    this.hyper.set(values);
    return { data: this.hyper, length: HYPER_FLOATS, read: true, write: false };
  }

  /**
   * Returns the operands' byte offsets in the memory: a resident operand's own, or a place in the
   * staging area (above every resident array, growing the memory as needed) into which it is copied when read.
   */
  private stageIn(operands: Operand[]): number[] {
    let offset = this.resident?.top ?? this.stagingBase;
    const offsets = operands.map((operand) => {
      if (operand.data.length < operand.length) throw new Error(`a fast CPU kernel got ${operand.data.length} values where it reads ${operand.length}`);
      if (this.isResident(operand.data)) return operand.data.byteOffset;
      const at = offset;
      offset += Math.ceil(operand.length / 4) * 16; // 16-byte aligned
      return at;
    });
    this.ensureBytes(offset);
    const buffer = this.memory.buffer;
    operands.forEach((operand, i) => {
      if (!operand.read || this.isResident(operand.data)) return;
      const heap = operand.data instanceof Int32Array ? new Int32Array(buffer) : new Float32Array(buffer);
      heap.set(operand.data.subarray(0, operand.length), offsets[i]! / 4);
    });
    this.offsets = offsets;
    return offsets;
  }

  /** Copies the written operands that are not resident back out of the staging area. */
  private stageOut(operands: Operand[]): void {
    const buffer = this.memory.buffer;
    operands.forEach((operand, i) => {
      if (!operand.write || this.isResident(operand.data)) return;
      operand.data.set(operand.data instanceof Int32Array ? new Int32Array(buffer, this.offsets[i]!, operand.length) : new Float32Array(buffer, this.offsets[i]!, operand.length));
    });
  }

  /** Grows the memory to hold `bytes`, or throws saying how much was asked. */
  private ensureBytes(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return;
    const pages = Math.ceil((bytes - have) / PAGE_BYTES);
    if (have / PAGE_BYTES + pages > MAX_PAGES)
      throw new Error(`a fast CPU kernel needs ${Math.ceil(bytes / 2 ** 20)} MiB of WASM memory, more than its 2 GiB; use the reference CPU backend for this shape`);
    this.memory.grow(pages);
    this.resident?.grew();
  }
}

/**
 * The resident arrays of a shared memory: a first-fit allocator over [base, top) with merged free
 * blocks, every block 64-byte aligned, top at most `limit` bytes above base. A shared memory's buffer object changes when it grows, but the
 * arrays made over earlier ones stay valid at the same addresses, so every buffer it has had is known.
 */
class ResidentArena {
  private readonly memory: WebAssembly.Memory;
  private readonly grow: (bytes: number) => void;
  private readonly end: number; // the byte offset top may not pass
  private readonly buffers = new WeakSet<ArrayBufferLike>(); // every buffer object of the memory so far
  private readonly blocks = new Map<number, number>(); // byte offset → bytes of each allocated block
  private free: { offset: number; bytes: number }[] = []; // sorted by offset, never adjacent
  /** Byte offset past the highest block: where the staging area starts. */
  top: number;

  /** Arena over `memory` from byte `base`, at most `limit` bytes; `grow` makes the memory hold a number of bytes. */
  constructor(memory: WebAssembly.Memory, base: number, limit: number, grow: (bytes: number) => void) {
    this.memory = memory;
    this.grow = grow;
    this.top = Math.ceil(base / BLOCK_ALIGNMENT_BYTES) * BLOCK_ALIGNMENT_BYTES;
    this.end = this.top + limit;
    this.grew();
  }

  /** Records the memory's current buffer object (call after every grow). */
  grew(): void {
    this.buffers.add(this.memory.buffer);
  }

  /** Whether `array` is a view of this memory. */
  contains(array: Float32Array | Int32Array): boolean {
    return this.buffers.has(array.buffer);
  }

  /** A zeroed block of `length` floats, or null past the limit or when the memory cannot grow to hold it. */
  allocate(length: number): Float32Array | null {
    const bytes = Math.max(BLOCK_ALIGNMENT_BYTES, Math.ceil((length * 4) / BLOCK_ALIGNMENT_BYTES) * BLOCK_ALIGNMENT_BYTES);
    let offset = -1;
    const fit = this.free.findIndex((block) => block.bytes >= bytes);
    if (fit >= 0) {
      const block = this.free[fit]!;
      offset = block.offset;
      if (block.bytes === bytes) this.free.splice(fit, 1);
      else this.free[fit] = { offset: block.offset + bytes, bytes: block.bytes - bytes };
    } else {
      if (this.top + bytes > this.end) return null; // the rest of the memory stays for staging
      try {
        this.grow(this.top + bytes);
      } catch {
        return null; // past the memory's maximum: the caller keeps an ordinary array
      }
      offset = this.top;
      this.top += bytes;
    }
    this.blocks.set(offset, bytes);
    const array = new Float32Array(this.memory.buffer, offset, length);
    array.fill(0);
    return array;
  }

  /** Frees the block `array` starts (an array not from allocate() is ignored), merging it with free neighbours. */
  release(array: Float32Array): void {
    if (!this.contains(array)) return;
    const offset = array.byteOffset;
    const bytes = this.blocks.get(offset);
    if (bytes === undefined) return;
    this.blocks.delete(offset);
    let at = this.free.findIndex((block) => block.offset > offset);
    if (at < 0) at = this.free.length;
    this.free.splice(at, 0, { offset, bytes });
    const next = this.free[at + 1];
    if (next !== undefined && offset + bytes === next.offset) {
      this.free[at]!.bytes += next.bytes;
      this.free.splice(at + 1, 1);
    }
    const previous = this.free[at - 1];
    if (previous !== undefined && previous.offset + previous.bytes === offset) {
      previous.bytes += this.free[at]!.bytes;
      this.free.splice(at, 1);
      at--;
    }
    const last = this.free[this.free.length - 1];
    if (last !== undefined && last.offset + last.bytes === this.top) {
      this.top = last.offset; // the staging area starts lower again
      this.free.pop();
    }
  }
}

/** Single-threaded WasmKernels on their own memory, for any runtime with WebAssembly SIMD: the relaxed build where it validates, unless `simd` says. */
export async function createWasmKernels(simd?: KernelSimd): Promise<WasmKernels> {
  const module = await compileKernelModule(false, chooseKernelSimd(simd));
  const memory = createKernelMemory(false);
  return new WasmKernels(await instantiateKernels(module, memory), memory, null);
}
