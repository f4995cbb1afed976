// End-to-end: `tabrl train` runs the whole lesson (measure, SFT warm-up on expert demonstrations,
// measure, GRPO, measure) on the tiny model with the CPU backend, and its outputs can be read back.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { runTabrl } from '../../support/tabrl-cli.ts';

const BIN = fileURLToPath(new URL('../../../bin/tabrl.mjs', import.meta.url));

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 120_000 });

test('tabrl train: warm-up then GRPO on the tiny model, with metrics, a report and a model folder that loads', { timeout: 120_000 }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-train-')), 'run');
  const { code, stdout, stderr } = await tabrl([
    'train', 'reverse-text', '--model', 'tiny', '--env-args', '{"compact": true, "minLength": 4, "maxLength": 6, "numTasks": 100}',
    '--demonstrations', '16', '--sft-steps', '3', '--sft-batch', '4', '--steps', '2', '--tasks-per-step', '2', '--group', '4',
    '--max-tokens', '6', '--eval-tasks', '2', '--seed', '5', '--out', out, '--json',
  ]);
  expect(stderr).not.toContain('Error');
  expect(code).toBe(0);
  const printed = stdout.trim().split('\n').map((line) => JSON.parse(line));
  const phases = printed.map((line) => (line.phase === 'evaluate' ? `evaluate:${line.label}` : line.phase));
  expect(phases).toEqual(['evaluate:before', 'sft', 'sft', 'sft', 'evaluate:after warm-up', 'grpo', 'grpo', 'evaluate:after GRPO']);
  expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(printed.length);
  const grpo = printed.filter((line) => line.phase === 'grpo');
  expect(grpo.map((line) => line.rollouts)).toEqual([8, 8]);
  expect(grpo.every((line) => line.tokensSampled > 0)).toBe(true);

  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  expect(report.demonstrationsKept).toBe(16);
  expect(report.evaluations.map((e: { label: string }) => e.label)).toEqual(['before', 'after warm-up', 'after GRPO']);

  expect(existsSync(join(out, 'model', 'config.json'))).toBe(true);
  const forward = await tabrl(['forward', join(out, 'model'), '--tokens', '257,260,97']);
  expect(forward.code).toBe(0);
  expect(JSON.parse(forward.stdout).logits).toHaveLength(3);
});

test('tabrl train refuses a warm-up for an environment without an expert, and says how to skip it', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'tabrl-train-')), 'env.ts');
  writeFileSync(path, `import { SingleTurnEnv } from 'tabrl';\nexport default function loadEnvironment() {\n  return new SingleTurnEnv({ dataset: [{ question: 'hi' }] });\n}\n`);
  const { code, stderr } = await tabrl(['train', path, '--model', 'tiny']);
  expect(code).toBe(2);
  expect(stderr).toContain('only built-in environments');
  expect(stderr).toContain('Pass --sft-steps 0 to skip the warm-up');
});

test('tabrl train runs an environment file in its own process; GRPO trains on the token data that crossed back', { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'tabrl-train-file-'));
  writeFileSync(join(root, 'rev.ts'), `import { SingleTurnEnv, Rubric, type RewardContext } from 'tabrl';
const words = ['abcd', 'efgh', 'ijkl', 'mnop', 'qrst', 'uvwx'];
const lengthReward = (ctx: RewardContext) => Math.min(1, (ctx.completion.at(-1)?.content.length ?? 0) / 4);
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'rev-file', dataset: words.map((w) => ({ question: w, answer: [...w].reverse().join('') })), rubric: new Rubric({ funcs: [lengthReward] }) });
}
`);
  const { code, stdout } = await tabrl(['train', join(root, 'rev.ts'), '--model', 'tiny', '--sft-steps', '0', '--steps', '2', '--tasks-per-step', '2', '--group', '2', '--max-tokens', '4', '--eval-tasks', '2', '--out', join(root, 'out'), '--json']);
  expect(code).toBe(0);
  const grpo = stdout.trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.phase === 'grpo');
  expect(grpo).toHaveLength(2);
  for (const step of grpo) {
    expect(step.rollouts).toBe(4);
    expect(step.rolloutsWithErrors).toBe(0);
    expect(step.tokensTrained).toBeGreaterThan(0);
  }
});

// max-async 1 checkpoints the rollouts already sampled for the next step; with --kl-beta the tiny model
// (full fine-tuning) also keeps its frozen KL reference in the checkpoint.
const RESUME_CASES = [['--max-async', '0'], ['--max-async', '1', '--kl-beta', '0.05']].map((flags) => [flags.join(' '), flags] as const);
test.each(RESUME_CASES)('a run interrupted with Ctrl-C and resumed with --resume ends with the same weights as an uninterrupted run (%s)', { timeout: 180_000 }, async (_label, variant) => {
  const root = mkdtempSync(join(tmpdir(), 'tabrl-resume-'));
  const flags = [
    'train', 'reverse-text', '--model', 'tiny', '--env-args', '{"compact": true, "minLength": 4, "maxLength": 6, "numTasks": 100}',
    // 12 GRPO steps: on the fast CPU backend a 4-step run could finish before the 50 ms poll below saw its first step and sent Ctrl-C.
    '--demonstrations', '16', '--sft-steps', '4', '--sft-batch', '4', '--steps', '12', '--tasks-per-step', '2', '--group', '4',
    '--max-tokens', '5', '--eval-tasks', '0', ...variant, '--checkpoint-every', '1', '--seed', '11',
  ];
  const full = await tabrl([...flags, '--out', join(root, 'full')]);
  expect(full.code).toBe(0);

  // Interrupt the second run once its first GRPO step is on disk, then resume it.
  const interrupted = join(root, 'interrupted');
  const child = spawn(process.execPath, [BIN, ...flags, '--out', interrupted], { stdio: 'ignore' });
  const exitCode = await new Promise<number | null>((resolve) => {
    const timer = setInterval(() => {
      const metrics = existsSync(join(interrupted, 'metrics.jsonl')) ? readFileSync(join(interrupted, 'metrics.jsonl'), 'utf8') : '';
      if (metrics.includes('"phase":"grpo"')) {
        clearInterval(timer);
        child.kill('SIGINT');
      }
    }, 50);
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve(code);
    });
  });
  expect(exitCode).toBe(130);
  const position = JSON.parse(readFileSync(join(interrupted, 'checkpoint', 'state.json'), 'utf8'));
  expect(position.phase).toBe('grpo');
  expect(position.nextStep).toBeGreaterThanOrEqual(1);
  expect(position.nextStep).toBeLessThan(12);
  const asyncRun = variant.includes('--kl-beta');
  expect(existsSync(join(interrupted, 'checkpoint', 'rollouts.json'))).toBe(asyncRun);
  expect(existsSync(join(interrupted, 'checkpoint', 'reference.safetensors'))).toBe(asyncRun);

  const resumed = await tabrl(['train', '--resume', interrupted]);
  expect(resumed.stderr).toContain(`resuming at grpo step ${position.nextStep}`);
  expect(resumed.code).toBe(0);
  const weights = (dir: string) => readFileSync(join(dir, 'model', 'model.safetensors'));
  expect(weights(interrupted).equals(weights(join(root, 'full')))).toBe(true);
  const grpoSteps = readFileSync(join(interrupted, 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.phase === 'grpo').map((line) => line.step);
  expect(grpoSteps).toEqual([...Array(12).keys()]);
  // The report covers the whole run, not only the part after the resume.
  const report = JSON.parse(readFileSync(join(interrupted, 'report.json'), 'utf8'));
  expect(report.sft.map((m: { step: number }) => m.step)).toEqual([0, 1, 2, 3]);
  expect(report.grpo.map((m: { step: number }) => m.step)).toEqual([...Array(12).keys()]);
});

test('--out, --resume and the checkpoint guard what a run produced: one-line errors, a complete checkpoint.tmp is used, broken weights are named', { timeout: 180_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'tabrl-guard-'));
  const out = join(root, 'run');
  const flags = ['train', 'reverse-text', '--model', 'tiny', '--env-args', '{"compact": true, "minLength": 4, "maxLength": 6, "numTasks": 40}', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '1', '--group', '2', '--max-tokens', '3', '--eval-tasks', '0', '--max-async', '0'];
  expect((await tabrl([...flags, '--out', out])).code).toBe(0);
  const oneLine = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at /);

  const again = await tabrl([...flags, '--out', out]);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain(`--out ${out} already holds a training run`);
  expect(again.stderr).toContain('pass --overwrite to replace it');

  // A swap cut short after checkpoint.tmp was complete: the resume uses it, not the broken folder.
  // (Such a crash comes before report.json is written: a finished run's report makes --resume a no-op.)
  rmSync(join(out, 'report.json'));
  const checkpoint = join(out, 'checkpoint');
  renameSync(checkpoint, `${checkpoint}.tmp`);
  mkdirSync(checkpoint);
  writeFileSync(join(checkpoint, 'state.json'), '{"phase": "grpo", "nextS');
  const fromTmp = await tabrl(['train', '--resume', out]);
  expect(fromTmp.stderr).toContain('resuming at grpo step 1');
  expect(fromTmp.code).toBe(0);
  expect(existsSync(`${checkpoint}.tmp`)).toBe(false);

  const state = readFileSync(join(checkpoint, 'state.json'), 'utf8');
  writeFileSync(join(checkpoint, 'state.json'), state.slice(0, 30));
  const corrupt = await tabrl(['train', '--resume', out]);
  expect(corrupt.code).toBe(2);
  expect(corrupt.stderr).toContain(`${join(checkpoint, 'state.json')} is not valid JSON`);
  oneLine(corrupt.stderr);

  const parsed = JSON.parse(state);
  parsed.run.settings.backend = 'tpu';
  writeFileSync(join(checkpoint, 'state.json'), JSON.stringify(parsed));
  const badSettings = await tabrl(['train', '--resume', out]);
  expect(badSettings.code).toBe(2);
  expect(badSettings.stderr).toContain('has backend "tpu", expected "cpu", "cpu-reference" or "webgpu"');

  // NaN in the exported weights: refused at load, naming the tensor.
  const weightsPath = join(out, 'model', 'model.safetensors');
  const bytes = readFileSync(weightsPath);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  const [name, entry] = Object.entries(header).find(([key]) => key !== '__metadata__') as [string, { dtype: string; data_offsets: [number, number] }];
  expect(entry.dtype).toBe('F32');
  bytes.writeFloatLE(Number.NaN, 8 + headerLength + entry.data_offsets[0]);
  writeFileSync(weightsPath, bytes);
  const nan = await tabrl(['forward', join(out, 'model'), '--tokens', '1,2']);
  expect(nan.code).toBe(1);
  expect(nan.stderr).toContain(`tensor ${name} holds NaN at index 0`);
  oneLine(nan.stderr);
});
