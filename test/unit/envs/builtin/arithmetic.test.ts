import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Task } from '../../../../src/envs/index.ts';
import loadArithmetic, { arithmeticExpertPolicy } from '../../../../src/envs/builtin/arithmetic.ts';

/** An independent reading of a generated story: replays each sentence on the count. */
function solveStory(question: string): number {
  const sentences = question.split(/(?<=[.?])\s+/);
  let count = Number.NaN;
  for (const sentence of sentences) {
    let match: RegExpExecArray | null;
    if ((match = /has (\d+) boxes of (\d+) /.exec(sentence))) count = Number(match[1]) * Number(match[2]);
    else if ((match = /has (\d+) /.exec(sentence))) count = Number(match[1]);
    else if ((match = /buys (\d+) packs of (\d+) /.exec(sentence))) count += Number(match[1]) * Number(match[2]);
    else if ((match = /buys (\d+) more /.exec(sentence))) count += Number(match[1]);
    else if ((match = /gives away (\d+) /.exec(sentence))) count -= Number(match[1]);
    else if (/doubles/.test(sentence)) count *= 2;
    else if (/triples/.test(sentence)) count *= 3;
    else if ((match = /into (\d+) equal groups/.exec(sentence))) count /= Number(match[1]);
    else if (!/^How many/.test(sentence)) throw new Error(`unknown sentence: ${sentence}`);
  }
  return count;
}

describe('arithmetic tasks', () => {
  test.each([1, 2, 3, 4, 5])('difficulty %d: the stored answer is the story replayed, with one sentence per step', (difficulty) => {
    for (const task of loadArithmetic({ numTasks: 200, numEvalTasks: 5, difficulty }).dataset) {
      const answer = solveStory(task.question!);
      expect(String(answer)).toBe(task.answer);
      expect(Number.isInteger(answer) && answer >= 0).toBe(true);
      expect(task.question!.split(/(?<=[.?])\s+/)).toHaveLength(difficulty + 2);
    }
  });

  test('numbers grow with difficulty', () => {
    const largest = (difficulty: number) => Math.max(...loadArithmetic({ numTasks: 200, numEvalTasks: 5, difficulty }).dataset.flatMap((t) => t.question!.match(/\d+/g)!.map(Number)));
    expect(largest(1)).toBeLessThanOrEqual(10);
    expect(largest(5)).toBeGreaterThan(100);
    expect(() => loadArithmetic({ difficulty: 0 })).toThrow(/difficulty/);
  });
});

describe('arithmetic scoring', () => {
  const env = loadArithmetic({ numTasks: 30, numEvalTasks: 20 });
  const task: Task = { question: 'Maya has 3 boxes of 400 pencils. How many pencils does Maya have now?', answer: '1200' };
  const correct = async (reply: string) => (await env.rollout(new ScriptedClient([reply]), task)).scores.correctAnswerReward;

  test.each(['<answer>1200</answer>', '<answer>1,200</answer>', '<answer>1200.0</answer>', '<answer> $1,200.00 </answer>', 'Working: 3 * 400.\n<answer>1200</answer>'])(
    '%j is right',
    async (reply) => expect(await correct(reply)).toBe(1),
  );

  test.each(['<answer>1201</answer>', '<answer>12,00</answer>', '<answer>1200 pencils</answer>', '<answer>about 1200</answer>', '1200'])(
    '%j is not',
    async (reply) => expect(await correct(reply)).toBe(0),
  );

  test('format is worth 0.2 and text outside the tags costs a little', async () => {
    const tidy = await env.rollout(new ScriptedClient(['<answer>1200</answer>']), task);
    expect(tidy.reward).toBeCloseTo(1.2, 12);
    const chatty = await env.rollout(new ScriptedClient(['So: <answer>1200</answer>']), task);
    expect(chatty.reward).toBeCloseTo(1 + 0.2 * 0.8, 12);
  });

  test('the expert answers 20 held-out tasks correctly', async () => {
    const result = await evaluate(env, new ScriptedClient(arithmeticExpertPolicy([...env.dataset, ...env.evaluationTasks])), { numTasks: 20 });
    expect(result.summary.passRate).toBe(1);
  });

  test('a throwing reward function is recorded on the rollout and scores 0; the others still count', async () => {
    const fragile = loadArithmetic({ numTasks: 3, numEvalTasks: 3 });
    fragile.rubric.addReward(() => {
      throw new Error('boom');
    }, 1, 'explodingReward');
    const trajectory = await fragile.rollout(new ScriptedClient(['<answer>1200</answer>']), task);
    expect(trajectory.errors).toEqual([{ source: 'reward', name: 'explodingReward', message: 'explodingReward threw: boom; scored 0' }]);
    expect(trajectory.scores.explodingReward).toBe(0);
    expect(trajectory.reward).toBeCloseTo(1.2, 12);
    expect(trajectory.stopReason).toBe('completed');
    // Its reward clears the threshold, but a rubric that could not score it does not call it a pass.
    expect(trajectory.reward).toBeGreaterThanOrEqual(fragile.passThreshold);
    expect(fragile.isPassed(trajectory)).toBe(false);
    expect(env.isPassed(await env.rollout(new ScriptedClient(['<answer>1200</answer>']), task))).toBe(true);
  });
});
