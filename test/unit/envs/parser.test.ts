import { describe, expect, test } from 'vitest';
import { Parser, ThinkParser, XMLParser, type Message, type RewardContext } from '../../../src/envs/index.ts';

const ctx = (...replies: string[]): RewardContext => ({
  prompt: [],
  completion: replies.flatMap((content): Message[] => [{ role: 'assistant', content }, { role: 'user', content: 'feedback' }]),
  answer: undefined,
  state: { prompt: [], completion: [], info: {}, turn: 0 },
  info: {},
  task: undefined,
  parser: new Parser(),
});

describe('XMLParser', () => {
  const parser = new XMLParser(['think', ['answer', 'result']]);

  test('parses fields, taking the last occurrence and accepting alternative tags', () => {
    expect(parser.parse('<think> a </think><answer>1</answer> then <answer>2</answer>')).toEqual({ think: 'a', answer: '2' });
    expect(parser.parse('<result>7</result>')).toEqual({ think: undefined, answer: '7' });
    expect(parser.parse('no tags at all')).toEqual({ think: undefined, answer: undefined });
  });

  test('parseAnswer reads the last assistant message that has the answer field', () => {
    const completion: Message[] = [
      { role: 'assistant', content: '<answer>first</answer>' },
      { role: 'user', content: '<answer>not the model</answer>' },
      { role: 'assistant', content: 'I give up' },
    ];
    expect(parser.parseAnswer(completion)).toBe('first');
    expect(parser.parseAnswer('<answer> 42 </answer>')).toBe('42');
    expect(parser.parseAnswer([])).toBeUndefined();
  });

  test('format reward averages field coverage over assistant turns and penalises stray text', async () => {
    const formatReward = parser.formatReward();
    expect(await formatReward(ctx('<think>x</think><answer>y</answer>'))).toBe(1);
    expect(await formatReward(ctx('<think>x</think><answer>y</answer> extra'))).toBeCloseTo(0.8);
    expect(await formatReward(ctx('<answer>y</answer>', 'nothing'))).toBeCloseTo(0.25);
    expect(formatReward.name).toBe('formatReward');
  });

  test('format instructions name every tag in order', () => {
    expect(parser.formatInstructions()).toBe('Respond in the following format:\n<think>\n...\n</think>\n<answer>\n...\n</answer>');
  });

  test('rejects an answer field that is not a field', () => {
    expect(() => new XMLParser(['a'], { answerField: 'b' })).toThrow('answerField "b"');
  });
});

describe('ThinkParser', () => {
  const parser = new ThinkParser(new XMLParser(['answer']));

  test('splits reasoning from the answer and parses the answer with the inner parser', () => {
    expect(parser.parse('<think>step</think> <answer>5</answer>')).toEqual({ think: 'step', answer: '<answer>5</answer>' });
    expect(parser.parseAnswer('<think>step</think> <answer>5</answer>')).toBe('5');
    expect(parser.parseAnswer('<answer>5</answer>')).toBeUndefined();
  });

  test('format reward wants exactly one leading think block and an answer after it', async () => {
    const formatReward = parser.formatReward();
    expect(await formatReward(ctx('<think>a</think>b'))).toBe(1);
    expect(await formatReward(ctx('b <think>a</think>'))).toBe(0);
    expect(await formatReward(ctx('<think>a</think><think>c</think>b'))).toBe(0);
    expect(await formatReward(ctx('<think>a</think>'))).toBe(0);
  });
});
