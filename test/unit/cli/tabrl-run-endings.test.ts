// How runs end when the place they write to fails them, and how command-line mistakes exit: a full
// disk names the file and how to resume and leaves metadata.json "failed" (never "running"); an --out
// that cannot be made fails at once; a mistake on the command line exits 2, whichever flag it is.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';
import { JsonlAppender } from '../../../src/cli/studio-output.ts';
import { OutputWriteError } from '../../../src/cli/run-status.ts';

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  server = await startFakeOpenAIServer((messages) => messages.at(-1)!.content);
  dir = mkdtempSync(join(tmpdir(), 'tabrl-endings-'));
});
afterAll(() => server.close());

const onLinux = process.platform === 'linux' && existsSync('/dev/full');

test.skipIf(!onLinux)('a full disk names results.jsonl and how to resume, and metadata.json ends "failed"', { timeout: 90_000 }, async () => {
  const out = join(dir, 'full');
  mkdirSync(out);
  // Every write to /dev/full fails with ENOSPC, as on a full disk.
  symlinkSync('/dev/full', join(out, 'results.jsonl'));
  const run = await runTabrl(['eval', 'arithmetic', '--base-url', server.baseURL, '--model', 'echo', '-n', '3', '--out', out, '--overwrite']);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`could not write ${join(out, 'results.jsonl')}: ENOSPC`);
  expect(run.stderr).toContain(`then continue with tabrl eval --resume ${out}`);
  const metadata = JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8')) as Record<string, unknown>;
  expect(metadata.status).toBe('failed');
  expect(metadata.stopped_early).toMatch(/ENOSPC/);
});

test.skipIf(!onLinux)('an --out that cannot be made (/proc/x) fails at once with exit 2, instead of spinning', { timeout: 60_000 }, async () => {
  const started = Date.now();
  const run = await runTabrl(['eval', 'arithmetic', '--base-url', server.baseURL, '--model', 'echo', '--out', '/proc/tabrl-x/run'], { timeoutMs: 30_000 });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain('cannot write to --out /proc/tabrl-x/run');
  expect(Date.now() - started).toBeLessThan(30_000);
});

test('command-line mistakes exit 2: an unknown environment, --top-p 2', { timeout: 60_000 }, async () => {
  const unknown = await runTabrl(['eval', 'wordel', '--base-url', server.baseURL, '--model', 'm']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown environment "wordel"');
  const missing = await runTabrl(['eval', join(dir, 'nothing-here.ts'), '--base-url', server.baseURL, '--model', 'm']);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('does not exist');
  const topP = await runTabrl(['generate', 'tiny', '--prompt', 'hi', '--top-p', '2']);
  expect(topP.code).toBe(2);
  expect(topP.stderr).toContain('--top-p must be a number from 0 to 1, got "2"');
});

test('a checkpoint folder without its COMPLETE marker is not resumed from', { timeout: 60_000 }, async () => {
  const out = join(dir, 'unmarked');
  mkdirSync(join(out, 'checkpoint'), { recursive: true });
  // A copy cut short: state.json is there, the marker written last is not.
  writeFileSync(join(out, 'checkpoint', 'state.json'), '{"phase": "grpo", "nextStep": 3}');
  const run = await runTabrl(['train', '--resume', out]);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain(`${join(out, 'checkpoint')} has no COMPLETE marker, so its writing may not have finished and it is not used`);
});

test.skipIf(!onLinux)('tabrl train on a full disk names metrics.jsonl and how to go on, and status.json ends "failed"', { timeout: 120_000 }, async () => {
  const out = join(dir, 'train-full');
  mkdirSync(out);
  symlinkSync('/dev/full', join(out, 'metrics.jsonl'));
  const run = await runTabrl(['train', 'reverse-text', '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '1', '--group', '2', '--eval-tasks', '1', '--max-tokens', '4', '--out', out, '--overwrite'], { timeoutMs: 110_000 });
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`could not write ${join(out, 'metrics.jsonl')}: ENOSPC`);
  // The first measurement comes before the first checkpoint: there is nothing to resume from yet.
  expect(run.stderr).toContain(`make room (or fix the folder), then start the run again with --out ${out} --overwrite`);
  const status = JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')) as Record<string, unknown>;
  expect(status).toMatchObject({ status: 'failed', command: 'train', environment: 'reverse-text' });
  expect(status.stopped_early).toMatch(/ENOSPC/);
  expect(status.finished_at).toEqual(expect.any(String));
});

test('a tabrl train that completes leaves status.json "completed"; one whose model fails to load leaves it "failed", never "running"', { timeout: 120_000 }, async () => {
  const out = join(dir, 'train-done');
  const done = await runTabrl(['train', 'reverse-text', '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '1', '--group', '2', '--eval-tasks', '1', '--max-tokens', '4', '--out', out], { timeoutMs: 110_000 });
  expect(done.code).toBe(0);
  expect(JSON.parse(readFileSync(join(out, 'status.json'), 'utf8'))).toMatchObject({ status: 'completed' });
  // A host-side failure after the run started (a model folder that is not one).
  const broken = join(dir, 'not-a-model');
  mkdirSync(broken);
  writeFileSync(join(broken, 'config.json'), '{ not json');
  const failedOut = join(dir, 'train-failed');
  const failed = await runTabrl(['train', 'reverse-text', '--model', `local:${broken}`, '--sft-steps', '0', '--steps', '1', '--eval-tasks', '1', '--out', failedOut], { timeoutMs: 60_000 });
  expect(failed.code).not.toBe(0);
  const status = JSON.parse(readFileSync(join(failedOut, 'status.json'), 'utf8')) as Record<string, unknown>;
  expect(status.status).toBe('failed');
  expect(String(status.stopped_early)).toContain(broken);
});

test.skipIf(!onLinux)("the studio commands' JSONL files name themselves when the disk is full", () => {
  const lines = new JsonlAppender('/dev/full');
  expect(() => lines.append('{"question": "q"}\n')).toThrow(OutputWriteError);
  expect(() => lines.append('{"question": "q"}\n')).toThrow(/^could not write \/dev\/full: ENOSPC/);
  expect(lines.count).toBe(0);
});

/** Makes `<out>/<name>` a symlink whose every write fails (its target's folder is a device, not a folder); existsSync sees no file there, so --out is not refused. */
function unwritable(out: string, name: string): string {
  mkdirSync(out, { recursive: true });
  symlinkSync('/dev/full/tabrl-cannot-exist', join(out, name));
  return join(out, name);
}

test.skipIf(!onLinux)('tabrl synth whose tasks.jsonl cannot be written names it and leaves report.json "failed", not "running"', { timeout: 60_000 }, async () => {
  const out = join(dir, 'synth-unwritable');
  const file = unwritable(out, 'tasks.jsonl');
  writeFileSync(join(dir, 'doc.md'), 'The station opened in 1957 and was built by the railway company.\n');
  const run = await runTabrl(['synth', join(dir, 'doc.md'), '--generator-base-url', server.baseURL, '--generator-model', 'echo', '--solver-base-url', server.baseURL, '--solver-model', 'echo', '--out', out]);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`could not write ${file}: ENOTDIR`);
  expect(run.stderr).toContain(`then run it again with --out ${out} --overwrite`);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Record<string, unknown>;
  expect(report.status).toBe('failed');
  expect(report.stopped_early).toContain(file);
  expect(report.settings).toMatchObject({ generator: { model: 'echo' } });
});

test.skipIf(!onLinux)('tabrl calibrate whose results.jsonl cannot be written names it and leaves a report.json that says "failed"', { timeout: 60_000 }, async () => {
  const out = join(dir, 'calibrate-unwritable');
  const file = unwritable(out, 'results.jsonl');
  const run = await runTabrl(['calibrate', 'arithmetic', '--base-url', server.baseURL, '--model', 'echo', '-r', '2', '--num-tasks', '2', '--out', out]);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`could not write ${file}: ENOTDIR`);
  expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))).toMatchObject({ status: 'failed', environment: 'arithmetic', stopped_early: expect.stringContaining(file) });
});
