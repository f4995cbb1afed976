/**
 * Linear layer as PyTorch's nn.Linear stores it: out = inp · weightᵀ + bias, weight (OC, IC).
 * CPU reference of `matmul_forward.wgsl` / `matmul_backward.wgsl`: plain loops, float64 sums (backward
 * walks contiguous rows so a CPU training run is usable; the sums keep the plain loops' order).
 */

/** Computes out[n,o] = Σ_i inp[n,i]·weight[o,i] + bias[o] (bias optional); overwrites out. */
export function matmulForward(
  out: Float32Array, // (N, OC)
  inp: Float32Array, // (N, IC)
  weight: Float32Array, // (OC, IC)
  bias: Float32Array | null, // (OC)
  N: number,
  IC: number,
  OC: number,
): void {
  for (let n = 0; n < N; n++) {
    const inpRow = n * IC;
    for (let o = 0; o < OC; o++) {
      const weightRow = o * IC;
      let sum = bias !== null ? bias[o]! : 0;
      for (let i = 0; i < IC; i++) sum += inp[inpRow + i]! * weight[weightRow + i]!;
      out[n * OC + o] = sum;
    }
  }
}

/**
 * Accumulates dinp += dout·weight, dweight += doutᵀ·inp and dbias += Σ_n dout; any of the three may be
 * null (a frozen base weight under LoRA still needs dinp but not dweight).
 */
export function matmulBackward(
  dinp: Float32Array | null, // (N, IC)
  dweight: Float32Array | null, // (OC, IC)
  dbias: Float32Array | null, // (OC)
  dout: Float32Array, // (N, OC)
  inp: Float32Array, // (N, IC)
  weight: Float32Array, // (OC, IC)
  N: number,
  IC: number,
  OC: number,
): void {
  if (dinp !== null) {
    // Row-wise over contiguous weight rows; each sum still runs over o in order, in float64 (same result as the plain loops).
    const sums = new Float64Array(IC);
    for (let n = 0; n < N; n++) {
      sums.fill(0);
      for (let o = 0; o < OC; o++) {
        const d = dout[n * OC + o]!;
        const weightRow = o * IC;
        for (let i = 0; i < IC; i++) sums[i]! += d * weight[weightRow + i]!;
      }
      const inpRow = n * IC;
      for (let i = 0; i < IC; i++) dinp[inpRow + i]! += sums[i]!;
    }
  }
  if (dweight !== null) {
    // Row-wise over contiguous input rows; each sum still runs over n in order, in float64.
    const sums = new Float64Array(IC);
    for (let o = 0; o < OC; o++) {
      sums.fill(0);
      for (let n = 0; n < N; n++) {
        const d = dout[n * OC + o]!;
        const inpRow = n * IC;
        for (let i = 0; i < IC; i++) sums[i]! += d * inp[inpRow + i]!;
      }
      const weightRow = o * IC;
      for (let i = 0; i < IC; i++) dweight[weightRow + i]! += sums[i]!;
    }
  }
  if (dbias !== null) {
    for (let o = 0; o < OC; o++) {
      let sum = 0;
      for (let n = 0; n < N; n++) sum += dout[n * OC + o]!;
      dbias[o]! += sum;
    }
  }
}
