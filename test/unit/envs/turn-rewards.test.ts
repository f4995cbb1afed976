// Turn reward functions: one score per model turn, kept out of the reward, summed with weights per
// turn into the rollout's turnRewards (GRPO's per-turn credit), their failures recorded.
import { describe, expect, test } from 'vitest';
import { MultiTurnEnv, Parser, Rubric, RubricGroup, ScriptedClient, type Message, type RewardContext, type State } from '../../../src/envs/index.ts';

const context = (replies: string[]): RewardContext => ({
  prompt: [{ role: 'user', content: 'q' }],
  completion: replies.flatMap((content): Message[] => [{ role: 'assistant', content }, { role: 'user', content: 'next' }]),
  answer: undefined,
  state: { prompt: [], completion: [], info: {}, turn: replies.length },
  info: {},
  task: undefined,
  parser: new Parser(),
});

/** 1 for each reply that is "yes". */
function yesTurnReward(ctx: RewardContext): number[] {
  return ctx.completion.filter((message) => message.role === 'assistant').map((message) => (message.content === 'yes' ? 1 : 0));
}

/** The length of each reply. */
function lengthTurnReward(ctx: RewardContext): number[] {
  return ctx.completion.filter((message) => message.role === 'assistant').map((message) => message.content.length);
}

describe('turn reward functions', () => {
  test('score each model turn: the weighted sum per turn is turnRewards, the mean per turn is logged, the reward is untouched', async () => {
    const rubric = new Rubric({ funcs: [function oneReward() { return 1; }] }).addTurnReward(yesTurnReward, 0.5).addTurnReward(lengthTurnReward, 0.1);
    const verdict = await rubric.score(context(['yes', 'no', 'yes']));
    expect(verdict.reward).toBe(1);
    expect(verdict.turnRewards).toEqual([0.5 + 0.3, 0.2, 0.5 + 0.3].map((x) => expect.closeTo(x, 12)));
    expect(verdict.scores.yesTurnReward).toBeCloseTo(2 / 3);
    expect(verdict.scores.lengthTurnReward).toBeCloseTo(8 / 3);
    expect(verdict.errors).toEqual([]);
    expect(rubric.rewardNames).toEqual(['oneReward']);
    expect(rubric.metricKinds).toEqual({ yesTurnReward: 'higherIsBetter', lengthTurnReward: 'higherIsBetter' });
    // A rubric without turn functions reports no turnRewards at all.
    expect((await new Rubric({ funcs: [function oneReward() { return 1; }] }).score(context(['yes']))).turnRewards).toBeUndefined();
  });

  test('a turn function that throws, returns the wrong count or a non-number scores 0 on every turn, with the reason', async () => {
    const rubric = new Rubric()
      .addTurnReward(function shortTurnReward() { return [1]; })
      .addTurnReward(function brokenTurnReward(): number[] { throw new Error('no board'); })
      .addTurnReward(function nanTurnReward() { return [1, Number.NaN]; })
      .addTurnReward(function passTurnReward() { return [true, false] as unknown as number[]; });
    const verdict = await rubric.score(context(['a', 'b']));
    expect(verdict.turnRewards).toEqual([1, 0]);
    expect(verdict.errors.map((error) => error.message)).toEqual([
      'shortTurnReward returned 1 scores for a rollout of 2 model turns; it must return one number per assistant message; its turns scored 0',
      'brokenTurnReward threw: no board; its turns scored 0',
      'nanTurnReward returned NaN for turn 2, not a finite number; its turns scored 0',
    ]);
    expect(() => new Rubric().addReward(() => 1, 1, 'same').addTurnReward(() => [1], 1, 'same')).toThrow('two reward functions are named "same"');
  });

  test('a RubricGroup adds its members\u2019 turn rewards turn by turn', async () => {
    const group = new RubricGroup([new Rubric({ name: 'a', turnRewards: [{ fn: yesTurnReward, weight: 1 }] }), new Rubric({ name: 'b' })]);
    group.addTurnReward(lengthTurnReward, 1);
    const verdict = await group.score(context(['yes', 'no']));
    expect(verdict.turnRewards).toEqual([4, 2]);
    expect(group.metricKinds).toMatchObject({ yesTurnReward: 'higherIsBetter', lengthTurnReward: 'higherIsBetter' });
  });

  test('a multi-turn rollout carries one turn reward per model turn', async () => {
    class EchoEnv extends MultiTurnEnv {
      override envResponse(): Message[] {
        return [{ role: 'user', content: 'again' }];
      }
      override isCompleted(_messages: Message[], state: State): boolean {
        return state.turn >= 3;
      }
    }
    const env = new EchoEnv({ name: 'echo', dataset: [{ question: 'say yes' }], rubric: new Rubric().addTurnReward(yesTurnReward, 2), maxTurns: 5 });
    const trajectory = await env.rollout(new ScriptedClient(['yes', 'no', 'yes']), env.dataset[0]!);
    expect(trajectory.turns).toHaveLength(3);
    expect(trajectory.turnRewards).toEqual([2, 0, 2]);
    expect(trajectory.reward).toBe(0);
  });
});
