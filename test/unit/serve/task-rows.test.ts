/**
 * `tabrl tasks rows`: the dataset rows of a served environment. Each row's reset arguments must
 * start the episode of that task over the wire, with the row's prompt as the first observation's;
 * an existing output file is kept unless --overwrite.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';
import { serveForTest, WireClient } from '../../support/serve-wire.ts';

test('each row of tabrl tasks rows resets the served episode of its task, whose prompt it carries', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-rows-')), 'rows.jsonl');
  const run = await runTabrl(['tasks', 'rows', 'reverse-text', '--split', 'eval', '-n', '5', '--out', out]);
  expect(run.code).toBe(0);
  const rows = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  expect(rows.map((row) => [row.task_index, row.split])).toEqual([0, 1, 2, 3, 4].map((i) => [i, 'eval']));
  expect(new Set(rows.map((row) => row.prompt)).size).toBe(5);

  const env = await loadEnvironmentSpec('reverse-text');
  const server = await serveForTest(env);
  const client = await WireClient.open(server.wsUrl);
  for (const { prompt, ...reset } of rows) {
    const observation = (await client.request({ type: 'reset', data: reset })).data.observation;
    expect(observation).toMatchObject({ prompt, task_index: reset.task_index, split: 'eval' });
  }
  await client.close();
  await server.close(100);
}, 60_000);

test('an existing --out file is kept unless --overwrite', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-rows-')), 'rows.jsonl');
  writeFileSync(out, 'precious\n');
  const refused = await runTabrl(['tasks', 'rows', 'reverse-text', '--out', out]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/--overwrite/);
  expect(readFileSync(out, 'utf8')).toBe('precious\n');
  expect((await runTabrl(['tasks', 'rows', 'reverse-text', '-n', '2', '--out', out, '--overwrite'])).code).toBe(0);
  expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(2);
}, 60_000);
