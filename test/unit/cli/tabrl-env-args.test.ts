// --env-args keys a built-in environment never reads (a typo such as "numtasks") used to be ignored
// without a word, so the run used the defaults; now each is named in a warning with the key it likely meant.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { watchEnvArgs } from '../../../src/common/unused-env-args.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

test('watchEnvArgs names the given keys that were never read, suggesting a read one; spread and `in` count as reads', () => {
  const watched = watchEnvArgs({ numtasks: 5, seed: 1, judgeModel: 'j' }, ['judgeModel']);
  const { numTasks = 10, seed = 0 } = watched.args as { numTasks?: number; seed?: number };
  expect([numTasks, seed]).toEqual([10, 1]);
  expect(watched.unusedWarnings()).toEqual(['--env-args "numtasks" was not used by the environment; did you mean "numTasks"?']);

  const spread = watchEnvArgs({ anything: 1 });
  expect({ ...spread.args }).toEqual({ anything: 1 });
  expect(spread.unusedWarnings()).toEqual([]);
  const probed = watchEnvArgs({ level: 2 });
  expect('level' in probed.args).toBe(true);
  expect(probed.unusedWarnings()).toEqual([]);
  expect(watchEnvArgs({ zzz: 1 }).unusedWarnings()).toEqual(['--env-args "zzz" was not used by the environment']);
});

const dir = mkdtempSync(join(tmpdir(), 'tabrl-env-args-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('tabrl eval wordle warns about a misspelled --env-args key and still runs', { timeout: 60_000 }, async () => {
  const run = await runTabrl(['eval', 'wordle', '--model', 'local:tiny', '-n', '1', '--max-tokens', '2', '--env-args', '{"numtasks": 5, "seed": 3}', '--json', '--out', join(dir, 'out')]);
  expect(run.code).toBe(0);
  expect(run.stderr).toContain('warning: wordle: --env-args "numtasks" was not used by the environment; did you mean "numTasks"?');
  expect(run.stderr).not.toContain('"seed" was not used');
});

test('tabrl eval wordle refuses a --env-args value of the wrong type, naming the argument and what is allowed', { timeout: 60_000 }, async () => {
  const run = await runTabrl(['eval', 'wordle', '--model', 'local:tiny', '-n', '1', '--env-args', '{"numTasks":"x"}', '--out', join(dir, 'out-bad-value')]);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain('numTasks must be a whole number from 0 to 2015 (one game per training word), got "x"; check --env-args');
  expect(run.stderr).not.toContain('has no');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
});
