// The environment file is type-checked and bundled in a process started with an empty environment:
// with a secret in this (the host's) environment, the compile process sees no variable at all, and a
// hostile file's bundle-time and type-check-time tricks (`process.env` and `import.meta.env` that a
// bundler might substitute, a triple-slash reference to /proc/self/environ) find nothing to inline,
// report or read — neither in the bundle, nor in the diagnostics, nor when the file runs.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { evaluate, ScriptedClient } from '../../../src/envs/index.ts';
import { compileEnvironmentInChild } from '../../../src/cli/env-compile-process.ts';
import { EnvFileCompileError } from '../../../src/cli/compile-env-file.ts';
import { closeEnvironment, loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';

const SECRET = 'sk-compile-test-51c0de9a';
const SECRET_NAME = 'TABRL_COMPILE_TEST_KEY';
let dir: string;

beforeAll(() => {
  process.env[SECRET_NAME] = SECRET;
  dir = mkdtempSync(join(tmpdir(), 'tabrl-compile-'));
});
afterAll(() => {
  delete process.env[SECRET_NAME];
});

/** Writes `source` as `<dir>/<name>` and returns its path. */
function writeEnv(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

// Each way the file could learn the host's environment while it is compiled, folded into its task.
const HOSTILE = `/// <reference path="/proc/self/environ" />
import { SingleTurnEnv } from 'tabrl';
declare const process: { env: Record<string, string | undefined> } | undefined;
const seen = [
  typeof process === 'undefined' ? 'no process' : String(process.env.${SECRET_NAME}),
  String((import.meta as unknown as { env?: Record<string, string> }).env?.${SECRET_NAME}),
].join(' | ');
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'peek', dataset: [{ question: seen, answer: seen }] });
}
`;

test('the compile process starts with no environment variables, though the host holds a secret', { timeout: 60_000 }, async () => {
  const result = await compileEnvironmentInChild(writeEnv('plain.ts', `import { SingleTurnEnv } from 'tabrl';\nexport default () => new SingleTurnEnv({ dataset: [{ question: 'q', answer: 'a' }] });\n`), { typecheck: true });
  expect(process.env[SECRET_NAME]).toBe(SECRET);
  expect(result.environmentNames).not.toContain(SECRET_NAME);
  expect(result.environmentNames.filter((name) => name !== 'SystemRoot')).toEqual([]);
  expect(result.diagnostics).toEqual([]);
  expect(result.bundle).toContain('SingleTurnEnv');
});

test('a hostile file finds no secret to inline or report at bundle and type-check time', { timeout: 60_000 }, async () => {
  const file = writeEnv('hostile.ts', HOSTILE);
  const checked = await compileEnvironmentInChild(file, { typecheck: true });
  // The reference to /proc/self/environ is a type error; its text carries no part of the host's environment.
  expect(checked.diagnostics.join('\n')).toMatch(/hostile\.ts:1:\d+ - error TS/);
  expect(JSON.stringify(checked)).not.toContain(SECRET);
  const bundled = await compileEnvironmentInChild(file, { format: 'esm' });
  expect(bundled.bundle).toContain('import.meta');
  expect(bundled.bundle).not.toContain(SECRET);
});

test('when the hostile file runs, what it learned at compile time holds no secret', { timeout: 60_000 }, async () => {
  const env = await loadEnvironmentSpec(writeEnv('runs.ts', HOSTILE), { typecheck: false });
  try {
    const result = await evaluate(env, new ScriptedClient(() => 'x'));
    expect(result.records[0]!.answer).toBe('no process | undefined');
    expect(JSON.stringify(result.records)).not.toContain(SECRET);
  } finally {
    closeEnvironment(env);
  }
});

test('a file esbuild refuses is an EnvFileCompileError naming the import', { timeout: 60_000 }, async () => {
  const file = writeEnv('absolute.ts', `import key from '/proc/self/environ.json';\nexport default () => key;\n`);
  const error = await compileEnvironmentInChild(file).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(EnvFileCompileError);
  expect((error as Error).message).toMatch(/'\/proc\/self\/environ\.json', an absolute path or URL/);
});
