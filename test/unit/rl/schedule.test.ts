import { expect, test } from 'vitest';
import { learningRateAt } from '../../../src/rl/schedule.ts';

test('linear warm-up, then constant', () => {
  const schedule = { lr: 1e-3, warmupSteps: 4 };
  expect([0, 1, 2, 3, 4, 100].map((step) => learningRateAt(step, schedule))).toEqual([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3]);
});

test('cosine decays from lr to the floor at the last step', () => {
  const schedule = { lr: 1, warmupSteps: 0, kind: 'cosine' as const, totalSteps: 11, minLrRatio: 0.1 };
  expect(learningRateAt(0, schedule)).toBeCloseTo(1);
  expect(learningRateAt(5, schedule)).toBeCloseTo(0.55);
  expect(learningRateAt(10, schedule)).toBeCloseTo(0.1);
  expect(() => learningRateAt(0, { lr: 1, kind: 'cosine' })).toThrow('needs totalSteps');
});
