import { describe, expect, test } from 'vitest';
import { Parser, Rubric, RubricGroup, type RewardContext } from '../../../src/envs/index.ts';

const context = (completion: string): RewardContext => ({
  prompt: [{ role: 'user', content: 'q' }],
  completion: [{ role: 'assistant', content: completion }],
  answer: 'yes',
  state: { prompt: [], completion: [], info: {}, turn: 1 },
  info: {},
  task: undefined,
  parser: new Parser(),
});

describe('Rubric', () => {
  test('the reward is the weighted sum; weight 0 is a logged metric', async () => {
    const correctReward = (ctx: RewardContext) => (ctx.parser.parseAnswer(ctx.completion) === ctx.answer ? 1 : 0);
    const lengthMetric = (ctx: RewardContext) => ctx.completion[0]!.content.length;
    const rubric = new Rubric({ funcs: [correctReward, lengthMetric], weights: [0.5, 0] });
    const verdict = await rubric.score(context('yes'));
    expect(verdict).toEqual({ reward: 0.5, scores: { correctReward: 1, lengthMetric: 3 }, errors: [] });
    expect(rubric.rewardNames).toEqual(['correctReward']);
  });

  test('a reward that throws, or returns NaN, scores 0 and is recorded; the others still count', async () => {
    const goodReward = () => 1;
    const throwingReward = () => {
      throw new Error('boom');
    };
    const nanReward = () => Number.NaN;
    const asyncReward = async () => 0.25;
    const rubric = new Rubric({ funcs: [goodReward, throwingReward, nanReward, asyncReward] });
    const verdict = await rubric.score(context('x'));
    expect(verdict.reward).toBe(1.25);
    expect(verdict.scores).toEqual({ goodReward: 1, throwingReward: 0, nanReward: 0, asyncReward: 0.25 });
    expect(verdict.errors.map((error) => error.name)).toEqual(['throwingReward', 'nanReward']);
    expect(verdict.errors[0]!.message).toContain('boom');
    expect(verdict.errors[1]!.message).toContain('NaN');
  });

  test('booleans count as 1 and 0', async () => {
    const rubric = new Rubric({ rewards: [{ fn: () => true as unknown as number, name: 'flag' }] });
    expect((await rubric.score(context('x'))).reward).toBe(1);
  });

  test('addMetric logs a weight-0 score and says what it means; undeclared weight-0 functions are checks', async () => {
    const winReward = () => 1;
    const invalidMovesMetric = () => 2;
    const turnsMetric = () => 4;
    const formatMetric = () => 1;
    const rubric = new Rubric({ rewards: [{ fn: turnsMetric, metric: 'info' }] })
      .addReward(winReward)
      .addMetric(invalidMovesMetric, 'lowerIsBetter')
      .addReward(formatMetric, 0);
    expect(await rubric.score(context('x'))).toEqual({ reward: 1, scores: { turnsMetric: 4, winReward: 1, invalidMovesMetric: 2, formatMetric: 1 }, errors: [] });
    expect(rubric.metricKinds).toEqual({ turnsMetric: 'info', invalidMovesMetric: 'lowerIsBetter', formatMetric: 'check' });
    expect(rubric.rewardNames).toEqual(['winReward']);
    // Kinds survive merging and grouping, and a group's addMetric lands in its first member.
    expect(new Rubric().merge(rubric).metricKinds).toEqual(rubric.metricKinds);
    const group = new RubricGroup([new Rubric({ name: 'a', funcs: [winReward] })]).addMetric(invalidMovesMetric, 'lowerIsBetter');
    expect(group.metricKinds).toEqual({ invalidMovesMetric: 'lowerIsBetter' });
    expect(group.rubrics[0]!.metricKinds).toEqual({ invalidMovesMetric: 'lowerIsBetter' });
  });

  test('a metric kind on a weighted function, or an unknown kind, is refused', () => {
    expect(() => new Rubric({ rewards: [{ fn: () => 1, name: 'paidMetric', weight: 0.5, metric: 'check' }] })).toThrow('paidMetric has metric kind "check" but weight 0.5; a metric weighs 0');
    expect(() => new Rubric().addMetric(() => 1, 'smallerIsBetter' as never, 'sizeMetric')).toThrow('metric kind of sizeMetric must be one of check, higherIsBetter, lowerIsBetter, info');
  });

  test('rejects mismatched weights, duplicate names and anonymous functions', () => {
    expect(() => new Rubric({ funcs: [() => 1], weights: [1, 2] })).toThrow('1 reward functions but 2 weights');
    const same = () => 1;
    expect(() => new Rubric({ funcs: [same, same] })).toThrow('two reward functions are named "same"');
    expect(() => new Rubric().addReward(() => 1, 1, '')).toThrow('needs a name');
  });
});
