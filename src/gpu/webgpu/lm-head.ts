/**
 * The LM head and its loss in chunks of tokens, never holding the (N, V) logits or their gradient:
 * Liger's fused linear cross-entropy (Hsu et al. 2024, "Liger Kernel", §3.2) for GRPO's log-probs.
 * Each chunk of `rows` tokens computes its logits (rows, V) into one scratch, reduces them to
 * log-probs (and entropies), and in backward turns the scratch into its own gradient in place
 * (`logprobs_backward_in_place`) before the two matmul products push it into the final norm's
 * output gradient and, when trained, the LM head's weight gradient. Memory: one (rows, V) scratch
 * instead of two (N, V) buffers. A head stored in row chunks of the vocabulary (row-chunks.ts: a
 * table past one binding) multiplies chunk by chunk through a (rows, chunk rows) scratch whose
 * columns are copied into, and in backward out of, the logits. It records dispatches; it allocates
 * nothing.
 */
import { f32, u32, type Dispatch, type GPUTensor, type KernelPlan } from './kernels.ts';
import * as ops from './ops.ts';
import type { RowChunkTensor } from './param-store.ts';

/** Bytes the (rows, V) logits scratch aims at: enough rows for a matmul that fills a device, small next to a model's weights. */
export const LM_HEAD_CHUNK_BYTES = 32 * 2 ** 20;

/** Records the fused loss step on a chunk: logprobs and entropy of each row, then logits ← dlogits in place; returns the dispatch (its params hold the temperature). */
export function logprobsBackwardInPlace(
  plan: KernelPlan,
  logits: GPUTensor,
  logprobs: GPUTensor,
  entropy: GPUTensor,
  dlogprobs: GPUTensor,
  targets: GPUTensor,
  N: number,
  V: number,
  temperature: number,
): Dispatch {
  const params = [u32(N), u32(V), f32(temperature)];
  return plan.add(plan.kernels.dispatch('logprobs_backward_in_place', {}, [logits, logprobs, entropy, dlogprobs, targets], params, plan.kernels.grid(N)));
}

/**
 * Returns the tokens per chunk: a multiple of `rowAlignment` (so every chunk's bindings start at an
 * aligned offset: minStorageBufferOffsetAlignment / 4), as many as fit in `chunkBytes` of logits, at
 * least one aligned group and at most N.
 */
export function lmHeadChunkRows(N: number, V: number, rowAlignment: number, chunkBytes = LM_HEAD_CHUNK_BYTES): number {
  const aligned = Math.max(rowAlignment, Math.floor(chunkBytes / (V * 4) / rowAlignment) * rowAlignment);
  return Math.min(N, aligned);
}

/** The tensors of the chunked LM head: whole-batch views (the chunks are cut from them) plus the one logits scratch. */
export interface LmHeadTensors {
  lnf: GPUTensor; // (N, C) the final norm's output
  weight: RowChunkTensor[]; // (V, C) the LM head (or the tied embedding), f32 or f16, in row chunks of the vocabulary (one when it fits a binding)
  targets: GPUTensor; // (N) i32
  logprobs: GPUTensor; // (N)
  entropy: GPUTensor; // (N)
  chunk: GPUTensor; // (rows, V) scratch: logits, then their gradient
  columns: GPUTensor | null; // (rows, largest vocabulary chunk) scratch when the head lies in several chunks
}

/** Returns the scratch values a head in these row chunks needs for `rows` tokens: rows × the largest chunk, or 0 for one chunk. */
export function vocabularyScratchValues(chunkRows: readonly number[], rows: number): number {
  return chunkRows.length > 1 ? rows * Math.max(...chunkRows) : 0;
}

/**
 * Records logits(n, V) = lnf(n, C)·weightᵀ over the head's row chunks: one matmul when it is whole,
 * else per chunk a matmul into `columns` and a copy into the chunk's columns of the logits.
 */
export function recordLogits(plan: KernelPlan, logits: GPUTensor, lnf: GPUTensor, weight: readonly RowChunkTensor[], columns: GPUTensor | null, n: number, C: number, V: number): void {
  if (weight.length === 1) {
    ops.matmulForward(plan, logits, lnf, weight[0]!.tensor, null, n, C, V);
    return;
  }
  if (columns === null) throw new Error('an LM head in row chunks needs its columns scratch');
  for (const chunk of weight) {
    const block = rowsOf(columns, 0, n, chunk.rows);
    ops.matmulForward(plan, block, lnf, chunk.tensor, null, n, C, chunk.rows);
    ops.copyColumns(plan, logits, block, n, chunk.rows, { width: chunk.rows, column: 0 }, { width: V, column: chunk.firstRow });
  }
}

/** The gradient side of the chunked LM head. */
export interface LmHeadGradients {
  dlogprobs: GPUTensor; // (N) the per-token weights of backward
  dlnf: GPUTensor; // (N, C), accumulated
  dweight: GPUTensor | null; // (V, C), accumulated; null when the head is frozen
}

/** One temperature-carrying dispatch and its chunk's token count (its params are rewritten when the temperature changes). */
export interface TemperatureDispatch {
  dispatch: Dispatch;
  N: number;
}

/** Returns the view of rows [first, first + count) of a (N, width) tensor of 4-byte values. */
function rowsOf(tensor: GPUTensor, first: number, count: number, width: number): GPUTensor {
  return { ...tensor, offset: tensor.offset + first * width * 4, size: count * width * 4 };
}

/**
 * Records the LM head over chunks of `rows` tokens: logits of the chunk, then either its log-probs
 * (no gradients) or the fused loss step and the products into dlnf and dweight. Returns the
 * dispatches whose params hold the temperature.
 */
export function recordChunkedLmHead(
  plan: KernelPlan,
  tensors: LmHeadTensors,
  gradients: LmHeadGradients | null,
  N: number,
  C: number,
  V: number,
  rows: number,
  temperature: number,
): TemperatureDispatch[] {
  const temperatureDispatches: TemperatureDispatch[] = [];
  for (let first = 0; first < N; first += rows) {
    const n = Math.min(rows, N - first);
    const lnf = rowsOf(tensors.lnf, first, n, C);
    const logits = rowsOf(tensors.chunk, 0, n, V);
    const targets = rowsOf(tensors.targets, first, n, 1);
    const logprobs = rowsOf(tensors.logprobs, first, n, 1);
    recordLogits(plan, logits, lnf, tensors.weight, tensors.columns, n, C, V);
    if (gradients === null) {
      temperatureDispatches.push({ dispatch: ops.logprobsForward(plan, logprobs, logits, targets, n, V, temperature), N: n });
      continue;
    }
    const entropy = rowsOf(tensors.entropy, first, n, 1);
    const dlogprobs = rowsOf(gradients.dlogprobs, first, n, 1);
    temperatureDispatches.push({ dispatch: logprobsBackwardInPlace(plan, logits, logprobs, entropy, dlogprobs, targets, n, V, temperature), N: n });
    const dlnf = rowsOf(gradients.dlnf, first, n, C);
    if (tensors.weight.length === 1) {
      ops.matmulBackward(plan, dlnf, gradients.dweight, null, logits, lnf, tensors.weight[0]!.tensor, n, C, V);
      continue;
    }
    // row chunks are frozen tables: only dlnf, accumulated chunk by chunk from the chunk's columns of dlogits
    if (gradients.dweight !== null) throw new Error('an LM head in row chunks is frozen: it has no weight gradient');
    for (const chunk of tensors.weight) {
      const block = rowsOf(tensors.columns!, 0, n, chunk.rows);
      ops.copyColumns(plan, block, logits, n, chunk.rows, { width: V, column: chunk.firstRow }, { width: chunk.rows, column: 0 });
      ops.matmulBackward(plan, dlnf, null, null, block, lnf, chunk.tensor, n, C, chunk.rows);
    }
  }
  return temperatureDispatches;
}
