/**
 * The scripts of the bigger-nano experiment (docs/nano.md, "A bigger game for a GPU"), run for real
 * on the WebGPU backend through Dawn (the software adapter in CI) at a very small shape:
 * scripts/nano/pretrain.ts on a 600-word pool writes a model folder that loads and records its
 * backend, shape and pool; scripts/nano/wordle-measure.ts then runs all its arms on that folder.
 * No adapter is a failure, not a skip (the scripts exit non-zero).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { loadFolderTokenizer } from '../../src/gpu/io/byte-model-folder.ts';
import { ByteTokenizer } from '../../src/gpu/io/byte-tokenizer.ts';
import { loadModelFolder } from '../../src/gpu/io/model-folder.ts';
import { paramShapes } from '../../src/gpu/model/layout.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a TypeScript script under tsx from the repository root; rejects with its stderr when it fails. */
function runScript(script: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, timeout: 100_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${script} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

const SHAPE = ['--layers', '2', '--hidden', '32', '--intermediate', '64', '--heads', '2', '--kv-heads', '1'];

test('pretrain.ts --backend webgpu --pool-size 600 writes a loadable folder of that shape, recording backend, shape and pool; wordle-measure.ts runs every arm on it', { timeout: 200_000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), 'tabrl-nano-webgpu-'));
  const corpus = ['--word-lists', '200', '--games', '200', '--fits', '200', '--reverse', '50'];
  const { stderr } = await runScript('scripts/nano/pretrain.ts', ['--backend', 'webgpu', '--pool-size', '600', ...SHAPE, ...corpus, '--batch-size', '4', '--row-length', '64', '--max-steps', '3', '--log-every', '1', '--out', out]);
  expect(stderr).toMatch(/TabRL WebGPU backend on .* through Dawn/);

  const read = async (name: string) => new Uint8Array(await readFile(join(out, name)));
  const model = await loadModelFolder(read, out);
  expect(model.config).toMatchObject({ num_hidden_layers: 2, hidden_size: 32, intermediate_size: 64, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 16, vocab_size: 264 });
  expect([...model.tensors.keys()].sort()).toEqual(paramShapes(model.config).map(([name]) => name).sort());
  for (const tensor of model.tensors.values()) expect(tensor.data.every(Number.isFinite)).toBe(true);
  expect(await loadFolderTokenizer(read, out)).toBeInstanceOf(ByteTokenizer);

  const record = JSON.parse(new TextDecoder().decode(await read('pretraining.json')));
  expect(record).toMatchObject({ backend: 'webgpu', poolSize: 600, steps: 3, batchSize: 4, rowLength: 64, tokensSeen: 3 * 4 * 64 });
  expect(record.shape).toEqual({ layers: 2, hidden: 32, intermediate: 64, heads: 2, kvHeads: 1, headDim: 16 });
  expect(record.corpus).toMatchObject({ wordLists: 200, wordleGames: 200, fitsLists: 200, reverseText: 50 });
  expect(record.corpus.teacherWinRate).toBeGreaterThan(0.8); // the teacher plays the 600-word game from its own pool
  expect(record.machine).toMatch(/WebGPU/);
  expect(record.lossCurve.map((point: { step: number }) => point.step)).toEqual([1, 2, 3]);
  // An untrained model's loss starts near ln(264) ≈ 5.58 nats per byte.
  for (const { loss } of record.lossCurve as { loss: number }[]) {
    expect(loss).toBeGreaterThan(4.5);
    expect(loss).toBeLessThan(6.5);
  }
  expect(Number.isFinite(record.finalLoss)).toBe(true);
  expect(record.secondsPerStep).toBeGreaterThan(0);

  // wordle-measure on that folder: its pool comes from pretraining.json; every arm runs on WebGPU.
  const measured = await runScript('scripts/nano/wordle-measure.ts', ['--model', out, '--backend', 'webgpu', '--quick', '--eval-tasks', '1', '--sft-steps', '1', '--grpo-steps', '1', '--tasks-per-step', '1', '--group-size', '2', '--control-steps', '1']);
  const result = JSON.parse(measured.stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ bench: 'wordle-lesson', backend: 'webgpu', poolSize: 600, evalTasks: 1, grpoStepsRun: 1, controlStepsRun: 1 });
  expect(result.rows.map((row: { label: string }) => row.label)).toEqual(['before warm-up', 'after warm-up', 'after GRPO', 'control: warm-up + 1 more SFT steps']);
  for (const row of result.rows) expect(Number.isFinite(row.greedy.winRate) && Number.isFinite(row.sampled.invalidRate)).toBe(true);
  expect(measured.stdout).toMatch(/software adapter\) · pool 600 words/);
});
