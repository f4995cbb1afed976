/**
 * Criteria as a gate (`gateByCriteria`): the reward is the rubric's own reward × the weighted
 * fraction of criteria met; weight-0 criteria are logged but do not gate; group rewards are gated
 * by the same fraction; criteria that weigh nothing are refused with a message.
 */
import { describe, expect, test } from 'vitest';
import { evaluate, Rubric, ScriptedClient, SingleTurnEnv, type RewardContext } from '../../../../src/envs/index.ts';
import { CriteriaRubric, gateByCriteria } from '../../../../src/envs/studio/index.ts';

const CRITERIA = [
  { name: 'cites', question: 'Does the answer cite the document?', weight: 3 },
  { name: 'short', question: 'Is the answer under 20 words?', weight: 1 },
  { name: 'polite', question: 'Is the answer polite?', weight: 0 },
];

/** A rubric paying 0.8 for any answer (the judge that was fooled) plus a weight-0 metric. */
function lenientRubric(): Rubric {
  return new Rubric({ rewards: [{ fn: () => 0.8, weight: 1, name: 'judgeReward' }, { fn: () => 1, weight: 0, name: 'lengthMetric' }] });
}

/** An environment whose rubric is gated by CRITERIA, judged by a judge replying `verdicts` (yes/no per criterion). */
function gatedEnv(verdicts: string[], rubric = lenientRubric()): SingleTurnEnv {
  const judge = new ScriptedClient([verdicts.map((verdict, i) => `${i + 1}. Reason: checked. Verdict: ${verdict}`).join('\n')]);
  gateByCriteria(rubric, new CriteriaRubric({ judgeClient: judge, criteria: CRITERIA }));
  return new SingleTurnEnv({ dataset: [{ question: 'When does the office open?', answer: '8' }], rubric, passThreshold: 0.6 });
}

describe('gateByCriteria', () => {
  test.each([
    [['yes', 'yes', 'no'], 0.8, true],
    [['yes', 'no', 'yes'], 0.6, true],
    [['no', 'yes', 'yes'], 0.2, false],
    [['no', 'no', 'yes'], 0, false],
  ])('verdicts %j: reward = 0.8 × the weighted fraction met = %s', async (verdicts, reward, passed) => {
    const env = gatedEnv(verdicts);
    const { records } = await evaluate(env, new ScriptedClient(['At 8.']), { numTasks: 1 });
    const record = records[0]!;
    expect(record.reward).toBeCloseTo(reward, 12);
    expect(record.passed).toBe(passed);
    expect(record.scores).toMatchObject({ judgeReward: 0.8, lengthMetric: 1, criterion_cites: verdicts[0] === 'yes' ? 1 : 0, criterion_polite: verdicts[2] === 'yes' ? 1 : 0 });
    expect(record.state.criteriaGate).toBeCloseTo(reward / 0.8, 12);
    expect(env.rubric.rewardNames).toEqual(['judgeReward', 'criterion_cites', 'criterion_short']);
  });

  test('group rewards are gated by the same fraction', async () => {
    const rubric = lenientRubric().addGroupReward((group: RewardContext[]) => group.map(() => 0.5), 1, 'diversityReward');
    const env = gatedEnv(['yes', 'no', 'no'], rubric);
    const { records } = await evaluate(env, new ScriptedClient(['At 8.']), { numTasks: 1, rolloutsPerTask: 2 });
    // (0.8 + 0.5) × 3/4, where an ungated rubric would pay 1.3.
    expect(records.map((record) => record.reward)).toEqual([expect.closeTo(0.975, 12), expect.closeTo(0.975, 12)]);
    expect(records.every((record) => record.scores.diversityReward === 0.5)).toBe(true);
  });

  test('criteria that all weigh 0 cannot gate: a clear message', () => {
    const judge = new ScriptedClient(['1. Reason: x. Verdict: yes']);
    expect(() => gateByCriteria(lenientRubric(), new CriteriaRubric({ judgeClient: judge, criteria: [{ name: 'polite', question: 'Is it polite?', weight: 0 }] }))).toThrow(/weigh nothing/);
  });
});
