/**
 * The one rule that tells rewards which measure nothing: every reward function with a non-zero
 * weight failed (threw, returned a non-number, timed out) in every rollout that reached scoring, so
 * each reward is only the zeros scored for those failures. `tabrl eval` and the playground's
 * Evaluate fail such a run, `tabrl train` and the playground's GRPO stop instead of training on it. A function failing beside others
 * that work, or in some rollouts only, is not this case: the rewards still measure something, and
 * the failures stay listed among the rollouts' errors.
 */
import type { RolloutError } from './types.ts';

/** What the rule reads of a rollout (a Trajectory or a RolloutRecord): why it ended and its errors. */
export interface ScoredRolloutLike {
  stopReason: string;
  errors: readonly RolloutError[];
}

/** A rubric's reward function as the weights need it: its name and weight. */
interface NamedWeight {
  name: string;
  weight: number;
}

/** The weight of each reward function of a rubric (group functions included; weight-0 metrics as 0), by name. */
export function rubricRewardWeights(rubric: { readonly rewards: readonly NamedWeight[]; readonly groupRewards: readonly NamedWeight[] }): Record<string, number> {
  return Object.fromEntries([...rubric.rewards, ...rubric.groupRewards].map((reward) => [reward.name, reward.weight]));
}

/**
 * Why the rewards of `rollouts` measure nothing (a sentence naming the function(s) and the first
 * error), or undefined when they measure something: some weighted function gave a score in some
 * rollout, no rollout reached scoring (a failed or stopped rollout is not scored), or no function
 * has a non-zero weight.
 */
export function brokenRewardsReason(rollouts: readonly ScoredRolloutLike[], weights: Readonly<Record<string, number>>): string | undefined {
  const scored = rollouts.filter((rollout) => rollout.stopReason !== 'error' && rollout.stopReason !== 'aborted');
  const weighted = Object.keys(weights).filter((name) => weights[name] !== 0);
  if (scored.length === 0 || weighted.length === 0) return undefined;
  const failureOf = (rollout: ScoredRolloutLike, name: string) => rollout.errors.find((error) => error.source === 'reward' && error.name === name);
  if (!scored.every((rollout) => weighted.every((name) => failureOf(rollout, name) !== undefined))) return undefined;
  const names = weighted.length === 1 ? `the reward function ${weighted[0]}` : `every weighted reward function (${weighted.join(', ')})`;
  return `${names} failed in every rollout, so the rewards are not measurements; the first error: ${failureOf(scored[0]!, weighted[0]!)!.message}`;
}
