/**
 * Rotary position embedding (Su et al. 2021) in the rotate-half layout of Hugging Face Llama and Qwen:
 * the pairs are (x[i], x[i + HS/2]) for i < HS/2, rotated by angle positions[b,t]·theta^(-2i/HS).
 * This is the layout of `transformers`' `apply_rotary_pos_emb`, not the interleaved one of the Meta
 * reference code. CPU reference of `rope_forward.wgsl` / `rope_backward.wgsl`; angles in float64.
 */

/** Rotates every head of inp by its token's position: out = x·cos + rotate_half(x)·sin. */
export function ropeForward(
  out: Float32Array, // (B, T, NH, HS)
  inp: Float32Array, // (B, T, NH, HS)
  positions: Int32Array, // (B*T)
  B: number,
  T: number,
  NH: number,
  HS: number,
  theta: number,
): void {
  const half = HS / 2;
  for (let bt = 0; bt < B * T; bt++) {
    const position = positions[bt]!;
    for (let i = 0; i < half; i++) {
      const angle = position * Math.pow(theta, (-2 * i) / HS);
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      for (let h = 0; h < NH; h++) {
        const base = (bt * NH + h) * HS;
        const x1 = inp[base + i]!;
        const x2 = inp[base + i + half]!;
        out[base + i] = x1 * cos - x2 * sin;
        out[base + i + half] = x2 * cos + x1 * sin;
      }
    }
  }
}

/** Accumulates the gradient of ropeForward into dinp: the inverse rotation of dout (out of place). */
export function ropeBackward(
  dinp: Float32Array, // (B, T, NH, HS)
  dout: Float32Array, // (B, T, NH, HS)
  positions: Int32Array, // (B*T)
  B: number,
  T: number,
  NH: number,
  HS: number,
  theta: number,
): void {
  const half = HS / 2;
  for (let bt = 0; bt < B * T; bt++) {
    const position = positions[bt]!;
    for (let i = 0; i < half; i++) {
      const angle = position * Math.pow(theta, (-2 * i) / HS);
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      for (let h = 0; h < NH; h++) {
        const base = (bt * NH + h) * HS;
        const g1 = dout[base + i]!;
        const g2 = dout[base + i + half]!;
        dinp[base + i]! += g1 * cos + g2 * sin;
        dinp[base + i + half]! += g2 * cos - g1 * sin;
      }
    }
  }
}
