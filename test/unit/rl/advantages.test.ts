import { describe, expect, test } from 'vitest';
import { computeAdvantages, computeTurnAdvantages, findGroupsWithoutSignal, findUninformativeGroups } from '../../../src/rl/advantages.ts';

describe('computeAdvantages', () => {
  test('subtracts each group mean (G = 4, two groups)', () => {
    const advantages = computeAdvantages([1, 0, 0, 1, 0.5, 0.5, 0.5, 2.5], 4);
    expect(advantages).toEqual([0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 1.5]);
  });

  test('optionally divides by the group std', () => {
    const [a, b] = computeAdvantages([1, 0], 2, { scaleRewards: 'group', eps: 0 });
    expect(a).toBeCloseTo(1); // (1 - 0.5) / 0.5
    expect(b).toBeCloseTo(-1);
    expect(computeAdvantages([3, 3], 2, { scaleRewards: 'group' })).toEqual([0, 0]);
  });

  test('scaleRewards by hand: none (the default), group and batch on two groups of 4', () => {
    const rewards = [1, 0, 0, 1, 0.5, 0.5, 0.5, 2.5];
    // none: reward − group mean (means 0.5 and 1).
    expect(computeAdvantages(rewards, 4)).toEqual(computeAdvantages(rewards, 4, { scaleRewards: 'none' }));
    expect(computeAdvantages(rewards, 4, { scaleRewards: 'none' })).toEqual([0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 1.5]);
    // group: group stds 0.5 and √(3/4) = 0.8660.
    const group = computeAdvantages(rewards, 4, { scaleRewards: 'group', eps: 0 });
    [1, -1, -1, 1, -0.5 / Math.sqrt(0.75), -0.5 / Math.sqrt(0.75), -0.5 / Math.sqrt(0.75), 1.5 / Math.sqrt(0.75)].forEach((value, i) => expect(group[i]).toBeCloseTo(value, 10));
    // batch: the 8 rewards have mean 0.75 and std 0.75 (Σ squared deviations 4.5 over 8), so each centred reward is divided by 0.75.
    const batch = computeAdvantages(rewards, 4, { scaleRewards: 'batch', eps: 0 });
    [2 / 3, -2 / 3, -2 / 3, 2 / 3, -2 / 3, -2 / 3, -2 / 3, 2].forEach((value, i) => expect(batch[i]).toBeCloseTo(value, 10));
    expect(() => computeAdvantages(rewards, 4, { scaleRewards: 'std' as never })).toThrow("scaleRewards must be 'group', 'batch' or 'none'");
  });

  test('rejects rewards that do not split into groups', () => {
    expect(() => computeAdvantages([1, 2, 3], 2)).toThrow('do not split into groups of 2');
  });

  test('finds groups whose rewards are all equal', () => {
    expect(findUninformativeGroups([1, 1, 0, 1, 0.2, 0.2], 2)).toEqual([true, false, true]);
  });
});

describe('computeTurnAdvantages', () => {
  // One group of G = 2: rollout 0 scored [1, 0, 1] per turn, rollout 1 [0]; pooled mean 0.5.
  const turnRewards = [[1, 0, 1], [0]];

  test('return-to-go (the default): a turn gets its own and every later turn\'s reward minus the group\'s mean turn reward', () => {
    const [first, second] = computeTurnAdvantages(turnRewards, 2);
    // normalised [0.5, -0.5, 0.5] and [-0.5]; summed from the end
    expect(first).toEqual([0.5, 0, 0.5]);
    expect(second).toEqual([-0.5]);
  });

  test("'turn' credit: its own normalised reward only; 'group' scaling divides by the pooled std", () => {
    expect(computeTurnAdvantages(turnRewards, 2, { credit: 'turn' })).toEqual([[0.5, -0.5, 0.5], [-0.5]]);
    const scaled = computeTurnAdvantages(turnRewards, 2, { credit: 'turn', scaleRewards: 'group', eps: 0 });
    expect(scaled[0]).toEqual([1, -1, 1]); // pooled std 0.5
  });

  test('groups are normalised apart; a rollout without turn rewards gets none, and bad input is refused', () => {
    const advantages = computeTurnAdvantages([[2, 2], undefined, [0], [1]], 2, { credit: 'turn' });
    expect(advantages).toEqual([[0, 0], [], [-0.5], [0.5]]);
    expect(() => computeTurnAdvantages([[1]], 2)).toThrow('do not split into groups of 2');
    expect(() => computeTurnAdvantages([[1]], 1, { credit: 'later' as never })).toThrow('credit must be');
  });
});

describe('findGroupsWithoutSignal', () => {
  test('a group with equal rewards still teaches when its turn rewards differ', () => {
    expect(findGroupsWithoutSignal([1, 1, 0, 1, 2, 2], [[1, 0], [1], undefined, undefined, [1], [1, 1]], 2)).toEqual([false, false, true]);
    expect(findGroupsWithoutSignal([1, 1], [undefined, undefined], 2)).toEqual([true]);
  });
});
