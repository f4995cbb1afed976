/**
 * SwiGLU (Shazeer 2020), the gate of the Llama MLP: out = silu(gate)·up, silu(x) = x·sigmoid(x),
 * elementwise over N = B*T*I values. CPU reference of `swiglu_forward.wgsl` / `swiglu_backward.wgsl`.
 */

/** Computes out[i] = silu(gate[i])·up[i]. */
export function swigluForward(
  out: Float32Array, // (N)
  gate: Float32Array, // (N)
  up: Float32Array, // (N)
  N: number,
): void {
  for (let i = 0; i < N; i++) {
    const g = gate[i]!;
    out[i] = (g / (1 + Math.exp(-g))) * up[i]!;
  }
}

/** Accumulates the gradients of swigluForward into dgate and dup. */
export function swigluBackward(
  dgate: Float32Array, // (N)
  dup: Float32Array, // (N)
  dout: Float32Array, // (N)
  gate: Float32Array, // (N)
  up: Float32Array, // (N)
  N: number,
): void {
  for (let i = 0; i < N; i++) {
    const g = gate[i]!;
    const sigmoid = 1 / (1 + Math.exp(-g));
    const silu = g * sigmoid;
    // d silu / dg = sigmoid·(1 + g·(1 − sigmoid))
    dgate[i]! += dout[i]! * up[i]! * sigmoid * (1 + g * (1 - sigmoid));
    dup[i]! += dout[i]! * silu;
  }
}
