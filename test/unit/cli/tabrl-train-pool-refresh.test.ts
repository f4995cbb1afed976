// `tabrl train --synth-docs`: the task pool of a studio environment file is refreshed every N GRPO steps, each refresh recorded in metrics.jsonl.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 150_000 });
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;

describe('tabrl train --synth-docs', () => {
  test('refreshes the pool every step with the tiny policy: new tasks it never passes stay out, and each refresh is a metrics line', { timeout: 240_000 }, async () => {
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
    const refused = await tabrl(args);
    expect(refused.code).toBe(2);
    expect(lastLine(refused.stderr)).toContain('give --max-async 0 so no rollouts are sampled ahead of a refresh');
    const run = await tabrl([...args, '--max-async', '0']);
    expect(run.code, run.stderr).toBe(0);
    const refreshes = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.phase === 'pool-refresh');
    // The untrained tiny model answers nothing right: the new task is too hard for it and stays out; nothing is mastered.
    expect(refreshes).toHaveLength(2);
    expect(refreshes[0]).toMatchObject({ refresh: 0, step: 0, poolBefore: 2, candidates: 1, added: 0, retired: 0, poolSize: 2, rejected: { tooEasy: 0, tooHard: 1 }, poolPassRates: [0, 0], candidatePassRates: [0], histogram: [3, 0, 0, 0, 0] });
    expect(refreshes[1]).toMatchObject({ refresh: 1, step: 1, poolSize: 2 });
    expect(run.stderr).toContain('pool refresh 1 after step 1: 1 new candidates, 0 added, 0 retired (mastered); pool 2 → 2');
  });

  test('the refresh flags need --synth-docs; --help lists them', async () => {
    const lone = await tabrl(['train', 'reverse-text', '--model', 'tiny', '--refresh-every', '5']);
    expect(lone.code).toBe(2);
    expect(lastLine(lone.stderr)).toContain('--refresh-every belongs to task synthesis during training; give --synth-docs DIR too');
    expect((await tabrl(['train', '--help'])).stdout).toContain('--synth-docs DIR');
  });
});
