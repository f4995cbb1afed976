/**
 * A rubric scores a finished rollout with named, weighted reward functions. The reward is the
 * weighted sum; a weight of 0 makes a function a logged metric. A function that throws, or returns
 * something that is not a finite number, scores 0 and its error is recorded: a bad reward never
 * ends a run.
 */
import type { Parser } from './parser.ts';
import type { Message, RolloutError, State } from './types.ts';
import { errorMessage } from '../common/error-message.ts';

/** What a reward function sees of a finished rollout. */
export interface RewardContext<S extends State = State> {
  prompt: Message[];
  completion: Message[];
  answer: string | undefined;
  state: S;
  info: Record<string, unknown>;
  task: string | undefined;
  parser: Parser;
}

/** A reward function: a pure function of the rollout, named `somethingReward` by convention. */
export type RewardFunction<S extends State = State> = (ctx: RewardContext<S>) => number | Promise<number>;

/** A reward function with its name and weight. */
export interface WeightedReward<S extends State = State> {
  name: string;
  // A method signature (not a function-typed property), so that Environment<WordleState> is usable as Environment<State>.
  fn(ctx: RewardContext<S>): number | Promise<number>;
  weight: number;
}

/** The rubric's verdict on one rollout. */
export interface RubricScore {
  /** Weighted sum of the scores. */
  reward: number;
  /** Each function's raw score by name; 0 for a function that failed. */
  scores: Record<string, number>;
  errors: RolloutError[];
}

/** Options of a rubric: functions with weights (verifiers' `funcs` + `weights`, or explicit entries). */
export interface RubricOptions<S extends State = State> {
  funcs?: RewardFunction<S>[];
  /** One weight per function in `funcs`; defaults to 1 each. */
  weights?: number[];
  /** Functions with explicit names. */
  rewards?: { fn: RewardFunction<S>; weight?: number; name?: string }[];
}

/** Named, weighted reward functions; `score()` runs them all on one rollout. */
export class Rubric<S extends State = State> {
  readonly rewards: WeightedReward<S>[] = [];

  constructor(options: RubricOptions<S> = {}) {
    const { funcs = [], weights, rewards = [] } = options;
    if (weights && weights.length !== funcs.length) {
      throw new Error(`Rubric: ${funcs.length} reward functions but ${weights.length} weights`);
    }
    funcs.forEach((fn, i) => this.addReward(fn, weights?.[i] ?? 1));
    for (const { fn, weight = 1, name } of rewards) this.addReward(fn, weight, name);
  }

  /** Adds a reward function; its name defaults to the function's own name. Returns the rubric. */
  addReward(fn: RewardFunction<S>, weight = 1, name = fn.name): this {
    if (!name) throw new Error('Rubric: a reward function needs a name (use a named function or pass one)');
    if (!Number.isFinite(weight)) throw new Error(`Rubric: weight of ${name} must be a finite number, got ${weight}`);
    if (this.rewards.some((reward) => reward.name === name)) throw new Error(`Rubric: two reward functions are named "${name}"`);
    this.rewards.push({ name, fn, weight });
    return this;
  }

  /** Adds another rubric's functions to this one (for environments that combine rubrics). */
  merge(other: Rubric<S>): this {
    for (const { fn, weight, name } of other.rewards) this.addReward(fn, weight, name);
    return this;
  }

  /** The names of the functions that count towards the reward (weight ≠ 0). */
  get rewardNames(): string[] {
    return this.rewards.filter((reward) => reward.weight !== 0).map((reward) => reward.name);
  }

  /** Runs every function on the rollout, concurrently; failures score 0 and are recorded. */
  async score(ctx: RewardContext<S>): Promise<RubricScore> {
    const results = await Promise.all(this.rewards.map(async ({ name, fn }) => scoreOne(name, () => fn(ctx))));
    const scores: Record<string, number> = {};
    const errors: RolloutError[] = [];
    let reward = 0;
    this.rewards.forEach(({ name, weight }, i) => {
      const { value, error } = results[i]!;
      scores[name] = value;
      if (error) errors.push({ source: 'reward', name, message: error });
      reward += weight * value;
    });
    return { reward, scores, errors };
  }
}

async function scoreOne(name: string, run: () => number | Promise<number>): Promise<{ value: number; error?: string }> {
  try {
    const value: unknown = await run();
    if (typeof value === 'boolean') return { value: value ? 1 : 0 };
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return { value: 0, error: `${name} returned ${describe(value)}, not a finite number; scored 0` };
    }
    return { value };
  } catch (error) {
    return { value: 0, error: `${name} threw: ${errorMessage(error)}; scored 0` };
  }
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
