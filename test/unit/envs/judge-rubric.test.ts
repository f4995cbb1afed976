import { describe, expect, test } from 'vitest';
import { fillTemplate, JudgeRubric, parseJudgeScore, ScriptedClient, SingleTurnEnv } from '../../../src/envs/index.ts';

describe('parseJudgeScore', () => {
  test.each([
    ['Score: 7', 0.7],
    ['score=10', 1],
    ['8/10', 0.8],
    ['3 / 4', 0.75],
    ['0.4', 0.4],
    ['9', 0.9],
    ['Yes, it is correct.', 1],
    ['no', 0],
    ['Score: 14', 1],
  ])('reads %j as %d', (reply, expected) => {
    expect(parseJudgeScore(reply)).toBeCloseTo(expected);
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
      rubric: new JudgeRubric({ judgeClient: judge, judgeModel: 'judge-1', judgePrompt: 'Q={question} R={response} A={answer}' }),
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
