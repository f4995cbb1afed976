/**
 * Model folders of TabRL's byte-level models (nano): a Hugging Face-style folder (config.json,
 * model.safetensors in f16, tokenizer.json, tokenizer_config.json) whose tokenizer files name the
 * byte tokenizer instead of describing a Hugging Face one. `loadFolderTokenizer` picks the byte
 * tokenizer for such a folder and the Hugging Face tokenizer for any other.
 */
import { errorMessage } from '../../common/error-message.ts';
import type { NamedTensors } from '../model/backend.ts';
import { modelConfigToJson, type ModelConfig } from '../model/config.ts';
import { BYTE_SPECIAL_TOKENS, BYTE_VOCAB_SIZE, ByteTokenizer } from './byte-tokenizer.ts';
import { loadHfTokenizer } from './hf-tokenizer.ts';
import type { ReadFile } from './model-folder.ts';
import { serializeSafetensors } from './safetensors.ts';
import type { Tokenizer } from './tokenizer.ts';

/** The tokenizer_class a byte-model folder's tokenizer_config.json names. */
const BYTE_TOKENIZER_CLASS = 'TabRLByteTokenizer';

/** tokenizer_config.json of a byte-model folder. */
function byteTokenizerConfig(): Record<string, unknown> {
  return {
    tokenizer_class: BYTE_TOKENIZER_CLASS,
    bos_token: '<|bos|>',
    eos_token: '<|end|>',
    pad_token: '<|pad|>',
    chat_format: '<|bos|> then per message <|role|>content<|end|>; generation prompt <|assistant|> (see src/gpu/io/byte-tokenizer.ts)',
  };
}

/** tokenizer.json of a byte-model folder: the vocabulary as TabRL's byte tokenizer defines it (ids 0–255 bytes, then the specials). */
function byteTokenizerJson(): Record<string, unknown> {
  return {
    tabrl_byte_tokenizer: { version: 1, vocab_size: BYTE_VOCAB_SIZE, bytes: '0-255', added_tokens: BYTE_SPECIAL_TOKENS.map((content, i) => ({ id: 256 + i, content, special: true })) },
  };
}

/** Pretty JSON with a final newline, as bytes. */
function json(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');
}

/** The byte tokenizer's two files (tokenizer.json, tokenizer_config.json), which make any folder of byte-vocabulary weights loadable. */
export function byteTokenizerFiles(): Map<string, Uint8Array> {
  return new Map([
    ['tokenizer.json', json(byteTokenizerJson())],
    ['tokenizer_config.json', json(byteTokenizerConfig())],
  ]);
}

/** Returns the files of a byte-model folder: config.json, an F16 model.safetensors and the byte tokenizer's two files (extra files, e.g. a training log, are added as given). */
export function serializeByteModelFolder(config: ModelConfig, tensors: NamedTensors, extra: Record<string, unknown> = {}): Map<string, Uint8Array> {
  if (config.vocab_size !== BYTE_VOCAB_SIZE) throw new Error(`a byte-model folder needs vocab_size ${BYTE_VOCAB_SIZE}, got ${config.vocab_size}`);
  const files = new Map<string, Uint8Array>([
    ['config.json', json({ ...modelConfigToJson(config), torch_dtype: 'float16' })],
    ['model.safetensors', serializeSafetensors(tensors, { format: 'pt' }, 'F16')],
    ...byteTokenizerFiles(),
  ]);
  for (const [name, value] of Object.entries(extra)) files.set(name, json(value));
  return files;
}

/** Whether a parsed tokenizer_config.json names TabRL's byte tokenizer. */
function isByteTokenizerConfig(config: unknown): boolean {
  return typeof config === 'object' && config !== null && (config as { tokenizer_class?: unknown }).tokenizer_class === BYTE_TOKENIZER_CLASS;
}

/** Loads a folder's tokenizer: the byte tokenizer when tokenizer_config.json names it, else the Hugging Face tokenizer. */
export async function loadFolderTokenizer(readFile: ReadFile, label = 'model folder'): Promise<Tokenizer> {
  const configBytes = await readFile('tokenizer_config.json').catch(() => undefined);
  if (configBytes !== undefined) {
    let config: unknown;
    try {
      config = JSON.parse(new TextDecoder().decode(configBytes));
    } catch (error) {
      throw new Error(`${label}/tokenizer_config.json: not valid JSON (${errorMessage(error)})`);
    }
    if (isByteTokenizerConfig(config)) return new ByteTokenizer();
  }
  return loadHfTokenizer(readFile, label);
}
