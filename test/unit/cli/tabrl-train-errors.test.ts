// `tabrl train` shows failed rollouts: a reward function that throws scores 0, which without a word
// looks exactly like a model that learns nothing (the progress lines used to say only "reward 0.000");
// and it stops on Ctrl-C in every phase.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { describeGrpoStep } from '../../../src/cli/train.ts';
import type { GrpoStepMetrics } from '../../../src/rl/grpo-trainer.ts';
import { runTabrl, TABRL_BIN } from '../../support/tabrl-cli.ts';

const STEP: GrpoStepMetrics = {
  step: 0, reward: { mean: 0, std: 0 }, rewards: {}, passRate: 0, advantage: { meanAbs: 0, std: 0 }, loss: 0, kl: 0, entropy: 0,
  clipFraction: 0, clipFractionLow: 0, clipFractionHigh: 0, gradNorm: 0, learningRate: 1e-3, tokensSampled: 8, tokensTrained: 0, tokensPerSecond: 100,
  timings: { sampleMs: 100, updateMs: 0, stepMs: 100, scoringMs: 0 }, staleness: 0, completionLength: { mean: 4, max: 4 }, truncatedFraction: 0,
  zeroStdFraction: 1, tasksDrawn: 1, echoLoss: 0, rollouts: 2, rolloutsWithErrors: 2, groupsDropped: 1,
  skipped: 'every group had equal rewards (no learning signal)', firstError: 'reward buggy: buggy threw: reward bug; scored 0',
};

test('a GRPO step with failed rollouts says how many and the first error', () => {
  expect(describeGrpoStep(STEP)).toMatch(/\(every group had equal rewards \(no learning signal\)\) {2}errors 2\/2 \(first: reward buggy: buggy threw: reward bug; scored 0\)$/);
  expect(describeGrpoStep({ ...STEP, rolloutsWithErrors: 0 })).not.toContain('errors');
});

const dir = mkdtempSync(join(tmpdir(), 'tabrl-train-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the measurements name the reward error too', { timeout: 120_000 }, async () => {
  const path = join(dir, 'broken.ts');
  writeFileSync(
    path,
    `import { SingleTurnEnv, Rubric } from 'tabrl';
function buggy(): number { throw new Error('reward bug'); }
export default function loadEnvironment() {
  return new SingleTurnEnv({ dataset: [{ question: 'say hi', answer: 'hi' }, { question: 'say yo', answer: 'yo' }], rubric: new Rubric({ funcs: [buggy] }) });
}
`,
  );
  const run = await runTabrl(['train', path, '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '1', '--group', '2', '--eval-tasks', '1', '--max-tokens', '4', '--out', join(dir, 'out')], { timeoutMs: 120_000 });
  expect(run.code).toBe(0);
  const output = run.stdout + run.stderr;
  expect(output).toMatch(/before: reward 0\.000 ± 0\.000, pass rate 0\.00; 1 of 1 rollouts with errors \(first: buggy threw: reward bug/);
  expect(output).toMatch(/grpo 1\/1 .* errors 2\/2 \(first: reward buggy: buggy threw: reward bug/);
});

test('Ctrl-C during the SFT warm-up stops the run, saves a checkpoint and says how to resume (exit 130)', { timeout: 60_000 }, async () => {
  // A CPU-backend SFT step never left the microtask queue, so SIGINT was never handled and the warm-up ran on.
  const out = join(dir, 'interrupted');
  const args = ['train', 'reverse-text', '--model', 'tiny', '--sft-steps', '100000', '--sft-batch', '2', '--demonstrations', '8', '--steps', '1', '--eval-tasks', '0', '--out', out];
  const child = spawn(process.execPath, [TABRL_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (/sft 2\//.test(output) && child.exitCode === null && !child.killed) child.kill('SIGINT');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  expect(output).toContain(`interrupted: continue with tabrl train --resume ${out}`);
  expect(code).toBe(130);
  expect(JSON.parse(readFileSync(join(out, 'checkpoint', 'state.json'), 'utf8'))).toBeTruthy();
});

test('Ctrl-C before the first checkpoint says to start again, and --resume then says how; resuming a finished run does nothing', { timeout: 90_000 }, async () => {
  // It used to say "continue with --resume", whose answer was "start a new run with --out", which refused the folder.
  const out = join(dir, 'early');
  const args = ['train', 'reverse-text', '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--eval-tasks', '100', '--max-tokens', '64', '--out', out];
  const child = spawn(process.execPath, [TABRL_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('== evaluate: before') && child.exitCode === null && !child.killed) child.kill('SIGINT');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  expect(code).toBe(130);
  expect(output).toContain(`interrupted before the first checkpoint (nothing was trained yet): start it again with --out ${out} --overwrite`);
  const resume = await runTabrl(['train', '--resume', out]);
  expect(resume.code).toBe(2);
  expect(resume.stderr).toContain(`start the run again with --out ${out} --overwrite`);

  const finished = join(dir, 'finished');
  const run = await runTabrl(['train', 'reverse-text', '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '1', '--group', '2', '--eval-tasks', '1', '--max-tokens', '4', '--out', finished], { timeoutMs: 60_000 });
  expect(run.code).toBe(0);
  const metrics = readFileSync(join(finished, 'metrics.jsonl'), 'utf8');
  const again = await runTabrl(['train', '--resume', finished]);
  expect(again.code).toBe(0);
  expect(again.stderr).toContain(`${finished} holds a finished run (report.json); there is nothing to resume`);
  expect(again.stderr).toContain(`tabrl train reverse-text --model ${join(finished, 'model')} --out NEW_DIR`);
  expect(readFileSync(join(finished, 'metrics.jsonl'), 'utf8')).toBe(metrics);
  // The model folder it points to is a model: it carries the tokenizer (it used to hold weights only).
  const sample = await runTabrl(['generate', join(finished, 'model'), '--prompt', 'hi', '--max-tokens', '2', '--json']);
  expect(sample.stderr).toBe('');
  expect(sample.code).toBe(0);
});
