/**
 * GRPO advantages: each completion's reward minus the mean reward of its group (the G completions
 * of one task), optionally divided by the group's standard deviation (off by default, following
 * Dr. GRPO, https://arxiv.org/abs/2503.20783, which shows the std scaling biases towards easy tasks).
 */

/** Options of `computeAdvantages`. */
export interface AdvantageOptions {
  /** Divide by the group's reward std (GRPO as in DeepSeekMath); default false. */
  scaleByStd?: boolean;
  /** Added to the std before dividing (default 1e-4). */
  eps?: number;
}

/** Advantages of rewards laid out group after group: rewards (numGroups*G) → advantages (numGroups*G). */
export function computeAdvantages(rewards: readonly number[], G: number, options: AdvantageOptions = {}): number[] {
  if (!Number.isInteger(G) || G < 1) throw new Error(`computeAdvantages: group size must be a positive integer, got ${G}`);
  if (rewards.length % G !== 0) throw new Error(`computeAdvantages: ${rewards.length} rewards do not split into groups of ${G}`);
  const eps = options.eps ?? 1e-4;
  const advantages = new Array<number>(rewards.length);
  for (let start = 0; start < rewards.length; start += G) {
    const group = rewards.slice(start, start + G);
    const mean = group.reduce((a, b) => a + b, 0) / G;
    const std = Math.sqrt(group.reduce((sum, r) => sum + (r - mean) ** 2, 0) / G);
    for (let i = 0; i < G; i++) {
      const centred = group[i]! - mean;
      advantages[start + i] = options.scaleByStd ? centred / (std + eps) : centred;
    }
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
