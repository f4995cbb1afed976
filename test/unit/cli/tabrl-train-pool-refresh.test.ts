// `tabrl train --synth-docs`: the task pool of a studio environment file is refreshed every N GRPO steps, each refresh recorded in metrics.jsonl.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { checkSavedPool } from '../../../src/cli/train-pool-refresh.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 150_000 });
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;
const BIN = fileURLToPath(new URL('../../../bin/tabrl.mjs', import.meta.url));
const metricsOf = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

/** Runs tabrl and sends it Ctrl-C (SIGINT) once `file` holds `lines` lines; resolves with its exit code. */
function tabrlInterrupted(args: string[], file: string, lines: number): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'ignore'] });
    const timer = setInterval(() => {
      if ((existsSync(file) ? readFileSync(file, 'utf8') : '').split('\n').length - 1 >= lines) {
        clearInterval(timer);
        child.kill('SIGINT');
      }
    }, 20);
    child.on('close', (code) => {
      clearInterval(timer);
      resolve(code);
    });
  });
}

/** A studio environment file of two tasks (tasks/env.ts) and a folder of one more document (docs/), as the refresh tests use them. */
async function synthesizedRun(): Promise<{ dir: string; docs: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-pool-'));
  writeFileSync(join(dir, 'first.md'), 'The north hut was rebuilt in 1931 after the great storm.\n\nThe radio mast went up in 1948 on the eastern ridge.\n');
  writeFileSync(join(dir, 'second.md'), 'The weather log has been kept daily since 1975 by the wardens.\n');
  const synth = await tabrl(['synth', join(dir, 'first.md'), '--generator-model', 'heuristic', '--solver-model', 'heuristic', '-k', '1', '--out', join(dir, 'tasks')]);
  expect(synth.code, synth.stderr).toBe(0);
  const docs = join(dir, 'docs');
  mkdirSync(docs);
  copyFileSync(join(dir, 'second.md'), join(docs, 'second.md'));
  return { dir, docs };
}

describe('tabrl train --synth-docs', () => {
  test('refreshes the pool every step with the tiny policy, rollouts sampled ahead (max-async 1, the default): new tasks it never passes stay out, and each refresh is a metrics line', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-pool-'));
    writeFileSync(join(dir, 'first.md'), 'The north hut was rebuilt in 1931 after the great storm.\n\nThe radio mast went up in 1948 on the eastern ridge.\n');
    writeFileSync(join(dir, 'second.md'), 'The weather log has been kept daily since 1975 by the wardens.\n');
    const synth = await tabrl(['synth', join(dir, 'first.md'), '--generator-model', 'heuristic', '--solver-model', 'heuristic', '-k', '1', '--out', join(dir, 'tasks')]);
    expect(synth.code, synth.stderr).toBe(0);
    const docs = join(dir, 'docs');
    mkdirSync(docs);
    copyFileSync(join(dir, 'second.md'), join(docs, 'second.md'));
    const out = join(dir, 'run');
    const args = ['train', join(dir, 'tasks', 'env.ts'), '--model', 'tiny', '--sft-steps', '0', '--steps', '2', '--tasks-per-step', '2', '--group', '2', '--max-tokens', '4', '--eval-tasks', '0', '--synth-docs', docs, '--generator-model', 'heuristic', '--solver-model', 'heuristic', '--refresh-every', '1', '--refresh-k', '2', '--keep', '0.2-0.8', '--out', out];
    // Once refused (rollouts sampled ahead looked their task up by index in the pool a refresh changes); they now keep the tasks they were drawn for.
    const run = await tabrl(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('--max-async 0');
    const refreshes = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.phase === 'pool-refresh');
    // The untrained tiny model answers nothing right: the new task is too hard for it and stays out; nothing is mastered.
    expect(refreshes).toHaveLength(2);
    expect(refreshes[0]).toMatchObject({ refresh: 0, step: 0, poolBefore: 2, candidates: 1, added: 0, retired: 0, poolSize: 2, rejected: { tooEasy: 0, tooHard: 1 }, poolPassRates: [0, 0], candidatePassRates: [0], histogram: [3, 0, 0, 0, 0] });
    expect(refreshes[0]).toMatchObject({ replayed: 0, rejoined: 0, retiredTotal: 0, replayPassRates: [] });
    expect(refreshes[1]).toMatchObject({ refresh: 1, step: 1, poolSize: 2 });
    expect(run.stderr).toContain('pool refresh 1 after step 1: 1 new candidates, 0 added, 0 retired (mastered), 0 of 0 replayed rejoined (forgotten); pool 2 → 2, 0 retired in all');
  });

  test('the refresh flags need --synth-docs; --help lists them; a bad pool rule is a usage error', async () => {
    const lone = await tabrl(['train', 'reverse-text', '--model', 'tiny', '--refresh-every', '5']);
    expect(lone.code).toBe(2);
    expect(lastLine(lone.stderr)).toContain('--refresh-every belongs to task synthesis during training; give --synth-docs DIR too');
    const loneRule = await tabrl(['train', 'reverse-text', '--model', 'tiny', '--min-pool', '5']);
    expect(loneRule.code).toBe(2);
    expect(lastLine(loneRule.stderr)).toContain('--min-pool belongs to task synthesis during training; give --synth-docs DIR too');
    const help = (await tabrl(['train', '--help'])).stdout;
    for (const flag of ['--synth-docs DIR', '--min-pool N', '--max-retire M', '--replay N']) expect(help).toContain(flag);
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-pool-'));
    writeFileSync(join(dir, 'doc.md'), 'The radio mast went up in 1948 on the eastern ridge.\n');
    const refresh = ['train', 'reverse-text', '--model', 'tiny', '--synth-docs', dir, '--generator-model', 'heuristic', '--solver-model', 'heuristic'];
    const badRetire = await tabrl([...refresh, '--max-retire', 'some']);
    expect(badRetire.code).toBe(2);
    expect(lastLine(badRetire.stderr)).toContain('--max-retire must be joined, all or a whole number ≥ 0, got "some"');
    const badMinimum = await tabrl([...refresh, '--min-pool', '0']);
    expect(badMinimum.code).toBe(2);
    expect(lastLine(badMinimum.stderr)).toContain('--min-pool must be an integer ≥ 1, got "0"');
  });

  test('the pool is kept in the checkpoint with the rollouts sampled ahead (max-async 1): an interrupted run resumes with it, and its refreshes go on counting', { timeout: 300_000 }, async () => {
    const { dir, docs } = await synthesizedRun();
    const out = join(dir, 'run');
    const args = ['train', join(dir, 'tasks', 'env.ts'), '--model', 'tiny', '--sft-steps', '0', '--steps', '4', '--tasks-per-step', '2', '--group', '2', '--max-tokens', '4', '--eval-tasks', '0', '--checkpoint-every', '1', '--max-async', '1'];
    const refresh = ['--synth-docs', docs, '--generator-model', 'heuristic', '--solver-model', 'heuristic', '--refresh-every', '1', '--refresh-k', '2', '--keep', '0.2-0.8'];
    // Stopped once the first step and its refresh are in metrics.jsonl.
    expect(await tabrlInterrupted([...args, ...refresh, '--out', out], join(out, 'metrics.jsonl'), 2)).not.toBe(0);
    const state = JSON.parse(readFileSync(join(out, 'checkpoint', 'state.json'), 'utf8')) as { nextStep: number; run: { pool: { tasks: { question: string }[]; refreshes: number; retired: unknown[] } } };
    expect(state.run.pool.tasks.map((task) => task.question)).toHaveLength(2);
    expect(state.run.pool.retired).toEqual([]);
    expect(state.run.pool.refreshes).toBe(state.nextStep);
    const resumed = await tabrl(['train', '--resume', out]);
    expect(resumed.code, resumed.stderr).toBe(0);
    // One refresh per step over the whole run, numbered 0–3 with none run twice.
    const refreshes = metricsOf(join(out, 'metrics.jsonl')).filter((line) => line.phase === 'pool-refresh');
    expect(refreshes.map((line) => line.refresh)).toEqual([0, 1, 2, 3]);
    expect(refreshes.map((line) => line.step)).toEqual([0, 1, 2, 3]);
  });

  test('a checkpoint of a --synth-docs run without its pool is refused on --resume, with what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-pool-'));
    expect(() => checkSavedPool(undefined, `--resume ${dir}`)).toThrow('holds no task pool (it was saved before pools were kept, or is damaged); start it again with --overwrite');
    expect(checkSavedPool({ tasks: [{ question: 'q' }], refreshes: 3 }, 'x')).toEqual({ tasks: [{ question: 'q' }], refreshes: 3, retired: [] });
    expect(checkSavedPool({ tasks: [{ question: 'q' }], refreshes: 3, retired: [{ question: 'r' }] }, 'x')).toEqual({ tasks: [{ question: 'q' }], refreshes: 3, retired: [{ question: 'r' }] });
    expect(() => checkSavedPool({ tasks: [{ question: 'q' }], refreshes: 3, retired: 'r' }, 'x')).toThrow('holds no task pool');
  });
});
