import { describe, expect, test } from 'vitest';
import { computeAdvantages, findUninformativeGroups } from '../../../src/rl/advantages.ts';

describe('computeAdvantages', () => {
  test('subtracts each group mean (G = 4, two groups)', () => {
    const advantages = computeAdvantages([1, 0, 0, 1, 0.5, 0.5, 0.5, 2.5], 4);
    expect(advantages).toEqual([0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 1.5]);
  });

  test('optionally divides by the group std', () => {
    const [a, b] = computeAdvantages([1, 0], 2, { scaleByStd: true, eps: 0 });
    expect(a).toBeCloseTo(1); // (1 - 0.5) / 0.5
    expect(b).toBeCloseTo(-1);
    expect(computeAdvantages([3, 3], 2, { scaleByStd: true })).toEqual([0, 0]);
  });

  test('rejects rewards that do not split into groups', () => {
    expect(() => computeAdvantages([1, 2, 3], 2)).toThrow('do not split into groups of 2');
  });

  test('finds groups whose rewards are all equal', () => {
    expect(findUninformativeGroups([1, 1, 0, 1, 0.2, 0.2], 2)).toEqual([true, false, true]);
  });
});
