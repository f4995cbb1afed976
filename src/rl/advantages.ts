/**
 * GRPO advantages: each completion's reward minus the mean reward of its group (the G completions
 * of one task), optionally divided by a standard deviation: the group's (`scaleRewards: 'group'`, GRPO
 * as in DeepSeekMath), the whole step's (`'batch'`, more robust to groups with tiny spread) or none
 * (`'none'`, the default, following Dr. GRPO, https://arxiv.org/abs/2503.20783, which shows that the
 * group-std scaling biases training towards too easy and too hard tasks).
 */

/** How rewards are scaled after the group mean is subtracted. */
export type RewardScaling = 'group' | 'batch' | 'none';

/** Options of `computeAdvantages`. */
export interface AdvantageOptions {
  /** Divide by the group's reward std, the step's, or nothing (default 'none'). */
  scaleRewards?: RewardScaling;
  /** Added to the std before dividing (default 1e-4). */
  eps?: number;
}

/** Advantages of rewards laid out group after group: rewards (numGroups*G) → advantages (numGroups*G). */
export function computeAdvantages(rewards: readonly number[], G: number, options: AdvantageOptions = {}): number[] {
  if (!Number.isInteger(G) || G < 1) throw new Error(`computeAdvantages: group size must be a positive integer, got ${G}`);
  if (rewards.length % G !== 0) throw new Error(`computeAdvantages: ${rewards.length} rewards do not split into groups of ${G}`);
  const scaling = options.scaleRewards ?? 'none';
  if (!['group', 'batch', 'none'].includes(scaling)) throw new Error(`computeAdvantages: scaleRewards must be 'group', 'batch' or 'none', got ${String(scaling)}`);
  const eps = options.eps ?? 1e-4;
  const batchStd = std(rewards);
  const advantages = new Array<number>(rewards.length);
  for (let start = 0; start < rewards.length; start += G) {
    const group = rewards.slice(start, start + G);
    const mean = group.reduce((a, b) => a + b, 0) / G;
    const divisor = scaling === 'group' ? std(group) + eps : scaling === 'batch' ? batchStd + eps : 1;
    for (let i = 0; i < G; i++) advantages[start + i] = (group[i]! - mean) / divisor;
  }
  return advantages;
}

/** For each group of G rewards, whether all are equal (such a group has zero advantage and teaches nothing). */
export function findUninformativeGroups(rewards: readonly number[], G: number, tolerance = 1e-9): boolean[] {
  const flags: boolean[] = [];
  for (let start = 0; start < rewards.length; start += G) {
    const group = rewards.slice(start, start + G);
    flags.push(Math.max(...group) - Math.min(...group) <= tolerance);
  }
  return flags;
}

/** Population standard deviation (divides by n, as the group std of GRPO). */
function std(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length);
}
