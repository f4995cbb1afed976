/** The words of results: the summary's errors line, the expected-answer chip, and which reward lines a chart draws. */
import { describe, expect, test } from 'vitest';
import { countOf, durationText, environmentReplies, errorsLine, expectedAnswerChip, rewardLines } from '../../../src/ui/kit/result-text.ts';

describe('errorsLine', () => {
  test('no errors keeps the short form; errors say how many rollouts and where, most first', () => {
    expect(errorsLine(0, {})).toBe('0 with errors');
    expect(errorsLine(2, { reward: 2 })).toBe('2 rollouts with errors: 2 errors in reward functions');
    expect(errorsLine(1, { client: 1 })).toBe('1 rollout with errors: 1 error in model calls');
    expect(errorsLine(3, { env: 1, reward: 4, parser: 0 })).toBe('3 rollouts with errors: 4 errors in reward functions, 1 in environment code');
  });
});

describe('expectedAnswerChip', () => {
  test("names the task's reference answer, so an empty reply beside it does not look answered", () => {
    expect(expectedAnswerChip(undefined)).toBeNull();
    expect(expectedAnswerChip('pool')).toBe('expected answer: pool');
    expect(expectedAnswerChip('')).toBe('expected answer: (empty)');
  });
});

describe('rewardLines', () => {
  const step = (mean: number, rewards: Record<string, number>) => ({ reward: { mean }, rewards });

  test('a single function equal to the mean at every step is named in the mean\'s label, not drawn under it', () => {
    expect(rewardLines([step(0.2, { lcsReward: 0.2 }), step(0.5, { lcsReward: 0.5 })])).toEqual({ meanLabel: 'reward (= lcsReward)', functions: [], ownScale: [] });
  });

  test('functions that differ from the mean (weights, several functions) are drawn', () => {
    expect(rewardLines([step(1.2, { lcsReward: 1, formatReward: 1 }), step(0.6, { lcsReward: 0.5, formatReward: 0.5 })])).toEqual({ meanLabel: 'reward', functions: ['lcsReward', 'formatReward'], ownScale: [] });
    // Equal at one step only is not equal.
    expect(rewardLines([step(0.2, { lcsReward: 0.2 }), step(0.5, { lcsReward: 0.4 })]).functions).toEqual(['lcsReward']);
    expect(rewardLines([])).toEqual({ meanLabel: 'reward', functions: [], ownScale: [] });
  });

  test("a function outside [0, 1] (lesson 6's guessesMetric, about 4) gets its own scale instead of flattening the 0–1 lines", () => {
    const wordle = [step(0.4, { compactWinReward: 0.2, guessesMetric: 3.8, consistentGuessesMetric: 0.5 }), step(0.5, { compactWinReward: 0.3, guessesMetric: 4.1, consistentGuessesMetric: 0.6 })];
    expect(rewardLines(wordle)).toEqual({ meanLabel: 'reward', functions: ['compactWinReward', 'consistentGuessesMetric'], ownScale: ['guessesMetric'] });
    // A negative penalty is off the 0–1 axis too.
    expect(rewardLines([step(0.5, { lcsReward: 1, lengthPenalty: -0.5 })]).ownScale).toEqual(['lengthPenalty']);
  });
});

describe('environmentReplies', () => {
  test('a multi-turn game reads turn by turn: the environment reply after each model turn', () => {
    const completion = [
      { role: 'assistant', content: 'might' },
      { role: 'user', content: '????? +i -ghmt' },
      { role: 'assistant', content: 'xxxxx' },
      { role: 'user', content: 'not a word; ????? +i -ghmt' },
      { role: 'assistant', content: 'spine' },
      { role: 'user', content: 'won in 2' },
    ];
    expect(environmentReplies(completion)).toEqual(['????? +i -ghmt', 'not a word; ????? +i -ghmt', 'won in 2']);
  });

  test('a single-turn answer has no reply, and several messages after one turn are joined', () => {
    expect(environmentReplies([{ role: 'assistant', content: 'olleh' }])).toEqual(['']);
    expect(environmentReplies([{ role: 'assistant', content: 'a' }, { role: 'tool', content: '4' }, { role: 'user', content: 'go on' }])).toEqual(['4 go on']);
  });
});

describe('countOf', () => {
  test('one is singular, everything else plural', () => {
    expect(countOf(1, 'rollout')).toBe('1 rollout');
    expect(countOf(0, 'rollout')).toBe('0 rollouts');
    expect(countOf(8, 'step')).toBe('8 steps');
    expect(countOf(2, 'match', 'matches')).toBe('2 matches');
  });
});

describe('durationText', () => {
  test('rounds the whole duration before splitting it into minutes, so 59.6 s past a minute is the next minute', () => {
    expect(durationText(41 * 60 + 59.6)).toBe('42 min 0 s');
    expect(durationText(59.2)).toBe('1 min 0 s');
    expect(durationText(12.1)).toBe('13 s');
    expect(durationText(125)).toBe('2 min 5 s');
    expect(durationText(-1)).toBe('0 s');
  });
});
