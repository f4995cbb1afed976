/**
 * `tabrl serve` as a person starts it: the real binary prints the line a client waits for, refuses
 * bad flags with usage errors, warns when it listens beyond loopback, and on SIGTERM finishes the
 * step in progress, closes every socket (1001) and exits 143 promptly.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { startFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl, writeEnvFile } from '../../support/tabrl-cli.ts';
import { startServeProcess, WireClient, type ServeProcess } from '../../support/serve-wire.ts';

const running: ServeProcess[] = [];
afterEach(() => {
  for (const { child } of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts `tabrl serve ...args` and resolves once it prints its listening line (killed after the test if still running). */
async function startServe(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const server = await startServeProcess(args, { env, timeoutMs: 80_000 });
  running.push(server);
  return server;
}

const SLOW_ENV = `
import { MultiTurnEnv, Rubric, type Message } from 'tabrl';

class Slow extends MultiTurnEnv {
  override async envResponse(): Promise<Message[]> {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return [{ role: 'user', content: 'noted' }];
  }
}

export default function loadEnvironment() {
  return new Slow({ name: 'slow', dataset: [{ question: 'Talk.' }], maxTurns: 3, rubric: new Rubric({ rewards: [{ name: 'one', fn: () => 1 }] }) });
}
`;

const JUDGED_ENV = `
import { SingleTurnEnv, Rubric, type ChatClient } from 'tabrl';

export default function loadEnvironment(args: { judgeClient?: ChatClient; judgeModel?: string }) {
  const judge = args.judgeClient!;
  return new SingleTurnEnv({
    name: 'judged',
    dataset: [{ question: 'Write a line.' }],
    rubric: new Rubric({ rewards: [{ name: 'grade', fn: async ({ completion }) => {
      const reply = await judge.chat.completions.create({ model: args.judgeModel ?? 'default', messages: [{ role: 'user', content: 'Grade 0-10: ' + completion.at(-1)!.content }] });
      return Number(reply.choices[0]!.message.content) / 10;
    } }] }),
  });
}
`;

describe('tabrl serve (the binary)', () => {
  test('--judge-* lends the host\'s judge to an environment file: its key stays in tabrl, and the grade is the reward', async () => {
    const judge = await startFakeOpenAIServer((messages) => (messages.at(-1)!.content.endsWith('a fine line') ? '7' : '2'));
    try {
      const server = await startServe([writeEnvFile(JUDGED_ENV), '--port', '0', '--judge-base-url', judge.baseURL, '--judge-model', 'judgy', '--judge-api-key-env', 'SERVE_JUDGE_KEY'], { SERVE_JUDGE_KEY: 'judge-secret' });
      const client = await WireClient.open(server.wsUrl);
      await client.request({ type: 'reset' });
      const last = await client.request({ type: 'step', data: { message: 'a fine line' } });
      expect(last.data).toMatchObject({ done: true, reward: 0.7, observation: { scores: { grade: 0.7 } } });
      expect(judge.requests.map((request) => request.model)).toEqual(['judgy']);
      expect(judge.authorizations).toEqual(['Bearer judge-secret']);
      await client.close();
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(143);
    } finally {
      await judge.close();
    }
  }, 90_000);

  test('SIGTERM lets the step in progress finish, closes every session with 1001 and exits 143', async () => {
    const server = await startServe([writeEnvFile(SLOW_ENV), '--port', '0']);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const idle = await WireClient.open(server.wsUrl);
    await idle.request({ type: 'reset' });
    const busy = await WireClient.open(server.wsUrl);
    await busy.request({ type: 'reset' });
    const reply = busy.request({ type: 'step', data: { message: 'hello' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    expect((await reply).data).toMatchObject({ done: false, observation: { prompt: 'noted', turn: 1 } });
    expect((await busy.closed).code).toBe(1001);
    expect((await idle.closed).code).toBe(1001);
    // The idle session's episode stays open, yet the server exits: drain waits only for requests in progress.
    expect(await server.exited).toBe(143);
    expect(server.stderr()).toMatch(/SIGTERM received/);
  }, 90_000);

  test('--host beyond loopback warns; --token-env needs its variable; bad flags are usage errors', async () => {
    const open = await startServe(['reverse-text', '--port', '0', '--host', '0.0.0.0', '--token-env', 'SERVE_TOKEN'], { SERVE_TOKEN: 't0ken' });
    expect(open.stderr()).toMatch(/warning: tabrl serve listens on 0\.0\.0\.0/);
    const ws = open.wsUrl.replace('0.0.0.0', '127.0.0.1');
    await expect(WireClient.open(ws)).rejects.toThrow(/401/);
    const client = await WireClient.open(ws, { authorization: 'Bearer t0ken' });
    expect((await client.request({ type: 'reset' })).type).toBe('observation');
    open.child.kill('SIGINT');
    expect(await open.exited).toBe(130);

    const missing = await runTabrl(['serve', 'reverse-text', '--token-env', 'NO_SUCH_VARIABLE_HERE']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/NO_SUCH_VARIABLE_HERE is not set/);
    const badSplit = await runTabrl(['serve', 'reverse-text', '--split', 'test']);
    expect(badSplit.code).toBe(2);
    expect(badSplit.stderr).toMatch(/--split must be train or eval/);
    const unknown = await runTabrl(['serve', 'no-such-env']);
    expect(unknown.code).toBe(2); // an unknown environment is a command-line mistake, as in tabrl eval
    expect(unknown.stderr).toMatch(/unknown environment "no-such-env"/);
    const help = await runTabrl(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--max-sessions N/);
  }, 90_000);
});
