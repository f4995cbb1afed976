/**
 * The optimizer's reference: AdamW with decoupled weight decay and bias correction, exactly as
 * `torch.optim.AdamW` (https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html), one loop
 * like llm.c's `gpt2_update`; plus the global gradient norm and an in-place scale, which together
 * give clipping (`torch.nn.utils.clip_grad_norm_`) and gradient-accumulation averaging.
 */

/** Hyperparameters of one AdamW update, the one type the reference, the WebGPU op (`adamwParams`) and the backends' `step` share; step counts from 1. */
export interface AdamWHyperparameters {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  step: number;
}

/** Applies one AdamW step to params in place, updating the moments m and v. */
export function adamwUpdate(
  params: Float32Array, // (n)
  grads: Float32Array, // (n)
  m: Float32Array, // (n)
  v: Float32Array, // (n)
  n: number,
  { lr, beta1, beta2, eps, weightDecay, step }: AdamWHyperparameters,
): void {
  const biasCorrection1 = 1 - Math.pow(beta1, step);
  const biasCorrection2 = 1 - Math.pow(beta2, step);
  const stepSize = lr / biasCorrection1;
  const biasCorrection2Sqrt = Math.sqrt(biasCorrection2);
  for (let i = 0; i < n; i++) {
    const g = grads[i]!;
    const mi = beta1 * m[i]! + (1 - beta1) * g;
    const vi = beta2 * v[i]! + (1 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const decayed = params[i]! * (1 - lr * weightDecay);
    params[i] = decayed - (stepSize * mi) / (Math.sqrt(vi) / biasCorrection2Sqrt + eps);
  }
}

/** Returns the Euclidean norm of the first n gradient values, summed in float64. */
export function globalGradNorm(
  grads: Float32Array, // (n)
  n: number,
): number {
  let sumSquares = 0;
  for (let i = 0; i < n; i++) sumSquares += grads[i]! * grads[i]!;
  return Math.sqrt(sumSquares);
}

/** Multiplies the first n values of x by factor in place. */
export function scaleInPlace(
  x: Float32Array, // (n)
  n: number,
  factor: number,
): void {
  for (let i = 0; i < n; i++) x[i]! *= factor;
}

/** Returns the factor clip_grad_norm_ scales gradients by: min(1, maxNorm / (norm + 1e-6)); 1 when maxNorm ≤ 0. */
export function clipFactor(norm: number, maxNorm: number): number {
  if (maxNorm <= 0) return 1;
  return Math.min(1, maxNorm / (norm + 1e-6));
}
