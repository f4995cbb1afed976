import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Task } from '../../../../src/envs/index.ts';
import loadReverseText, { lcsRatio, longestCommonSubsequence, reverseText, reverseTextExpertPolicy } from '../../../../src/envs/builtin/reverse-text.ts';

describe('LCS similarity', () => {
  test.each([
    ['abc', 'abc', 3, 1],
    ['kitten', 'sitting', 4, 8 / 13], // i t t n
    ['abcd', 'acbd', 3, 0.75],
    ['abc', 'xyz', 0, 0],
    ['abc', '', 0, 0],
    ['', '', 0, 1],
    ['dlrow olleh', 'dlrow olle', 10, 20 / 21],
  ])('LCS(%j, %j) = %d, ratio %d', (a, b, lcs, ratio) => {
    expect(longestCommonSubsequence(a, b)).toBe(lcs);
    expect(longestCommonSubsequence(b, a)).toBe(lcs);
    expect(lcsRatio(a, b)).toBeCloseTo(ratio, 12);
  });

  test('reverses by code point', () => {
    expect(reverseText('hello world')).toBe('dlrow olleh');
    expect(reverseText('añb😀')).toBe('😀bña');
  });
});

describe('reverse-text environment', () => {
  const env = loadReverseText({ numTasks: 30, numEvalTasks: 20 });
  const task: Task = { question: 'Reverse this text: hello world', answer: 'dlrow olleh', info: { text: 'hello world' } };
  const run = async (reply: string) => env.rollout(new ScriptedClient([reply]), task);

  test('an exact reversal scores 1.2 and passes; a near miss gets partial credit and fails', async () => {
    const exact = await run('<reversed>dlrow olleh</reversed>');
    expect(exact.scores).toEqual({ lcsReward: 1, formatReward: 1 });
    expect(env.isPassed(exact)).toBe(true);
    const nearMiss = await run('<reversed>dlrow olle</reversed>');
    expect(nearMiss.scores.lcsReward).toBeCloseTo(20 / 21, 12);
    expect(nearMiss.reward).toBeCloseTo(20 / 21 + 0.2, 12);
    expect(env.isPassed(nearMiss)).toBe(false);
  });

  test('no tags, no answer', async () => {
    const untagged = await run('dlrow olleh');
    expect(untagged.scores).toEqual({ lcsReward: 0, formatReward: 0 });
  });

  test('texts respect the length arguments', () => {
    for (const [minLength, maxLength] of [[5, 20], [3, 6], [10, 10], [1, 1], [2, 2], [30, 40]] as const) {
      for (const t of loadReverseText({ numTasks: 200, numEvalTasks: 5, minLength, maxLength }).dataset) {
        const text = (t.info as { text: string }).text;
        expect(text.length).toBeGreaterThanOrEqual(minLength);
        expect(text.length).toBeLessThanOrEqual(maxLength);
        expect(t.answer).toBe(reverseText(text));
        expect(text).toBe(text.trim());
      }
    }
    expect(() => loadReverseText({ minLength: 8, maxLength: 4 })).toThrow(/minLength/);
  });

  test('the expert reverses 20 held-out texts exactly', async () => {
    const result = await evaluate(env, new ScriptedClient(reverseTextExpertPolicy), { numTasks: 20 });
    expect(result.summary.passRate).toBe(1);
  });
});

describe('reverse-text, compact form for tiny models', () => {
  test('bare questions, whole-reply answers, LCS reward only, and an expert that answers bare', async () => {
    const env = loadReverseText({ compact: true, numTasks: 20, minLength: 3, maxLength: 6 });
    const task = env.dataset[0]!;
    expect(env.formatPrompt(task)).toEqual([{ role: 'user', content: task.info!.text }]);
    const expert = new ScriptedClient(reverseTextExpertPolicy);
    const perfect = await env.rollout(expert, task);
    expect(perfect.completion[0]!.content).toBe(task.answer);
    expect(perfect.scores).toEqual({ lcsReward: 1 });
    expect(env.isPassed(perfect)).toBe(true);
    const sloppy = await env.rollout(new ScriptedClient([`${task.answer}x`]), task);
    expect(sloppy.reward).toBeLessThan(1);
    expect(env.isPassed(sloppy)).toBe(false);
  });
});
