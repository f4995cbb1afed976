/**
 * The op wrappers of the KV-cache decoder's own kernels, as ops.ts does for the training kernels:
 * named and ordered as their references (kvCacheWrite in src/gpu/inference/paged-kv-cache.ts,
 * attentionDecodeForward in src/gpu/inference/cpu-decoder.ts), recording dispatches into a plan.
 */
import { f32, ROPE_TABLE_POSITIONS, u32, type GPUTensor, type KernelPlan } from './kernels.ts';
import { MATMUL_NARROW_ROWS, matmulForward, matmulWorkgroup } from './ops.ts';

/** Records the store of the new rows' keys and values k, v (N, KVD) into a paged cache (pages, PAGE, KVD). */
export function kvCacheWrite(
  plan: KernelPlan,
  keys: GPUTensor,
  values: GPUTensor,
  k: GPUTensor,
  v: GPUTensor,
  positions: GPUTensor,
  rowSeq: GPUTensor,
  pageTable: GPUTensor,
  N: number,
  KVD: number,
  PAGE: number,
  MP: number,
): void {
  const params = [u32(N), u32(KVD), u32(PAGE), u32(MP)];
  plan.add(plan.kernels.dispatch('kv_cache_write', {}, [keys, values, k, v, positions, rowSeq, pageTable], params, plan.kernels.grid(N * KVD)));
}

/**
 * Records ropeForward of the new rows' keys k (N, KVH, HS) followed by kvCacheWrite of the rotated
 * keys and of v (N, KVH, HS) into a paged cache (pages, PAGE, KVH·HS), as one dispatch (`rope_kv_cache_write`).
 */
export function ropeKvCacheWrite(
  plan: KernelPlan,
  keys: GPUTensor,
  values: GPUTensor,
  k: GPUTensor,
  v: GPUTensor,
  positions: GPUTensor,
  rowSeq: GPUTensor,
  pageTable: GPUTensor,
  N: number,
  KVH: number,
  HS: number,
  PAGE: number,
  MP: number,
  theta: number,
): void {
  if (HS % 2 !== 0) throw new Error(`rope_kv_cache_write: head_dim ${HS} must be even`);
  const params = [u32(N), u32(KVH), u32(HS), u32(PAGE), u32(MP), f32(theta), u32(ROPE_TABLE_POSITIONS)];
  const table = plan.kernels.ropeTable(HS, theta);
  plan.add(plan.kernels.dispatch('rope_kv_cache_write', {}, [keys, values, k, v, positions, rowSeq, pageTable, table], params, plan.kernels.grid((N * KVH * HS) / 2)));
}

/** Records attention of N new rows q (N, NH, HS) against their sequences' paged caches into out (N, NH, HS). */
export function attentionDecodeForward(
  plan: KernelPlan,
  out: GPUTensor,
  q: GPUTensor,
  keys: GPUTensor,
  values: GPUTensor,
  positions: GPUTensor,
  rowSeq: GPUTensor,
  pageTable: GPUTensor,
  N: number,
  NH: number,
  KVH: number,
  HS: number,
  PAGE: number,
  MP: number,
): void {
  const params = [u32(N), u32(NH), u32(KVH), u32(HS), u32(PAGE), u32(MP)];
  plan.add(plan.kernels.dispatch('attention_decode_forward', {}, [out, q, keys, values, positions, rowSeq, pageTable], params, plan.kernels.grid(N * NH)));
}

/**
 * Records matmulForward for few rows: one row (a decode step of one sequence) runs
 * ops.matmulForward's one-row kernel; with 2 ≤ N ≤ 4 every row-group of matmul_forward's 16×4
 * workgroup but the first would exit at once, so it runs the same kernel with a 64×1 workgroup;
 * otherwise it is ops.matmulForward. With `accumulate` the product is added to out (out += inp·weightᵀ + bias),
 * which is how the decoder folds its residual adds into o_proj and down_proj.
 */
export function matmulForwardRows(plan: KernelPlan, out: GPUTensor, inp: GPUTensor, weight: GPUTensor, bias: GPUTensor | null, N: number, IC: number, OC: number, accumulate = false): void {
  if (N < MATMUL_NARROW_ROWS || N > 4) {
    matmulForward(plan, out, inp, weight, bias, N, IC, OC, { accumulate });
    return;
  }
  if (IC % 4 !== 0 || OC % 4 !== 0) throw new Error(`matmul_forward: IC = ${IC} and OC = ${OC} must be multiples of 4 (the matmul kernels load vec4)`);
  const kernels = plan.kernels;
  const WG_X = 64;
  plan.add(
    kernels.dispatch(
      weight.dtype === 'f16' ? 'matmul_forward_f16w' : 'matmul_forward',
      { WG_X, WG_Y: 1, HAS_BIAS: bias !== null, ACCUMULATE: accumulate },
      [out, inp, weight, bias ?? kernels.unusedTensor()],
      [u32(N), u32(IC), u32(OC), f32(1)],
      [Math.ceil(OC / 4 / WG_X), 1, 1],
    ),
  );
}

/**
 * Records out(N, I) = silu(inp·gateᵀ)·(inp·upᵀ) for inp (N, C) and f32 gate, up (I, C) without bias,
 * as one dispatch (`matmul_swiglu_forward`) instead of matmulForward twice and swigluForward.
 */
export function matmulSwigluForward(plan: KernelPlan, out: GPUTensor, inp: GPUTensor, gate: GPUTensor, up: GPUTensor, N: number, C: number, I: number): void {
  if (C % 4 !== 0 || I % 4 !== 0) throw new Error(`matmul_swiglu_forward: C = ${C} and I = ${I} must be multiples of 4 (the kernel loads vec4)`);
  if (gate.dtype === 'f16' || up.dtype === 'f16') throw new Error('matmul_swiglu_forward reads f32 weights only');
  const oneRow = N === 1;
  const rowGroups = oneRow ? 1 : Math.ceil(N / 4);
  const { WG_X, WG_Y } = oneRow ? { WG_X: 64, WG_Y: 1 } : matmulWorkgroup(I / 4, rowGroups);
  plan.add(plan.kernels.dispatch('matmul_swiglu_forward', { WG_X, WG_Y, ONE_ROW: oneRow }, [out, inp, gate, up], [u32(N), u32(C), u32(I)], [Math.ceil(I / 4 / WG_X), Math.ceil(rowGroups / WG_Y), 1]));
}
