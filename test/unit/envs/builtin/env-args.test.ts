// Wrong argument values for the built-in environments (from --env-args or the playground's
// arguments field, so any JSON) are refused when the environment loads, with a message naming the
// environment, the argument, the value received and what is allowed; readArgs is the one helper.
import { describe, expect, test } from 'vitest';
import { readArgs } from '../../../../src/envs/env-args.ts';
import { loadBuiltinEnvironment } from '../../../../src/envs/builtin/index.ts';

describe('readArgs', () => {
  const read = (args: Record<string, unknown>) => readArgs('demo', args);

  test('a missing argument gives the default; an allowed value is returned as given', () => {
    expect(read({}).wholeNumber('count', { default: 7, min: 0 })).toBe(7);
    expect(read({ count: 0 }).wholeNumber('count', { default: 7, min: 0, max: 3 })).toBe(0);
    expect(read({ seed: -12 }).wholeNumber('seed', { default: 0 })).toBe(-12);
    expect(read({ rate: 0.25 }).number('rate', { default: 1, min: 0, max: 1 })).toBe(0.25);
    expect(read({ flag: false }).boolean('flag', { default: true })).toBe(false);
    expect(read({}).boolean('flag', { default: true })).toBe(true);
    expect(read({ name: 'x' }).string('name', { default: 'd' })).toBe('x');
    expect(read({ mode: 'b' }).oneOf('mode', ['a', 'b'], { default: 'a' })).toBe('b');
    expect(read({}).oneOf('mode', ['a', 'b'], { default: 'a' })).toBe('a');
  });

  test('a wrong value throws a message with the environment, the argument, the value and what is allowed', () => {
    expect(() => read({ count: 'x' }).wholeNumber('count', { default: 7, min: 0, max: 3 })).toThrow('demo: count must be a whole number from 0 to 3, got "x"');
    expect(() => read({ count: 1.5 }).wholeNumber('count', { default: 7, min: 0 })).toThrow('demo: count must be a whole number ≥ 0, got 1.5');
    expect(() => read({ count: -1 }).wholeNumber('count', { default: 7, min: 0, note: 'games' })).toThrow('demo: count must be a whole number ≥ 0 (games), got -1');
    expect(() => read({ count: null }).wholeNumber('count', { default: 7 })).toThrow('demo: count must be a whole number, got null');
    expect(() => read({ rate: Number.NaN }).number('rate', { default: 1 })).toThrow('demo: rate must be a number, got NaN');
    expect(() => read({ rate: 2 }).number('rate', { default: 1, max: 1 })).toThrow('demo: rate must be a number ≤ 1, got 2');
    expect(() => read({ flag: 'yes' }).boolean('flag', { default: false })).toThrow('demo: flag must be true or false, got "yes"');
    expect(() => read({ flag: 1 }).boolean('flag', { default: false })).toThrow('demo: flag must be true or false, got 1');
    expect(() => read({ name: 3 }).string('name', { default: 'd' })).toThrow('demo: name must be a string, got 3');
    expect(() => read({ mode: 'c' }).oneOf('mode', ['a', 'b', 'z'], { default: 'a' })).toThrow('demo: mode must be a, b or z, got "c"');
    expect(() => read({}).fail('need x ≤ y')).toThrow('demo: need x ≤ y');
  });

  test('a long value is cut short in the message', () => {
    const error = (() => {
      try {
        read({ count: 'y'.repeat(500) }).wholeNumber('count', { default: 1 });
      } catch (caught) {
        return (caught as Error).message;
      }
      return '';
    })();
    expect(error).toMatch(/^demo: count must be a whole number, got "y+\.\.\.$/);
    expect(error.length).toBeLessThan(140);
  });
});

/** Bad values for each built-in, with what the message must say (the environment and argument are checked for every row). */
const BAD_VALUES: Record<string, [args: Record<string, unknown>, message: string][]> = {
  wordle: [
    [{ numTasks: 'x' }, 'wordle: numTasks must be a whole number from 0 to 2015 (one game per training word), got "x"'],
    [{ numTasks: 3000 }, 'numTasks must be a whole number from 0 to 2015'],
    [{ numEvalTasks: -1 }, 'wordle: numEvalTasks must be a whole number from 0 to 300 (one game per held-out word), got -1'],
    [{ seed: 'one' }, 'wordle: seed must be a whole number, got "one"'],
    [{ maxTurns: 0 }, 'wordle: maxTurns must be a whole number ≥ 1, got 0'],
    [{ compact: 'yes' }, 'wordle: compact must be true or false, got "yes"'],
  ],
  'wordle (compact)': [
    [{ compact: true, numTasks: 2.5 }, 'wordle (compact): numTasks must be a whole number ≥ 0 (answers repeat when there are more games than answers), got 2.5'],
    [{ compact: true, numEvalTasks: 101, evalSplit: 'held-out' }, 'wordle (compact): numEvalTasks must be a whole number from 0 to 100 (the held-out split has one game per held-out word), got 101'],
    [{ compact: true, numEvalTasks: 10_001 }, 'wordle (compact): numEvalTasks must be a whole number from 0 to 10000, got 10001'],
    [{ compact: true, evalSplit: 'answers' }, 'wordle (compact): evalSplit must be fresh or held-out, got "answers"'],
    [{ compact: true, answers: 'held-out' }, 'wordle (compact): answers must be training, practice, demonstration or practice-and-demonstration, got "held-out"'],
    [{ compact: true, turnRewards: 1 }, 'wordle (compact): turnRewards must be true or false, got 1'],
    [{ compact: true, poolSize: null }, 'wordle (compact): poolSize must be a whole number from 120'],
    [{ compact: true, evalSeed: '3' }, 'wordle (compact): evalSeed must be a whole number, got "3"'],
  ],
  'reverse-text': [
    [{ numTasks: -5 }, 'reverse-text: numTasks must be a whole number ≥ 0, got -5'],
    [{ minLength: 0 }, 'reverse-text: minLength must be a whole number ≥ 1 (characters), got 0'],
    [{ maxLength: '20' }, 'reverse-text: maxLength must be a whole number ≥ 1 (characters), got "20"'],
    [{ minLength: 10, maxLength: 6 }, 'reverse-text: need 1 ≤ minLength ≤ maxLength, got 10 and 6'],
    [{ compact: 'true' }, 'reverse-text: compact must be true or false, got "true"'],
  ],
  countdown: [
    [{ difficulty: 7 }, 'countdown: difficulty must be a whole number from 2 to 6 (how many numbers are given), got 7'],
    [{ difficulty: '3' }, 'countdown: difficulty must be a whole number from 2 to 6 (how many numbers are given), got "3"'],
    [{ maxNumber: 1 }, 'countdown: maxNumber must be a whole number ≥ 2, got 1'],
    [{ maxTarget: 0 }, 'countdown: maxTarget must be a whole number ≥ 1, got 0'],
    [{ numEvalTasks: Number.POSITIVE_INFINITY }, 'countdown: numEvalTasks must be a whole number ≥ 0, got Infinity'],
  ],
  arithmetic: [
    [{ difficulty: 0 }, 'arithmetic: difficulty must be a whole number from 1 to 5, got 0'],
    [{ difficulty: 2.5 }, 'arithmetic: difficulty must be a whole number from 1 to 5, got 2.5'],
    [{ numTasks: [10] }, 'arithmetic: numTasks must be a whole number ≥ 0, got [10]'],
  ],
  calculator: [
    [{ difficulty: 6 }, 'calculator: difficulty must be a whole number from 1 to 5, got 6'],
    [{ maxTurns: -1 }, 'calculator: maxTurns must be a whole number ≥ 1, got -1'],
    [{ evalSeed: true }, 'calculator: evalSeed must be a whole number, got true'],
  ],
  'judged-writing': [
    [{ numTasks: '100' }, 'judged-writing: numTasks must be a whole number ≥ 0, got "100"'],
    [{ judgeModel: 4 }, 'judged-writing: judgeModel must be a string, got 4'],
    [{ judgeClient: 'gpt' }, 'judged-writing: judgeClient must be a chat client given by code (an object with chat.completions.create), got string'],
  ],
};

describe.each(Object.entries(BAD_VALUES))('%s refuses wrong argument values', (label, rows) => {
  const name = label === 'wordle (compact)' ? 'wordle' : label;
  test.each(rows)('%j', async (args, message) => {
    const argument = Object.keys(args).find((key) => key !== 'compact' || Object.keys(args).length === 1)!;
    const loading = loadBuiltinEnvironment(name, args);
    await expect(loading).rejects.toThrow(message);
    await expect(loading).rejects.toThrow(new RegExp(`^${label.replace(/[()]/g, '\\$&')}: .*${argument}`));
  });
});

test('valid values load, with the same tasks as the defaults they spell out', async () => {
  const implicit = await loadBuiltinEnvironment('countdown', { numTasks: 5, numEvalTasks: 3 });
  const explicit = await loadBuiltinEnvironment('countdown', { numTasks: 5, numEvalTasks: 3, seed: 0, evalSeed: 1_000_003, difficulty: 3, maxNumber: 20, maxTarget: 999 });
  expect(explicit.dataset).toEqual(implicit.dataset);
  expect(explicit.evalDataset).toEqual(implicit.evalDataset);
  expect((await loadBuiltinEnvironment('wordle', { compact: false, numTasks: 0, numEvalTasks: 300 })).evaluationTasks).toHaveLength(300);
  expect((await loadBuiltinEnvironment('reverse-text', { minLength: 3, maxLength: 3, numTasks: 2, numEvalTasks: 0, compact: true })).dataset.every((task) => task.question!.length === 3)).toBe(true);
});
