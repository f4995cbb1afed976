import { describe, expect, test } from 'vitest';
import { entropyMask, entropyThreshold, grpoLoss, sftLoss, sftWeights } from '../../../src/rl/policy-loss.ts';
import { lossNormalizer } from '../../../src/rl/grpo-trainer.ts';
import { buildTrainBatch, buildTrainSequence, type TrainBatch } from '../../../src/rl/token-batch.ts';

/** A batch of 1 sequence with 4 positions, all trained, with the given old log-probs and advantage. */
function batchOf(oldLogprobs: number[], advantage: number): TrainBatch {
  const T = oldLogprobs.length;
  return {
    B: 1,
    T,
    ids: new Int32Array(T),
    targets: new Int32Array(T),
    lossMask: new Float32Array(T).fill(1),
    oldLogprobs: Float32Array.from(oldLogprobs),
    advantages: new Float32Array(T).fill(advantage),
    numLossTokens: T,
  };
}

describe('buildTrainSequence / buildTrainBatch', () => {
  test('multi-turn: environment tokens between turns get no loss; targets are shifted by one', () => {
    const sequence = buildTrainSequence(
      [
        { promptIds: [1, 2], completionIds: [3, 4], completionLogprobs: [-0.1, -0.2] },
        { promptIds: [5], completionIds: [6], completionLogprobs: [-0.3] }, // env feedback 5, then model 6
      ],
      0.5,
    );
    expect(sequence.tokens).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sequence.sampled).toEqual([0, 0, 1, 1, 0, 1]);

    const other = buildTrainSequence([{ promptIds: [7], completionIds: [8], completionLogprobs: [-0.4] }], -1);
    const batch = buildTrainBatch([sequence, other], { padId: 0 });
    expect([batch.B, batch.T]).toEqual([2, 5]);
    expect(Array.from(batch.ids)).toEqual([1, 2, 3, 4, 5, 7, 0, 0, 0, 0]);
    expect(Array.from(batch.targets)).toEqual([2, 3, 4, 5, 6, 8, 0, 0, 0, 0]);
    expect(Array.from(batch.lossMask)).toEqual([0, 1, 1, 0, 1, 1, 0, 0, 0, 0]);
    expect(Array.from(batch.oldLogprobs)).toEqual([0, -0.1, -0.2, 0, -0.3, -0.4, 0, 0, 0, 0].map(Math.fround));
    expect(Array.from(batch.advantages)).toEqual([0, 0.5, 0.5, 0, 0.5, -1, 0, 0, 0, 0]);
    expect(batch.numLossTokens).toBe(4);
  });

  test('turn advantages: each turn\'s sampled tokens get the rollout\'s advantage plus their turn\'s', () => {
    const sequence = buildTrainSequence(
      [
        { promptIds: [1, 2], completionIds: [3, 4], completionLogprobs: [-0.1, -0.2] },
        { promptIds: [5], completionIds: [6, 7], completionLogprobs: [-0.3, -0.4] },
      ],
      0.5,
      [0.25, -1],
    );
    expect(sequence.advantages).toEqual([0, 0, 0.75, 0.75, 0, -0.5, -0.5]);
    const batch = buildTrainBatch([sequence]);
    // position t predicts token t + 1: tokens 3, 4 (turn 1) then 6, 7 (turn 2)
    expect(Array.from(batch.lossMask)).toEqual([0, 1, 1, 0, 1, 1]);
    expect(Array.from(batch.advantages)).toEqual([0, 0.75, 0.75, 0, -0.5, -0.5]);
    expect(() => buildTrainSequence([{ promptIds: [1], completionIds: [2], completionLogprobs: [0] }], 1, [0, 0])).toThrow('2 turn advantages for 1 turns');
  });

  test('maxLength cuts long sequences', () => {
    const sequence = buildTrainSequence([{ promptIds: [1], completionIds: [2, 3, 4, 5], completionLogprobs: [0, 0, 0, 0] }], 1);
    const batch = buildTrainBatch([sequence], { maxLength: 3 });
    expect(batch.T).toBe(2);
    expect(Array.from(batch.targets)).toEqual([2, 3]);
  });

  test('a rollout without token data is refused with the reason', () => {
    expect(() => buildTrainSequence([], 1)).toThrow('without token data');
  });
});

describe('grpoLoss', () => {
  test('hand-computed case: on-policy ratios are 1, the loss is −mean advantage and weights are −A/Z', () => {
    const batch = batchOf([-1, -2, -0.5, -3], 2);
    const result = grpoLoss(Float32Array.from([-1, -2, -0.5, -3]), batch, { normalizer: 4 });
    expect(result.loss).toBeCloseTo(-2);
    expect(Array.from(result.weights)).toEqual([-0.5, -0.5, -0.5, -0.5]);
    expect(result.clippedTokens).toBe(0);
    expect(result.ratioSum).toBeCloseTo(4);
  });

  test('clipping: a positive advantage stops pushing a ratio above 1 + ε_high; a negative one below 1 − ε_low', () => {
    const old = [0, 0, 0, 0];
    const logprobs = Float32Array.from([Math.log(1.5), Math.log(1.1), Math.log(0.5), Math.log(0.9)]);
    const positive = grpoLoss(logprobs, batchOf(old, 1), { normalizer: 1, clipLow: 0.2, clipHigh: 0.28 });
    // ratio 1.5 is clipped to 1.28 (no gradient); 1.1 is inside; 0.5 and 0.9 are below: min picks r·A.
    expect(positive.clippedTokens).toBe(1);
    expect(positive.weights[0]).toBe(0);
    expect(positive.weights[1]).toBeCloseTo(-1.1);
    expect(positive.weights[2]).toBeCloseTo(-0.5);
    expect(positive.loss).toBeCloseTo(-(1.28 + 1.1 + 0.5 + 0.9));

    const negative = grpoLoss(logprobs, batchOf(old, -1), { normalizer: 1, clipLow: 0.2, clipHigh: 0.28 });
    // With A < 0, ratio 0.5 is clipped at 0.8 (no gradient); ratio 1.5 keeps its gradient.
    expect(negative.clippedTokens).toBe(1);
    expect(negative.weights[2]).toBe(0);
    expect(negative.weights[0]).toBeCloseTo(1.5);
    expect(negative.loss).toBeCloseTo(1.5 + 1.1 + 0.8 + 0.9);
  });

  test('the weights are the gradient of the loss with respect to each log-probability (finite differences, with KL)', () => {
    const old = [-1.2, -0.7, -2.0, -0.3, -1.0, -0.9];
    const batch = batchOf(old, 0.8);
    batch.advantages.set([0.8, 0.8, 0.8, -0.6, -0.6, -0.6]);
    batch.lossMask[4] = 0;
    const reference = Float32Array.from([-1.0, -0.9, -1.8, -0.5, -1.1, -0.6]);
    const logprobs = Float64Array.from([-1.1, -0.75, -1.5, -0.35, -1.0, -1.2]);
    const options = { normalizer: 5, clipLow: 0.2, clipHigh: 0.28, klBeta: 0.05 };
    const lossAt = (values: Float64Array) => grpoLoss(Float32Array.from(values), batch, options, reference).loss;
    const { weights } = grpoLoss(Float32Array.from(logprobs), batch, options, reference);
    const h = 1e-3;
    for (let i = 0; i < logprobs.length; i++) {
      const plus = Float64Array.from(logprobs);
      const minus = Float64Array.from(logprobs);
      plus[i]! += h;
      minus[i]! -= h;
      expect(weights[i], `position ${i}`).toBeCloseTo((lossAt(plus) - lossAt(minus)) / (2 * h), 3);
    }
    expect(weights[4]).toBe(0);
  });

  test('normalisation: token-mean and a constant (Dr. GRPO) differ only by the divisor', () => {
    const batch = batchOf([-1, -1, -1, -1], 1);
    batch.lossMask.set([1, 1, 0, 0]);
    const logprobs = Float32Array.from([-1, -1, -1, -1]);
    const tokenMean = grpoLoss(logprobs, batch, { normalizer: 2 });
    const constant = grpoLoss(logprobs, batch, { normalizer: 16 });
    expect(tokenMean.loss).toBeCloseTo(-1);
    expect(constant.loss).toBeCloseTo(-2 / 16);
    expect(Array.from(constant.weights)).toEqual(Array.from(tokenMean.weights, (w) => (w * 2) / 16));
  });

  test('KL is zero at the reference and positive away from it', () => {
    const batch = batchOf([-1, -1], 0);
    const logprobs = Float32Array.from([-1, -2]);
    const atReference = grpoLoss(logprobs, batch, { normalizer: 2, klBeta: 0.1 }, Float32Array.from([-1, -2]));
    expect(atReference.klSum).toBe(0);
    const away = grpoLoss(logprobs, batch, { normalizer: 2, klBeta: 0.1 }, Float32Array.from([-1.5, -1]));
    const k3 = (d: number) => Math.exp(d) - d - 1;
    expect(away.klSum).toBeCloseTo(k3(-0.5) + k3(1));
    expect(away.loss).toBeCloseTo((0.1 * (k3(-0.5) + k3(1))) / 2);
    expect(() => grpoLoss(logprobs, batch, { normalizer: 2, klBeta: 0.1 })).toThrow('needs the reference');
  });
});

describe('SFT', () => {
  test('weights are −mask/Z and the loss is the mean negative log-likelihood', () => {
    const mask = Float32Array.from([0, 1, 1, 0]);
    expect(Array.from(sftWeights(mask, 2))).toEqual([-0, -0.5, -0.5, -0]);
    expect(sftLoss(Float32Array.from([-9, -1, -3, -9]), mask, 2)).toBeCloseTo(2);
  });
});

/** Two on-policy rows: row 0 has 3 loss tokens with advantage 1, row 1 one loss token with advantage −1 (T = 3). */
function twoRows(): TrainBatch {
  return {
    B: 2,
    T: 3,
    ids: new Int32Array(6),
    targets: new Int32Array(6),
    lossMask: Float32Array.from([1, 1, 1, 1, 0, 0]),
    oldLogprobs: Float32Array.from([-1, -1, -1, -2, 0, 0]),
    advantages: Float32Array.from([1, 1, 1, -1, 0, 0]),
    numLossTokens: 4,
  };
}

describe('lossType aggregation, by hand', () => {
  const logprobs = Float32Array.from([-1, -1, -1, -2, 0, 0]); // ratios 1: each token's loss is −A
  test('dapo/bnpo (token level, Z = 4 tokens): (−3 + 1)/4; every token weighs 1/4', () => {
    const result = grpoLoss(logprobs, twoRows(), { normalizer: lossNormalizer('dapo', { stepTokens: 4, microTokens: 4, microBatches: 1, sequences: 2, maxTokens: 8 }) });
    expect(result.loss).toBeCloseTo(-0.5);
    expect(Array.from(result.weights)).toEqual([-0.25, -0.25, -0.25, 0.25, 0, 0]);
  });

  test('grpo (each sequence’s mean, then the mean over sequences): (−1 + 1)/2 = 0; row 0 tokens weigh 1/6, row 1’s 1/2', () => {
    const result = grpoLoss(logprobs, twoRows(), { normalizer: lossNormalizer('grpo', { stepTokens: 4, microTokens: 4, microBatches: 1, sequences: 2, maxTokens: 8 }), aggregation: 'sequence' });
    expect(result.loss).toBeCloseTo(0);
    [-1 / 6, -1 / 6, -1 / 6, 0.5, 0, 0].forEach((w, i) => expect(result.weights[i]).toBeCloseTo(w, 6));
  });

  test('dr_grpo (Z = sequences × maxTokens = 16): −2/16', () => {
    const result = grpoLoss(logprobs, twoRows(), { normalizer: lossNormalizer('dr_grpo', { stepTokens: 4, microTokens: 4, microBatches: 1, sequences: 2, maxTokens: 8 }) });
    expect(result.loss).toBeCloseTo(-2 / 16);
  });

  test('the normalisers: dapo counts the step’s tokens, bnpo the micro-batch’s times the micro-batches', () => {
    const counts = { stepTokens: 10, microTokens: 3, microBatches: 2, sequences: 4, maxTokens: 5 };
    expect(lossNormalizer('dapo', counts)).toBe(10);
    expect(lossNormalizer('bnpo', counts)).toBe(6);
    expect(lossNormalizer('grpo', counts)).toBe(4);
    expect(lossNormalizer('dr_grpo', counts)).toBe(20);
  });
});

describe('sequence-level importance sampling (GSPO)', () => {
  test('by hand: one ratio √(1.1·0.9) for the row, and each token’s weight −s·A/2', () => {
    const batch = batchOf([0, 0], 1);
    const result = grpoLoss(Float32Array.from([Math.log(1.1), Math.log(0.9)]), batch, { normalizer: 2, importanceSampling: 'sequence' });
    const s = Math.sqrt(1.1 * 0.9);
    expect(result.loss).toBeCloseTo(-s, 6);
    expect(result.weights[0]).toBeCloseTo(-s / 2, 6);
    expect(result.weights[1]).toBeCloseTo(-s / 2, 6);
    expect(result.ratioSum).toBeCloseTo(2 * s, 6);
  });

  test('a sequence ratio beyond the clip range clips every token of the row, counted high or low', () => {
    const high = grpoLoss(Float32Array.from([0.5, 0.5]), batchOf([0, 0], 1), { normalizer: 2, importanceSampling: 'sequence', clipHigh: 0.28 });
    expect([high.clippedTokens, high.clippedHigh, high.clippedLow]).toEqual([2, 2, 0]);
    expect(Array.from(high.weights)).toEqual([0, 0]);
    const low = grpoLoss(Float32Array.from([-0.5, -0.5]), batchOf([0, 0], -1), { normalizer: 2, importanceSampling: 'sequence' });
    expect([low.clippedTokens, low.clippedHigh, low.clippedLow]).toEqual([2, 0, 2]);
  });

  test('weights are the gradient under every option at once (finite differences): GSPO, grpo aggregation, KL, an entropy mask and ECHO', () => {
    const batch = twoRows();
    batch.oldLogprobs.set([-1.2, -0.7, -2.0, -0.3, 0, 0]);
    batch.echoMask = Float32Array.from([0, 0, 0, 0, 1, 1]);
    const reference = Float32Array.from([-1.0, -0.9, -1.8, -0.5, -1.1, -0.6]);
    const logprobs = Float64Array.from([-1.1, -0.75, -1.9, -0.35, -1.0, -1.2]);
    const options = { normalizer: 2, aggregation: 'sequence' as const, importanceSampling: 'sequence' as const, klBeta: 0.05, tokenMask: Float32Array.from([1, 0, 1, 1, 0, 0]), echoWeight: 0.3, echoNormalizer: 2 };
    const lossAt = (values: Float64Array) => grpoLoss(Float32Array.from(values), batch, options, reference).loss;
    const { weights, echoTokens, echoNllSum } = grpoLoss(Float32Array.from(logprobs), batch, options, reference);
    expect(echoTokens).toBe(2);
    expect(echoNllSum).toBeCloseTo(2.2, 5);
    const h = 1e-3;
    for (let i = 0; i < logprobs.length; i++) {
      const plus = Float64Array.from(logprobs);
      const minus = Float64Array.from(logprobs);
      plus[i]! += h;
      minus[i]! -= h;
      expect(weights[i], `position ${i}`).toBeCloseTo((lossAt(plus) - lossAt(minus)) / (2 * h), 3);
    }
    // The ECHO positions carry exactly −λ/N each.
    expect(weights[4]).toBeCloseTo(-0.15, 6);
  });
});

describe('entropy filtering', () => {
  test('the threshold keeps the top ⌈q·n⌉ entropies, and the mask keeps only loss tokens at or above it', () => {
    expect(entropyThreshold([0.5, 2, 1, 3, 0.1], 0.2)).toBe(3);
    expect(entropyThreshold([0.5, 2, 1, 3, 0.1], 0.5)).toBe(1); // ⌈2.5⌉ = 3rd largest
    expect(entropyThreshold([0.5, 2], 1)).toBe(0.5);
    expect(() => entropyThreshold([1], 0)).toThrow('(0, 1]');
    const batch = twoRows();
    batch.entropies = Float32Array.from([0.5, 2, 1, 3, 9, 0]); // position 4 is not a loss token
    expect(Array.from(entropyMask(batch, entropyThreshold([0.5, 2, 1, 3], 0.5)))).toEqual([0, 1, 0, 1, 0, 0]);
  });

  test('masked tokens leave the loss and the gradient but still count in Z', () => {
    const batch = twoRows();
    const logprobs = Float32Array.from([-1, -1, -1, -2, 0, 0]);
    const result = grpoLoss(logprobs, batch, { normalizer: 4, tokenMask: Float32Array.from([0, 1, 0, 1, 0, 0]) });
    expect(result.loss).toBeCloseTo((-1 + 1) / 4);
    expect(Array.from(result.weights)).toEqual([0, -0.25, 0, 0.25, 0, 0]);
    expect(result.lossTokens).toBe(4);
  });
});

describe('token entropies and environment tokens in a sequence', () => {
  test('the sampler’s entropies when given, else −logp; prompt tokens after the first turn are ECHO targets', () => {
    const sequence = buildTrainSequence(
      [
        { promptIds: [1, 2], completionIds: [3, 4], completionLogprobs: [-0.1, -0.2], completionEntropies: [1.5, 2.5] },
        { promptIds: [5, 6], completionIds: [7], completionLogprobs: [-0.3] },
      ],
      1,
    );
    expect(sequence.environment).toEqual([0, 0, 0, 0, 1, 1, 0]);
    expect(sequence.entropies).toEqual([0, 0, 1.5, 2.5, 0, 0, 0.3]);
    const batch = buildTrainBatch([sequence]);
    expect(Array.from(batch.echoMask!)).toEqual([0, 0, 0, 1, 1, 0]); // targets 5 and 6
    expect(Array.from(batch.entropies!)).toEqual([0, 1.5, 2.5, 0, 0, 0.3].map(Math.fround)); // position t scores target t + 1
  });
});
