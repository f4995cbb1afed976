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
  // Four outputs at a time share each input load; every sum still runs over i in order, in float64
  // (the same result as one output at a time).
  const OC4 = OC - (OC % 4);
  for (let n = 0; n < N; n++) {
    const inpRow = n * IC;
    const outRow = n * OC;
    for (let o = 0; o < OC4; o += 4) {
      const w0 = o * IC;
      const w1 = w0 + IC;
      const w2 = w1 + IC;
      const w3 = w2 + IC;
      let s0 = bias !== null ? bias[o]! : 0;
      let s1 = bias !== null ? bias[o + 1]! : 0;
      let s2 = bias !== null ? bias[o + 2]! : 0;
      let s3 = bias !== null ? bias[o + 3]! : 0;
      for (let i = 0; i < IC; i++) {
        const x = inp[inpRow + i]!;
        s0 += x * weight[w0 + i]!;
        s1 += x * weight[w1 + i]!;
        s2 += x * weight[w2 + i]!;
        s3 += x * weight[w3 + i]!;
      }
      out[outRow + o] = s0;
      out[outRow + o + 1] = s1;
      out[outRow + o + 2] = s2;
      out[outRow + o + 3] = s3;
    }
    for (let o = OC4; o < OC; o++) {
      const weightRow = o * IC;
      let sum = bias !== null ? bias[o]! : 0;
      for (let i = 0; i < IC; i++) sum += inp[inpRow + i]! * weight[weightRow + i]!;
      out[outRow + o] = sum;
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
      const doutRow = n * OC;
      let o = 0;
      // Four weight rows per pass over sums: the same additions in the same order, fewer loads and stores.
      for (; o + 4 <= OC; o += 4) {
        const d0 = dout[doutRow + o]!;
        const d1 = dout[doutRow + o + 1]!;
        const d2 = dout[doutRow + o + 2]!;
        const d3 = dout[doutRow + o + 3]!;
        const w0 = o * IC;
        const w1 = w0 + IC;
        const w2 = w1 + IC;
        const w3 = w2 + IC;
        for (let i = 0; i < IC; i++) {
          let s = sums[i]!;
          s += d0 * weight[w0 + i]!;
          s += d1 * weight[w1 + i]!;
          s += d2 * weight[w2 + i]!;
          s += d3 * weight[w3 + i]!;
          sums[i] = s;
        }
      }
      for (; o < OC; o++) {
        const d = dout[doutRow + o]!;
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
      let n = 0;
      // Four input rows per pass over sums: the same additions in the same order.
      for (; n + 4 <= N; n += 4) {
        const d0 = dout[n * OC + o]!;
        const d1 = dout[(n + 1) * OC + o]!;
        const d2 = dout[(n + 2) * OC + o]!;
        const d3 = dout[(n + 3) * OC + o]!;
        const r0 = n * IC;
        const r1 = r0 + IC;
        const r2 = r1 + IC;
        const r3 = r2 + IC;
        for (let i = 0; i < IC; i++) {
          let s = sums[i]!;
          s += d0 * inp[r0 + i]!;
          s += d1 * inp[r1 + i]!;
          s += d2 * inp[r2 + i]!;
          s += d3 * inp[r3 + i]!;
          sums[i] = s;
        }
      }
      for (; n < N; n++) {
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
