// The shipped nano-2m folder (public/models/nano-2m, lesson 6's larger nano) loads like any model
// folder, matches its config and NANO_2M_CONFIG, holds f16 weights within a classroom-sized download,
// names the byte tokenizer, records how it was made, and opens by name as a pretrained model.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { loadFolderTokenizer } from '../../../src/gpu/io/byte-model-folder.ts';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { loadModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { parseSafetensors } from '../../../src/gpu/io/safetensors.ts';
import { NANO_2M_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { paramShapes } from '../../../src/gpu/model/layout.ts';
import { createFastCpuBackend } from '../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { modelFolderOf, openModel } from '../../../src/cli/open-model.ts';

const folder = fileURLToPath(new URL('../../../public/models/nano-2m', import.meta.url));
const read = async (name: string) => new Uint8Array(await readFile(join(folder, name)));

describe('the shipped nano-2m folder', () => {
  test('loads, matches NANO_2M_CONFIG, every weight is f16 with its config shape, and the folder is under 6 MB', async () => {
    const model = await loadModelFolder(read, folder);
    expect(model.config).toEqual(NANO_2M_CONFIG);
    expect(model.ignored).toEqual([]);
    const { dtypes } = parseSafetensors(await read('model.safetensors'));
    expect([...dtypes.keys()].sort()).toEqual(paramShapes(NANO_2M_CONFIG).map(([name]) => name).sort());
    expect([...dtypes.values()].every((dtype) => dtype === 'F16')).toBe(true);
    for (const [name, shape] of paramShapes(NANO_2M_CONFIG)) expect(model.tensors.get(name)!.shape).toEqual([...shape]);
    const parameters = [...model.tensors.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
    expect(parameters).toBeGreaterThan(2_000_000);
    expect(parameters).toBeLessThan(3_000_000);
    for (const tensor of model.tensors.values()) expect(tensor.data.every(Number.isFinite)).toBe(true);
    let bytes = 0;
    for (const name of await readdir(folder)) bytes += (await stat(join(folder, name))).size;
    expect(bytes).toBeLessThan(6_000_000); // 2 bytes a weight, and the small text files
  });

  test('names the byte tokenizer, and records its shape, seed, data, steps, time and command', async () => {
    expect(await loadFolderTokenizer(read, folder)).toBeInstanceOf(ByteTokenizer);
    const record = JSON.parse(new TextDecoder().decode(await read('pretraining.json')));
    expect(record.shape).toEqual({ layers: 6, hidden: 192, intermediate: 512, heads: 6, kvHeads: 2, headDim: 32 });
    expect(Number.isInteger(record.seed)).toBe(true);
    expect(record.steps).toBeGreaterThan(0);
    expect(record.tokensSeen).toBe(record.steps * record.batchSize * record.rowLength);
    expect(record.wallSeconds).toBeGreaterThan(0);
    expect(record.corpus.wordleGames).toBeGreaterThan(0);
    expect(record.corpus.fitsLists).toBeGreaterThan(0);
    expect(record.command).toContain('scripts/nano/pretrain.ts');
    expect(record.command).toContain('--layers 6 --hidden 192 --intermediate 512 --heads 6 --kv-heads 2');
  });

  test('opens as --model nano-2m, and is pretrained: it predicts a Wordle transcript far better than a random init', async () => {
    expect(modelFolderOf('nano-2m')).toBe(folder);
    const nano = await openModel('nano-2m', { backend: 'cpu', seed: 0 });
    const random = await createFastCpuBackend(NANO_2M_CONFIG, { seed: 0 }, {}, await createNodeWasmKernels(1));
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
