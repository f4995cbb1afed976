// The one rule `tabrl eval`, `tabrl train` and the playground's GRPO share: rewards measure nothing
// only when every weighted reward function failed in every rollout that reached scoring.
import { describe, expect, test } from 'vitest';
import { brokenRewardsReason, rubricRewardWeights, type ScoredRolloutLike } from '../../../src/envs/broken-rewards.ts';
import { Rubric } from '../../../src/envs/index.ts';

/** A scored rollout in which the named reward functions failed with "NAME broke". */
const rollout = (...failed: string[]): ScoredRolloutLike => ({ stopReason: 'completed', errors: failed.map((name) => ({ source: 'reward' as const, name, message: `${name} broke` })) });

describe('brokenRewardsReason', () => {
  test('one weighted function failing in every rollout: broken, naming it and the first error', () => {
    expect(brokenRewardsReason([rollout('a'), rollout('a')], { a: 1 })).toBe('the reward function a failed in every rollout, so the rewards are not measurements; the first error: a broke');
  });

  test('every weighted function failing in every rollout: broken, naming them all', () => {
    expect(brokenRewardsReason([rollout('a', 'b'), rollout('b', 'a')], { a: 1, b: 0.5 })).toMatch(/^every weighted reward function \(a, b\) failed in every rollout, .*the first error: a broke$/);
  });

  test('one of two weighted functions failing everywhere is a partial failure: not broken', () => {
    expect(brokenRewardsReason([rollout('a'), rollout('a')], { a: 1, b: 1 })).toBeUndefined();
  });

  test('one rollout in which the function worked: not broken', () => {
    expect(brokenRewardsReason([rollout('a'), rollout(), rollout('a')], { a: 1 })).toBeUndefined();
  });

  test('a weight-0 metric failing does not count: neither alone, nor beside a failing weighted function', () => {
    expect(brokenRewardsReason([rollout('metric'), rollout('metric')], { a: 1, metric: 0 })).toBeUndefined();
    expect(brokenRewardsReason([rollout('a', 'metric'), rollout('a')], { a: 1, metric: 0 })).toMatch(/^the reward function a failed/);
    expect(brokenRewardsReason([rollout('metric')], { metric: 0 })).toBeUndefined();
  });

  test('failed or stopped rollouts (never scored) are left out; with none scored, nothing is said', () => {
    const failed: ScoredRolloutLike = { stopReason: 'error', errors: [{ source: 'client', name: 'chat', message: 'down' }] };
    expect(brokenRewardsReason([failed, rollout('a')], { a: 1 })).toMatch(/^the reward function a failed/);
    expect(brokenRewardsReason([failed, { stopReason: 'aborted', errors: [] }], { a: 1 })).toBeUndefined();
    expect(brokenRewardsReason([], { a: 1 })).toBeUndefined();
  });

  test("another function's or source's error of the same name is not the reward's failure", () => {
    const envError: ScoredRolloutLike = { stopReason: 'completed', errors: [{ source: 'env', name: 'a', message: 'env hook' }] };
    expect(brokenRewardsReason([envError], { a: 1 })).toBeUndefined();
  });
});

test("rubricRewardWeights: every function's weight by name, group functions and weight-0 metrics included", () => {
  const rubric = new Rubric({ funcs: [function a() { return 1; }, function m() { return 0; }], weights: [2, 0], groupRewards: [{ name: 'g', fn: (group) => group.map(() => 1), weight: 0.5 }] });
  expect(rubricRewardWeights(rubric)).toEqual({ a: 2, m: 0, g: 0.5 });
});
