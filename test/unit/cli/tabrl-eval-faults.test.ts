// End-to-end, as a skeptical user would try it: the real `tabrl` binary against an endpoint that
// fails in every way a server can (the model name picks the failure), and against environment files
// that misbehave in every way code can. Each run asserts the exit code, the message, metadata.json's
// status and that every finished rollout's line in results.jsonl is whole.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeReply } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const BIN = fileURLToPath(new URL('../../../bin/tabrl.mjs', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI and resolves with its exit code and output (never rejects). */
const tabrl = (args: string[], env: Record<string, string> = {}) => runTabrl(args, { env, timeoutMs: 90_000 });

/** Every line of results.jsonl, parsed (a line that is not whole JSON fails the test). */
function resultLines(out: string): Record<string, unknown>[] {
  const text = readFileSync(join(out, 'results.jsonl'), 'utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}

const metadataOf = (out: string) => JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8')) as Record<string, unknown>;

/** A one-line message: no stack trace. */
function expectOneLineError(run: Run): void {
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr).not.toContain('node:internal');
}

// The answer is the question; the model name picks how the server fails instead.
const FAILURES: Record<string, FakeReply> = {
  'fail-500': { status: 500, body: { error: { message: 'GPU on fire' } } },
  'fail-429': { status: 429, headers: { 'retry-after': '0' } },
  hang: { hang: true },
  garbage: { raw: '{"choices": [{"message": {"role": "assis' },
  'null-message': { status: 200, body: { choices: [{ index: 0, message: null, finish_reason: 'stop' }] } },
  cut: { cut: true },
};

const ECHO_ENV = `
import { SingleTurnEnv, Rubric } from 'tabrl';
const exactReward = (ctx) => (ctx.completion.at(-1)?.content === ctx.answer ? 1 : 0);
export default function loadEnvironment(args = {}) {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'].slice(0, args.count ?? 6);
  return new SingleTurnEnv({ name: 'echo', dataset: words.map((word) => ({ question: word, answer: word })), rubric: new Rubric({ funcs: [exactReward] }) });
}
`;

// One task per way environment code can misbehave; "fine" tasks around them must come out whole.
const HOSTILE_ENV = `
import { SingleTurnEnv, Rubric } from 'tabrl';
const exactReward = (ctx) => (ctx.completion.at(-1)?.content === ctx.answer ? 1 : 0);
const hostileReward = async (ctx) => {
  switch (ctx.answer) {
    case 'loop': while (true) { /* spin */ }
    case 'exit': process.exit(0); return 0;
    case 'hang': return new Promise(() => {});
    case 'probe':
      ctx.state.process = typeof process;
      ctx.state.fetch = typeof globalThis.fetch;
      ctx.state.dynamicImport = await import('node:fs').then(() => 'imported', (error) => String(error.message));
      ctx.state.evalImport = await eval("import('node:child_process')").then(() => 'imported', (error) => String(error.message));
      return 1;
    case 'huge': ctx.state.blob = 'x'.repeat(20 * 2 ** 20); return 1;
    default: return 1;
  }
};
export default function loadEnvironment() {
  return new SingleTurnEnv({
    name: 'hostile',
    dataset: ['fine', 'loop', 'exit', 'hang', 'probe', 'huge', 'fine2'].map((word) => ({ question: word, answer: word })),
    rubric: new Rubric({ funcs: [exactReward, hostileReward], weights: [1, 0] }),
  });
}
`;

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  server = await startFakeOpenAIServer((messages, request) => FAILURES[request.model] ?? messages.at(-1)!.content);
  dir = mkdtempSync(join(tmpdir(), 'tabrl-faults-'));
  writeFileSync(join(dir, 'echo.mjs'), ECHO_ENV);
  writeFileSync(join(dir, 'hostile.mjs'), HOSTILE_ENV);
});
afterAll(() => server.close());

describe('tabrl eval against a failing endpoint', () => {
  test.each([
    ['fail-500', 'client (server)', 'failed with HTTP 500: GPU on fire'],
    ['fail-429', 'client (rate_limit)', 'is rate-limiting (HTTP 429)'],
    ['garbage', 'client (bad_response)', 'answered with broken JSON'],
    ['null-message', 'client (bad_response)', 'answered with choices[0].message = null'],
    ['cut', 'client (bad_response)', 'broke the connection in the middle of its answer'],
  ])('%s on every request: exit 1, status failed, and the summary names the first error', { timeout: 60_000 }, async (model, kind, message) => {
    const out = join(dir, `out-${model}`);
    const run = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', model, '-n', '3', '--max-retries', '1', '--out', out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('stopped: every rollout failed; the first error: ');
    expect(run.stderr).toContain(message);
    expect(run.stdout).toContain(`first ${kind}`);
    expectOneLineError(run);
    const metadata = metadataOf(out);
    expect(metadata.status).toBe('failed');
    expect(metadata.stopped_early).toContain(message);
    expect(resultLines(out)).toHaveLength(3);
  });

  test('a server that never answers: the run stops after N timeouts in a row, not after every rollout timed out', { timeout: 60_000 }, async () => {
    const out = join(dir, 'out-hang');
    const run = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'hang', '-n', '6', '-c', '1', '--timeout', '0.2', '--max-retries', '0', '--max-consecutive-timeouts', '2', '--out', out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/stopped: 2 rollouts in a row timed out; the last: no answer from .* within 200 ms/);
    expectOneLineError(run);
    expect(metadataOf(out).status).toBe('failed');
    expect(resultLines(out)).toHaveLength(2);
  });

  test('--timeout beyond what a timer holds is a usage error, not requests failing after 1 ms', async () => {
    const run = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '--timeout', '3000000', '--out', join(dir, 'out-timeout')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--timeout must be a number from 0.001 to 2147483.647, got "3000000"');
    expectOneLineError(run);
  });
});

describe('tabrl eval with hostile environment code', () => {
  test('loops, exits, hangs, env and import probes and a huge rollout each fail only their own rollout; the run completes', { timeout: 90_000 }, async () => {
    const out = join(dir, 'out-hostile');
    const run = await tabrl(['eval', join(dir, 'hostile.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '7', '--time-limit', '1', '--api-key-env', 'MY_KEY', '--out', out], { MY_KEY: 'sk-secret', OPENAI_API_KEY: 'sk-other' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('first env (timeout)');
    const lines = new Map(resultLines(out).map((line) => [line.answer as string, line]));
    expect([...lines.keys()].sort()).toEqual(['exit', 'fine', 'fine2', 'hang', 'huge', 'loop', 'probe']);
    const errors = (answer: string) => (lines.get(answer)!.errors as { source: string; message: string }[]).map((error) => `${error.source}: ${error.message}`);

    for (const answer of ['fine', 'fine2']) expect(lines.get(answer)).toMatchObject({ reward: 1, errors: [], scores: { exactReward: 1, hostileReward: 1 } });
    expect(errors('loop')[0]).toMatch(/^env: environment code of "hostile" ran for more than 1 s without returning \(an infinite loop\?\)/);
    expect(errors('hang')[0]).toMatch(/^env: .*ran for more than 1 s without returning \(a promise that never settles\?\)/);
    expect(lines.get('loop')).toMatchObject({ reward: 0, stop_reason: 'error' });
    // Environment code runs in an engine without a process to end.
    expect(errors('exit')).toEqual([expect.stringMatching(/^reward: hostileReward threw: .*'process' is not defined/)]);
    expect(lines.get('exit')).toMatchObject({ reward: 1, stop_reason: 'completed' });

    const probe = lines.get('probe')!.state as Record<string, unknown>;
    expect(probe.process).toBe('undefined');
    expect(probe.fetch).toBe('undefined');
    expect(probe.dynamicImport).toContain("could not load module 'node:fs'");
    expect(probe.evalImport).toContain("could not load module 'node:child_process'");
    expect(readFileSync(join(out, 'results.jsonl'), 'utf8')).not.toContain('sk-secret');

    expect(errors('huge')).toEqual([expect.stringMatching(/^env: the rollout is 20\.0 MiB, over the 16 MiB/)]);
    expect(readFileSync(join(out, 'results.jsonl')).length).toBeLessThan(1_000_000);
    expect(metadataOf(out)).toMatchObject({ status: 'completed' });
  });

  test.each([
    ['an infinite loop at the top level', 'while (true) {}\nexport default function loadEnvironment() {}', /loop-top\.mjs: loading the environment ran for more than 0\.5 s without returning \(an infinite loop at the top level\?\); it was interrupted/],
    ['a load that never settles', `export default function loadEnvironment() { return new Promise(() => {}); }`, /loading environment .* took more than 1 s/],
    ['process.exit at the top level', `process.exit(0);\nexport default function loadEnvironment() {}`, /'process' is not defined/],
    ['an import of node:fs', `import { writeFileSync } from 'node:fs';\nexport default function loadEnvironment() { writeFileSync('/tmp/x', 'y'); }`, /cannot import "node:fs" in an environment file run by tabrl/],
    ['an empty dataset', `import { SingleTurnEnv } from 'tabrl';\nexport default function loadEnvironment() { return new SingleTurnEnv({ dataset: [] }); }`, /has no tasks to evaluate \(its evaluation set is empty\); check --env-args/],
  ])('%s is the run\'s error at load time: one line, exit 1, nothing written', { timeout: 60_000 }, async (label, source, message) => {
    const name = label === 'an infinite loop at the top level' ? 'loop-top.mjs' : `${label.replace(/\W+/g, '-')}.mjs`;
    writeFileSync(join(dir, name), source);
    const out = join(dir, `out-${name}`);
    const run = await tabrl(['eval', join(dir, name), '--base-url', server.baseURL, '--model', 'echo', '--time-limit', '0.5', '--out', out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expectOneLineError(run);
    expect(existsSync(join(out, 'metadata.json'))).toBe(false);
  });
});

describe('tabrl eval with a judge', () => {
  test('an environment file gets the judge as args.judgeClient; its calls go through tabrl, which holds the key', { timeout: 60_000 }, async () => {
    const judge = await startFakeOpenAIServer(() => 'Score: 8');
    try {
      writeFileSync(join(dir, 'judged.mjs'), `
import { SingleTurnEnv, JudgeRubric } from 'tabrl';
export default function loadEnvironment(args) {
  const rubric = new JudgeRubric({ judgeClient: args.judgeClient, judgeModel: args.judgeModel });
  rubric.addReward((ctx) => Object.keys(process.env).length, 0, 'envKeysMetric');
  return new SingleTurnEnv({ name: 'judged', dataset: [{ question: 'a poem', answer: '' }, { question: 'a song', answer: '' }], rubric });
}
`);
      const out = join(dir, 'out-judged');
      const run = await tabrl(['eval', join(dir, 'judged.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '2', '--judge-base-url', judge.baseURL, '--judge-model', 'grader', '--judge-api-key-env', 'JUDGE_KEY', '--out', out], { JUDGE_KEY: 'sk-judge' });
      expect(run.code).toBe(0);
      const lines = resultLines(out);
      expect(lines.map((line) => line.scores)).toEqual([{ judgeReward: 0.8, envKeysMetric: 0 }, { judgeReward: 0.8, envKeysMetric: 0 }]);
      expect(judge.requests.map((request) => request.model)).toEqual(['grader', 'grader']);
      expect(judge.authorizations).toEqual(['Bearer sk-judge', 'Bearer sk-judge']);
      expect(metadataOf(out).judge).toEqual({ baseUrl: judge.baseURL, model: 'grader', apiKeyEnv: 'JUDGE_KEY' });
    } finally {
      await judge.close();
    }
  });
});

describe('tabrl eval --out and --resume', () => {
  test('a folder with results is refused unless --overwrite; a file or an unwritable place is a one-line error', { timeout: 60_000 }, async () => {
    const out = join(dir, 'out-guarded');
    expect((await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '2', '--out', out])).code).toBe(0);
    const before = readFileSync(join(out, 'results.jsonl'), 'utf8');

    const again = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '1', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`--out ${out} already holds an evaluation (results.jsonl, metadata.json); continue it with tabrl eval --resume ${out}, pass --overwrite to replace it`);
    expect(readFileSync(join(out, 'results.jsonl'), 'utf8')).toBe(before);

    const overwritten = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '1', '--out', out, '--overwrite']);
    expect(overwritten.code).toBe(0);
    expect(resultLines(out)).toHaveLength(1);

    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const onFile = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '--out', file]);
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toContain(`--out ${file} is a file, not a folder`);
    const underFile = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '--out', join(file, 'run')]);
    expect(underFile.code).toBe(2);
    expect(underFile.stderr).toContain(`cannot write to --out ${join(file, 'run')} (ENOTDIR)`);
    expectOneLineError(underFile);
  });

  test('--resume runs only the missing rollouts and keeps every finished line byte for byte', { timeout: 60_000 }, async () => {
    const out = join(dir, 'out-resume');
    const full = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '4', '-r', '2', '--seed', '7', '--out', out]);
    expect(full.code).toBe(0);
    // Make it look interrupted: three whole lines, a fourth cut off mid-write, status "running".
    const lines = readFileSync(join(out, 'results.jsonl'), 'utf8').split('\n').filter(Boolean);
    const kept = `${lines.slice(0, 3).join('\n')}\n`;
    writeFileSync(join(out, 'results.jsonl'), `${kept}${lines[3]!.slice(0, 40)}`);
    writeFileSync(join(out, 'metadata.json'), JSON.stringify({ ...metadataOf(out), status: 'running', summary: undefined }));
    const requestsBefore = server.requests.length;

    const resumed = await tabrl(['eval', '--resume', out]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('resuming: 3 of 8 rollouts are in');
    expect(resumed.stderr).toContain('dropped an unfinished last line');
    expect(server.requests.length - requestsBefore).toBe(5);
    const text = readFileSync(join(out, 'results.jsonl'), 'utf8');
    expect(text.startsWith(kept)).toBe(true);
    const keys = resultLines(out).map((line) => `${line.task_index}:${line.rollout_index}`).sort();
    expect(keys).toEqual(['0:0', '0:1', '1:0', '1:1', '2:0', '2:1', '3:0', '3:1']);
    const metadata = metadataOf(out);
    expect(metadata).toMatchObject({ status: 'completed', num_tasks: 4, rollouts_per_task: 2, sampling_args: { seed: 7 } });
    expect((metadata.summary as { numRollouts: number }).numRollouts).toBe(8);
    expect(metadata.resumed_at).toHaveLength(1);

    // The original command with --resume added: identical values are accepted (nothing is left to run).
    const sameCommand = await tabrl(['eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'echo', '-n', '4', '-r', '2', '--seed', '7', '--out', out, '--resume', out]);
    expect(sameCommand.stderr).toContain('resuming: 8 of 8 rollouts are in');
    expect(sameCommand.code).toBe(0);
    // Conflicting values are refused, each named with the run's value; nothing is run or changed.
    const before = readFileSync(join(out, 'results.jsonl'), 'utf8');
    const withFlags = await tabrl(['eval', join(dir, 'echo.mjs'), '--resume', out, '--model', 'other', '-n', '4', '-r', '3', '--env-args', '{"x":1}']);
    expect(withFlags.code).toBe(2);
    expect(withFlags.stderr).toContain('these differ from them: --model other (the run has echo); --rollouts-per-task 3 (the run has 2); --env-args {"x":1} (the run has {})');
    expect(withFlags.stderr).not.toContain('--num-tasks');
    expect(readFileSync(join(out, 'results.jsonl'), 'utf8')).toBe(before);
    const otherEnvironment = await tabrl(['eval', 'reverse-text', '--resume', out]);
    expect(otherEnvironment.code).toBe(2);
    expect(otherEnvironment.stderr).toContain('reverse-text (the run evaluates');
    mkdirSync(join(dir, 'empty'), { recursive: true });
    const nothing = await tabrl(['eval', '--resume', join(dir, 'empty')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('no evaluation there');
  });

  test('SIGTERM is handled like Ctrl-C: the metadata says interrupted, finished lines are kept, exit 143', { timeout: 60_000 }, async () => {
    const out = join(dir, 'out-sigterm');
    const child = spawn(process.execPath, [BIN, 'eval', join(dir, 'echo.mjs'), '--base-url', server.baseURL, '--model', 'hang', '-n', '2', '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setInterval(() => {
        if (existsSync(join(out, 'metadata.json'))) {
          clearInterval(timer);
          setTimeout(() => child.kill('SIGTERM'), 300);
        }
      }, 50);
      child.on('exit', (exitCode) => {
        clearInterval(timer);
        resolve(exitCode);
      });
    });
    expect(code).toBe(143);
    expect(stderr).toContain(`continue with tabrl eval --resume ${out}`);
    expect(metadataOf(out)).toMatchObject({ status: 'interrupted', stopped_by: 'SIGTERM' });
  });

  test('wrong --env-args values for a built-in are one line that says to check them', async () => {
    const run = await tabrl(['eval', 'reverse-text', '--base-url', server.baseURL, '--model', 'echo', '--env-args', '{"minLength": 50, "maxLength": 2}', '--out', join(dir, 'out-args')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('need 1 ≤ minLength ≤ maxLength, got 50 and 2; check --env-args');
    expectOneLineError(run);
  });
});
