/**
 * RMSNorm (Zhang & Sennrich 2019), as Llama and Qwen use it: y = x / sqrt(mean(x²) + eps) · w.
 * Used for the layer norms (N = B*T, C = C) and for Qwen3's per-head q/k norm (N = B*T*NH, C = HS).
 * CPU reference of `rmsnorm_forward.wgsl` / `rmsnorm_backward.wgsl`; sums are kept in float64.
 */

/** Normalises each row of inp by its root mean square and scales by weight; saves 1/rms per row. */
export function rmsnormForward(
  out: Float32Array, // (N, C)
  rstd: Float32Array, // (N)
  inp: Float32Array, // (N, C)
  weight: Float32Array, // (C)
  N: number,
  C: number,
  eps: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    let sumSquares = 0;
    for (let c = 0; c < C; c++) {
      const x = inp[row + c]!;
      sumSquares += x * x;
    }
    const s = 1 / Math.sqrt(sumSquares / C + eps);
    for (let c = 0; c < C; c++) out[row + c] = inp[row + c]! * s * weight[c]!;
    rstd[n] = s;
  }
}

/** Accumulates the gradients of rmsnormForward into dinp and dweight (dweight may be null when frozen). */
export function rmsnormBackward(
  dinp: Float32Array, // (N, C)
  dweight: Float32Array | null, // (C)
  dout: Float32Array, // (N, C)
  inp: Float32Array, // (N, C)
  weight: Float32Array, // (C)
  rstd: Float32Array, // (N)
  N: number,
  C: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    const s = rstd[n]!;
    // y_c = x_c·s·w_c with s = (mean(x²)+eps)^(-1/2), so ds/dx_c = -s³·x_c/C
    let dotDoutWeightInp = 0; // Σ_c dout_c·w_c·x_c
    for (let c = 0; c < C; c++) dotDoutWeightInp += dout[row + c]! * weight[c]! * inp[row + c]!;
    const correction = (s * s * s * dotDoutWeightInp) / C;
    for (let c = 0; c < C; c++) {
      const x = inp[row + c]!;
      const g = dout[row + c]!;
      dinp[row + c]! += g * weight[c]! * s - x * correction;
      if (dweight !== null) dweight[c]! += g * x * s;
    }
  }
}
