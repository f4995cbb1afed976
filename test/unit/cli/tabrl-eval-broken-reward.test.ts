// An evaluation whose weighted reward functions all fail in every rollout measured nothing: every
// reward is the 0 scored for the failures. It used to finish with exit code 0 like a real result.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runTabrl } from '../../support/tabrl-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabrl-broken-reward-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An environment whose reward function buggy (weight `buggy`) throws, beside length (weight `length`), which works. */
const envFile = (buggy: number, length: number) => `
import { SingleTurnEnv, Rubric } from 'tabrl';
function buggy(): number { throw new Error('reward bug'); }
function length(ctx: { completion: { content: string }[] }): number { return ctx.completion.length; }
export default function loadEnvironment() {
  return new SingleTurnEnv({
    dataset: [{ question: 'say hi', answer: 'hi' }, { question: 'say yo', answer: 'yo' }],
    rubric: new Rubric({ funcs: [buggy, length], weights: [${buggy}, ${length}] }),
  });
}
`;

test('a weighted reward function that throws in every rollout fails the run (exit 1), naming it; the results are kept', { timeout: 60_000 }, async () => {
  const path = join(dir, 'broken.ts');
  writeFileSync(path, envFile(1, 0));
  const out = join(dir, 'out-broken');
  const run = await runTabrl(['eval', path, '--model', 'local:tiny', '-n', '2', '--max-tokens', '2', '--no-typecheck', '--out', out]);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/tabrl eval: stopped: the reward function buggy failed in every rollout, so the rewards are not measurements; the first error: buggy threw: reward bug/);
  expect(readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'))).toMatchObject({ status: 'failed' });
});

test('the same failure beside a weighted function that works leaves the run completed (exit 0), the errors listed', { timeout: 60_000 }, async () => {
  const path = join(dir, 'partial.ts');
  writeFileSync(path, envFile(1, 1));
  const run = await runTabrl(['eval', path, '--model', 'local:tiny', '-n', '2', '--max-tokens', '2', '--no-typecheck', '--out', join(dir, 'out-partial')]);
  expect(run.stderr).not.toContain('stopped');
  expect(run.stdout).toMatch(/errors\s+2 rollouts \(reward: 2\)/);
  expect(run.code).toBe(0);
});
