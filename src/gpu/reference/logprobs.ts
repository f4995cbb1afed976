/**
 * The LM-head loss family: log-softmax at a temperature with a gather of the target token
 * (what GRPO and SFT need), cross-entropy (the same at temperature 1, negated) and the entropy of
 * the sampling distribution (a GRPO metric). Targets must lie in [0, V); masking is done by the
 * caller's per-token weights, not here. CPU reference of `logprobs_forward.wgsl` /
 * `logprobs_backward.wgsl`; every reduction is in float64.
 */

/** Returns log Σ_v exp(row[v]/temperature) for one row of logits, in float64. */
function logSumExp(logits: Float32Array, row: number, V: number, temperature: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row + v]! / temperature);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits[row + v]! / temperature - max);
  return max + Math.log(sum);
}

/** Computes logprobs[n] = log_softmax(logits[n,:]/temperature)[targets[n]]. */
export function logprobsForward(
  logprobs: Float32Array, // (N)
  logits: Float32Array, // (N, V)
  targets: Int32Array, // (N)
  N: number,
  V: number,
  temperature: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * V;
    logprobs[n] = logits[row + targets[n]!]! / temperature - logSumExp(logits, row, V, temperature);
  }
}

/** Accumulates dlogits[n,v] += dlogprobs[n]·(onehot(targets[n])[v] − softmax(logits[n,:]/temperature)[v]) / temperature. */
export function logprobsBackward(
  dlogits: Float32Array, // (N, V)
  dlogprobs: Float32Array, // (N)
  logits: Float32Array, // (N, V)
  targets: Int32Array, // (N)
  N: number,
  V: number,
  temperature: number,
): void {
  for (let n = 0; n < N; n++) {
    const g = dlogprobs[n]!;
    if (g === 0) continue;
    const row = n * V;
    const lse = logSumExp(logits, row, V, temperature);
    const target = targets[n]!;
    for (let v = 0; v < V; v++) {
      const p = Math.exp(logits[row + v]! / temperature - lse);
      dlogits[row + v]! += (g * ((v === target ? 1 : 0) - p)) / temperature;
    }
  }
}

/** Computes losses[n] = −log_softmax(logits[n,:])[targets[n]], the cross-entropy at temperature 1. */
export function crossEntropyForward(
  losses: Float32Array, // (N)
  logits: Float32Array, // (N, V)
  targets: Int32Array, // (N)
  N: number,
  V: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * V;
    losses[n] = logSumExp(logits, row, V, 1) - logits[row + targets[n]!]!;
  }
}

/** Computes entropy[n] = −Σ_v p_v·log p_v with p = softmax(logits[n,:]/temperature). */
export function entropyForward(
  entropy: Float32Array, // (N)
  logits: Float32Array, // (N, V)
  N: number,
  V: number,
  temperature: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * V;
    const lse = logSumExp(logits, row, V, temperature);
    // H = lse − Σ p·z with z = logits/temperature
    let expectedLogit = 0;
    for (let v = 0; v < V; v++) {
      const z = logits[row + v]! / temperature;
      expectedLogit += Math.exp(z - lse) * z;
    }
    entropy[n] = lse - expectedLogit;
  }
}

/**
 * Reference of `logprobs_backward_in_place.wgsl`: writes logprobs[n] and entropy[n] of each row, then
 * overwrites logits[n,:] with dlogprobs[n]·(onehot(targets[n]) − softmax(logits[n,:]/temperature)) /
 * temperature (zeros where dlogprobs[n] is 0): one chunk of the LM head's fused loss and gradient.
 */
export function logprobsBackwardInPlace(
  logits: Float32Array, // (N, V) in, dlogits out
  logprobs: Float32Array, // (N)
  entropy: Float32Array, // (N)
  dlogprobs: Float32Array, // (N)
  targets: Int32Array, // (N)
  N: number,
  V: number,
  temperature: number,
): void {
  logprobsForward(logprobs, logits, targets, N, V, temperature);
  entropyForward(entropy, logits, N, V, temperature);
  const dlogits = new Float32Array(N * V);
  logprobsBackward(dlogits, dlogprobs, logits, targets, N, V, temperature);
  logits.set(dlogits);
}
