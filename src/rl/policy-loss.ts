/**
 * The GRPO objective on a token batch, and its gradient with respect to each token's
 * log-probability. The model backend's backward pass computes the gradient of Σ wᵢ·logpᵢ, so
 * handing it wᵢ = ∂loss/∂logpᵢ (evaluated at the current weights) yields exactly ∂loss/∂θ.
 *
 * Per token i with advantage A, ratio rᵢ = exp(logpᵢ − old logpᵢ):
 *   lossᵢ = −min(rᵢ·A, clip(rᵢ, 1−ε_low, 1+ε_high)·A)            (PPO clipping, asymmetric as in DAPO)
 *         + β·(exp(refᵢ − logpᵢ) − (refᵢ − logpᵢ) − 1)              (k3 KL estimator to the reference policy)
 * With sequence-level importance sampling (GSPO, https://arxiv.org/abs/2507.18071) every token of a
 * row uses its sequence's ratio s = exp(mean over the row's loss tokens of (logp − old logp)) instead
 * of its own, so the gradient reaches every token of the row through s.
 * Aggregation: 'token' sums maskᵢ·lossᵢ and divides by Z (the step's loss tokens for DAPO, the
 * micro-batch's for BNPO, a constant for Dr. GRPO); 'sequence' takes each row's mean and divides the
 * sum of those by Z (the step's sequences: GRPO as in DeepSeekMath).
 * A `tokenMask` (high-entropy tokens only) removes tokens from the loss without changing Z.
 * ECHO adds λ·(mean negative log-likelihood of the environment's reply tokens) over `echoNormalizer` of them.
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
  /** Z: divide the summed token losses (or, with 'sequence' aggregation, the summed row means) by this. */
  normalizer: number;
  /** 'token' (default): Σ token losses / Z; 'sequence': Σ row means / Z. */
  aggregation?: 'token' | 'sequence';
  /** 'token' (default): PPO ratios per token; 'sequence': one length-normalised ratio per row (GSPO). */
  importanceSampling?: 'token' | 'sequence';
  /** (B*T) 0 where a loss token is left out of the loss but still counted by Z (entropy filtering); absent = all kept. */
  tokenMask?: Float32Array;
  /** λ of the ECHO loss on `batch.echoMask` tokens (default 0). */
  echoWeight?: number;
  /** Divide the ECHO tokens' summed negative log-likelihood by this (the step's ECHO tokens). */
  echoNormalizer?: number;
}

/** Loss, per-token backward weights, and diagnostics of one batch. */
export interface PolicyLossResult {
  /** The loss (its contribution, when Z counts the tokens of several micro-batches), ECHO term included. */
  loss: number;
  /** ∂loss/∂logprob per position (B*T); 0 where masked. */
  weights: Float32Array;
  /** Loss tokens whose ratio was clipped (gradient zero). */
  clippedTokens: number;
  /** Clipped loss tokens with a ratio below 1 − ε_low (and a negative advantage). */
  clippedLow: number;
  /** Clipped loss tokens with a ratio above 1 + ε_high (and a positive advantage). */
  clippedHigh: number;
  /** Σ mask·k3-KL over the batch (divide by loss tokens for the mean). */
  klSum: number;
  /** Σ mask·ratio (divide by loss tokens for the mean). */
  ratioSum: number;
  lossTokens: number;
  /** Σ −logp over the ECHO tokens (divide by echoTokens for their mean negative log-likelihood). */
  echoNllSum: number;
  echoTokens: number;
}

/** The clipped GRPO loss and its gradient weights; `logprobs` and `refLogprobs` are (B*T) at the current weights and the reference. */
export function grpoLoss(logprobs: Float32Array, batch: TrainBatch, options: PolicyLossOptions, refLogprobs?: Float32Array): PolicyLossResult {
  const clipLow = options.clipLow ?? 0.2;
  const clipHigh = options.clipHigh ?? 0.2;
  const beta = options.klBeta ?? 0;
  const Z = options.normalizer;
  const bySequence = options.aggregation === 'sequence';
  const sequenceRatios = options.importanceSampling === 'sequence';
  const echoWeight = options.echoWeight ?? 0;
  if (!(Z > 0)) throw new Error(`grpoLoss: the normalizer must be positive, got ${Z}`);
  if (beta !== 0 && !refLogprobs) throw new Error('grpoLoss: klBeta > 0 needs the reference log-probabilities');
  if (echoWeight !== 0 && !(options.echoNormalizer! > 0)) throw new Error('grpoLoss: echoWeight needs a positive echoNormalizer');
  const { B, T } = batch;
  const n = B * T;
  if (logprobs.length !== n) throw new Error(`grpoLoss: ${logprobs.length} log-probabilities for a batch of ${n} positions`);

  const weights = new Float32Array(n);
  const result: PolicyLossResult = { loss: 0, weights, clippedTokens: 0, clippedLow: 0, clippedHigh: 0, klSum: 0, ratioSum: 0, lossTokens: 0, echoNllSum: 0, echoTokens: 0 };
  for (let b = 0; b < B; b++) {
    const row = b * T;
    let rowTokens = 0;
    let rowLogRatio = 0;
    for (let t = 0; t < T; t++) {
      if (batch.lossMask[row + t] === 0) continue;
      rowTokens += 1;
      rowLogRatio += logprobs[row + t]! - batch.oldLogprobs[row + t]!;
    }
    if (rowTokens === 0) continue;
    // Each of the row's tokens weighs 1/Z, or 1/(rowTokens·Z) when rows are averaged first.
    const scale = bySequence ? 1 / (rowTokens * Z) : 1 / Z;
    const sequenceRatio = Math.exp(rowLogRatio / rowTokens);
    let keptScale = 0; // Σ scale over the row's kept tokens: how much the row's shared ratio weighs (GSPO)
    let sequenceClipped = false;
    let sequenceAdvantage = 0;
    for (let t = 0; t < T; t++) {
      const i = row + t;
      if (batch.lossMask[i] === 0) continue;
      result.lossTokens += 1;
      const advantage = batch.advantages[i]!;
      const ratio = sequenceRatios ? sequenceRatio : Math.exp(logprobs[i]! - batch.oldLogprobs[i]!);
      result.ratioSum += ratio;
      const kept = options.tokenMask ? options.tokenMask[i] !== 0 : true;
      const clippedRatio = Math.min(Math.max(ratio, 1 - clipLow), 1 + clipHigh);
      const unclippedObjective = ratio * advantage;
      const clippedObjective = clippedRatio * advantage;
      // min(unclipped, clipped): when the clipped term is strictly smaller it is a constant, with no gradient.
      const clipped = clippedObjective < unclippedObjective;
      if (clipped) {
        result.clippedTokens += 1;
        if (ratio < 1) result.clippedLow += 1;
        else result.clippedHigh += 1;
      }
      if (kept) {
        result.loss -= scale * (clipped ? clippedObjective : unclippedObjective);
        if (!clipped && !sequenceRatios) weights[i] = -scale * unclippedObjective; // ∂(−r·A)/∂logp = −r·A
        keptScale += scale;
      }
      sequenceClipped = clipped;
      sequenceAdvantage = advantage;
      if (beta !== 0) {
        const delta = refLogprobs![i]! - logprobs[i]!;
        const kl = Math.exp(delta) - delta - 1;
        result.klSum += kl;
        result.loss += scale * beta * kl;
        weights[i] = weights[i]! + scale * beta * (1 - Math.exp(delta)); // ∂kl/∂logp = −exp(δ) + 1
      }
    }
    if (sequenceRatios && !sequenceClipped) {
      // ∂(−Σ_kept scale·s·A)/∂logp_j = −s·A·(Σ_kept scale)/rowTokens for each of the row's loss tokens.
      const weight = (-sequenceRatio * sequenceAdvantage * keptScale) / rowTokens;
      for (let t = 0; t < T; t++) if (batch.lossMask[row + t] !== 0) weights[row + t] = weights[row + t]! + weight;
    }
  }
  if (batch.echoMask) {
    const echoScale = echoWeight !== 0 ? echoWeight / options.echoNormalizer! : 0;
    for (let i = 0; i < n; i++) {
      if (batch.echoMask[i] === 0) continue;
      result.echoTokens += 1;
      result.echoNllSum -= logprobs[i]!;
      if (echoScale !== 0) {
        result.loss -= echoScale * logprobs[i]!;
        weights[i] = weights[i]! - echoScale;
      }
    }
  }
  return result;
}

/** The entropy a token needs to be among the top `quantile` share of `entropies` (the ⌈q·n⌉-th largest); tokens at or above it are kept, so ties may keep a few more. */
export function entropyThreshold(entropies: readonly number[], quantile: number): number {
  if (!(quantile > 0 && quantile <= 1)) throw new Error(`entropyThreshold: the quantile must be in (0, 1], got ${quantile}`);
  if (entropies.length === 0) return Infinity;
  const sorted = [...entropies].sort((a, b) => b - a);
  return sorted[Math.ceil(quantile * sorted.length) - 1]!;
}

/** (B*T) 1 where a loss token's entropy reaches `threshold`, else 0 (the tokens the loss keeps under entropy filtering). */
export function entropyMask(batch: TrainBatch, threshold: number): Float32Array {
  if (!batch.entropies) throw new Error('entropyMask: the batch has no entropies');
  return batch.lossMask.map((mask, i) => (mask !== 0 && batch.entropies![i]! >= threshold ? 1 : 0));
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
