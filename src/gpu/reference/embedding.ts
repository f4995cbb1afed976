/**
 * Token embedding: the CPU reference of `embedding_forward.wgsl` / `embedding_backward.wgsl`.
 * Plain loops over Float32Array, the oracle for the kernels; not fast, and not meant to be.
 */

/** Gathers one row of the embedding table per token: out[n,:] = wte[ids[n],:]. */
export function embeddingForward(
  out: Float32Array, // (N, C)
  ids: Int32Array, // (N)
  wte: Float32Array, // (V, C)
  N: number,
  C: number,
): void {
  for (let n = 0; n < N; n++) {
    const id = ids[n]!;
    const outRow = n * C;
    const wteRow = id * C;
    for (let c = 0; c < C; c++) out[outRow + c] = wte[wteRow + c]!;
  }
}

/** Scatter-adds each token's output gradient into its embedding row: dwte[ids[n],:] += dout[n,:]. */
export function embeddingBackward(
  dwte: Float32Array, // (V, C)
  dout: Float32Array, // (N, C)
  ids: Int32Array, // (N)
  N: number,
  C: number,
): void {
  for (let n = 0; n < N; n++) {
    const id = ids[n]!;
    const doutRow = n * C;
    const dwteRow = id * C;
    for (let c = 0; c < C; c++) dwte[dwteRow + c]! += dout[doutRow + c]!;
  }
}
