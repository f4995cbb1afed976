/**
 * Runs the real `tabrl` binary (bin/tabrl.mjs) in a child process, as a person's shell would, for
 * the CLI tests: its exit code and what it printed; and the files around a run (an environment file
 * to evaluate, the results.jsonl it wrote).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `tabrl` entry point. */
export const TABRL_BIN = fileURLToPath(new URL('../../bin/tabrl.mjs', import.meta.url));

/** What one `tabrl` run left: its exit code (1 when it was killed or died on a signal) and its output. */
export interface TabrlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tabrl …args` with extra environment variables, killed after `timeoutMs` (default 90 s). */
export function runTabrl(args: readonly string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<TabrlRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TABRL_BIN, ...args], { env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Writes an environment file's source into a fresh temporary folder and returns the file's path (the folder is free for a run's --out). */
export function writeEnvFile(source: string, name = 'env.ts'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tabrl-env-')), name);
  writeFileSync(path, source);
  return path;
}

/** The rollouts a `tabrl eval --out <out>` run wrote: each line of <out>/results.jsonl, parsed (loosely typed, for tests to read any field). */
export function readResults(out: string) {
  return readFileSync(join(out, 'results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}
