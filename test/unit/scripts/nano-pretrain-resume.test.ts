// scripts/nano/pretrain.ts resumes exactly: a run stopped with --until-step and continued with
// --resume ends with the same weights as one uninterrupted run, and records both commands; a resume
// state is refused when the settings differ; --init continues from a model folder instead of a fresh
// init. Toy shape and corpus, on the fast CPU backend.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { readPretrainState, writePretrainState } from '../../../scripts/nano/pretrain-state.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs scripts/nano/pretrain.ts under tsx from the repository root; rejects with its stderr when it fails. */
function pretrain(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/nano/pretrain.ts', ...args], { cwd: ROOT, timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`pretrain.ts ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stderr);
    });
  });
}

const TOY = ['--layers', '1', '--hidden', '32', '--intermediate', '64', '--heads', '2', '--kv-heads', '1', '--word-lists', '20', '--games', '20', '--fits', '20', '--reverse', '10', '--batch-size', '2', '--row-length', '32', '--max-steps', '4', '--log-every', '1', '--save-every', '1'];

test('a run stopped at step 2 and resumed ends with the weights of an uninterrupted 4-step run', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-pretrain-resume-'));
  await pretrain([...TOY, '--out', join(dir, 'whole'), '--state', join(dir, 'whole.state')]);
  const firstPart = await pretrain([...TOY, '--until-step', '2', '--out', join(dir, 'parts'), '--state', join(dir, 'parts.state')]);
  expect(firstPart).toContain('done: 2 steps');
  const afterFirst = JSON.parse(await readFile(join(dir, 'parts', 'pretraining.json'), 'utf8'));
  expect(afterFirst.steps).toBe(2);
  const secondPart = await pretrain([...TOY, '--resume', '--out', join(dir, 'parts'), '--state', join(dir, 'parts.state')]);
  expect(secondPart).toContain('resumed from');
  expect(secondPart).toContain('at step 2');

  const whole = await readFile(join(dir, 'whole', 'model.safetensors'));
  const parts = await readFile(join(dir, 'parts', 'model.safetensors'));
  expect(parts.equals(whole)).toBe(true);
  const record = JSON.parse(await readFile(join(dir, 'parts', 'pretraining.json'), 'utf8'));
  const wholeRecord = JSON.parse(await readFile(join(dir, 'whole', 'pretraining.json'), 'utf8'));
  expect(record.steps).toBe(4);
  expect(record.tokensSeen).toBe(4 * 2 * 32);
  expect(record.finalLoss).toBe(wholeRecord.finalLoss);
  expect(record.lossCurve.map((point: { step: number }) => point.step)).toEqual([1, 2, 3, 4]);
  expect(record.command).toContain('--until-step 2');
  expect(record.resumedWith).toHaveLength(1);
  expect(record.resumedWith[0]).toContain('--resume');
});

test('a resume state written with other settings is refused, naming the setting', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'tabrl-pretrain-state-')), 'run.state');
  const settings = { seed: 0, peakLr: 0.002, maxSteps: 1600 };
  const state = { settings, step: 25, tokensSeen: 100, smoothedLoss: 1.5, trainingMs: 10, wallSeconds: 1, lossCurve: [], commands: ['x'], parameters: new Map(), optimizer: { step: 25, m: new Map(), v: new Map() } };
  await writePretrainState(file, state);
  expect((await readPretrainState(file, settings)).step).toBe(25);
  await expect(readPretrainState(file, { ...settings, peakLr: 0.003 })).rejects.toThrow(/made with peakLr 0.002, this command gives 0.003/);
  await expect(readPretrainState(join(file, '..', 'missing.state'), settings)).rejects.toThrow(/cannot read the resume state/);
});

test('a run may be resumed under another --max-steps before either schedule decays, and ends with the weights of an uninterrupted run of the new length', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-pretrain-resize-'));
  await pretrain([...TOY, '--out', join(dir, 'whole'), '--state', join(dir, 'whole.state')]); // --max-steps 4: decays from step 3
  const longer = TOY.map((arg, i) => (TOY[i - 1] === '--max-steps' ? '40' : arg));
  await pretrain([...longer, '--until-step', '2', '--out', join(dir, 'parts'), '--state', join(dir, 'parts.state')]);
  const resumed = await pretrain([...TOY, '--resume', '--out', join(dir, 'parts'), '--state', join(dir, 'parts.state')]);
  expect(resumed).toContain('at step 2');
  const whole = await readFile(join(dir, 'whole', 'model.safetensors'));
  expect((await readFile(join(dir, 'parts', 'model.safetensors'))).equals(whole)).toBe(true);
  expect(JSON.parse(await readFile(join(dir, 'parts', 'pretraining.json'), 'utf8')).maxSteps).toBe(4);
});

test('a resume under another --max-steps is refused once a step was in either decay, naming the step', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'tabrl-pretrain-resize-state-')), 'run.state');
  const settings = { seed: 0, peakLr: 0.002, maxSteps: 2400, decayByTime: false };
  const at = (step: number) => ({ settings, step, tokensSeen: 100, smoothedLoss: 1.5, trainingMs: 10, wallSeconds: 1, lossCurve: [], commands: ['x'], parameters: new Map(), optimizer: { step, m: new Map(), v: new Map() } });
  await writePretrainState(file, at(900));
  expect((await readPretrainState(file, { ...settings, maxSteps: 1200 })).step).toBe(900); // 1200's decay starts at step 900
  await expect(readPretrainState(file, { ...settings, maxSteps: 1100 })).rejects.toThrow(/reached step 900, past where --max-steps 1100 would have begun its decay \(step 825\).*resume with --max-steps 2400/);
  await writePretrainState(file, at(1900)); // past 2400's own decay start, 1800
  await expect(readPretrainState(file, { ...settings, maxSteps: 4000 })).rejects.toThrow(/or its own did \(step 1800\)/);
  await writePretrainState(file, { ...at(10), settings: { ...settings, decayByTime: true } });
  await expect(readPretrainState(file, { ...settings, decayByTime: true, maxSteps: 1200 })).rejects.toThrow(/made with maxSteps 2400, this command gives 1200/);
});

test('--init continues from a model folder (its shape, its weights) with tool-copy chats in the corpus, and records both; shape flags or --init-std beside it are refused; --init-std widens a fresh init', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-pretrain-init-'));
  await pretrain([...TOY, '--out', join(dir, 'base')]);
  const CONTINUE = ['--copies', '6', '--copy-kinds', 'echo,chain', '--word-lists', '2', '--games', '0', '--fits', '2', '--reverse', '0', '--batch-size', '2', '--row-length', '64', '--max-steps', '1', '--log-every', '1', '--seed', '1'];
  const FROM = ['--init', join(dir, 'base'), ...CONTINUE];
  const log = await pretrain([...FROM, '--out', join(dir, 'continued')]);
  expect(log).toContain('"toolCopies":6');
  expect(log).toContain('1 layers, hidden 32');
  const record = JSON.parse(await readFile(join(dir, 'continued', 'pretraining.json'), 'utf8'));
  // The init folder's own record rides along (less its loss curve): a model made in stages records each stage's command.
  const baseRecord = JSON.parse(await readFile(join(dir, 'base', 'pretraining.json'), 'utf8'));
  expect(record.init.folder).toBe(join(dir, 'base'));
  expect(record.init.record.command).toBe(baseRecord.command);
  expect(record.init.record.steps).toBe(baseRecord.steps);
  expect(record.init.record.lossCurve).toBeUndefined();
  expect(record.corpus.toolCopies).toBe(6);
  expect(record.copyKinds).toEqual(['echo', 'chain']);
  await expect(pretrain([...FROM, '--copy-kinds', 'echo,poem', '--out', join(dir, 'refused')])).rejects.toThrow(/--copy-kinds takes echo, argument, write, chain, fields, read-write, got "poem"/);
  // One warm-up step (lr 3e-3 / 30) from the base weights barely moves them; the same step from a fresh seed-1 init lands far away.
  await pretrain([...TOY.slice(0, 10), ...CONTINUE, '--out', join(dir, 'fresh')]);
  const { loadModelFolder } = await import('../../../src/gpu/io/model-folder.ts');
  const embedding = async (folder: string) => (await loadModelFolder((name) => readFile(join(dir, folder, name)))).tensors.get('model.embed_tokens.weight')!.data;
  const [base, continued, fresh] = await Promise.all([embedding('base'), embedding('continued'), embedding('fresh')]);
  const distance = (a: Float32Array, b: Float32Array) => a.reduce((most, value, i) => Math.max(most, Math.abs(value - b[i]!)), 0);
  expect(distance(base, continued)).toBeGreaterThan(0);
  expect(distance(base, continued)).toBeLessThan(0.005);
  expect(distance(base, fresh)).toBeGreaterThan(0.05);
  await expect(pretrain([...FROM, '--layers', '2', '--out', join(dir, 'refused')])).rejects.toThrow(/--init takes the shape of its folder/);
  await expect(pretrain([...FROM, '--init-std', '0.1', '--out', join(dir, 'refused')])).rejects.toThrow(/--init-std sets a fresh init; --init starts from a folder/);

  // --init-std: the same seeded init, its matrices drawn five times wider; the norms stay 1.
  await pretrain([...TOY.slice(0, 10), ...CONTINUE, '--init-std', '0.1', '--out', join(dir, 'wide')]);
  const wide = await embedding('wide');
  const std = (values: Float32Array) => Math.sqrt(values.reduce((sum, value) => sum + value * value, 0) / values.length);
  expect(std(fresh)).toBeGreaterThan(0.018);
  expect(std(fresh)).toBeLessThan(0.022);
  expect(std(wide) / std(fresh)).toBeGreaterThan(4.9);
  expect(std(wide) / std(fresh)).toBeLessThan(5.1);
  const record2 = JSON.parse(await readFile(join(dir, 'wide', 'pretraining.json'), 'utf8'));
  expect(record2.initStd).toBe(0.1);
});
