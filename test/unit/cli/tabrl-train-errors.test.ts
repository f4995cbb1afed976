// `tabrl train` shows failed rollouts: a reward function that throws scores 0, which without a word
// looks exactly like a model that learns nothing (the progress lines used to say only "reward 0.000");
// and it stops on Ctrl-C in every phase.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** An environment file whose rubric has `funcs` with `weights` (buggy throws, length works, check throws). */
const brokenEnv = (funcs: string, weights: string) => `import { SingleTurnEnv, Rubric } from 'tabrl';
function buggy(): number { throw new Error('reward bug'); }
function length(ctx: { completion: { content: string }[] }): number { return ctx.completion.length; }
function check(): number { throw new Error('metric bug'); }
export default function loadEnvironment() {
  return new SingleTurnEnv({ dataset: [{ question: 'say hi', answer: 'hi' }, { question: 'say yo', answer: 'yo' }], rubric: new Rubric({ funcs: [${funcs}], weights: [${weights}] }) });
}
`;

test('a reward function that fails beside one that works: training goes on, and the measurements and steps name the error', { timeout: 120_000 }, async () => {
  const path = join(dir, 'partial.ts');
  writeFileSync(path, brokenEnv('buggy, length', '1, 1'));
  const run = await runTabrl(['train', path, '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '1', '--group', '2', '--eval-tasks', '1', '--max-tokens', '4', '--out', join(dir, 'out')], { timeoutMs: 120_000 });
  expect(run.code).toBe(0);
  const output = run.stdout + run.stderr;
  expect(output).toMatch(/before: reward \d\.\d{3} ± \d\.\d{3}, pass rate \d\.\d{2}; 1 of 1 rollouts with errors \(first: buggy threw: reward bug/);
  expect(output).toMatch(/grpo 1\/1 .* errors 2\/2 \(first: reward buggy: buggy threw: reward bug/);
});

test('every weighted reward function failing in every rollout stops the run after the first measurement (exit 1), saying which, why and what to do', { timeout: 120_000 }, async () => {
  // It used to train all its steps on the zeros scored for the failures, and write that model.
  const path = join(dir, 'broken.ts');
  // check is a weight-0 metric: its failure does not count either way.
  writeFileSync(path, brokenEnv('buggy, check', '1, 0'));
  const out = join(dir, 'out-broken');
  const run = await runTabrl(['train', path, '--model', 'tiny', '--sft-steps', '0', '--steps', '3', '--tasks-per-step', '1', '--group', '2', '--eval-tasks', '2', '--max-tokens', '4', '--out', out], { timeoutMs: 120_000 });
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(
    /training stopped: the measurement before training: the reward function buggy failed in every rollout, so the rewards are not measurements; the first error: buggy threw: reward bug.*the run stops rather than train on rewards that measure nothing/,
  );
  expect(run.stderr).toContain(`tabrl eval ${path} --model local:tiny -n 2\` shows each rollout's errors`);
  expect(run.stderr).toContain(`start the run again with --out ${out} --overwrite`);
  expect(run.stderr).not.toMatch(/grpo \d\/3/);
  // Nothing that looks like a trained run: no model, no report, no checkpoint.
  expect(existsSync(join(out, 'model'))).toBe(false);
  expect(existsSync(join(out, 'report.json'))).toBe(false);
  expect(existsSync(join(out, 'checkpoint'))).toBe(false);
  // The run says it failed, and why.
  expect(JSON.parse(readFileSync(join(out, 'status.json'), 'utf8'))).toMatchObject({ status: 'failed', stopped_early: expect.stringMatching(/reward function buggy failed in every rollout/) });
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
  expect(JSON.parse(readFileSync(join(out, 'status.json'), 'utf8'))).toMatchObject({ status: 'interrupted' });
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
  // stderr says only where the model runs (the CLI names its backend); no error about the folder.
  expect(sample.stderr.trim()).toMatch(/^\S+ on cpu \(fast backend: WASM relaxed SIMD on \d+ threads?\)$/);
  expect(sample.code).toBe(0);
});
