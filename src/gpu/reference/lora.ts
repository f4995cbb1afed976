/**
 * LoRA (Hu et al. 2021) on a linear layer: y += (alpha/r)·(x·Aᵀ)·Bᵀ with A (r, IC), B (OC, r), the
 * base weight frozen; PEFT's layout and scaling. Built from the matmul reference; the hidden
 * x·Aᵀ (N, r) is saved by the forward for the backward.
 */
import { matmulBackward, matmulForward } from './matmul.ts';

/** Adds the low-rank update to out (which already holds the base layer's output) and saves hidden = inp·Aᵀ. */
export function loraForward(
  out: Float32Array, // (N, OC)
  hidden: Float32Array, // (N, r)
  inp: Float32Array, // (N, IC)
  loraA: Float32Array, // (r, IC)
  loraB: Float32Array, // (OC, r)
  N: number,
  IC: number,
  OC: number,
  rank: number,
  alpha: number,
): void {
  const scale = alpha / rank;
  matmulForward(hidden, inp, loraA, null, N, IC, rank);
  const delta = new Float32Array(N * OC); // (N, OC)
  matmulForward(delta, hidden, loraB, null, N, rank, OC);
  for (let i = 0; i < N * OC; i++) out[i]! += scale * delta[i]!;
}

/**
 * Accumulates the LoRA gradients into dloraA and dloraB and the input gradient into dinp (dinp may
 * be null); dhidden (N, r) is scratch, overwritten.
 */
export function loraBackward(
  dinp: Float32Array | null, // (N, IC)
  dloraA: Float32Array, // (r, IC)
  dloraB: Float32Array, // (OC, r)
  dhidden: Float32Array, // (N, r)
  dout: Float32Array, // (N, OC)
  inp: Float32Array, // (N, IC)
  hidden: Float32Array, // (N, r)
  loraA: Float32Array, // (r, IC)
  loraB: Float32Array, // (OC, r)
  N: number,
  IC: number,
  OC: number,
  rank: number,
  alpha: number,
): void {
  const scale = alpha / rank;
  const scaledDout = new Float32Array(N * OC); // (N, OC)
  for (let i = 0; i < N * OC; i++) scaledDout[i] = scale * dout[i]!;
  dhidden.fill(0, 0, N * rank);
  matmulBackward(dhidden, dloraB, null, scaledDout, hidden, loraB, N, rank, OC);
  matmulBackward(dinp, dloraA, null, dhidden, inp, loraA, N, IC, rank);
}
