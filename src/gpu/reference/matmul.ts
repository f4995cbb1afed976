/**
 * Linear layer as PyTorch's nn.Linear stores it: out = inp · weightᵀ + bias, weight (OC, IC).
 * CPU reference of `matmul_forward.wgsl` / `matmul_backward.wgsl`: three plain loops, float64 sums.
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
    for (let n = 0; n < N; n++) {
      for (let i = 0; i < IC; i++) {
        let sum = 0;
        for (let o = 0; o < OC; o++) sum += dout[n * OC + o]! * weight[o * IC + i]!;
        dinp[n * IC + i]! += sum;
      }
    }
  }
  if (dweight !== null) {
    for (let o = 0; o < OC; o++) {
      for (let i = 0; i < IC; i++) {
        let sum = 0;
        for (let n = 0; n < N; n++) sum += dout[n * OC + o]! * inp[n * IC + i]!;
        dweight[o * IC + i]! += sum;
      }
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
