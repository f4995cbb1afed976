// An evaluation whose weighted reward function fails in every rollout measured nothing: every reward
// is the 0 it scored for the failure. It used to finish with exit code 0 like a real result.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runTabrl } from '../../support/tabrl-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabrl-broken-reward-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An environment whose reward function `weight`·buggy throws, beside a metric (weight 0) that works. */
const envFile = (weight: number) => `
import { SingleTurnEnv, Rubric } from 'tabrl';
function buggy(): number { throw new Error('reward bug'); }
function length(ctx: { completion: { content: string }[] }): number { return ctx.completion.length; }
export default function loadEnvironment() {
  return new SingleTurnEnv({
    dataset: [{ question: 'say hi', answer: 'hi' }, { question: 'say yo', answer: 'yo' }],
    rubric: new Rubric({ funcs: [buggy, length], weights: [${weight}, 0] }),
  });
}
`;

test('a weighted reward function that throws in every rollout fails the run (exit 1), naming it; the results are kept', { timeout: 60_000 }, async () => {
  const path = join(dir, 'broken.ts');
  writeFileSync(path, envFile(1));
  const out = join(dir, 'out-broken');
  const run = await runTabrl(['eval', path, '--model', 'local:tiny', '-n', '2', '--max-tokens', '2', '--no-typecheck', '--out', out]);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/tabrl eval: stopped: the reward function buggy \(weight 1\) failed in every rollout, so the rewards are not measurements; the first error: buggy threw: reward bug/);
  expect(readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'))).toMatchObject({ status: 'failed' });
});

test('the same failure in a metric of weight 0 leaves the run completed (exit 0)', { timeout: 60_000 }, async () => {
  const path = join(dir, 'metric.ts');
  writeFileSync(path, envFile(0));
  const run = await runTabrl(['eval', path, '--model', 'local:tiny', '-n', '2', '--max-tokens', '2', '--no-typecheck', '--out', join(dir, 'out-metric')]);
  expect(run.stderr).not.toContain('stopped');
  expect(run.code).toBe(0);
});
