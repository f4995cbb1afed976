// The sampler: a reproducible generator with a serialisable state, greedy decoding, and draws
// whose frequencies and reported log-probabilities follow softmax(logits / T), with and without
// top-k / top-p truncation.
import { describe, expect, test } from 'vitest';
import { logprobsForward } from '../../../src/gpu/reference/index.ts';
import { argmax, checkSamplingParams, Rng, sampleRng, sampleToken, tokenLogprob } from '../../../src/gpu/inference/sampler.ts';
import { seededUniform } from '../../support/expect-close.ts';

function softmax(logits: number[], T: number): number[] {
  const z = logits.map((x) => x / T);
  const max = Math.max(...z);
  const e = z.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

describe('Rng', () => {
  test('a seed reproduces the stream; getState/setState resume it exactly', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const first = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(first);
    expect(new Rng(43).next()).not.toBe(first[0]);
    const state = a.getState();
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    const resumed = new Rng(state);
    expect(Array.from({ length: 5 }, () => resumed.next())).toEqual(Array.from({ length: 5 }, () => a.next()));
    expect(() => new Rng([0, 0, 0, 0])).toThrow(/not all zero/);
  });

  test('uniform in [0, 1) with mean ½; per-sample generators differ by index', () => {
    const rng = new Rng(7);
    let sum = 0;
    let outside = 0;
    for (let i = 0; i < 20000; i++) {
      const x = rng.next();
      if (!(x >= 0 && x < 1)) outside++;
      sum += x;
    }
    expect(outside).toBe(0);
    expect(Math.abs(sum / 20000 - 0.5)).toBeLessThan(0.01);
    expect(sampleRng(1, 0).next()).toBe(sampleRng(1, 0).next());
    expect(sampleRng(1, 0).next()).not.toBe(sampleRng(1, 1).next());
  });
});

describe('sampleToken', () => {
  const uniform = seededUniform(3);
  const V = 37;
  const logits = Float32Array.from({ length: 2 * V }, () => 4 * (uniform() - 0.5)); // two rows

  test('log-probabilities equal the reference logprobsForward at the same temperature, bit for bit', () => {
    for (const T of [0.3, 0.7, 1, 1.6]) {
      const targets = Int32Array.from([5, 30]);
      const expected = new Float32Array(2);
      logprobsForward(expected, logits, targets, 2, V, T);
      expect([tokenLogprob(logits, 0, V, 5, T), tokenLogprob(logits, V, V, 30, T)]).toEqual([...expected]);
      const rng = new Rng(1);
      for (let i = 0; i < 20; i++) {
        const { id, logprob } = sampleToken(logits, V, V, { temperature: T }, rng);
        const single = new Float32Array(1);
        logprobsForward(single, logits.subarray(V), Int32Array.from([id]), 1, V, T);
        expect(logprob).toBe(single[0]);
      }
    }
  });

  test('temperature 0 is argmax, reports the temperature-1 logprob and draws nothing', () => {
    const rng = new Rng(5);
    const before = rng.getState();
    const { id, logprob } = sampleToken(logits, 0, V, { temperature: 0 }, rng);
    expect(id).toBe(argmax(logits, 0, V));
    expect(logprob).toBe(tokenLogprob(logits, 0, V, id, 1));
    expect(rng.getState()).toEqual(before);
  });

  test('draw frequencies follow softmax(logits / T)', () => {
    const row = [1, 0.5, -0.3, 2, 0];
    const probs = softmax(row, 0.8);
    const counts = new Array(row.length).fill(0);
    const rng = new Rng(11);
    const draws = 40000;
    for (let i = 0; i < draws; i++) counts[sampleToken(Float32Array.from(row), 0, row.length, { temperature: 0.8 }, rng).id]++;
    counts.forEach((count, v) => expect(Math.abs(count / draws - probs[v]!)).toBeLessThan(0.01));
  });

  test('top-k and top-p keep only the most likely tokens, renormalised; the logprob stays untruncated', () => {
    const row = Float32Array.from([1, 0.5, -0.3, 2, 0]); // order by probability: 3, 0, 1, 4, 2
    const probs = softmax([...row], 1); // ≈ [0.201, 0.122, 0.055, 0.547, 0.074]
    const rng = new Rng(2);
    const seen = (params: { temperature: number; topK?: number; topP?: number }) => {
      const counts = new Map<number, number>();
      let truncatedLogprobs = 0;
      for (let i = 0; i < 4000; i++) {
        const { id, logprob } = sampleToken(row, 0, 5, params, rng);
        if (logprob !== tokenLogprob(row, 0, 5, id, params.temperature)) truncatedLogprobs++;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      expect(truncatedLogprobs).toBe(0);
      return counts;
    };
    expect([...seen({ temperature: 1, topK: 2 }).keys()].sort()).toEqual([0, 3]);
    const topK2 = seen({ temperature: 1, topK: 2 });
    expect(Math.abs(topK2.get(3)! / 4000 - probs[3]! / (probs[3]! + probs[0]!))).toBeLessThan(0.03);
    // top-p 0.7: 0.547 < 0.7 ≤ 0.547 + 0.201, so tokens 3 and 0; top-p 0.8 needs token 1 too
    expect([...seen({ temperature: 1, topP: 0.7 }).keys()].sort()).toEqual([0, 3]);
    expect([...seen({ temperature: 1, topP: 0.8 }).keys()].sort()).toEqual([0, 1, 3]);
    expect([...seen({ temperature: 1, topP: 0.5 }).keys()]).toEqual([3]);
    expect([...seen({ temperature: 1, topK: 3, topP: 0.99 }).keys()].sort()).toEqual([0, 1, 3]);
  });

  test('truncation over a large vocabulary equals a full sort (the candidates-only ranking changes nothing)', () => {
    const big = 3000;
    const u = seededUniform(8);
    const row = Float32Array.from({ length: big }, () => 6 * (u() - 0.5));
    row[17] = row[18]!; // a tie, broken by the lower id
    /** Hugging Face order over a full sort: temperature, top-k, top-p over the renormalised top-k. */
    const naive = (params: { temperature: number; topK: number; topP: number }, rng: Rng): number => {
      const w = Array.from(row, (x) => Math.exp(x / params.temperature));
      const order = w.map((_, v) => v).sort((a, b) => w[b]! - w[a]! || a - b);
      const k = params.topK > 0 ? Math.min(params.topK, big) : big;
      const mass = params.topK > 0 && params.topK < big ? order.slice(0, k).reduce((sum, v) => sum + w[v]!, 0) : w.reduce((a, b) => a + b, 0);
      let kept = k;
      let cumulative = 0;
      for (let i = 0; i < k; i++) {
        cumulative += w[order[i]!]!;
        if (params.topP < 1 && cumulative >= params.topP * mass) {
          kept = i + 1;
          break;
        }
      }
      const keptTotal = order.slice(0, kept).reduce((sum, v) => sum + w[v]!, 0);
      const target = rng.next() * keptTotal;
      let c = 0;
      for (let i = 0; i < kept; i++) if (target < (c += w[order[i]!]!)) return order[i]!;
      return order[kept - 1]!;
    };
    for (const params of [
      { temperature: 1, topK: 40, topP: 1 },
      { temperature: 0.7, topK: 0, topP: 0.9 },
      { temperature: 1.3, topK: 0, topP: 0.999 },
      { temperature: 1, topK: 500, topP: 0.5 },
      { temperature: 1, topK: big, topP: 0.95 },
    ]) {
      const a = new Rng(4);
      const b = new Rng(4);
      const ours = Array.from({ length: 50 }, () => sampleToken(row, 0, big, params, a).id);
      const theirs = Array.from({ length: 50 }, () => naive(params, b));
      let mismatches = 0;
      ours.forEach((id, i) => (mismatches += id === theirs[i] ? 0 : 1));
      expect(mismatches, JSON.stringify(params)).toBe(0);
    }
  });

  test('a seeded generator reproduces a sequence of draws', () => {
    const draw = (seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 30 }, () => sampleToken(logits, 0, V, { temperature: 1, topP: 0.9 }, rng).id);
    };
    expect(draw(9)).toEqual(draw(9));
    expect(draw(9)).not.toEqual(draw(10));
  });

  test('rejects out-of-range parameters', () => {
    expect(() => checkSamplingParams({ temperature: -1 })).toThrow(/temperature/);
    expect(() => checkSamplingParams({ temperature: 1, topK: 1.5 })).toThrow(/top_k/);
    expect(() => checkSamplingParams({ temperature: 1, topP: 0 })).toThrow(/top_p/);
    expect(() => checkSamplingParams({ temperature: 1, topK: 0, topP: 1 })).not.toThrow();
  });
});

describe('sampleableIds', () => {
  test('ids past the tokenizer vocabulary are never drawn, and the logprob stays the full log-softmax', () => {
    // The padded ids 3 and 4 hold almost all the probability mass; only 0..2 may be drawn.
    const logits = Float32Array.from([0, 1, 0.5, 9, 9]);
    const rng = sampleRng(7, 0);
    for (let i = 0; i < 200; i++) {
      const { id, logprob } = sampleToken(logits, 0, 5, { temperature: 1, sampleableIds: 3 }, rng);
      expect(id).toBeLessThan(3);
      expect(logprob).toBe(tokenLogprob(logits, 0, 5, id, 1));
    }
    expect(sampleToken(logits, 0, 5, { temperature: 0, sampleableIds: 3 }, rng).id).toBe(1);
    expect(sampleToken(logits, 0, 5, { temperature: 1, topK: 2, sampleableIds: 3 }, rng).id).toBeLessThan(3);
  });
});
