// Environment files written by an attacker, run as `tabrl eval` runs them, with a secret in this
// (the host's) environment, a canary file outside the environment's folder and a listener on
// 127.0.0.1. Every row of issue 25's table, and more: no secret, file or packet leaves, this process
// survives, and every rollout ends with a truthful record.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ChatClientError, evaluate, ScriptedClient, type ChatClient, type ChatRequest } from '../../../src/envs/index.ts';
import { loadIsolatedEnvironment, type IsolatedEnvironment } from '../../../src/cli/isolated-environment.ts';
import { loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';
import { startFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { TABRL_BIN } from '../../support/tabrl-cli.ts';

const SECRET = 'sk-hostile-test-7f3a9c1e5b';
const CANARY = 'canary-contents-0d4e2b';
let root: string;
let listener: Server;
let port = 0;
let connections = 0;
let env: IsolatedEnvironment | undefined;

beforeAll(async () => {
  process.env.TABRL_HOSTILE_TEST_KEY = SECRET;
  root = mkdtempSync(join(tmpdir(), 'tabrl-hostile-'));
  writeFileSync(join(root, 'canary.txt'), CANARY);
  listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(() => {
  delete process.env.TABRL_HOSTILE_TEST_KEY;
  listener.close();
});
afterEach(() => {
  env?.close();
  env = undefined;
});

/** Writes `source` as `<root>/<name>/env.mjs` and returns its path. */
function writeHostile(name: string, source: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'env.mjs');
  writeFileSync(file, source);
  return file;
}

const echo = new ScriptedClient((messages) => messages.at(-1)!.content);

/** Everything a run left that a person or a file could see, as one string to search for the secret. */
const everything = (value: unknown) => JSON.stringify(value);

// One task per attack; the reward function carries it out and writes what happened into the state.
const ATTACKS = `
import { SingleTurnEnv, Rubric } from 'tabrl';
const attempt = (fn) => { try { return String(fn()); } catch (error) { return error.name + ': ' + error.message; } };
const attack = async (ctx) => {
  const s = ctx.state;
  switch (ctx.answer) {
    case 'net': s.result = attempt(() => process.getBuiltinModule('node:net').connect(${'${PORT}'}, '127.0.0.1')); break;
    case 'http': s.result = attempt(() => require('node:http').get('http://127.0.0.1:${'${PORT}'}/')); break;
    case 'fetch': s.result = [typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof WebAssembly].join(','); break;
    case 'kill-parent': s.result = attempt(() => process._kill(process.ppid, 9)); break;
    case 'renice': s.result = attempt(() => require('os').setPriority(process.ppid, 19)); break;
    case 'disconnect': s.result = attempt(() => process.removeAllListeners('disconnect')); break;
    case 'vm': s.result = attempt(() => new (require('vm').Script)('1', { importModuleDynamically: () => null })); break;
    case 'dynamic-import': s.result = await import('node:fs').then(() => 'imported', (error) => error.name + ': ' + error.message); break;
    case 'buffer': s.result = attempt(() => Buffer.allocUnsafeSlow(2 ** 30).length); break;
    case 'big-alloc': s.result = attempt(() => [new ArrayBuffer(2 ** 30), new ArrayBuffer(2 ** 30), new ArrayBuffer(2 ** 30)].length); break;
    case 'globals': s.result = Object.getOwnPropertyNames(globalThis).filter((name) => /^(__tabrl[A-Za-z]*|process|require|Buffer|global|fetch)$/.test(name)).join(',') || 'none'; break;
    case 'env': s.result = attempt(() => JSON.stringify(process.env)); break;
    case 'pollute': Object.prototype.polluted = 'yes'; JSON.stringify = () => '{}'; s.result = 'polluted'; break;
    case 'loop': for (;;) {}
    case 'hang': return new Promise(() => {});
    case 'huge-state': s.blob = 'x'.repeat(20 * 2 ** 20); break;
    case 'huge-error': throw new Error('e'.repeat(24 * 2 ** 20));
  }
  return 1;
};
export default function loadEnvironment() {
  const attacks = ['fine', 'net', 'http', 'fetch', 'kill-parent', 'renice', 'disconnect', 'vm', 'dynamic-import', 'buffer', 'big-alloc', 'globals', 'env', 'pollute', 'loop', 'hang', 'huge-state', 'huge-error', 'fine2'];
  return new SingleTurnEnv({ name: 'attacks', dataset: attacks.map((word) => ({ question: word, answer: word })), rubric: new Rubric({ funcs: [attack] }) });
}
`;

describe('an environment file that attacks the host from its code', () => {
  test('reaches no network, process, signal, key or native memory; each attack ends with a truthful record and the fine tasks pass', { timeout: 120_000 }, async () => {
    env = await loadIsolatedEnvironment(writeHostile('attacks', ATTACKS.replaceAll('${PORT}', String(port))), {}, { timeLimitMs: 3_000, memoryMb: 256 });
    const result = await evaluate(env, echo, { concurrency: 4 });
    const records = new Map(result.records.map((record) => [record.answer!, record]));
    const outcome = (answer: string) => records.get(answer)!.state.result as string;
    const errors = (answer: string) => records.get(answer)!.errors.map((error) => error.message).join('\n');

    for (const answer of ['net', 'kill-parent', 'disconnect', 'buffer', 'env']) expect(outcome(answer)).toMatch(/^ReferenceError: '(process|Buffer)' is not defined$/);
    for (const answer of ['http', 'renice', 'vm']) expect(outcome(answer)).toMatch(/^Error: cannot import "(node:http|os|vm)" in an environment file run by tabrl/);
    // The engine has no module loader: import() finds nothing to load.
    expect(outcome('dynamic-import')).toBe("ReferenceError: could not load module 'node:fs'");
    expect(outcome('fetch')).toBe('undefined,undefined,undefined,undefined');
    expect(outcome('globals')).toBe('none');
    // The engine's memory limit (256 MiB, all its memory) refuses 3 GiB.
    expect(outcome('big-alloc')).toMatch(/RangeError|out of memory/);
    expect(records.get('loop')).toMatchObject({ reward: 0, stopReason: 'error', errors: [{ kind: 'timeout', message: expect.stringMatching(/ran for more than 3 s without returning \(an infinite loop\?\)/) }] });
    expect(records.get('hang')).toMatchObject({ reward: 0, stopReason: 'error', errors: [{ kind: 'timeout', message: expect.stringMatching(/a promise that never settles\?/) }] });
    expect(errors('huge-state')).toMatch(/the rollout is 20\.0 MiB, over the 16 MiB/);
    expect(errors('huge-error').length).toBeLessThan(20_000);
    for (const answer of ['fine', 'fine2', 'pollute']) expect(records.get(answer)).toMatchObject({ reward: 1, errors: [] });

    // Nothing reached the listener, this process is unpolluted, and no record holds the secret.
    expect(connections).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(everything(result.records)).not.toContain(SECRET);
    expect(everything(result.records).length).toBeLessThan(2_000_000);
  });
});

describe('an environment file that reaches for files when it is bundled', () => {
  test.each([
    ['the host environment as text', `import key from '/proc/self/environ' with { type: 'text' };`],
    ['a file beside its folder', `import key from '../canary.txt';`],
    ['an absolute JSON file', `import key from '/proc/self/environ.json';`],
  ])('%s fails the load with a message naming the import, and leaks nothing', { timeout: 60_000 }, async (_what, line) => {
    const file = writeHostile(`bundle-${connections}-${Math.random().toString(36).slice(2)}`, `${line}\nexport default function loadEnvironment() { throw new Error(String(key)); }\n`);
    const error = await loadEnvironmentSpec(file, { typecheck: false }).then(() => undefined, (caught: unknown) => caught as Error);
    expect(error?.message).toMatch(/could not load .*(import attributes|outside the environment's folder|absolute path)/);
    expect(error?.message).not.toContain(SECRET);
    expect(error?.message).not.toContain(CANARY);
  });

  test('a reward function named __proto__ fails the load with what to do', { timeout: 60_000 }, async () => {
    const file = writeHostile('proto', `
import { SingleTurnEnv, Rubric } from 'tabrl';
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'proto', dataset: [{ question: 'q', answer: 'q' }], rubric: new Rubric({ rewards: [{ name: '__proto__', weight: 1, fn: () => 1 }] }) });
}
`);
    await expect(loadEnvironmentSpec(file, { typecheck: false })).rejects.toThrow(/reward function name "__proto__", which tabrl cannot use as a key; rename the function/);
  });
});

describe('rewards and model calls an environment should not be able to abuse', () => {
  test('a reward of 1e308 fails its rollout, and the run\'s mean stays a number', { timeout: 60_000 }, async () => {
    env = await loadIsolatedEnvironment(writeHostile('overflow', `
import { SingleTurnEnv, Rubric } from 'tabrl';
const overflow = (ctx) => (ctx.answer === 'big' ? 1e308 : 1);
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'overflow', dataset: ['big', 'fine', 'fine2'].map((word) => ({ question: word, answer: word })), rubric: new Rubric({ funcs: [overflow] }) });
}
`), {});
    const result = await evaluate(env, echo, { concurrency: 1 });
    const big = result.records.find((record) => record.answer === 'big')!;
    expect(big).toMatchObject({ reward: 0, stopReason: 'error' });
    expect(big.errors[0]!.message).toMatch(/reward 1e\+308, not a finite number of at most 1000000000/);
    expect(result.records.filter((record) => record.answer !== 'big').map((record) => record.reward)).toEqual([1, 1]);
    expect(result.summary.reward.mean).toBeCloseTo(2 / 3);
  });

  test('a judge call cannot pick the model, n, stream or unlimited tokens, and never sees the endpoint\'s echoed headers', { timeout: 60_000 }, async () => {
    const requests: ChatRequest[] = [];
    const judge: ChatClient = {
      chat: {
        completions: {
          async create(request) {
            requests.push(request);
            throw new ChatClientError(`judge answered 401: {"echo":{"authorization":"Bearer ${SECRET}"}}`, 'auth', 401);
          },
        },
      },
    };
    env = await loadIsolatedEnvironment(writeHostile('judge', `
import { SingleTurnEnv, Rubric } from 'tabrl';
export default function loadEnvironment(args) {
  const steal = async (ctx) => {
    try {
      await args.judgeClient.chat.completions.create({ model: 'most-expensive', n: 64, stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'grade' }] });
    } catch (error) { ctx.state.judgeError = error.message; }
    try {
      await args.judgeClient.chat.completions.create({ messages: [{ role: 'user', content: 'grade' }], max_tokens: 1e9 });
    } catch (error) { ctx.state.unlimited = error.message; }
    return 1;
  };
  return new SingleTurnEnv({ name: 'judge', dataset: [{ question: 'q', answer: 'q' }], rubric: new Rubric({ funcs: [steal] }) });
}
`), {}, { judgeClient: judge, judgeModel: 'grader' });
    const result = await evaluate(env, echo);
    const state = result.records[0]!.state;
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ model: 'grader', max_tokens: 50 });
    expect(requests[0]).not.toHaveProperty('n');
    expect(requests[0]).not.toHaveProperty('stream');
    expect(state.judgeError).toMatch(/^the model call failed \(HTTP 401\): the endpoint refused the key \[model call \d+\]$/);
    expect(state.unlimited).toMatch(/tabrl refused the model call: max_tokens must be an integer from 1 to 32768/);
    expect(everything(result.records)).not.toContain(SECRET);
  });
});

describe('code that runs outside any rollout', () => {
  test('a loop in a timer set at load time is interrupted; the rollouts still run', { timeout: 60_000 }, async () => {
    env = await loadIsolatedEnvironment(writeHostile('timer', `
import { SingleTurnEnv, Rubric } from 'tabrl';
setTimeout(() => { for (;;) {} }, 0);
const one = () => 1;
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'timer', dataset: [{ question: 'a', answer: 'a' }, { question: 'b', answer: 'b' }], rubric: new Rubric({ funcs: [one] }) });
}
`), {}, { timeLimitMs: 1_000 });
    const result = await evaluate(env, echo, { concurrency: 2 });
    expect(result.records.map((record) => record.reward)).toEqual([1, 1]);
  });

  test('an infinite loop at the top level fails the load with what happened', { timeout: 60_000 }, async () => {
    const file = writeHostile('top-loop', 'for (;;) {}\nexport default function loadEnvironment() {}\n');
    await expect(loadIsolatedEnvironment(file, {}, { timeLimitMs: 1_000 })).rejects.toThrow(/loading the environment ran for more than 1 s without returning \(an infinite loop at the top level\?\); it was interrupted/);
    expect(readFileSync(join(root, 'canary.txt'), 'utf8')).toBe(CANARY);
  });
});

describe('the environment process and tabrl', () => {
  /** The pids of the processes whose parent is `pid` (Linux: from /proc). */
  const childrenOf = (pid: number): number[] =>
    readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((name) => {
        try {
          return Number(readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]) === pid;
        } catch {
          return false;
        }
      })
      .map(Number);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return !readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').startsWith('Z');
    } catch {
      return false;
    }
  };

  test.skipIf(process.platform !== 'linux')('the environment process dies with tabrl, even when tabrl is killed with SIGKILL', { timeout: 90_000 }, async () => {
    const server = await startFakeOpenAIServer(() => ({ hang: true }));
    try {
      const file = writeHostile('orphan', `
import { SingleTurnEnv, Rubric } from 'tabrl';
const one = () => 1;
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'orphan', dataset: [{ question: 'a', answer: 'a' }], rubric: new Rubric({ funcs: [one] }) });
}
`);
      const tabrl = spawn(process.execPath, [TABRL_BIN, 'eval', file, '--base-url', server.baseURL, '--model', 'hang', '-n', '1', '--timeout', '600', '--out', join(root, 'orphan-out')], { stdio: 'ignore' });
      let envPid: number | undefined;
      for (let i = 0; i < 300 && envPid === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        envPid = childrenOf(tabrl.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('runtime.mjs'));
      }
      expect(envPid).toBeDefined();
      tabrl.kill('SIGKILL');
      for (let i = 0; i < 50 && alive(envPid!); i++) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(alive(envPid!)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
