/**
 * Token sampling: a seeded generator whose state is four 32-bit words (serialisable into a
 * checkpoint), and one draw from a row of logits with temperature, top-k and top-p, returning
 * the token and its log-probability.
 *
 * The reported log-probability is log_softmax(logits / T)[id] over the WHOLE vocabulary, before
 * top-k/top-p truncation, computed exactly as the reference `logprobsForward` does (float64 max
 * and sum, rounded to f32). That is what GRPO's old policy means: the trainer recomputes
 * `backend.logprobs(ids, targets, B, T, temperature)` with the same T and gets the same number,
 * so on-policy ratios are exactly 1 up to the logits' rounding when top-k/top-p are off. With
 * truncation on, the sample comes from the renormalised truncated distribution while the logprob
 * stays the untruncated one (the trainer has no notion of the truncation), as vLLM reports it.
 * Greedy decoding (T = 0) has a point-mass distribution; it reports the temperature-1 logprob, the
 * model's own, since log 1 = 0 would tell nothing.
 */

/** A xoshiro128** generator's state: four unsigned 32-bit words, not all zero. */
export type RngState = [number, number, number, number];

/** A seeded xoshiro128** generator (Blackman & Vigna 2018) with a serialisable state. */
export class Rng {
  private s: Uint32Array;

  /** Seeds the state from a number (any integer, or a float, which is hashed) through splitmix32. */
  constructor(seed: number | RngState = 0) {
    this.s = new Uint32Array(4);
    if (Array.isArray(seed)) {
      this.setState(seed);
      return;
    }
    let x = hashSeed(seed);
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.s[i] = (z ^ (z >>> 16)) >>> 0;
    }
    if (this.s.every((word) => word === 0)) this.s[0] = 1;
  }

  /** Returns the next 32 random bits as an unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1]! << 9) >>> 0;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }

  /** Returns a uniform number in [0, 1) with 53 random bits. */
  next(): number {
    const high = this.nextUint32() >>> 5; // 27 bits
    const low = this.nextUint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }

  /** Returns a copy of the state, to store in a checkpoint. */
  getState(): RngState {
    return [this.s[0]!, this.s[1]!, this.s[2]!, this.s[3]!];
  }

  /** Restores a state returned by getState. */
  setState(state: RngState): void {
    if (state.length !== 4 || state.some((word) => !Number.isInteger(word) || word < 0 || word > 0xffffffff) || state.every((word) => word === 0)) {
      throw new Error(`an Rng state is four unsigned 32-bit integers, not all zero; got ${JSON.stringify(state)}`);
    }
    this.s.set(state);
  }
}

/** Returns a generator for sample `index` of a request seeded with `seed`, so a sample does not depend on what it was batched with. */
export function sampleRng(seed: number, index: number): Rng {
  return new Rng((hashSeed(seed) ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Folds any finite number into 32 bits (integers keep their low 32 bits). */
function hashSeed(seed: number): number {
  if (!Number.isFinite(seed)) throw new Error(`seed must be a finite number, got ${seed}`);
  if (Number.isSafeInteger(seed)) return ((seed >>> 0) ^ (Math.floor(seed / 4294967296) >>> 0)) >>> 0;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, seed);
  return (view.getUint32(0) ^ Math.imul(view.getUint32(4), 0x9e3779b1)) >>> 0;
}

/** How one token is drawn: temperature (0 = greedy), top-k (0 = off) and top-p (1 = off). */
export interface SamplingParams {
  temperature: number;
  topK?: number;
  topP?: number;
  /**
   * Only ids below this are drawn (default: all V). Models often have more rows than their tokenizer
   * has tokens (padding); those ids cannot be decoded. Like top-k, it truncates what is drawn, not the
   * reported log-probability, which stays the full log-softmax.
   */
  sampleableIds?: number;
}

/** A drawn token and its log-probability (see the file comment for which distribution). */
export interface SampledToken {
  id: number;
  logprob: number;
}

/** Throws unless the parameters are in range: temperature ≥ 0, topK a non-negative integer, 0 < topP ≤ 1. */
export function checkSamplingParams({ temperature, topK = 0, topP = 1 }: SamplingParams): void {
  if (!(temperature >= 0) || !Number.isFinite(temperature)) throw new Error(`temperature must be a finite number ≥ 0, got ${temperature}`);
  if (!Number.isInteger(topK) || topK < 0) throw new Error(`top_k must be a non-negative integer (0 = off), got ${topK}`);
  if (!(topP > 0 && topP <= 1)) throw new Error(`top_p must be in (0, 1], got ${topP}`);
}

/** Returns log_softmax(row / temperature)[id], computed as the reference logprobsForward does (float64, rounded to f32). */
export function tokenLogprob(logits: Float32Array, offset: number, V: number, id: number, temperature: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[offset + v]! / temperature);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits[offset + v]! / temperature - max);
  return Math.fround(logits[offset + id]! / temperature - (max + Math.log(sum)));
}

/** Returns the index of the largest logit in one row (the lowest index on a tie). */
export function argmax(logits: Float32Array, offset: number, V: number): number {
  let best = 0;
  for (let v = 1; v < V; v++) if (logits[offset + v]! > logits[offset + best]!) best = v;
  return best;
}

/** Draws one token from the row logits[offset, offset + V) with params, using rng (not touched when greedy). */
export function sampleToken(logits: Float32Array, offset: number, V: number, params: SamplingParams, rng: Rng): SampledToken {
  const { temperature, topK = 0, topP = 1 } = params;
  const drawable = Math.min(V, params.sampleableIds ?? V);
  if (temperature === 0) {
    const id = argmax(logits, offset, drawable);
    return { id, logprob: tokenLogprob(logits, offset, V, id, 1) };
  }
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[offset + v]! / temperature);
  const weights = new Float64Array(V); // (V) unnormalised probabilities exp(z − max); 0 beyond `drawable`
  let fullTotal = 0;
  let total = 0; // of the drawable ids
  for (let v = 0; v < V; v++) {
    const weight = Math.exp(logits[offset + v]! / temperature - max);
    fullTotal += weight;
    if (v < drawable) {
      weights[v] = weight;
      total += weight;
    }
  }
  const logprobOf = (id: number): number => Math.fround(logits[offset + id]! / temperature - (max + Math.log(fullTotal)));

  if ((topK === 0 || topK >= V) && topP >= 1) {
    // Inverse CDF over the whole vocabulary, in id order.
    const target = rng.next() * total;
    let cumulative = 0;
    let last = 0;
    for (let v = 0; v < V; v++) {
      if (weights[v]! === 0) continue;
      cumulative += weights[v]!;
      last = v;
      if (target < cumulative) return { id: v, logprob: logprobOf(v) };
    }
    return { id: last, logprob: logprobOf(last) }; // rounding left target ≥ the final sum
  }

  // Truncation as Hugging Face applies it: temperature, then top-k, then top-p over the renormalised
  // top-k. Only the candidates are ranked: the top k, or for top-p alone a growing prefix of the
  // ranking (256 ids, then ×4) until it reaches the mass topP; never a sort of the whole vocabulary.
  const noTopK = topK === 0 || topK >= V;
  let order: Int32Array; // candidate ids, most likely first (ties: lower id first)
  let kept: number;
  let keptTotal: number;
  for (let m = noTopK ? Math.min(256, V) : topK; ; m = Math.min(V, 4 * m)) {
    order = topIds(weights, V, m);
    let candidatesTotal = 0;
    for (let i = 0; i < m; i++) candidatesTotal += weights[order[i]!]!;
    const mass = noTopK ? total : candidatesTotal; // what top-p is a fraction of
    kept = m;
    keptTotal = candidatesTotal;
    if (topP >= 1) break;
    // Smallest prefix whose probability reaches topP (always at least one token).
    let cumulative = 0;
    let found = false;
    for (let i = 0; i < m; i++) {
      cumulative += weights[order[i]!]!;
      if (cumulative >= topP * mass) {
        kept = i + 1;
        keptTotal = cumulative;
        found = true;
        break;
      }
    }
    if (found || !noTopK || m === V) break;
  }
  const target = rng.next() * keptTotal;
  let cumulative = 0;
  for (let i = 0; i < kept; i++) {
    const v = order[i]!;
    cumulative += weights[v]!;
    if (target < cumulative) return { id: v, logprob: logprobOf(v) };
  }
  const lastKept = order[kept - 1]!;
  return { id: lastKept, logprob: logprobOf(lastKept) };
}

/** Returns the ids of the m largest weights, largest first, ties broken by the lower id (a bounded heap, O(V log m)). */
export function topIds(weights: Float64Array, V: number, m: number): Int32Array {
  const heap = new Int32Array(m); // a min-heap of the m best so far: heap[0] is the worst of them
  let size = 0;
  const worse = (a: number, b: number): boolean => weights[a]! < weights[b]! || (weights[a] === weights[b] && a > b);
  const siftDown = (from: number): void => {
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < size && worse(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < size && worse(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  };
  for (let v = 0; v < V; v++) {
    if (size < m) {
      heap[size] = v;
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (worse(heap[0]!, v)) {
      heap[0] = v;
      siftDown(0);
    }
  }
  return heap.subarray(0, size).sort((a, b) => weights[b]! - weights[a]! || a - b);
}
