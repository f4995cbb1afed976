/**
 * GRPO advantages: each completion's reward minus the mean reward of its group (the G completions
 * of one task), optionally divided by a standard deviation: the group's (`scaleRewards: 'group'`, GRPO
 * as in DeepSeekMath), the whole step's (`'batch'`, more robust to groups with tiny spread) or none
 * (`'none'`, the default, following Dr. GRPO, https://arxiv.org/abs/2503.20783, which shows that the
 * group-std scaling biases training towards too easy and too hard tasks).
 *
 * Rollouts whose rubric scores each model turn (turn rewards) also get per-turn advantages, as
 * DeepSeekMath's process supervision (§4.1.3, https://arxiv.org/abs/2402.03300) does: all turn
 * rewards of a group, pooled over its rollouts, minus their mean (scaled the same way), and each
 * turn credited with its own and every later turn's normalised reward. They add to the rollout's
 * outcome advantage on that turn's tokens.
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

/** How a turn is credited from the normalised turn rewards: its own and every later turn's ('return-to-go', the default) or its own only ('turn'). */
export type TurnCredit = 'return-to-go' | 'turn';

/** The turn credits, for flags and validation. */
export const TURN_CREDITS: readonly TurnCredit[] = ['return-to-go', 'turn'];

/**
 * Per-turn advantages, group by group: turnRewards (numGroups*G, each rollout's reward per model
 * turn, or undefined for a rollout without) → per rollout, one advantage per turn (empty without
 * turn rewards). A group's turn rewards are pooled over its rollouts for the mean and the std.
 */
export function computeTurnAdvantages(turnRewards: readonly (readonly number[] | undefined)[], G: number, options: AdvantageOptions & { credit?: TurnCredit } = {}): number[][] {
  if (!Number.isInteger(G) || G < 1) throw new Error(`computeTurnAdvantages: group size must be a positive integer, got ${G}`);
  if (turnRewards.length % G !== 0) throw new Error(`computeTurnAdvantages: ${turnRewards.length} rollouts do not split into groups of ${G}`);
  const scaling = options.scaleRewards ?? 'none';
  const credit = options.credit ?? 'return-to-go';
  if (!TURN_CREDITS.includes(credit)) throw new Error(`computeTurnAdvantages: credit must be ${TURN_CREDITS.join(' or ')}, got ${String(credit)}`);
  const eps = options.eps ?? 1e-4;
  const batchStd = std(turnRewards.flatMap((rewards) => rewards ?? []));
  const advantages: number[][] = [];
  for (let start = 0; start < turnRewards.length; start += G) {
    const group = turnRewards.slice(start, start + G);
    const pooled = group.flatMap((rewards) => rewards ?? []);
    const mean = pooled.length === 0 ? 0 : pooled.reduce((a, b) => a + b, 0) / pooled.length;
    const divisor = scaling === 'group' ? std(pooled) + eps : scaling === 'batch' ? batchStd + eps : 1;
    for (const rewards of group) {
      const normalised = (rewards ?? []).map((reward) => (reward - mean) / divisor);
      if (credit === 'return-to-go') for (let turn = normalised.length - 2; turn >= 0; turn--) normalised[turn]! += normalised[turn + 1]!;
      advantages.push(normalised);
    }
  }
  return advantages;
}

/** For each group of G rollouts, whether it teaches nothing: its rewards all equal and its turn rewards (pooled over its rollouts) all equal too. */
export function findGroupsWithoutSignal(rewards: readonly number[], turnRewards: readonly (readonly number[] | undefined)[], G: number, tolerance = 1e-9): boolean[] {
  const flatRewards = findUninformativeGroups(rewards, G, tolerance);
  return flatRewards.map((flat, group) => {
    if (!flat) return false;
    const pooled = turnRewards.slice(group * G, (group + 1) * G).flatMap((values) => values ?? []);
    return pooled.length === 0 || Math.max(...pooled) - Math.min(...pooled) <= tolerance;
  });
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
