/**
 * Residual add, out = a + b, and its backward. CPU reference of `residual_forward.wgsl`.
 */

/** Computes out[i] = a[i] + b[i]. */
export function residualForward(
  out: Float32Array, // (N)
  a: Float32Array, // (N)
  b: Float32Array, // (N)
  N: number,
): void {
  for (let i = 0; i < N; i++) out[i] = a[i]! + b[i]!;
}

/** Accumulates dout into both da and db. */
export function residualBackward(
  da: Float32Array, // (N)
  db: Float32Array, // (N)
  dout: Float32Array, // (N)
  N: number,
): void {
  for (let i = 0; i < N; i++) {
    da[i]! += dout[i]!;
    db[i]! += dout[i]!;
  }
}
