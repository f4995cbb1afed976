/**
 * The GPU op wrappers: one function per op, named and ordered as its CPU reference in
 * src/gpu/reference (outputs, inputs, weights, sizes; backward accumulates), taking GPU tensors and
 * recording dispatches into a KernelPlan instead of computing. Nothing runs until the plan is
 * submitted. Shapes are element counts; GPU tensors are byte ranges (see kernels.ts).
 */
import { f32, ROPE_TABLE_POSITIONS, u32, type Dispatch, type GPUTensor, type KernelPlan } from './kernels.ts';
import type { AdamWHyperparameters } from '../reference/adamw.ts';
import {
  MIN_LARGE_TILES,
  MIN_ROWS_16,
  MIN_TOKENS_16,
  MIN_WEIGHT_ROWS_16,
  SPLIT_K_MAX_SCRATCH_BYTES,
  SPLIT_K_MAX_SPLITS,
  SPLIT_K_MAX_TILES,
  SPLIT_K_MIN_CHUNK,
  type ForwardVariant,
  type InputGradVariant,
  type WeightGradVariant,
} from './matmul-variants.ts';

/** Workgroup shape of the register-tiled matmuls: WG_X threads over column groups × WG_Y threads over row groups. */
const MATMUL_WORKGROUP = { WG_X: 16, WG_Y: 4 } as const;

function requireMultipleOf4(op: string, sizes: Record<string, number>): void {
  for (const [name, value] of Object.entries(sizes)) {
    if (value % 4 !== 0) throw new Error(`${op}: ${name} = ${value} must be a multiple of 4 (the matmul kernels load vec4)`);
  }
}

/** Options of the matmul wrappers: out = alpha·product (+ out when accumulate). */
export interface MatmulOptions {
  alpha?: number;
  accumulate?: boolean;
  /**
   * matmulForward only: force a kernel (tests, benchmarks): 'narrow' (one row per thread), or one of
   * FORWARD_VARIANTS; by default N and the device's choice (`kernels.matmul`) decide.
   */
  variant?: 'narrow' | ForwardVariant;
}

/** Rows below which matmulForward runs the one-row-per-thread kernel: one decoding sequence (at N = 1 it took half the time of the 4×4-tiled kernel on SwiftShader; at N = 2 they were even). */
export const MATMUL_NARROW_ROWS = 2;

/**
 * Below this many workgroups a matmul halves its workgroup (down to 4 threads, one SIMD group of a
 * software adapter): software adapters run one workgroup per core at a time, so a single workgroup leaves
 * the other cores idle (a 64×64 weight gradient over 512 tokens: 11.4 ms in one workgroup of 4×16, 5.7 ms
 * in 4×1 ones, SwiftShader), and a handful of large ones balance badly on a loaded machine (256² weight
 * gradient, 16×16 tiles: 40 ms wall in 4 workgroups of 16×4, 29–32 ms in 8–32 smaller ones).
 */
const MATMUL_MIN_WORKGROUPS = 8;

/**
 * The workgroup of a register-tiled matmul with `columnGroups` × `rowGroups` threads: 16 × 4 normally;
 * narrower outputs (LoRA's rank-16 side) get fewer columns and more rows so that no thread idles (a
 * 16-wide workgroup over one column group ran 15 of 16 threads for nothing), and small outputs get
 * smaller workgroups until there are MATMUL_MIN_WORKGROUPS of them (a 64×64 weight gradient was one
 * workgroup: one core of a software adapter).
 */
export function matmulWorkgroup(columnGroups: number, rowGroups: number): { WG_X: number; WG_Y: number } {
  let WG_X: number = MATMUL_WORKGROUP.WG_X;
  let WG_Y: number = MATMUL_WORKGROUP.WG_Y;
  while (WG_X > 1 && WG_X / 2 >= columnGroups) {
    WG_X /= 2;
    WG_Y *= 2;
  }
  const groups = (): number => Math.ceil(columnGroups / WG_X) * Math.ceil(rowGroups / WG_Y);
  while (WG_X * WG_Y > 4 && groups() < MATMUL_MIN_WORKGROUPS) {
    if (WG_Y >= WG_X) WG_Y /= 2;
    else WG_X /= 2;
  }
  return { WG_X, WG_Y };
}

/** A register tile the device's choice may name. */
type RegisterTile = 'tile4x4' | 'tile8x16' | 'tile16x16';

/** Rows of output per thread of each large register tile (16 columns each). */
const TILE_ROWS = { tile8x16: 8, tile16x16: 16 } as const;

/**
 * The tile an output of rows × cols gets when the device's choice is `tile`: the 16×16 tile steps down
 * to 8×16 below MIN_ROWS_16 rows, and a large tile steps down when the output has fewer than
 * MIN_LARGE_TILES of its tiles (8×16 to 4×4).
 */
function fitTile(tile: RegisterTile, rows: number, cols: number): RegisterTile {
  const tiles = (tileRows: number): number => Math.ceil(rows / tileRows) * Math.ceil(cols / 16);
  let fitted = tile;
  if (fitted === 'tile16x16' && (rows < MIN_ROWS_16 || tiles(16) < MIN_LARGE_TILES)) fitted = 'tile8x16';
  if (fitted === 'tile8x16' && tiles(8) < MIN_LARGE_TILES) fitted = 'tile4x4';
  return fitted;
}

/**
 * Records out(N,OC) = alpha·inp(N,IC)·weight(OC,IC)ᵀ + bias(OC) (+ out when accumulate); IC and OC
 * multiples of 4. An f16 weight (dtype 'f16') runs the *_f16w kernels (4×4 tile). The kernel follows
 * N and the device's choice: below MATMUL_NARROW_ROWS one thread per (row, 4 columns); otherwise
 * `kernels.matmul.forward` (the 8×16 tile falls back to the 4×4 one on outputs with few tiles).
 */
export function matmulForward(
  plan: KernelPlan,
  out: GPUTensor,
  inp: GPUTensor,
  weight: GPUTensor,
  bias: GPUTensor | null,
  N: number,
  IC: number,
  OC: number,
  { alpha = 1, accumulate = false, variant }: MatmulOptions = {},
): Dispatch {
  requireMultipleOf4('matmul_forward', { IC, OC });
  const kernels = plan.kernels;
  const f16 = weight.dtype === 'f16';
  let kernel = variant ?? (N < MATMUL_NARROW_ROWS ? 'narrow' : kernels.matmul.forward);
  if (variant === undefined && kernel !== 'narrow' && kernel !== 'workgroup') kernel = fitTile(kernel, N, OC);
  if (f16 && kernel !== 'narrow') kernel = 'tile4x4';
  const tensors = [out, inp, weight, bias ?? kernels.unusedTensor()];
  const params = [u32(N), u32(IC), u32(OC), f32(alpha)];
  const switches = { HAS_BIAS: bias !== null, ACCUMULATE: accumulate };
  if (kernel === 'narrow') {
    const WG_X = 64;
    const name = f16 ? 'matmul_forward_narrow_f16w' : 'matmul_forward_narrow';
    return plan.add(kernels.dispatch(name, { WG_X, ...switches }, tensors, params, [Math.ceil(OC / 4 / WG_X), N, 1]));
  }
  if (kernel === 'workgroup') {
    return plan.add(kernels.dispatch('matmul_forward_workgroup', switches, tensors, params, [Math.ceil(OC / 64), Math.ceil(N / 64), 1]));
  }
  if (kernel === 'tile8x16' || kernel === 'tile16x16') {
    const rows = TILE_ROWS[kernel];
    const { WG_X, WG_Y } = matmulWorkgroup(Math.ceil(OC / 16), Math.ceil(N / rows));
    return plan.add(
      kernels.dispatch(kernel === 'tile8x16' ? 'matmul_forward_tile8x16' : 'matmul_forward_tile16x16', { WG_X, WG_Y, ...switches }, tensors, params, [
        Math.ceil(OC / 16 / WG_X),
        Math.ceil(N / rows / WG_Y),
        1,
      ]),
    );
  }
  const { WG_X, WG_Y } = matmulWorkgroup(OC / 4, Math.ceil(N / 4));
  const name = f16 ? 'matmul_forward_f16w' : 'matmul_forward';
  return plan.add(kernels.dispatch(name, { WG_X, WG_Y, ...switches }, tensors, params, [Math.ceil(OC / 4 / WG_X), Math.ceil(N / 4 / WG_Y), 1]));
}

/** Options of matmulBackwardInput: as MatmulOptions, with the input-gradient kernel to force. */
export interface MatmulInputGradOptions {
  alpha?: number;
  accumulate?: boolean;
  /** Force a kernel (tests, benchmarks); by default the device's choice `kernels.matmul.inputGrad`. */
  variant?: InputGradVariant;
}

/** Records dinp += alpha·dout·weight (or = when accumulate is false); the input-gradient half of matmulBackward. An f16 weight runs matmul_backward_dinp_f16w. */
export function matmulBackwardInput(
  plan: KernelPlan,
  dinp: GPUTensor,
  dout: GPUTensor,
  weight: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  { alpha = 1, accumulate = true, variant }: MatmulInputGradOptions = {},
): Dispatch {
  requireMultipleOf4('matmul_backward_dinp', { IC, OC });
  const f16 = weight.dtype === 'f16';
  let kernel = variant ?? plan.kernels.matmul.inputGrad;
  if (variant === undefined) kernel = fitTile(kernel, N, IC);
  const params = [u32(N), u32(IC), u32(OC), f32(alpha)];
  if ((kernel === 'tile8x16' || kernel === 'tile16x16') && !f16) {
    const rows = TILE_ROWS[kernel];
    const { WG_X, WG_Y } = matmulWorkgroup(Math.ceil(IC / 16), Math.ceil(N / rows));
    return plan.add(
      plan.kernels.dispatch(kernel === 'tile8x16' ? 'matmul_backward_dinp_tile8x16' : 'matmul_backward_dinp_tile16x16', { WG_X, WG_Y, ACCUMULATE: accumulate }, [dinp, dout, weight], params, [
        Math.ceil(IC / 16 / WG_X),
        Math.ceil(N / rows / WG_Y),
        1,
      ]),
    );
  }
  const { WG_X, WG_Y } = matmulWorkgroup(IC / 4, Math.ceil(N / 4));
  return plan.add(
    plan.kernels.dispatch(f16 ? 'matmul_backward_dinp_f16w' : 'matmul_backward_dinp', { WG_X, WG_Y, ACCUMULATE: accumulate }, [dinp, dout, weight], params, [
      Math.ceil(IC / 4 / WG_X),
      Math.ceil(N / 4 / WG_Y),
      1,
    ]),
  );
}

/** How many ways split-K divides N tokens for an (OC, IC) weight gradient: 1 (no split) when the output is large, the tokens few, or the scratch too big. */
function splitKSplits(N: number, IC: number, OC: number): number {
  if (Math.ceil(OC / 8) * Math.ceil(IC / 16) >= SPLIT_K_MAX_TILES) return 1;
  const byTokens = Math.floor(N / SPLIT_K_MIN_CHUNK);
  const byScratch = Math.floor(SPLIT_K_MAX_SCRATCH_BYTES / (OC * IC * 4));
  return Math.max(1, Math.min(SPLIT_K_MAX_SPLITS, byTokens, byScratch));
}

/** Records dweight += alpha·doutᵀ·inp; the weight-gradient half of matmulBackward. `variant` forces a kernel (tests, benchmarks); by default `kernels.matmul.weightGrad`. */
export function matmulBackwardWeight(plan: KernelPlan, dweight: GPUTensor, dout: GPUTensor, inp: GPUTensor, N: number, IC: number, OC: number, alpha = 1, variant?: WeightGradVariant): Dispatch {
  requireMultipleOf4('matmul_backward_dweight', { IC, OC });
  const kernels = plan.kernels;
  let kernel = variant ?? kernels.matmul.weightGrad;
  if (variant === undefined && kernel === 'tile16x16' && (N < MIN_TOKENS_16 || OC < MIN_WEIGHT_ROWS_16)) kernel = 'tile8x16';
  if (variant === undefined && kernel !== 'splitk') kernel = fitTile(kernel, OC, IC);
  if (variant === undefined && kernel === 'splitk' && fitTile('tile8x16', OC, IC) === 'tile4x4') kernel = 'tile4x4';
  const large = matmulWorkgroup(Math.ceil(IC / 16), Math.ceil(OC / 8));
  const largeGrid = (z: number): [number, number, number] => [Math.ceil(IC / 16 / large.WG_X), Math.ceil(OC / 8 / large.WG_Y), z];
  if (kernel === 'splitk') {
    // forced split-K splits at least 2 ways when there are 2 tokens; the device's choice only where it pays
    const splits = variant === 'splitk' ? Math.max(Math.min(2, N), splitKSplits(N, IC, OC)) : splitKSplits(N, IC, OC);
    if (splits > 1) {
      const chunk = Math.ceil(N / splits);
      const used = Math.ceil(N / chunk);
      const partials = kernels.scratch(used * OC * IC * 4);
      plan.add(kernels.dispatch('matmul_backward_dweight_tile8x16', { ...large, SPLIT_K: true }, [partials, dout, inp], [u32(N), u32(IC), u32(OC), f32(alpha), u32(chunk)], largeGrid(used)));
      const n4 = (OC * IC) / 4;
      const grid = kernels.grid(n4, 64);
      return plan.add(kernels.dispatch('matmul_splitk_reduce', { WG_X: 64 }, [dweight, partials], [u32(n4), u32(used), u32(grid[0] * 64)], grid));
    }
    kernel = 'tile8x16';
  }
  if (kernel === 'tile8x16') {
    return plan.add(kernels.dispatch('matmul_backward_dweight_tile8x16', { ...large, SPLIT_K: false }, [dweight, dout, inp], [u32(N), u32(IC), u32(OC), f32(alpha), u32(N)], largeGrid(1)));
  }
  if (kernel === 'tile16x16') {
    const { WG_X, WG_Y } = matmulWorkgroup(Math.ceil(IC / 16), Math.ceil(OC / 16));
    const grid: [number, number, number] = [Math.ceil(IC / 16 / WG_X), Math.ceil(OC / 16 / WG_Y), 1];
    return plan.add(kernels.dispatch('matmul_backward_dweight_tile16x16', { WG_X, WG_Y, SPLIT_K: false }, [dweight, dout, inp], [u32(N), u32(IC), u32(OC), f32(alpha), u32(N)], grid));
  }
  const { WG_X, WG_Y } = matmulWorkgroup(IC / 4, OC / 4);
  return plan.add(kernels.dispatch('matmul_backward_dweight', { WG_X, WG_Y }, [dweight, dout, inp], [u32(N), u32(IC), u32(OC), f32(alpha)], [Math.ceil(IC / 4 / WG_X), Math.ceil(OC / 4 / WG_Y), 1]));
}

/** Records dinp += dout·weight, dweight += doutᵀ·inp and dbias += Σ_n dout; any of the three may be null. */
export function matmulBackward(
  plan: KernelPlan,
  dinp: GPUTensor | null,
  dweight: GPUTensor | null,
  dbias: GPUTensor | null,
  dout: GPUTensor,
  inp: GPUTensor,
  weight: GPUTensor,
  N: number,
  IC: number,
  OC: number,
): void {
  if (dinp) matmulBackwardInput(plan, dinp, dout, weight, N, IC, OC);
  if (dweight) matmulBackwardWeight(plan, dweight, dout, inp, N, IC, OC);
  if (dbias) {
    plan.add(plan.kernels.dispatch('matmul_backward_dbias', {}, [dbias, dout], [u32(N), u32(OC)], plan.kernels.grid(OC)));
  }
}

/** Every row of a table: the row range of embeddingForward when the binding holds the whole table. */
const ALL_ROWS = { firstRow: 0, rows: 0xffffffff } as const;

/**
 * Records out(N,C) = wte[ids[n], :]; an f16 table (dtype 'f16') runs embedding_forward_f16w. With
 * `range`, wte binds only the table's rows [firstRow, firstRow + rows) (a row chunk) and tokens
 * outside them are left for the other chunks' dispatches.
 */
export function embeddingForward(plan: KernelPlan, out: GPUTensor, ids: GPUTensor, wte: GPUTensor, N: number, C: number, range: { firstRow: number; rows: number } = ALL_ROWS): void {
  const name = wte.dtype === 'f16' ? 'embedding_forward_f16w' : 'embedding_forward';
  plan.add(plan.kernels.dispatch(name, {}, [out, ids, wte], [u32(N), u32(C), u32(range.firstRow), u32(range.rows)], plan.kernels.grid(N * C)));
}

/** Records dst[n, to.column + j] = src[n, from.column + j] for n < N, j < width: a block of columns between matrices of from.width and to.width columns. */
export function copyColumns(plan: KernelPlan, dst: GPUTensor, src: GPUTensor, N: number, width: number, from: { width: number; column: number }, to: { width: number; column: number }): void {
  const params = [u32(N), u32(width), u32(from.width), u32(from.column), u32(to.width), u32(to.column)];
  plan.add(plan.kernels.dispatch('copy_columns', {}, [dst, src], params, plan.kernels.grid(N * width)));
}

/** Records out(n) = inp(n) rounded to f16 (to nearest even; past ±65504 Infinity): an f32 activation stored as half; n a multiple of 4, out tagged dtype 'f16'. */
export function convertF32ToF16(plan: KernelPlan, out: GPUTensor, inp: GPUTensor, n: number): void {
  requireF16Pair('convert_f32_to_f16', out, inp, n);
  plan.add(plan.kernels.dispatch('convert_f32_to_f16', {}, [out, inp], [u32(n / 4)], plan.kernels.grid(n / 4)));
}

/** Records out(n) = inp(n) widened from f16 to f32 exactly: an activation stored as half read back; n a multiple of 4, inp tagged dtype 'f16'. */
export function convertF16ToF32(plan: KernelPlan, out: GPUTensor, inp: GPUTensor, n: number): void {
  requireF16Pair('convert_f16_to_f32', inp, out, n);
  plan.add(plan.kernels.dispatch('convert_f16_to_f32', {}, [out, inp], [u32(n / 4)], plan.kernels.grid(n / 4)));
}

/** Throws unless n is a multiple of 4 and the half tensor is tagged f16 and the other is not (a mix-up would reinterpret bits). */
function requireF16Pair(op: string, half: GPUTensor, full: GPUTensor, n: number): void {
  if (n % 4 !== 0) throw new Error(`${op}: n = ${n} must be a multiple of 4 (4 values per thread)`);
  if (half.dtype !== 'f16' || full.dtype === 'f16') throw new Error(`${op}: the half tensor must carry dtype 'f16' and the f32 one must not (${half.buffer.label}, ${full.buffer.label})`);
  if (half.size < n * 2 || full.size < n * 4) throw new Error(`${op}: ${n} values need ${n * 2} bytes of f16 and ${n * 4} of f32, got ${half.size} and ${full.size}`);
}

/** Records dwte[ids[n], :] += dout[n, :] (one thread per channel, deterministic, no atomics). */
export function embeddingBackward(plan: KernelPlan, dwte: GPUTensor, dout: GPUTensor, ids: GPUTensor, N: number, C: number): void {
  plan.add(plan.kernels.dispatch('embedding_backward', {}, [dwte, dout, ids], [u32(N), u32(C)], plan.kernels.grid(C)));
}

/** Records out = inp·rstd·weight per row and saves rstd(N). */
export function rmsnormForward(plan: KernelPlan, out: GPUTensor, rstd: GPUTensor, inp: GPUTensor, weight: GPUTensor, N: number, C: number, eps: number): void {
  plan.add(plan.kernels.dispatch('rmsnorm_forward', {}, [out, rstd, inp, weight], [u32(N), u32(C), f32(eps)], plan.kernels.grid(N)));
}

/** Records the gradients of rmsnormForward into dinp and dweight (dweight may be null when frozen). */
export function rmsnormBackward(plan: KernelPlan, dinp: GPUTensor, dweight: GPUTensor | null, dout: GPUTensor, inp: GPUTensor, weight: GPUTensor, rstd: GPUTensor, N: number, C: number): void {
  const kernels = plan.kernels;
  plan.add(kernels.dispatch('rmsnorm_backward', {}, [dinp, dout, inp, weight, rstd], [u32(N), u32(C)], kernels.grid(N)));
  if (dweight) {
    plan.add(kernels.dispatch('rmsnorm_backward_dweight', {}, [dweight, dout, inp, rstd], [u32(N), u32(C)], kernels.grid(C)));
  }
}

/** Records rotate-half RoPE of inp(B,T,NH,HS) at positions(B*T) into out. */
export function ropeForward(plan: KernelPlan, out: GPUTensor, inp: GPUTensor, positions: GPUTensor, B: number, T: number, NH: number, HS: number, theta: number): void {
  const params = [u32(B * T), u32(NH), u32(HS), f32(theta), u32(ROPE_TABLE_POSITIONS)];
  const table = plan.kernels.ropeTable(HS, theta);
  plan.add(plan.kernels.dispatch('rope_forward', {}, [out, inp, positions, table], params, plan.kernels.grid((B * T * NH * HS) / 2)));
}

/** Records dinp += the inverse rotation of dout (the gradient of ropeForward). */
export function ropeBackward(plan: KernelPlan, dinp: GPUTensor, dout: GPUTensor, positions: GPUTensor, B: number, T: number, NH: number, HS: number, theta: number): void {
  const params = [u32(B * T), u32(NH), u32(HS), f32(theta), u32(ROPE_TABLE_POSITIONS)];
  const table = plan.kernels.ropeTable(HS, theta);
  plan.add(plan.kernels.dispatch('rope_backward', {}, [dinp, dout, positions, table], params, plan.kernels.grid((B * T * NH * HS) / 2)));
}

/** Records causal GQA attention: out(B,T,NH,HS) and the probabilities att(B,NH,T,T) from q, k, v; head sizes that are multiples of 4 run the vec4 kernel. */
export function attentionForward(plan: KernelPlan, out: GPUTensor, att: GPUTensor, q: GPUTensor, k: GPUTensor, v: GPUTensor, B: number, T: number, NH: number, KVH: number, HS: number): void {
  const params = [u32(B), u32(T), u32(NH), u32(KVH), u32(HS)];
  const name = HS % 4 === 0 ? 'attention_forward_vec4' : 'attention_forward';
  plan.add(plan.kernels.dispatch(name, {}, [out, att, q, k, v], params, plan.kernels.grid(B * NH * T)));
}

/**
 * Records the gradients of attentionForward into dq, dk and dv; dscores (B,NH,T,T) is scratch the
 * GPU needs (the softmax gradient, passed from the dq kernel to the dk/dv kernel), overwritten. Head
 * sizes that are multiples of 4 run the vec4 kernels.
 */
export function attentionBackward(
  plan: KernelPlan,
  dq: GPUTensor,
  dk: GPUTensor,
  dv: GPUTensor,
  dscores: GPUTensor,
  dout: GPUTensor,
  q: GPUTensor,
  k: GPUTensor,
  v: GPUTensor,
  att: GPUTensor,
  B: number,
  T: number,
  NH: number,
  KVH: number,
  HS: number,
): void {
  const kernels = plan.kernels;
  const params = [u32(B), u32(T), u32(NH), u32(KVH), u32(HS)];
  if (HS % 4 === 0) {
    plan.add(kernels.dispatch('attention_backward_dq_vec4', {}, [dq, dscores, dout, k, v, att], params, kernels.grid(B * NH * T)));
    plan.add(kernels.dispatch('attention_backward_dkv_vec4', {}, [dk, dv, dout, q, att, dscores], params, kernels.grid((B * T * KVH * HS) / 4)));
    return;
  }
  plan.add(kernels.dispatch('attention_backward_dq', {}, [dq, dscores, dout, k, v, att], params, kernels.grid(B * NH * T)));
  plan.add(kernels.dispatch('attention_backward_dkv', {}, [dk, dv, dout, q, att, dscores], params, kernels.grid(B * T * KVH * HS)));
}

/** Records out = silu(gate)·up over N elements. */
export function swigluForward(plan: KernelPlan, out: GPUTensor, gate: GPUTensor, up: GPUTensor, N: number): void {
  plan.add(plan.kernels.dispatch('swiglu_forward', {}, [out, gate, up], [u32(N)], plan.kernels.grid(N)));
}

/** Records the gradients of swigluForward into dgate and dup (4 elements per thread when N is a multiple of 4). */
export function swigluBackward(plan: KernelPlan, dgate: GPUTensor, dup: GPUTensor, dout: GPUTensor, gate: GPUTensor, up: GPUTensor, N: number): void {
  if (N % 4 === 0) plan.add(plan.kernels.dispatch('swiglu_backward_vec4', {}, [dgate, dup, dout, gate, up], [u32(N / 4)], plan.kernels.grid(N / 4)));
  else plan.add(plan.kernels.dispatch('swiglu_backward', {}, [dgate, dup, dout, gate, up], [u32(N)], plan.kernels.grid(N)));
}

/** Records out = a + b over N elements. */
export function residualForward(plan: KernelPlan, out: GPUTensor, a: GPUTensor, b: GPUTensor, N: number): void {
  plan.add(plan.kernels.dispatch('residual_forward', {}, [out, a, b], [u32(N)], plan.kernels.grid(N)));
}

/** Records da += dout and db += dout (da, db and dout must not overlap; 4 elements per thread when N is a multiple of 4). */
export function residualBackward(plan: KernelPlan, da: GPUTensor, db: GPUTensor, dout: GPUTensor, N: number): void {
  if (N % 4 === 0) plan.add(plan.kernels.dispatch('residual_backward_vec4', {}, [da, db, dout], [u32(N / 4)], plan.kernels.grid(N / 4)));
  else plan.add(plan.kernels.dispatch('residual_backward', {}, [da, db, dout], [u32(N)], plan.kernels.grid(N)));
}

/** Records logprobs(N) = log_softmax(logits(N,V)/temperature) at targets(N); returns the dispatch (its params hold the temperature). */
export function logprobsForward(plan: KernelPlan, logprobs: GPUTensor, logits: GPUTensor, targets: GPUTensor, N: number, V: number, temperature: number): Dispatch {
  return plan.add(plan.kernels.dispatch('logprobs_forward', {}, [logprobs, logits, targets], [u32(N), u32(V), f32(temperature)], plan.kernels.grid(N)));
}

/** Records dlogits += dlogprobs·(onehot(target) − softmax(logits/T))/T. */
export function logprobsBackward(plan: KernelPlan, dlogits: GPUTensor, dlogprobs: GPUTensor, logits: GPUTensor, targets: GPUTensor, N: number, V: number, temperature: number): Dispatch {
  const params = [u32(N), u32(V), f32(temperature)];
  return plan.add(plan.kernels.dispatch('logprobs_backward', {}, [dlogits, dlogprobs, logits, targets], params, plan.kernels.grid(N)));
}

/** Records losses(N) = −log_softmax(logits)[targets], the cross-entropy at temperature 1. */
export function crossEntropyForward(plan: KernelPlan, losses: GPUTensor, logits: GPUTensor, targets: GPUTensor, N: number, V: number): void {
  plan.add(plan.kernels.dispatch('cross_entropy_forward', {}, [losses, logits, targets], [u32(N), u32(V)], plan.kernels.grid(N)));
}

/** Records entropy(N) of softmax(logits/temperature). */
export function entropyForward(plan: KernelPlan, entropy: GPUTensor, logits: GPUTensor, N: number, V: number, temperature: number): void {
  plan.add(plan.kernels.dispatch('entropy_forward', {}, [entropy, logits], [u32(N), u32(V), f32(temperature)], plan.kernels.grid(N)));
}

/** Returns the uniform fields of adamwUpdate's kernel for n parameters and these settings (the first is n, or n/4 for adamw_update_vec4 when n is a multiple of 4). */
export function adamwParams(n: number, { lr, beta1, beta2, eps, weightDecay, step }: AdamWHyperparameters) {
  return [u32(n % 4 === 0 ? n / 4 : n), f32(lr), f32(beta1), f32(beta2), f32(eps), f32(weightDecay), f32(1 - Math.pow(beta1, step)), f32(Math.sqrt(1 - Math.pow(beta2, step)))];
}

/**
 * Records one AdamW step over n parameters, with grads multiplied by gradScale[0] (the clip factor
 * from globalGradNorm, or a tensor holding 1); returns the dispatch, whose params `writeParams`
 * updates each step with `adamwParams`.
 */
export function adamwUpdate(plan: KernelPlan, params: GPUTensor, grads: GPUTensor, m: GPUTensor, v: GPUTensor, gradScale: GPUTensor, n: number, settings: AdamWHyperparameters): Dispatch {
  const vec4 = n % 4 === 0;
  return plan.add(plan.kernels.dispatch(vec4 ? 'adamw_update_vec4' : 'adamw_update', {}, [params, m, v, grads, gradScale], adamwParams(n, settings), plan.kernels.grid(vec4 ? n / 4 : n)));
}

/** Number of partial sums of the first stage of globalGradNorm. */
export const GRAD_NORM_PARTIALS = 4096;

/**
 * Records the global gradient norm of n values in two stages: result[0] = the clip factor for
 * maxNorm (1 when maxNorm ≤ 0; bind result as adamwUpdate's gradScale), result[1] = ‖grads‖;
 * partials (GRAD_NORM_PARTIALS floats) is scratch.
 * Returns the finalize dispatch, whose params hold maxNorm.
 */
export function globalGradNorm(plan: KernelPlan, result: GPUTensor, partials: GPUTensor, grads: GPUTensor, n: number, maxNorm = 0): Dispatch {
  const P = Math.min(GRAD_NORM_PARTIALS, Math.max(1, n));
  plan.add(plan.kernels.dispatch('global_grad_norm', {}, [partials, grads], [u32(n), u32(P)], plan.kernels.grid(P)));
  return plan.add(plan.kernels.dispatch('global_grad_norm_finalize', {}, [result, partials], [u32(P), f32(maxNorm)], [1, 1, 1]));
}

/** Records x *= factor over n values. */
export function scaleInPlace(plan: KernelPlan, x: GPUTensor, n: number, factor: number): Dispatch {
  return plan.add(plan.kernels.dispatch('scale_in_place', {}, [x], [u32(n), f32(factor)], plan.kernels.grid(n)));
}

/** Records out += (alpha/rank)·(inp·loraAᵀ)·loraBᵀ and saves hidden = inp·loraAᵀ (N, rank); rank a multiple of 4. */
export function loraForward(
  plan: KernelPlan,
  out: GPUTensor,
  hidden: GPUTensor,
  inp: GPUTensor,
  loraA: GPUTensor,
  loraB: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  rank: number,
  alpha: number,
): void {
  matmulForward(plan, hidden, inp, loraA, null, N, IC, rank);
  matmulForward(plan, out, hidden, loraB, null, N, rank, OC, { alpha: alpha / rank, accumulate: true });
}

/** Records the LoRA gradients into dloraA, dloraB and (when not null) dinp; dhidden (N, rank) is scratch, overwritten. */
export function loraBackward(
  plan: KernelPlan,
  dinp: GPUTensor | null,
  dloraA: GPUTensor,
  dloraB: GPUTensor,
  dhidden: GPUTensor,
  dout: GPUTensor,
  inp: GPUTensor,
  hidden: GPUTensor,
  loraA: GPUTensor,
  loraB: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  rank: number,
  alpha: number,
): void {
  const scale = alpha / rank;
  matmulBackwardInput(plan, dhidden, dout, loraB, N, rank, OC, { alpha: scale, accumulate: false });
  matmulBackwardWeight(plan, dloraB, dout, hidden, N, rank, OC, scale);
  if (dinp) matmulBackwardInput(plan, dinp, dhidden, loraA, N, IC, rank);
  matmulBackwardWeight(plan, dloraA, dhidden, inp, N, IC, rank);
}
