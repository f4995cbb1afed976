// The shipped nano folder (public/models/nano) loads like any model folder, matches its config and
// NANO_CONFIG, holds f16 weights, names the byte tokenizer, and documents how it was made.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { loadFolderTokenizer, serializeByteModelFolder } from '../../../src/gpu/io/byte-model-folder.ts';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { loadModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { f16BitsToF32, f32ToF16Bits } from '../../../src/gpu/io/half.ts';
import { parseSafetensors } from '../../../src/gpu/io/safetensors.ts';
import { NANO_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { paramShapes } from '../../../src/gpu/model/layout.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { NANO_MODEL_FOLDER, openModel } from '../../../src/cli/open-model.ts';
import { loadBuiltinEnvironment } from '../../../src/envs/builtin/index.ts';
import { COMPACT_DICTIONARY } from '../../../src/envs/builtin/wordle-compact.ts';
import { evaluate } from '../../../src/envs/index.ts';
import { LocalChatClient } from '../../../src/gpu/inference/local-chat-client.ts';

const folder = fileURLToPath(new URL('../../../public/models/nano', import.meta.url));
const read = async (name: string) => new Uint8Array(await readFile(join(folder, name)));

describe('the shipped nano folder', () => {
  test('loads, matches NANO_CONFIG, and every weight is f16 with its config shape', async () => {
    const model = await loadModelFolder(read, folder);
    expect(model.config).toEqual(NANO_CONFIG);
    expect(model.ignored).toEqual([]);
    const { dtypes } = parseSafetensors(await read('model.safetensors'));
    expect([...dtypes.keys()].sort()).toEqual(paramShapes(NANO_CONFIG).map(([name]) => name).sort());
    expect([...dtypes.values()].every((dtype) => dtype === 'F16')).toBe(true);
    const parameters = [...model.tensors.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
    expect(parameters).toBeGreaterThan(200_000);
    expect(parameters).toBeLessThan(5_000_000);
    for (const tensor of model.tensors.values()) expect(tensor.data.every(Number.isFinite)).toBe(true);
  });

  test('names the byte tokenizer, and records its seed, data, time and machine', async () => {
    expect(await loadFolderTokenizer(read, folder)).toBeInstanceOf(ByteTokenizer);
    const record = JSON.parse(new TextDecoder().decode(await read('pretraining.json')));
    expect(Number.isInteger(record.seed)).toBe(true);
    expect(record.steps).toBeGreaterThan(0);
    expect(record.wallSeconds).toBeGreaterThan(0);
    expect(typeof record.machine).toBe('string');
    expect(record.corpus.wordleGames).toBeGreaterThan(0);
    expect(record.corpus.wordLists).toBeGreaterThan(0);
    expect(record.corpus.fitsLists).toBeGreaterThan(0);
    expect(record.command).toContain('scripts/nano/pretrain.ts');
  });

  test('opens as --model nano, and is pretrained: it predicts a Wordle transcript far better than a random init', async () => {
    expect(NANO_MODEL_FOLDER).toBe(folder);
    const nano = await openModel('nano', { backend: 'cpu', seed: 0 });
    const random = await createCpuBackend(NANO_CONFIG, { seed: 0 });
    // a game on a training answer (crane): the opening board, a dictionary word, and the board it got back
    const ids = nano.tokenizer.encode(nano.tokenizer.renderChat([{ role: 'user', content: '????? + -' }, { role: 'assistant', content: 'slate' }, { role: 'user', content: '??a?e + -lst' }]));
    const input = Int32Array.from(ids.slice(0, -1));
    const targets = Int32Array.from(ids.slice(1));
    const mean = (values: Float32Array) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const trained = mean(await nano.backend.logprobs(input, targets, 1, input.length, 1));
    const untrained = mean(await random.logprobs(input, targets, 1, input.length, 1));
    expect(trained).toBeGreaterThan(untrained + 1); // at least one nat per token better
    nano.backend.dispose();
    random.dispose();
  });
});

describe('the shipped nano plays the compact Wordle', () => {
  test('most of its greedy moves on held-out answers are dictionary words (the first checkpoint: about half were not)', { timeout: 60_000 }, async () => {
    const env = await loadBuiltinEnvironment('wordle', { compact: true, evalSplit: 'held-out' });
    const nano = await openModel('nano', { backend: 'cpu', seed: 0 });
    const policy = new LocalChatClient({ backend: nano.backend, tokenizer: nano.tokenizer, defaultMaxTokens: 8 });
    const result = await evaluate(env, policy, { numTasks: 16, samplingArgs: { temperature: 0, max_tokens: 8, seed: 1 } });
    const valid = result.records.reduce((sum, record) => sum + record.scores.guessesMetric!, 0);
    const invalid = result.records.reduce((sum, record) => sum + record.scores.compactInvalidGuessesMetric!, 0);
    expect(invalid / (valid + invalid)).toBeLessThan(0.4);
    expect(result.records.every((record) => COMPACT_DICTIONARY.has(String(record.completion[0]?.content).trim()))).toBe(true); // its opening guess is a word
    nano.backend.dispose();
  });
});

describe('byte-model folders', () => {
  test('a written byte-model folder reads back with the same config and the weights rounded to f16', async () => {
    const backend = await createCpuBackend(NANO_CONFIG, { seed: 3 });
    const tensors = await backend.getParameters();
    const files = serializeByteModelFolder(NANO_CONFIG, tensors);
    const readBack = async (name: string) => files.get(name) ?? Promise.reject(new Error(`no ${name}`));
    const model = await loadModelFolder(readBack, 'written');
    expect(model.config).toEqual(NANO_CONFIG);
    for (const [name, tensor] of tensors) {
      const loaded = model.tensors.get(name)!;
      for (let i = 0; i < tensor.data.length; i += 97) expect(loaded.data[i]).toBe(f16BitsToF32(f32ToF16Bits(tensor.data[i]!)));
    }
    expect(await loadFolderTokenizer(readBack, 'written')).toBeInstanceOf(ByteTokenizer);
    backend.dispose();
  });
});
