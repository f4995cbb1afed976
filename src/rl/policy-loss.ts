/**
 * The GRPO objective on a token batch, and its gradient with respect to each token's
 * log-probability. The model backend's backward pass computes the gradient of Σ wᵢ·logpᵢ, so
 * handing it wᵢ = ∂loss/∂logpᵢ (evaluated at the current weights) yields exactly ∂loss/∂θ.
 *
 * Per token i with advantage A, ratio rᵢ = exp(logpᵢ − old logpᵢ):
 *   lossᵢ = −min(rᵢ·A, clip(rᵢ, 1−ε_low, 1+ε_high)·A)            (PPO clipping, asymmetric as in DAPO)
 *         + β·(exp(refᵢ − logpᵢ) − (refᵢ − logpᵢ) − 1)              (k3 KL estimator to the reference policy)
 *   loss  = Σ maskᵢ·lossᵢ / Z, with Z the number of loss tokens ("token-mean") or a constant (Dr. GRPO).
 * SFT is the same backward with wᵢ = −maskᵢ / Z (mean negative log-likelihood).
 */
import type { TrainBatch } from './token-batch.ts';

/** Options of the clipped policy-gradient loss. */
export interface PolicyLossOptions {
  /** Lower clip ε: ratios below 1 − ε stop pushing down (default 0.2). */
  clipLow?: number;
  /** Upper clip ε: ratios above 1 + ε stop pushing up (default 0.2; DAPO uses 0.28). */
  clipHigh?: number;
  /** KL coefficient β to the reference policy (default 0: no reference needed). */
  klBeta?: number;
  /** Z: divide the summed token losses by this (token-mean: the step's loss tokens; Dr. GRPO: a constant). */
  normalizer: number;
}

/** Loss, per-token backward weights, and diagnostics of one batch. */
export interface PolicyLossResult {
  /** The loss (its contribution, when Z counts the tokens of several micro-batches). */
  loss: number;
  /** ∂loss/∂logprob per position (B*T); 0 where masked. */
  weights: Float32Array;
  /** Loss tokens whose ratio was clipped (gradient zero). */
  clippedTokens: number;
  /** Σ mask·k3-KL over the batch (divide by loss tokens for the mean). */
  klSum: number;
  /** Σ mask·ratio (divide by loss tokens for the mean). */
  ratioSum: number;
  lossTokens: number;
}

/** The clipped GRPO loss and its gradient weights; `logprobs` and `refLogprobs` are (B*T) at the current weights and the reference. */
export function grpoLoss(logprobs: Float32Array, batch: TrainBatch, options: PolicyLossOptions, refLogprobs?: Float32Array): PolicyLossResult {
  const clipLow = options.clipLow ?? 0.2;
  const clipHigh = options.clipHigh ?? 0.2;
  const beta = options.klBeta ?? 0;
  const Z = options.normalizer;
  if (!(Z > 0)) throw new Error(`grpoLoss: the normalizer must be positive, got ${Z}`);
  if (beta !== 0 && !refLogprobs) throw new Error('grpoLoss: klBeta > 0 needs the reference log-probabilities');
  const n = batch.B * batch.T;
  if (logprobs.length !== n) throw new Error(`grpoLoss: ${logprobs.length} log-probabilities for a batch of ${n} positions`);

  const weights = new Float32Array(n);
  let loss = 0;
  let clippedTokens = 0;
  let klSum = 0;
  let ratioSum = 0;
  let lossTokens = 0;
  for (let i = 0; i < n; i++) {
    if (batch.lossMask[i] === 0) continue;
    lossTokens += 1;
    const advantage = batch.advantages[i]!;
    const ratio = Math.exp(logprobs[i]! - batch.oldLogprobs[i]!);
    const clippedRatio = Math.min(Math.max(ratio, 1 - clipLow), 1 + clipHigh);
    const unclippedObjective = ratio * advantage;
    const clippedObjective = clippedRatio * advantage;
    ratioSum += ratio;
    // min(unclipped, clipped): when the clipped term is strictly smaller it is a constant, with no gradient.
    if (clippedObjective < unclippedObjective) {
      loss -= clippedObjective;
      clippedTokens += 1;
    } else {
      loss -= unclippedObjective;
      weights[i] = -unclippedObjective; // ∂(−r·A)/∂logp = −r·A
    }
    if (beta !== 0) {
      const delta = refLogprobs![i]! - logprobs[i]!;
      const kl = Math.exp(delta) - delta - 1;
      klSum += kl;
      loss += beta * kl;
      weights[i] = weights[i]! + beta * (1 - Math.exp(delta)); // ∂kl/∂logp = −exp(δ) + 1
    }
  }
  for (let i = 0; i < n; i++) weights[i] = weights[i]! / Z;
  return { loss: loss / Z, weights, clippedTokens, klSum, ratioSum, lossTokens };
}

/** SFT backward weights: −mask/Z, so that Σ w·logp = −(mean log-likelihood of the masked tokens). */
export function sftWeights(lossMask: Float32Array, normalizer: number): Float32Array {
  if (!(normalizer > 0)) throw new Error(`sftWeights: the normalizer must be positive, got ${normalizer}`);
  return lossMask.map((mask) => -mask / normalizer);
}

/** Mean negative log-likelihood of the masked tokens (the SFT loss). */
export function sftLoss(logprobs: Float32Array, lossMask: Float32Array, normalizer: number): number {
  let sum = 0;
  for (let i = 0; i < logprobs.length; i++) sum -= lossMask[i]! * logprobs[i]!;
  return sum / normalizer;
}
