// The models shipped in public/models (SHIPPED_MODELS: nano; nano-wordle, lesson 6's nano that reads
// boards; nano-tools, lesson 7's nano that copies; and nano-2m, a larger nano), one parameterised test: the list and the folders agree;
// each folder loads like any model folder, matches its config and its preset (NANO_CONFIG,
// NANO_2M_CONFIG), holds f16 weights within a classroom-sized download that the picker's stated size
// matches, names the byte tokenizer, records how it was made (nano-tools: both stages), and opens by
// name as a pretrained model. nano also plays the compact Wordle, and nano-wordle wins more games whose answer
// it never saw played; nano-tools says fresh ids back and nano does not.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { loadFolderTokenizer, serializeByteModelFolder } from '../../../src/gpu/io/byte-model-folder.ts';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { loadModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { f16BitsToF32, f32ToF16Bits } from '../../../src/gpu/io/half.ts';
import { parseSafetensors } from '../../../src/gpu/io/safetensors.ts';
import { NANO_2M_CONFIG, NANO_CONFIG } from '../../../src/gpu/inference/presets.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { paramShapes } from '../../../src/gpu/model/layout.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { createFastCpuBackend } from '../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { isShippedModel, modelFolderOf, NANO_MODEL_FOLDER, openModel } from '../../../src/cli/open-model.ts';
import { SHIPPED_MODELS, shippedModelDownloadBytes, shippedModelParameters } from '../../../src/models/shipped-models.ts';
import { loadBuiltinEnvironment } from '../../../src/envs/builtin/index.ts';
import { COMPACT_DICTIONARY } from '../../../src/envs/builtin/wordle-compact.ts';
import { evaluate } from '../../../src/envs/index.ts';
import { LocalChatClient } from '../../../src/gpu/inference/local-chat-client.ts';
import { measureCopying, type CopyingMeasure } from '../../../scripts/nano/copying.ts';

const MODELS_FOLDER = fileURLToPath(new URL('../../../public/models', import.meta.url));

/** What each shipped folder must hold beyond what every one does. */
interface FolderExpectation {
  config: ModelConfig;
  /** Parameters, exclusive bounds. */
  parameters: [number, number];
  /** The whole folder's bytes stay under this (2 bytes a weight, and the small text files). */
  maxFolderBytes: number;
  /** pretraining.json's `shape`, when the record has one (nano's predates it). */
  recordShape?: Record<string, number>;
  /** What the recorded command must say besides the script's name. */
  commandFlags?: string;
  /** What the record of the folder it was continued from (init.record) must say, for a model made in stages. */
  initCommandFlags?: string;
}

/** A folder of nano's shape whose record names that shape (nano-wordle, nano-tools; nano's own record predates `shape`). */
const NANO_SHAPED = {
  config: NANO_CONFIG,
  parameters: [200_000, 5_000_000],
  maxFolderBytes: 1_000_000,
  recordShape: { layers: 3, hidden: 96, intermediate: 256, heads: 3, kvHeads: 1, headDim: 32 },
} satisfies FolderExpectation;

const EXPECTED: Record<string, FolderExpectation> = {
  nano: { config: NANO_CONFIG, parameters: NANO_SHAPED.parameters, maxFolderBytes: NANO_SHAPED.maxFolderBytes },
  'nano-2m': {
    config: NANO_2M_CONFIG,
    parameters: [2_000_000, 3_000_000],
    maxFolderBytes: 6_000_000,
    recordShape: { layers: 6, hidden: 192, intermediate: 512, heads: 6, kvHeads: 2, headDim: 32 },
    commandFlags: '--layers 6 --hidden 192 --intermediate 512 --heads 6 --kv-heads 2',
  },
  'nano-wordle': { ...NANO_SHAPED, commandFlags: '--game-answers demonstration --teacher game' },
  'nano-tools': {
    ...NANO_SHAPED,
    commandFlags: '--init ',
    initCommandFlags: '--init-std 0.1 --copies 20000 --copy-kinds echo',
  },
};

test('SHIPPED_MODELS lists exactly the folders in public/models, and each with a folder test here', async () => {
  const folders = (await readdir(MODELS_FOLDER, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  expect(SHIPPED_MODELS.map((model) => model.id).sort()).toEqual(folders.sort());
  expect(Object.keys(EXPECTED).sort()).toEqual(folders.sort());
  for (const id of folders) expect(isShippedModel(id)).toBe(true);
  for (const spec of ['tiny', 'nano-3m', './public/models/nano']) expect(isShippedModel(spec)).toBe(false);
});

describe.each(SHIPPED_MODELS.map((model) => [model.id, model] as const))('the shipped %s folder', (id, shipped) => {
  const folder = join(MODELS_FOLDER, id);
  const read = async (name: string) => new Uint8Array(await readFile(join(folder, name)));
  const expected = EXPECTED[id]!;

  test('loads, matches its config and preset, every weight is f16 with its config shape, and the folder is classroom-sized', async () => {
    expect(shipped.config).toEqual(expected.config);
    const model = await loadModelFolder(read, folder);
    expect(model.config).toEqual(expected.config);
    expect(model.ignored).toEqual([]);
    const { dtypes } = parseSafetensors(await read('model.safetensors'));
    expect([...dtypes.keys()].sort()).toEqual(paramShapes(expected.config).map(([name]) => name).sort());
    expect([...dtypes.values()].every((dtype) => dtype === 'F16')).toBe(true);
    for (const [name, shape] of paramShapes(expected.config)) expect(model.tensors.get(name)!.shape).toEqual([...shape]);
    const parameters = [...model.tensors.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
    expect(parameters).toBeGreaterThan(expected.parameters[0]);
    expect(parameters).toBeLessThan(expected.parameters[1]);
    expect(shippedModelParameters(shipped)).toBe(parameters);
    for (const tensor of model.tensors.values()) expect(tensor.data.every(Number.isFinite)).toBe(true);
    let bytes = 0;
    for (const name of await readdir(folder)) bytes += (await stat(join(folder, name))).size;
    expect(bytes).toBeLessThan(expected.maxFolderBytes);
    // The size the picker states is what the tab fetches (config.json and the weights) within 2 %.
    const fetched = (await stat(join(folder, 'config.json'))).size + (await stat(join(folder, 'model.safetensors'))).size;
    expect(Math.abs(fetched - shippedModelDownloadBytes(shipped)) / fetched).toBeLessThan(0.02);
  });

  test('names the byte tokenizer, and records its seed, data, steps, time, machine and command', async () => {
    expect(await loadFolderTokenizer(read, folder)).toBeInstanceOf(ByteTokenizer);
    const record = JSON.parse(new TextDecoder().decode(await read('pretraining.json')));
    if (expected.recordShape) expect(record.shape).toEqual(expected.recordShape);
    expect(Number.isInteger(record.seed)).toBe(true);
    expect(record.steps).toBeGreaterThan(0);
    expect(record.tokensSeen).toBe(record.steps * record.batchSize * record.rowLength);
    expect(record.wallSeconds).toBeGreaterThan(0);
    expect(typeof record.machine).toBe('string');
    expect(record.corpus.wordleGames).toBeGreaterThan(0);
    expect(record.corpus.wordLists).toBeGreaterThan(0);
    expect(record.corpus.fitsLists).toBeGreaterThan(0);
    expect(record.command).toContain('scripts/nano/pretrain.ts');
    if (expected.commandFlags) expect(record.command).toContain(expected.commandFlags);
    if (expected.initCommandFlags) {
      expect(record.init.record.command).toContain('scripts/nano/pretrain.ts');
      expect(record.init.record.command).toContain(expected.initCommandFlags);
      expect(record.init.record.steps).toBeGreaterThan(0);
    }
  });

  test(`opens as --model ${id}, and is pretrained: it predicts a Wordle transcript far better than a random init`, async () => {
    expect(modelFolderOf(id)).toBe(folder);
    if (id === 'nano') expect(NANO_MODEL_FOLDER).toBe(folder);
    const pretrained = await openModel(id, { backend: 'cpu', seed: 0 });
    const random = await createFastCpuBackend(expected.config, { seed: 0 }, {}, await createNodeWasmKernels(1));
    // a game on a training answer (crane): the opening board, a dictionary word, and the board it got back
    const ids = pretrained.tokenizer.encode(pretrained.tokenizer.renderChat([{ role: 'user', content: '????? + -' }, { role: 'assistant', content: 'slate' }, { role: 'user', content: '??a?e + -lst' }]));
    const input = Int32Array.from(ids.slice(0, -1));
    const targets = Int32Array.from(ids.slice(1));
    const mean = (values: Float32Array) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const trained = mean(await pretrained.backend.logprobs(input, targets, 1, input.length, 1));
    const untrained = mean(await random.logprobs(input, targets, 1, input.length, 1));
    expect(trained).toBeGreaterThan(untrained + 1); // at least one nat per token better
    pretrained.backend.dispose();
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

describe('the shipped nano-wordle reads boards it never saw played', () => {
  test('its pretraining games never had a practice or held-out answer, and it wins more held-out games than nano', { timeout: 120_000 }, async () => {
    const record = JSON.parse(await readFile(join(MODELS_FOLDER, 'nano-wordle', 'pretraining.json'), 'utf8'));
    expect(record.gameAnswers).toBe('demonstration');
    expect(record.teacher).toBe('game');
    expect(record.corpus.distinctGames).toBeGreaterThan(0.9 * record.corpus.wordleGames); // varied games, not one per answer
    const env = await loadBuiltinEnvironment('wordle', { compact: true, evalSplit: 'held-out' });
    const heldOutWins: Record<string, number> = {};
    for (const id of ['nano', 'nano-wordle']) {
      const model = await openModel(id, { backend: 'cpu', seed: 0 });
      const policy = new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, defaultMaxTokens: 8 });
      const result = await evaluate(env, policy, { samplingArgs: { temperature: 0, max_tokens: 8, seed: 1 } });
      heldOutWins[id] = result.summary.passRate;
      model.backend.dispose();
    }
    // 100 held-out answers, greedy: nano-wordle 0.32 and nano 0.24 when nano-wordle was made.
    expect(heldOutWins['nano-wordle']).toBeGreaterThanOrEqual(0.28);
    expect(heldOutWins['nano-wordle']).toBeGreaterThan(heldOutWins.nano! + 0.04);
  });
});

describe('the shipped nano-tools copies', () => {
  test('it says fresh identifiers back (scripts/nano/copying.ts, greedy); nano, pretrained at the usual init, says none back', { timeout: 60_000 }, async () => {
    const measured: Record<string, CopyingMeasure> = {};
    for (const id of ['nano', 'nano-tools']) {
      const opened = await openModel(id, { backend: 'cpu', seed: 0 });
      measured[id] = await measureCopying(opened.backend, NANO_CONFIG.vocab_size, 20);
      opened.backend.dispose();
    }
    expect(measured['nano-tools']!.exact).toBeGreaterThanOrEqual(0.8); // 0.925 of 40 when it was made
    expect(measured['nano-tools']!.characters).toBeGreaterThan(0.95);
    expect(measured.nano!.exact).toBe(0);
    expect(measured.nano!.characters).toBeLessThan(0.3); // chance is about 1/26 a letter, 1/10 a digit
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
