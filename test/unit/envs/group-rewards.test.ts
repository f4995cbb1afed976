// Group reward functions, RubricGroup and stop conditions: what they score, what they log, and how
// evaluate() and a multi-turn rollout use them.
import { describe, expect, test } from 'vitest';
import { evaluate, MultiTurnEnv, Parser, Rubric, RubricGroup, ScriptedClient, SingleTurnEnv, type Message, type RewardContext, type State } from '../../../src/envs/index.ts';

const context = (completion: string): RewardContext => ({
  prompt: [{ role: 'user', content: 'q' }],
  completion: [{ role: 'assistant', content: completion }],
  answer: 'yes',
  state: { prompt: [], completion: [], info: {}, turn: 1 },
  info: {},
  task: undefined,
  parser: new Parser(),
});

/** 1 for a completion no other rollout of its group gave, else 0. */
function distinctReward(group: RewardContext[]): number[] {
  const texts = group.map((ctx) => ctx.completion[0]!.content);
  return texts.map((text) => (texts.filter((other) => other === text).length === 1 ? 1 : 0));
}

describe('group reward functions', () => {
  test('see the whole group and return one weighted score per rollout', async () => {
    const rubric = new Rubric({ groupRewards: [{ fn: distinctReward, weight: 0.5 }] });
    expect(rubric.hasGroupRewards).toBe(true);
    expect(rubric.rewardNames).toEqual(['distinctReward']);
    const verdicts = await rubric.scoreGroup(['a', 'b', 'a'].map(context));
    expect(verdicts.map((v) => v.reward)).toEqual([0, 0.5, 0]);
    expect(verdicts.map((v) => v.scores.distinctReward)).toEqual([0, 1, 0]);
    // Per-rollout scoring leaves group functions alone.
    expect((await rubric.score(context('a'))).scores).toEqual({});
  });

  test('a group function that throws or returns the wrong number of scores scores 0 for each rollout, with the reason', async () => {
    const rubric = new Rubric()
      .addGroupReward(function shortReward() { return [1]; })
      .addGroupReward(function brokenReward() { throw new Error('no ranking'); });
    const verdicts = await rubric.scoreGroup(['a', 'b'].map(context));
    expect(verdicts.map((v) => v.reward)).toEqual([0, 0]);
    expect(verdicts[0]!.errors.map((e) => e.message)).toEqual([
      'shortReward returned 1 scores for a group of 2 rollouts; it must return one number per rollout; scored 0',
      'brokenReward threw: no ranking; scored 0',
    ]);
    expect(() => new Rubric().addReward(() => 1, 1, 'same').addGroupReward(() => [1], 1, 'same')).toThrow('two reward functions are named "same"');
  });

  test('evaluate() holds a task’s rollouts until its group is whole, then adds the group scores and the pass verdict', async () => {
    const env = new SingleTurnEnv({
      name: 'distinct',
      dataset: [{ question: 'x' }, { question: 'y' }],
      rubric: new Rubric({ funcs: [function oneReward() { return 0.5; }], groupRewards: [{ fn: distinctReward, weight: 0.5 }] }),
    });
    let call = 0;
    const replies = ['same', 'same', 'other', 'p', 'q', 'q'];
    const client = new ScriptedClient(() => replies[call++ % replies.length]!);
    const emitted: number[] = [];
    const result = await evaluate(env, client, { rolloutsPerTask: 3, concurrency: 1, onRecord: (record) => { emitted.push(record.taskIndex); } });
    expect(emitted).toEqual([0, 0, 0, 1, 1, 1]);
    expect(result.records.map((r) => r.scores.distinctReward)).toEqual([0, 0, 1, 1, 0, 0]);
    expect(result.records.map((r) => r.reward)).toEqual([0.5, 0.5, 1, 1, 0.5, 0.5]);
    expect(result.records.map((r) => r.passed)).toEqual([false, false, true, true, false, false]);
    expect(result.summary.scores.distinctReward).toBeCloseTo(2 / 6);
  });
});

describe('RubricGroup', () => {
  test('rewards add up, every function is kept and each rubric’s reward is logged under its name', async () => {
    const format = new Rubric({ name: 'format', funcs: [function hasYesReward(ctx: RewardContext) { return ctx.completion[0]!.content.includes('yes') ? 1 : 0; }], weights: [0.2] });
    const length = new Rubric({ funcs: [function shortReward(ctx: RewardContext) { return ctx.completion[0]!.content.length < 5 ? 1 : 0; }], weights: [0.3] });
    const group = new RubricGroup([format, length]);
    expect(group.rewardNames).toEqual(['hasYesReward', 'shortReward']);
    expect(await group.score(context('yes'))).toEqual({ reward: 0.5, scores: { hasYesReward: 1, shortReward: 1, format: 0.2, rubric2: 0.3 }, errors: [] });
    expect(await group.score(context('no, never'))).toEqual({ reward: 0, scores: { hasYesReward: 0, shortReward: 0, format: 0, rubric2: 0 }, errors: [] });
    expect(() => new RubricGroup([format, new Rubric({ name: 'format' })])).toThrow('two rubrics or reward functions are named "format"');
  });

  test('members’ group functions add up too', async () => {
    const group = new RubricGroup([new Rubric({ name: 'diversity', groupRewards: [{ fn: distinctReward }] }), new Rubric().addReward(() => 1, 1, 'plainReward')]);
    expect(group.hasGroupRewards).toBe(true);
    const verdicts = await group.scoreGroup(['a', 'b', 'b'].map(context));
    expect(verdicts.map((v) => v.reward)).toEqual([1, 0, 0]);
    expect(verdicts[0]!.scores).toEqual({ distinctReward: 1, diversityGroup: 1 });
  });
});

describe('stop conditions', () => {
  class CountingEnv extends MultiTurnEnv {
    override envResponse(_messages: Message[], state: State): Message[] {
      state.count = ((state.count as number | undefined) ?? 0) + 1;
      return [{ role: 'user', content: `turn ${state.count as number}` }];
    }
  }

  test('the first condition that holds after a turn ends the rollout, and its name is recorded', async () => {
    const env = new CountingEnv({
      name: 'counting', dataset: [{ question: 'go' }], maxTurns: 10,
      stopConditions: [
        { name: 'saidStop', check: (messages) => messages.some((m) => m.role === 'assistant' && m.content === 'stop') },
        { name: 'threeTurns', check: (_messages, state) => (state.count as number) >= 3 },
      ],
    });
    const long = await env.rollout(new ScriptedClient(['a', 'b', 'c', 'd']), env.dataset[0]!);
    expect(long.turns.length).toBe(3);
    expect([long.stopReason, long.stopCondition, long.state.stopReason, long.truncated]).toEqual(['completed', 'threeTurns', 'threeTurns', false]);
    const early = await env.rollout(new ScriptedClient(['a', 'stop']), env.dataset[0]!);
    expect([early.turns.length, early.stopCondition]).toEqual([2, 'saidStop']);
    const summary = (await evaluate(env, new ScriptedClient(['stop']), {})).summary;
    expect(summary.stopReasons).toEqual({ saidStop: 1 });
  });

  test('without one that holds, maxTurns ends it as before; a condition that throws is an env error', async () => {
    const env = new CountingEnv({ name: 'counting', dataset: [{ question: 'go' }], maxTurns: 2 }).addStopCondition('never', () => false);
    const trajectory = await env.rollout(new ScriptedClient(['a', 'b', 'c']), env.dataset[0]!);
    expect([trajectory.stopReason, trajectory.stopCondition, trajectory.state.stopReason]).toEqual(['max_turns', undefined, 'max_turns']);
    const broken = new CountingEnv({ name: 'broken', dataset: [{ question: 'go' }] }).addStopCondition('explodes', () => { throw new Error('bad check'); });
    const failed = await broken.rollout(new ScriptedClient(['a']), broken.dataset[0]!);
    expect(failed.stopReason).toBe('error');
    expect(failed.errors[0]).toMatchObject({ source: 'env', name: 'broken.stopCondition explodes', message: 'bad check' });
    expect(() => env.addStopCondition('never', () => true)).toThrow('two stop conditions are named "never"');
  });
});
