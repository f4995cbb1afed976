/**
 * A rubric scores a finished rollout with named, weighted reward functions. The reward is the
 * weighted sum; a weight of 0 makes a function a logged metric. A function that throws, or returns
 * something that is not a finite number, scores 0 and its error is recorded: a bad reward never
 * ends a run. Group reward functions see every rollout of one task at once (diversity, ranking)
 * and return one score per rollout; they run once the group is finished (`scoreGroup`), and their
 * weighted scores add to each rollout's reward. `RubricGroup` adds up several rubrics.
 *
 * A weight-0 function can say what its score means (`addMetric(fn, kind)`): a pass/fail `check`
 * (1 pass, 0 fail; the default), a score where higher or lower is better, or plain `info`. Reward-hack
 * audits read it: a high reward with a failed check is suspect, a high reward with an invalid-move
 * count of 0 is not.
 *
 * Turn reward functions (`addTurnReward`) score each model turn of a multi-turn rollout (a valid
 * move, a guess that fits the board): they return one score per assistant message. They do not add
 * to the rollout's reward; `score` returns their weighted sum per turn as `turnRewards`, which GRPO
 * turns into per-turn credit (process rewards, DeepSeekMath §4.1.3), and logs each function's mean
 * over the turns as its score.
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

/** A group reward function: sees the rollouts of one task (in order) and returns one score per rollout, named `somethingReward` by convention. */
export type GroupRewardFunction<S extends State = State> = (group: RewardContext<S>[]) => number[] | Promise<number[]>;

/** A turn reward function: sees the finished rollout and returns one score per model turn (assistant message), in order; named `somethingTurnReward` by convention. */
export type TurnRewardFunction<S extends State = State> = (ctx: RewardContext<S>) => number[] | Promise<number[]>;

/** A turn reward function with its name and weight. */
export interface WeightedTurnReward<S extends State = State> {
  readonly name: string;
  fn(ctx: RewardContext<S>): number[] | Promise<number[]>;
  readonly weight: number;
}

/** A group reward function with its name and weight. */
export interface WeightedGroupReward<S extends State = State> {
  readonly name: string;
  fn(group: RewardContext<S>[]): number[] | Promise<number[]>;
  readonly weight: number;
}

/**
 * What a weight-0 score means, for audits: `check` is pass/fail (1 pass, 0 fail), `higherIsBetter`
 * and `lowerIsBetter` are scores with a direction (a share, a count of mistakes), `info` has none
 * (a turn count, a length).
 */
export type MetricKind = 'check' | 'higherIsBetter' | 'lowerIsBetter' | 'info';

/** The metric kinds, for validating plain data. */
export const METRIC_KINDS: readonly MetricKind[] = ['check', 'higherIsBetter', 'lowerIsBetter', 'info'];

/** A reward function with its name and weight. */
export interface WeightedReward<S extends State = State> {
  readonly name: string;
  // A method signature (not a function-typed property), so that Environment<WordleState> is usable as Environment<State>.
  fn(ctx: RewardContext<S>): number | Promise<number>;
  readonly weight: number;
  /** What the score means, for a weight-0 function added with `addMetric` (absent: a `check`). */
  readonly metric?: MetricKind;
}

/** The rubric's verdict on one rollout. */
export interface RubricScore {
  /** Weighted sum of the scores. */
  reward: number;
  /** Each function's raw score by name; 0 for a function that failed. */
  scores: Record<string, number>;
  errors: RolloutError[];
  /** Per model turn, the weighted sum of the turn reward functions' scores; absent when the rubric has none. */
  turnRewards?: number[];
}

/** Options of a rubric: functions with weights (verifiers' `funcs` + `weights`, or explicit entries). */
export interface RubricOptions<S extends State = State> {
  funcs?: RewardFunction<S>[];
  /** One weight per function in `funcs`; defaults to 1 each. */
  weights?: number[];
  /** Functions with explicit names; `metric` (weight 0 only) says what a metric's score means. */
  rewards?: { fn: RewardFunction<S>; weight?: number; name?: string; metric?: MetricKind }[];
  /** Group reward functions (each sees the whole group of one task's rollouts), with weights and names. */
  groupRewards?: { fn: GroupRewardFunction<S>; weight?: number; name?: string }[];
  /** Turn reward functions (each scores every model turn of a rollout), with weights and names. */
  turnRewards?: { fn: TurnRewardFunction<S>; weight?: number; name?: string }[];
  /** The rubric's name, under which a RubricGroup logs its reward. */
  name?: string;
}

/** Named, weighted reward functions; `score()` runs them all on one rollout. */
export class Rubric<S extends State = State> {
  readonly rewards: WeightedReward<S>[] = [];
  readonly groupRewards: WeightedGroupReward<S>[] = [];
  readonly turnRewards: WeightedTurnReward<S>[] = [];
  /** The name a RubricGroup logs this rubric's reward under (absent: `rubric<n>`). */
  readonly name: string | undefined;

  constructor(options: RubricOptions<S> = {}) {
    const { funcs = [], weights, rewards = [], groupRewards = [], turnRewards = [] } = options;
    if (weights && weights.length !== funcs.length) {
      throw new Error(`Rubric: ${funcs.length} reward functions but ${weights.length} weights`);
    }
    this.name = options.name;
    funcs.forEach((fn, i) => this.addReward(fn, weights?.[i] ?? 1));
    for (const { fn, weight, name, metric } of rewards) {
      if (metric === undefined) this.addReward(fn, weight ?? 1, name);
      else if (weight !== undefined && weight !== 0) throw new Error(`Rubric: ${name ?? fn.name} has metric kind "${metric}" but weight ${weight}; a metric weighs 0`);
      else this.addMetric(fn, metric, name);
    }
    for (const { fn, weight = 1, name } of groupRewards) this.addGroupReward(fn, weight, name);
    for (const { fn, weight = 1, name } of turnRewards) this.addTurnReward(fn, weight, name);
  }

  /** Adds a reward function; its name defaults to the function's own name. Returns the rubric. */
  addReward(fn: RewardFunction<S>, weight = 1, name = fn.name): this {
    this.checkNew(name, weight);
    this.rewards.push({ name, fn, weight });
    return this;
  }

  /**
   * Adds a logged metric (weight 0) and what its score means: `check` (pass/fail, the default),
   * `higherIsBetter`, `lowerIsBetter` or `info`. Returns the rubric.
   */
  addMetric(fn: RewardFunction<S>, kind: MetricKind = 'check', name = fn.name): this {
    if (!METRIC_KINDS.includes(kind)) throw new Error(`Rubric: metric kind of ${name} must be one of ${METRIC_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
    this.checkNew(name, 0);
    this.rewards.push({ name, fn, weight: 0, metric: kind });
    return this;
  }

  /** Adds a group reward function (sees every rollout of one task, returns one score each); its name defaults to the function's own. Returns the rubric. */
  addGroupReward(fn: GroupRewardFunction<S>, weight = 1, name = fn.name): this {
    this.checkNew(name, weight);
    this.groupRewards.push({ name, fn, weight });
    return this;
  }

  /**
   * Adds a turn reward function (scores each model turn: one number per assistant message); its
   * name defaults to the function's own. Its weighted scores become the rollout's `turnRewards`,
   * not part of its reward. Returns the rubric.
   */
  addTurnReward(fn: TurnRewardFunction<S>, weight = 1, name = fn.name): this {
    this.checkNew(name, weight);
    this.turnRewards.push({ name, fn, weight });
    return this;
  }

  private checkNew(name: string, weight: number): void {
    if (!name) throw new Error('Rubric: a reward function needs a name (use a named function or pass one)');
    if (!Number.isFinite(weight)) throw new Error(`Rubric: weight of ${name} must be a finite number, got ${weight}`);
    if ([...this.rewards, ...this.groupRewards, ...this.turnRewards].some((reward) => reward.name === name)) throw new Error(`Rubric: two reward functions are named "${name}"`);
  }

  /** Adds another rubric's functions to this one (for environments that combine rubrics). */
  merge(other: Rubric<S>): this {
    for (const { fn, weight, name, metric } of other.rewards) {
      if (metric === undefined) this.addReward(fn, weight, name);
      else this.addMetric(fn, metric, name);
    }
    for (const { fn, weight, name } of other.groupRewards) this.addGroupReward(fn, weight, name);
    for (const { fn, weight, name } of other.turnRewards) this.addTurnReward(fn, weight, name);
    return this;
  }

  /** The names of the functions that count towards the reward (weight ≠ 0), group functions included. */
  get rewardNames(): string[] {
    return [...this.rewards, ...this.groupRewards].filter((reward) => reward.weight !== 0).map((reward) => reward.name);
  }

  /**
   * What each score outside the reward means, by name: weight-0 functions (`check` unless declared
   * with `addMetric`), group functions included, and turn reward functions, whose logged mean per
   * turn is `higherIsBetter`.
   */
  get metricKinds(): Record<string, MetricKind> {
    const metrics = [...this.rewards, ...this.groupRewards].filter((reward) => reward.weight === 0);
    const kinds: Record<string, MetricKind> = Object.fromEntries(metrics.map((reward) => [reward.name, ('metric' in reward ? reward.metric : undefined) ?? 'check']));
    for (const { name } of this.turnRewards) kinds[name] = 'higherIsBetter';
    return kinds;
  }

  /** Whether the rubric has group reward functions (then a finished group goes through `scoreGroup`). */
  get hasGroupRewards(): boolean {
    return this.groupRewards.length > 0;
  }

  /** Runs the group functions on one task's finished rollouts; returns, per rollout, their weighted sum, scores and errors (the per-rollout functions are not run again). */
  async scoreGroup(group: RewardContext<S>[]): Promise<RubricScore[]> {
    const verdicts: RubricScore[] = group.map(() => ({ reward: 0, scores: {}, errors: [] }));
    for (const { name, fn, weight } of this.groupRewards) {
      const values = await scoreGroupFunction(name, group.length, () => fn(group));
      values.forEach((result, i) => {
        const { value, error } = result;
        const verdict = verdicts[i]!;
        verdict.scores[name] = value;
        if (error) verdict.errors.push({ source: 'reward', name, message: error, ...markOf(result) });
        verdict.reward += weight * value;
      });
    }
    return verdicts;
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
      if (error) errors.push({ source: 'reward', name, message: error, ...markOf(results[i]!) });
      reward += weight * value;
    });
    if (this.turnRewards.length === 0) return { reward, scores, errors };
    return { reward, scores, errors, turnRewards: await this.scoreTurns(ctx, scores, errors) };
  }

  /** Runs the turn functions: logs each one's mean per turn in `scores`, records failures (that function's turns score 0) and returns the weighted sum per turn. */
  private async scoreTurns(ctx: RewardContext<S>, scores: Record<string, number>, errors: RolloutError[]): Promise<number[]> {
    const turns = ctx.completion.filter((message) => message.role === 'assistant').length;
    const results = await Promise.all(this.turnRewards.map(async ({ name, fn }) => scoreTurnFunction(name, turns, () => fn(ctx))));
    const turnRewards = new Array<number>(turns).fill(0);
    this.turnRewards.forEach(({ name, weight }, i) => {
      const { values, error } = results[i]!;
      scores[name] = turns === 0 ? 0 : values.reduce((a, b) => a + b, 0) / turns;
      if (error) errors.push({ source: 'reward', name, message: error, ...markOf(results[i]!) });
      values.forEach((value, turn) => (turnRewards[turn]! += weight * value));
    });
    return turnRewards;
  }
}

/**
 * Several rubrics whose rewards add up: each member scores the rollout (its own `score`, so judge
 * rubrics keep their behaviour), the rewards are summed, every function's score is kept, and each
 * member's reward is logged as a score under its name (`rubric.name`, else `rubric<n>`).
 */
export class RubricGroup<S extends State = State> extends Rubric<S> {
  readonly rubrics: Rubric<S>[];
  /** The names each member's reward is logged under, in order. */
  readonly rubricNames: string[];

  constructor(rubrics: Rubric<S>[], options: { name?: string } = {}) {
    super(options.name !== undefined ? { name: options.name } : {});
    if (rubrics.length === 0) throw new Error('RubricGroup: give at least one rubric');
    this.rubrics = rubrics;
    this.rubricNames = rubrics.map((rubric, i) => rubric.name ?? `rubric${i + 1}`);
    const seen = new Set<string>();
    for (const name of [...this.rubricNames, ...rubrics.flatMap((rubric) => [...rubric.rewards, ...rubric.groupRewards, ...rubric.turnRewards].map((reward) => reward.name))]) {
      if (seen.has(name)) throw new Error(`RubricGroup: two rubrics or reward functions are named "${name}"; name them apart (new Rubric({ name }) or the functions' names)`);
      seen.add(name);
    }
    // Listed here too, so rewardNames, metricKinds, hasGroupRewards and isPassed see every member's functions.
    for (const rubric of rubrics) {
      this.rewards.push(...rubric.rewards);
      this.groupRewards.push(...rubric.groupRewards);
      this.turnRewards.push(...rubric.turnRewards);
    }
  }

  /** Adds a reward function to the first member rubric. */
  override addReward(fn: RewardFunction<S>, weight = 1, name = fn.name): this {
    if (this.rubrics === undefined) return super.addReward(fn, weight, name);
    this.rubrics[0]!.addReward(fn, weight, name);
    this.rewards.push(this.rubrics[0]!.rewards.at(-1)!);
    return this;
  }

  /** Adds a logged metric to the first member rubric. */
  override addMetric(fn: RewardFunction<S>, kind: MetricKind = 'check', name = fn.name): this {
    if (this.rubrics === undefined) return super.addMetric(fn, kind, name);
    this.rubrics[0]!.addMetric(fn, kind, name);
    this.rewards.push(this.rubrics[0]!.rewards.at(-1)!);
    return this;
  }

  /** Adds a group reward function to the first member rubric. */
  override addGroupReward(fn: GroupRewardFunction<S>, weight = 1, name = fn.name): this {
    if (this.rubrics === undefined) return super.addGroupReward(fn, weight, name);
    this.rubrics[0]!.addGroupReward(fn, weight, name);
    this.groupRewards.push(this.rubrics[0]!.groupRewards.at(-1)!);
    return this;
  }

  /** Adds a turn reward function to the first member rubric. */
  override addTurnReward(fn: TurnRewardFunction<S>, weight = 1, name = fn.name): this {
    if (this.rubrics === undefined) return super.addTurnReward(fn, weight, name);
    this.rubrics[0]!.addTurnReward(fn, weight, name);
    this.turnRewards.push(this.rubrics[0]!.turnRewards.at(-1)!);
    return this;
  }

  /** Every member scores the rollout; the rewards (and turn rewards) add up and each reward is logged under its rubric's name. */
  override async score(ctx: RewardContext<S>): Promise<RubricScore> {
    return combine(await Promise.all(this.rubrics.map((rubric) => rubric.score(ctx))), this.rubricNames);
  }

  /** Every member's group functions score the group; per rollout the rewards add up and each member's group reward is logged under `<name>Group`. */
  override async scoreGroup(group: RewardContext<S>[]): Promise<RubricScore[]> {
    const members = this.rubrics.filter((rubric) => rubric.hasGroupRewards);
    const verdicts = await Promise.all(members.map((rubric) => rubric.scoreGroup(group)));
    const names = members.map((rubric) => `${this.rubricNames[this.rubrics.indexOf(rubric)]!}Group`);
    return group.map((_, i) =>
      combine(
        verdicts.map((perRollout) => perRollout[i]!),
        names,
      ),
    );
  }
}

/** Sums member verdicts (turn rewards turn by turn), keeping every score and logging each member's reward under its name. */
function combine(verdicts: RubricScore[], names: string[]): RubricScore {
  const combined: RubricScore = { reward: 0, scores: {}, errors: [] };
  verdicts.forEach((verdict, i) => {
    combined.reward += verdict.reward;
    Object.assign(combined.scores, verdict.scores);
    combined.scores[names[i]!] = verdict.reward;
    combined.errors.push(...verdict.errors);
    if (verdict.turnRewards) combined.turnRewards = verdict.turnRewards.map((value, turn) => value + (combined.turnRewards?.[turn] ?? 0));
  });
  return combined;
}

/** The fatal flag and kind of a scored function's result, for its RolloutError. */
function markOf(result: { fatal?: boolean; kind?: string }): { fatal?: boolean; kind?: string } {
  return { ...(result.fatal ? { fatal: true } : {}), ...(result.kind !== undefined ? { kind: result.kind } : {}) };
}

/** How a thrown error is marked on the rollout: `fatal` when every rollout would fail alike (an unreachable judge), so an evaluation or a training run stops on it; its `kind` when it has one. */
function errorMarks(error: unknown): { fatal?: boolean; kind?: string } {
  const details = error as { fatal?: unknown; kind?: unknown } | null;
  if (typeof details !== 'object' || details === null) return {};
  return { ...(details.fatal === true ? { fatal: true } : {}), ...(typeof details.kind === 'string' ? { kind: details.kind } : {}) };
}

async function scoreGroupFunction(name: string, size: number, run: () => number[] | Promise<number[]>): Promise<Array<{ value: number; error?: string; fatal?: boolean; kind?: string }>> {
  const failAll = (error: string, marks: { fatal?: boolean; kind?: string } = {}) => Array.from({ length: size }, () => ({ value: 0, error, ...marks }));
  let values: unknown;
  try {
    values = await run();
  } catch (error) {
    return failAll(`${name} threw: ${errorMessage(error)}; scored 0`, errorMarks(error));
  }
  if (!Array.isArray(values) || values.length !== size) {
    return failAll(`${name} returned ${Array.isArray(values) ? `${values.length} scores` : describe(values)} for a group of ${size} rollouts; it must return one number per rollout; scored 0`);
  }
  return values.map((value: unknown, i) => {
    if (typeof value === 'boolean') return { value: value ? 1 : 0 };
    if (typeof value !== 'number' || !Number.isFinite(value)) return { value: 0, error: `${name} returned ${describe(value)} for rollout ${i}, not a finite number; scored 0` };
    return { value };
  });
}

/** Runs one turn function: `turns` finite scores, or all 0 with the error (a throw, a wrong count, a value that is not a finite number). */
async function scoreTurnFunction(name: string, turns: number, run: () => number[] | Promise<number[]>): Promise<{ values: number[]; error?: string; fatal?: boolean; kind?: string }> {
  const zeros = () => new Array<number>(turns).fill(0);
  let values: unknown;
  try {
    values = await run();
  } catch (error) {
    return { values: zeros(), error: `${name} threw: ${errorMessage(error)}; its turns scored 0`, ...errorMarks(error) };
  }
  if (!Array.isArray(values) || values.length !== turns) {
    return {
      values: zeros(),
      error: `${name} returned ${Array.isArray(values) ? `${values.length} scores` : describe(values)} for a rollout of ${turns} model turns; it must return one number per assistant message; its turns scored 0`,
    };
  }
  const bad = values.findIndex((value: unknown) => typeof value !== 'boolean' && (typeof value !== 'number' || !Number.isFinite(value)));
  if (bad >= 0) return { values: zeros(), error: `${name} returned ${describe(values[bad])} for turn ${bad + 1}, not a finite number; its turns scored 0` };
  return { values: values.map((value: number | boolean) => (typeof value === 'boolean' ? (value ? 1 : 0) : value)) };
}

async function scoreOne(name: string, run: () => number | Promise<number>): Promise<{ value: number; error?: string; fatal?: boolean; kind?: string }> {
  try {
    const value: unknown = await run();
    if (typeof value === 'boolean') return { value: value ? 1 : 0 };
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return { value: 0, error: `${name} returned ${describe(value)}, not a finite number; scored 0` };
    }
    return { value };
  } catch (error) {
    return { value: 0, error: `${name} threw: ${errorMessage(error)}; scored 0`, ...errorMarks(error) };
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
