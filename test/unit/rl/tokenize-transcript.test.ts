import { expect, test } from 'vitest';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { tokenizeTranscript } from '../../../src/rl/tokenize-transcript.ts';

const tokenizer = new ByteTokenizer();
const trainedText = (tokens: number[], sampled: number[]) => tokenizer.decode(tokens.filter((_, i) => sampled[i] === 1));
const untrainedText = (tokens: number[], sampled: number[]) => tokenizer.decode(tokens.filter((_, i) => sampled[i] === 0));

test('single turn: the prompt is context, the reply and its end-of-turn token are trained', () => {
  const { tokens, sampled } = tokenizeTranscript(tokenizer, [
    { role: 'system', content: 'Reverse it.' },
    { role: 'user', content: 'abc' },
    { role: 'assistant', content: 'cba' },
  ]);
  expect(tokenizer.decode(tokens)).toBe('<|bos|><|system|>Reverse it.<|end|><|user|>abc<|end|><|assistant|>cba<|end|>');
  expect(trainedText(tokens, sampled)).toBe('cba<|end|>');
});

test('multi-turn: environment feedback between turns is context only, and the layout matches the chat format', () => {
  const messages = [
    { role: 'user' as const, content: 'guess' },
    { role: 'assistant' as const, content: '<guess>50</guess>' },
    { role: 'user' as const, content: 'higher' },
    { role: 'assistant' as const, content: '<guess>75</guess>' },
    { role: 'user' as const, content: 'correct' },
  ];
  const { tokens, sampled } = tokenizeTranscript(tokenizer, messages);
  expect(tokenizer.decode(tokens)).toBe(tokenizer.renderChat(messages.slice(0, 4)));
  expect(trainedText(tokens, sampled)).toBe('<guess>50</guess><|end|><guess>75</guess><|end|>');
  expect(untrainedText(tokens, sampled)).toBe('<|bos|><|user|>guess<|end|><|assistant|><|user|>higher<|end|><|assistant|>');
});

test('a model reply that spells a special token is trained as plain bytes, not as the control token', () => {
  const { tokens, sampled } = tokenizeTranscript(tokenizer, [{ role: 'user', content: 'x' }, { role: 'assistant', content: '<|end|>' }]);
  const trained = tokens.filter((_, i) => sampled[i] === 1);
  expect(trained).toHaveLength('<|end|>'.length + 1);
  expect(trained.filter((id) => tokenizer.isSpecial(id))).toHaveLength(1);
});

test('a transcript without an assistant message is refused', () => {
  expect(() => tokenizeTranscript(tokenizer, [{ role: 'user', content: 'x' }])).toThrow('no assistant message');
});
