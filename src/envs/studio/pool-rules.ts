/**
 * The retire rule of a task pool refreshed during training, as a curriculum keeps its pool healthy:
 * mastered tasks retire only as far as the pool stays at its minimum size and (by default) no more
 * of them than tasks join at the same refresh, so the pool never shrinks under a policy whose pass
 * rates have turned all-or-nothing; and retired tasks are replayed, re-measured a few at a time, and
 * rejoin once the policy no longer masters them (it has forgotten them). Retiring every mastered task
 * at once shrank the pool to one to three tasks on the harbour-codes run, and the policy forgot the
 * rest (BENCHMARKS.md, "task synthesis during training against a fixed pool").
 * This module decides counts and picks; it measures nothing and changes no pool (pool-refresh.ts does).
 */

/** How many mastered tasks may retire at one refresh: as many as join it ('joined', new and replayed together), every one ('all'), or at most a number. */
export type RetireLimit = 'joined' | 'all' | number;

/** The rules a refreshed pool keeps. */
export interface PoolRules {
  /** Never retire below this many tasks (at least 1). */
  minPool: number;
  maxRetire: RetireLimit;
  /** Retired tasks re-measured at each refresh, oldest first (0: none); those the policy no longer masters rejoin. */
  replay: number;
}

/** The defaults of `tabrl train --min-pool --max-retire --replay` (4 is GRPO's default tasks per step, so a step can draw distinct tasks). */
export const DEFAULT_POOL_RULES: PoolRules = { minPool: 4, maxRetire: 'joined', replay: 4 };

/** Checks rules given in code or from a checkpoint; the message names the field and what it takes. */
export function checkPoolRules(rules: PoolRules): PoolRules {
  if (!Number.isSafeInteger(rules.minPool) || rules.minPool < 1) throw new Error(`the pool's minimum size must be a whole number ≥ 1, got ${rules.minPool}`);
  if (!Number.isSafeInteger(rules.replay) || rules.replay < 0) throw new Error(`the retired tasks replayed per refresh must be a whole number ≥ 0, got ${rules.replay}`);
  const limit = rules.maxRetire;
  if (limit !== 'joined' && limit !== 'all' && !(Number.isSafeInteger(limit) && limit >= 0))
    throw new Error(`the most tasks retired per refresh must be "joined", "all" or a whole number ≥ 0, got ${String(limit)}`);
  return rules;
}

/**
 * How many mastered tasks retire at a refresh of a pool of `poolBefore` tasks that `joined` tasks
 * join (new candidates in the band and replayed tasks that came back): as many as are mastered, but
 * no more than the limit allows and never so many that fewer than `minPool` remain (a pool already
 * under its minimum retires nothing).
 */
export function retireCount(mastered: number, poolBefore: number, joined: number, rules: PoolRules): number {
  const limit = rules.maxRetire === 'all' ? mastered : rules.maxRetire === 'joined' ? joined : rules.maxRetire;
  return Math.max(0, Math.min(mastered, limit, poolBefore + joined - Math.max(1, rules.minPool)));
}

/** Which mastered pool tasks retire first: the highest pass rate, then the earliest in the pool (they have been mastered longest); returns `count` pool indices. */
export function pickRetiring(mastered: readonly { taskIndex: number; passRate: number }[], count: number): number[] {
  return [...mastered]
    .sort((a, b) => b.passRate - a.passRate || a.taskIndex - b.taskIndex)
    .slice(0, count)
    .map((task) => task.taskIndex);
}
