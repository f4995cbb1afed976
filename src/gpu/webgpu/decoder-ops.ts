/**
 * The op wrappers of the KV-cache decoder's own kernels, as ops.ts does for the training kernels:
 * named and ordered as their references (kvCacheWrite in src/gpu/inference/paged-kv-cache.ts,
 * attentionDecodeForward in src/gpu/inference/cpu-decoder.ts), recording dispatches into a plan.
 */
import { u32, type GPUTensor, type KernelPlan } from './kernels.ts';

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
