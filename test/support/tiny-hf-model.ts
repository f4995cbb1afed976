/**
 * A small Hugging Face-format model folder made in the test (no download): a 2-layer Llama with
 * seeded random weights (config.json + model.safetensors via serializeModelFolder), and a
 * byte-level BPE tokenizer.json built here — the 256 GPT-2 byte symbols, two merges, and the ChatML
 * special tokens — with tokenizer_config.json (the chat template is passed in: SmolLM2's fixture)
 * and generation_config.json. The wide variant adds 251 tokens of multi-byte UTF-8 text (accented
 * letters, CJK, arrows, emoji) past the special tokens, for a vocabulary of 512 as a real model's is
 * larger than the byte tokenizer's 264. Free of Node APIs, so browser tests and the e2e test (Node) share it.
 */
import { serializeModelFolder } from '../../src/gpu/io/model-folder.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../src/gpu/model/cpu-backend.ts';

/** The small model's shapes: vocabulary 264 (the tokenizer's 261 ids padded to a multiple of 4). */
export const TINY_HF_CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  vocab_size: 264,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: true,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
};

/** The wide variant: 261 ids as above plus 251 multi-byte tokens (ids 261–511), vocabulary 512. */
export const TINY_HF_WIDE_CONFIG: ModelConfig = { ...TINY_HF_CONFIG, vocab_size: 512 };

/** The wide variant's extra tokens as text: every one holds at least one character of two to four UTF-8 bytes. */
export function wideTokenTexts(): string[] {
  const accented = [...'àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ'];
  const wide = [...'日本語中文字学習強化→←↑↓★♥€£'];
  const emoji = ['😀', '🎉', '🚀', '✓', '🌍'];
  const texts = new Set<string>([...accented, ...wide, ...emoji]);
  for (const mark of [...accented, ...wide]) texts.add(` ${mark}`);
  for (const letter of 'aeiounrst') for (const mark of accented) texts.add(letter + mark);
  return [...texts].slice(0, 251);
}

/** GPT-2's byte → printable character table (bytes that print as themselves keep their code point, the rest map past 255). */
function byteSymbols(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const symbols: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) symbols.push(String.fromCodePoint(printable(b) ? b : next++));
  return symbols;
}

/** A byte-level BPE tokenizer.json: ids 0–255 the bytes, 256 "he", 257 "Ġt", then <|endoftext|>, <|im_start|>, <|im_end|> (258–260), then `extra` texts (from 261; decodable and sampleable, never made by encoding). */
export function byteLevelTokenizerJson(extra: readonly string[] = []): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  const symbols = byteSymbols();
  symbols.forEach((symbol, id) => (vocab[symbol] = id));
  extra.forEach((text, i) => (vocab[[...new TextEncoder().encode(text)].map((byte) => symbols[byte]).join('')] = 261 + i));
  vocab.he = 256;
  vocab['Ġt'] = 257;
  const special = (id: number, content: string) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const specials = [special(258, '<|endoftext|>'), special(259, '<|im_start|>'), special(260, '<|im_end|>')];
  for (const token of specials) vocab[token.content] = token.id;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: ['h e', 'Ġ t'] },
  };
}

/** The small model's files by name, weights from `seed`, with `chatTemplate` in tokenizer_config.json; `wide` gives the 512-token multi-byte variant. */
export async function tinyHfModelFiles(chatTemplate: string, seed = 7, { wide = false }: { wide?: boolean } = {}): Promise<Map<string, Uint8Array>> {
  const config = wide ? TINY_HF_WIDE_CONFIG : TINY_HF_CONFIG;
  const backend = await createCpuBackend(config, { seed });
  const files = serializeModelFolder(config, await backend.getParameters());
  backend.dispose();
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  files.set('tokenizer.json', json(byteLevelTokenizerJson(wide ? wideTokenTexts() : [])));
  files.set('tokenizer_config.json', json({ bos_token: null, eos_token: '<|im_end|>', pad_token: '<|endoftext|>', unk_token: null, chat_template: chatTemplate, model_max_length: 2048 }));
  files.set('generation_config.json', json({ eos_token_id: [260] }));
  return files;
}
