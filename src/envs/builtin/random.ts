/**
 * A small seeded PRNG (mulberry32) and seeded task generation for the built-in environments, so
 * that `{ seed }` reproduces a dataset exactly in Node and in the browser. Not cryptographic.
 */
import type { Task } from '../index.ts';

/** A seeded source of random numbers. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy of a list (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

/** A mulberry32 generator seeded with a 32-bit integer (any number is folded to 32 bits). */
export function createRng(seed: number): Rng {
  let a = Math.trunc(seed) >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) throw new Error(`rng.int: bad range [${min}, ${max}]`);
    return min + Math.floor(next() * (max - min + 1));
  };
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('rng.pick: the list is empty');
      return items[int(0, items.length - 1)]!;
    },
    shuffle<T>(items: readonly T[]): T[] {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy;
    },
  };
}

/** Added to the training seed to get the default seed of a held-out evaluation set. */
export const EVAL_SEED_OFFSET = 1_000_003;

/**
 * Generates `count` tasks from one seeded stream. Tasks whose question is in `exclude` (the
 * training set, for a held-out split) are skipped; with `unique`, repeated questions are too.
 * Gives up after `count * 100` attempts and returns what it has (a small task space).
 */
export function generateTasks(options: { count: number; seed: number; make: (rng: Rng) => Task; exclude?: readonly Task[]; unique?: boolean }): Task[] {
  const { count, seed, make, unique = false } = options;
  if (!Number.isInteger(count) || count < 0) throw new Error(`numTasks must be a non-negative integer, got ${count}`);
  const rng = createRng(seed);
  const seen = new Set((options.exclude ?? []).map((task) => task.question));
  const tasks: Task[] = [];
  for (let attempt = 0; tasks.length < count && attempt < count * 100; attempt++) {
    const task = make(rng);
    if (seen.has(task.question)) continue;
    if (unique || options.exclude) seen.add(task.question);
    tasks.push(task);
  }
  return tasks;
}
