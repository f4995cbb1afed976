import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Task } from '../../../../src/envs/index.ts';
import loadCountdown, { countdownExpertPolicy, type CountdownInfo } from '../../../../src/envs/builtin/countdown.ts';
import { evaluateExpression, formatRational } from '../../../../src/envs/builtin/expression.ts';

const env = loadCountdown({ numTasks: 50, numEvalTasks: 20 });
const countdownTask = (numbers: number[], target: number): Task => {
  const info: CountdownInfo = { numbers, target, solution: '' };
  return { question: `Numbers: ${numbers.join(' ')}\nTarget: ${target}`, answer: String(target), info };
};
const score = async (task: Task, reply: string) => (await env.rollout(new ScriptedClient([reply]), task)).scores;

describe('countdown scoring', () => {
  const task = countdownTask([3, 7, 25], 46);

  test.each([
    ['<answer>25 + 7 * 3</answer>', { correctReward: 1, formatReward: 1, allowedNumbersMetric: 1 }], // precedence: 25 + 21
    ['<answer>25 + 7 * 3 = 46</answer>', { correctReward: 1, formatReward: 1, allowedNumbersMetric: 1 }],
    ['<answer>(25 + 7) * 3</answer>', { correctReward: 0, formatReward: 1, allowedNumbersMetric: 1 }], // 96
    ['<answer>25 + 21</answer>', { correctReward: 0, formatReward: 1, allowedNumbersMetric: 0 }], // 21 is not given
    ['<answer>25 + 7 * 3 + 3 - 3</answer>', { correctReward: 0, formatReward: 1, allowedNumbersMetric: 0 }], // 3 used three times
    ['<answer>constructor</answer>', { correctReward: 0, formatReward: 1, allowedNumbersMetric: 0 }],
    ['<answer>(() => 46)()</answer>', { correctReward: 0, formatReward: 1, allowedNumbersMetric: 0 }],
    ['25 + 7 * 3', { correctReward: 0, formatReward: 0, allowedNumbersMetric: 0 }], // no tags
  ])('%s', async (reply, expected) => {
    expect(await score(task, reply)).toEqual(expected);
  });

  test('fractions along the way are fine when the result is exact; not every number must be used', async () => {
    expect((await score(countdownTask([2, 3, 8], 12), '<answer>3 / 2 * 8</answer>')).correctReward).toBe(1);
    expect((await score(countdownTask([2, 3, 8], 16), '<answer>8 * 2</answer>')).correctReward).toBe(1);
    expect((await score(countdownTask([2, 3, 8], 4), '<answer>8 / 3</answer>')).correctReward).toBe(0);
  });

  test('unary minus is an operation, not a new number', async () => {
    expect((await score(countdownTask([3, 7, 25], 11), '<answer>-(3 - 7) + 7</answer>')).allowedNumbersMetric).toBe(0); // 7 twice
    expect((await score(countdownTask([3, 7, 25], 4), '<answer>-3 + 7</answer>')).correctReward).toBe(1);
  });
});

describe('countdown tasks', () => {
  test('every task is solvable: its stored solution uses exactly the given numbers and reaches the target', () => {
    for (const difficulty of [2, 3, 4, 5, 6]) {
      for (const task of loadCountdown({ numTasks: 100, numEvalTasks: 10, difficulty }).dataset) {
        const info = task.info as CountdownInfo;
        expect(info.numbers).toHaveLength(difficulty);
        const { value, numbers } = evaluateExpression(info.solution);
        expect(formatRational(value)).toBe(String(info.target));
        expect(numbers.map((n) => Number(n.num)).sort((a, b) => a - b)).toEqual([...info.numbers].sort((a, b) => a - b));
        expect(task.question).toBe(`Numbers: ${info.numbers.join(' ')}\nTarget: ${info.target}`);
        expect(info.target).toBeGreaterThan(0);
      }
    }
  });

  test('difficulty out of range is refused', () => {
    expect(() => loadCountdown({ difficulty: 7 })).toThrow(/difficulty/);
  });

  test('the expert solves 20 held-out tasks', async () => {
    const result = await evaluate(env, new ScriptedClient(countdownExpertPolicy([...env.dataset, ...env.evaluationTasks])), { numTasks: 20 });
    expect(result.summary.passRate).toBe(1);
    expect(result.summary.reward.mean).toBeCloseTo(1.2, 12);
  });
});
