/**
 * Runs the real `tabrl` binary (bin/tabrl.mjs) in a child process, as a person's shell would, for
 * the CLI tests: its exit code and what it printed.
 */
import { execFile } from 'node:child_process';
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
