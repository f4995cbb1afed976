/**
 * CPU reference of `sample_tokens.wgsl`: one token per draw from a row of logits with temperature,
 * top-k and top-p (Hugging Face order) or greedily, ids at or past `drawable` never drawn. It keeps
 * exactly the ids `sampleToken` (src/gpu/inference/sampler.ts) keeps, with the same weights, so the
 * two draw from the same distribution; the kernel (and this reference) map the uniform to a token by
 * walking the kept ids in id order, where `sampleToken` walks them most likely first, so one uniform
 * gives the same token only when nothing is truncated. Float64 throughout.
 */

/** One draw: which logits row, how to sample, and the uniform in [0, 1) that picks the token. */
export interface TokenDraw {
  row: number;
  /** 0 = greedy. */
  temperature: number;
  /** 0 = off. */
  topK: number;
  /** 1 = off. */
  topP: number;
  /** Ids below this may be drawn. */
  drawable: number;
  uniform: number;
}

/** What a draw gives: the token, its log-probability and the row's entropy (sampler.ts's definitions), and the uniforms that give this token. */
export interface DrawnToken {
  id: number;
  /** log_softmax(logits / T)[id] over the whole row (T = 1 when greedy). */
  logprob: number;
  /** Entropy of softmax(logits / T) over the whole row (T = 1 when greedy). */
  entropy: number;
  /** The uniforms in [low, high) draw this id (greedy: [0, 1)); a kernel may differ from the reference only near these ends. */
  low: number;
  high: number;
}

/** Draws one token per draw from logits (rows, V) as sample_tokens.wgsl does; see the file comment. */
export function sampleTokens(logits: Float32Array, V: number, draws: readonly TokenDraw[]): DrawnToken[] {
  return draws.map((draw) => sampleOne(logits, draw.row * V, V, draw));
}

function sampleOne(logits: Float32Array, offset: number, V: number, draw: TokenDraw): DrawnToken {
  const greedy = draw.temperature === 0;
  const T = greedy ? 1 : draw.temperature;
  const drawable = Math.min(V, draw.drawable);
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[offset + v]! / T);
  const weights = new Float64Array(V); // exp(z − max)
  let total = 0;
  let totalZ = 0;
  for (let v = 0; v < V; v++) {
    const y = logits[offset + v]! / T - max;
    weights[v] = Math.exp(y);
    total += weights[v]!;
    totalZ += weights[v]! * y;
  }
  const logZ = max + Math.log(total);
  const entropy = Math.log(total) - totalZ / total;
  const result = (id: number, low: number, high: number): DrawnToken => ({ id, logprob: logits[offset + id]! / T - logZ, entropy, low, high });
  if (greedy) {
    let best = 0;
    for (let v = 1; v < drawable; v++) if (logits[offset + v]! > logits[offset + best]!) best = v;
    return result(best, 0, 1);
  }

  const keptIds = keptTokenIds(logits, offset, { ...draw, drawable }, weights);
  let keptTotal = 0;
  for (const v of keptIds) keptTotal += weights[v]!;
  const target = draw.uniform * keptTotal;
  let cumulative = 0;
  for (const v of keptIds) {
    const start = cumulative;
    cumulative += weights[v]!;
    if (target < cumulative) return result(v, start / keptTotal, cumulative / keptTotal);
  }
  const last = keptIds[keptIds.length - 1]!;
  return result(last, (keptTotal - weights[last]!) / keptTotal, 1);
}

/**
 * Returns the ids a non-greedy draw may pick, ascending: the drawable ids most likely first (ties by
 * the lower id), the first topK of them, then the smallest prefix whose weight reaches topP of theirs.
 * `weights` (V) are exp(logit/T − max); without them they are computed.
 */
export function keptTokenIds(logits: Float32Array, offset: number, draw: Omit<TokenDraw, 'row' | 'uniform'>, weights?: Float64Array): number[] {
  const drawable = draw.drawable;
  let w = weights;
  if (w === undefined) {
    let max = -Infinity;
    for (let v = 0; v < drawable; v++) max = Math.max(max, logits[offset + v]! / draw.temperature);
    w = Float64Array.from({ length: drawable }, (_, v) => Math.exp(logits[offset + v]! / draw.temperature - max));
  }
  const order = Array.from({ length: drawable }, (_, v) => v).sort((a, b) => logits[offset + b]! - logits[offset + a]! || a - b);
  let kept = draw.topK > 0 && draw.topK < drawable ? draw.topK : drawable;
  if (draw.topP < 1) {
    let mass = 0;
    for (let i = 0; i < kept; i++) mass += w[order[i]!]!;
    let cumulative = 0;
    for (let i = 0; i < kept; i++) {
      cumulative += w[order[i]!]!;
      if (cumulative >= draw.topP * mass) {
        kept = i + 1;
        break;
      }
    }
  }
  return order.slice(0, kept).sort((a, b) => a - b);
}
