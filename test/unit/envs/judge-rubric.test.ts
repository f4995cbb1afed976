import { describe, expect, test } from 'vitest';
import { fillTemplate, JudgeRubric, parseJudgeScore, ScriptedClient, SingleTurnEnv, type JudgeScale } from '../../../src/envs/index.ts';

const ZERO_TO_ONE: JudgeScale = { kind: 'grade', min: 0, max: 1 };

describe('parseJudgeScore', () => {
  // On the default prompt's scale (0–10) unless a row names another; the scale-by-scale edge cases are in judge-score.test.ts.
  test.each([
    ['Score: 7', 0.7, undefined],
    ['score=10', 1, undefined],
    ['8/10', 0.8, undefined],
    ['3 / 4', 0.75, undefined],
    ['0.4', 0.4, ZERO_TO_ONE],
    ['9', 0.9, undefined],
    ['Yes, it is correct.', 1, undefined],
    ['no', 0, undefined],
  ] as const)('reads %j as %d', (reply, expected, scale) => {
    expect(parseJudgeScore(reply, scale)).toBeCloseTo(expected);
  });

  test('a grade past the top of the scale is off the scale, not full marks', () => {
    expect(() => parseJudgeScore('Score: 14')).toThrow('off the scale its prompt asked for (a grade from 0 to 10)');
  });

  test('a reply without a verdict throws', () => {
    expect(() => parseJudgeScore('I cannot grade this.')).toThrow('holds no score');
  });
});

describe('JudgeRubric', () => {
  test('asks the judge with the filled template and records its reply', async () => {
    const judge = new ScriptedClient(['Score: 8']);
    const env = new SingleTurnEnv({
      dataset: [{ question: 'Write a haiku about rain.', answer: '' }],
      rubric: new JudgeRubric({ judgeClient: judge, judgeModel: 'judge-1', judgePrompt: 'Q={question} R={response} A={answer}', scoreScale: { kind: 'grade', min: 0, max: 10 } }),
    });
    const trajectory = await env.rollout(new ScriptedClient(['drops on the tin roof']), env.dataset[0]!);
    expect(trajectory.scores).toEqual({ judgeReward: 0.8 });
    expect(trajectory.reward).toBeCloseTo(0.8);
    expect(judge.requests[0]!.model).toBe('judge-1');
    expect(judge.requests[0]!.messages).toEqual([{ role: 'user', content: 'Q=Write a haiku about rain. R=drops on the tin roof A=' }]);
    expect(trajectory.state.judgeReplies).toEqual(['Score: 8']);
  });

  test('a judge that answers nonsense scores 0 with a recorded error, and the run goes on', async () => {
    const env = new SingleTurnEnv({
      dataset: [{ question: 'q' }],
      rubric: new JudgeRubric({ judgeClient: new ScriptedClient(['banana']) }),
    });
    const trajectory = await env.rollout(new ScriptedClient(['a']), env.dataset[0]!);
    expect(trajectory.reward).toBe(0);
    expect(trajectory.errors).toHaveLength(1);
    expect(trajectory.errors[0]).toMatchObject({ source: 'reward', name: 'judgeReward' });
    expect(trajectory.errors[0]!.message).toContain('holds no score');
  });
});

test('fillTemplate leaves unknown placeholders alone', () => {
  expect(fillTemplate('{a} {b} {a}', { a: 'x' })).toBe('x {b} x');
});
