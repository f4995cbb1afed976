/**
 * Type-checks and bundles an environment file in a process of its own, started with an empty
 * environment (src/cli/env-compile-child.ts): the TypeScript compiler and esbuild (whose long-lived
 * service inherits the environment of the process that starts it) read the file without the host's
 * API keys anywhere in reach — not in their `process.env`, not in /proc/self/environ. The request goes
 * in as an argument and the result comes back as one JSON line on stdout; there is no IPC channel.
 *
 * It runs no environment code (isolated-environment.ts does, in its own child) and is not a pool:
 * one short-lived process per file.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EnvFileCompileError } from './compile-env-file.ts';
import { errorMessage } from '../common/error-message.ts';

const CHILD_ENTRY = fileURLToPath(new URL('./env-compile-child.ts', import.meta.url));
/** The largest result the compile process may print (a bundle of the file and its own modules). */
const MAX_RESULT_BYTES = 256 * 2 ** 20;
/** What of the compile process's stderr a failure message quotes. */
const STDERR_TAIL_CHARS = 2_000;
/** Variables the compile process may hold: none are passed, but Windows needs SystemRoot to start a process at all. */
const ALLOWED_VARIABLES = process.platform === 'win32' ? ['SystemRoot'] : [];

/** What the compile process is asked: the file, the bundle's module format, and whether to type-check first. */
export interface CompileRequest {
  path: string;
  format: 'cjs' | 'esm';
  typecheck: boolean;
}

/** What it answers: type errors (`file:line:col - error TS...` lines; no bundle when there are any), the bundle, or esbuild's errors. */
export interface CompileResult {
  diagnostics: string[];
  bundle?: string;
  compileError?: string;
  /** The names of the environment variables the compile process saw (the host checks there are none). */
  environmentNames: string[];
}

/** Runs the compile process for `path` with an empty environment and returns its result; throws `EnvFileCompileError` when esbuild refuses the file. */
export async function compileEnvironmentInChild(path: string, options: { format?: 'cjs' | 'esm'; typecheck?: boolean } = {}): Promise<CompileResult> {
  const request: CompileRequest = { path, format: options.format ?? 'cjs', typecheck: options.typecheck ?? false };
  const result = await runCompileProcess(request);
  const leaked = result.environmentNames.filter((name) => !ALLOWED_VARIABLES.includes(name));
  if (leaked.length > 0) throw new Error(`the process that bundles environment files started with environment variables (${leaked.join(', ')}); it must start with none`);
  if (result.compileError !== undefined) throw new EnvFileCompileError(result.compileError);
  return result;
}

function runCompileProcess(request: CompileRequest): Promise<CompileResult> {
  // TabRL runs from its TypeScript sources (bin/tabrl.mjs registers tsx); the child does the same.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
  const env = Object.fromEntries(ALLOWED_VARIABLES.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
  const child = spawn(process.execPath, ['--import', tsx, CHILD_ENTRY, JSON.stringify(request)], { env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  const stdout: Buffer[] = [];
  let stdoutBytes = 0;
  let stderr = '';
  return new Promise((resolvePromise, reject) => {
    const fail = (why: string) => reject(new Error(`bundling ${request.path} failed: ${why}${stderr ? `\n${stderr.slice(-STDERR_TAIL_CHARS)}` : ''}`));
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_RESULT_BYTES) {
        child.kill('SIGKILL');
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    child.on('error', (error) => fail(`could not start the compile process (${errorMessage(error)})`));
    child.on('close', (code, signal) => {
      if (stdoutBytes > MAX_RESULT_BYTES) return fail(`the bundle is larger than ${MAX_RESULT_BYTES / 2 ** 20} MiB; an environment file and its own modules should be far smaller`);
      if (code !== 0) return fail(`the compile process exited with ${signal ?? `code ${code}`}`);
      try {
        resolvePromise(JSON.parse(Buffer.concat(stdout).toString('utf8')) as CompileResult);
      } catch (error) {
        fail(`its result was not JSON (${errorMessage(error)})`);
      }
    });
  });
}
