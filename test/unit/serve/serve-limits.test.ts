/**
 * The limits and failures of `tabrl serve`'s sessions: every error code, the session cap, a frame
 * over the size limit (refused from its header, before its payload arrives), a client that
 * disconnects mid-episode (its rollout stops, in an environment file's process too), idle
 * sessions, a client that floods requests, the bearer token, and a hostile environment file whose
 * reward never returns: each gets its error and no other session is harmed.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MultiTurnEnv, SingleTurnEnv, type Environment, type Message, type Trajectory } from '../../../src/envs/index.ts';
import { closeEnvironment, loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';
import { writeEnvFile } from '../../support/tabrl-cli.ts';
import { playEpisode, serveForTest, WireClient } from '../../support/serve-wire.ts';

/** Records every rollout the environment starts, so a test can see that one ended. */
function watchRollouts(env: Environment): Promise<Trajectory>[] {
  const started: Promise<Trajectory>[] = [];
  const rollout = env.rollout.bind(env);
  env.rollout = (...args) => {
    const running = rollout(...args);
    started.push(running);
    return running;
  };
  return started;
}

/** Plays task 0 of reverse-text to the end and returns the final reply. */
async function playReverseText(url: string) {
  const client = await WireClient.open(url);
  const replies = await playEpisode(client, { task_index: 0 }, () => ({ message: '<reversed>a toh lla</reversed>' }));
  await client.close();
  return replies.at(-1);
}

describe('errors and limits of a session', () => {
  let env: Environment;
  let server: Awaited<ReturnType<typeof serveForTest>>;
  let rollouts: Promise<Trajectory>[];
  beforeAll(async () => {
    env = await loadEnvironmentSpec('reverse-text');
    rollouts = watchRollouts(env);
    server = await serveForTest(env, { maxSessions: 2, maxFrameBytes: 64 * 1024 });
  });
  afterAll(() => server.close(100));

  test('each bad request gets its error code, and the session goes on serving', async () => {
    const client = await WireClient.open(server.wsUrl);
    const codeOf = async (request: unknown) => {
      const reply = await client.request(request);
      expect(reply.type).toBe('error');
      expect(reply.data.message.length).toBeGreaterThan(10);
      return reply.data.code;
    };
    expect(await codeOf('{"type": "reset",')).toBe('INVALID_JSON');
    expect(await codeOf({ type: 'dance' })).toBe('UNKNOWN_TYPE');
    expect(await codeOf([1, 2])).toBe('VALIDATION_ERROR');
    expect(await codeOf({ type: 'step', data: { message: 'x' } })).toBe('SESSION_ERROR');
    expect(await codeOf({ type: 'reset', data: { task_index: -1 } })).toBe('VALIDATION_ERROR');
    expect(await codeOf({ type: 'reset', data: { task_index: 10_000 } })).toBe('VALIDATION_ERROR');
    expect(await codeOf({ type: 'reset', data: { split: 'test' } })).toBe('VALIDATION_ERROR');
    expect((await client.request({ type: 'reset', data: { task_index: 0 } })).type).toBe('observation');
    expect(await codeOf({ type: 'step', data: { text: 'hi' } })).toBe('VALIDATION_ERROR');
    expect(await codeOf({ type: 'step', data: 'hi' })).toBe('VALIDATION_ERROR');
    expect(await codeOf({ type: 'step', data: { type: 'call_tool', tool_name: 'add', arguments: {} } })).toBe('VALIDATION_ERROR');
    // The episode survived the bad steps: a good one ends it, and a step after the end is refused.
    const last = await client.request({ type: 'step', data: { message: '<reversed>a toh lla</reversed>' } });
    expect(last.data).toMatchObject({ done: true, reward: expect.any(Number) });
    expect(last.data.reward).toBeGreaterThan(0.9);
    expect(await codeOf({ type: 'step', data: { message: 'again' } })).toBe('SESSION_ERROR');
    expect((await client.request({ type: 'mcp', data: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).data.result.tools).toEqual([]);
    expect((await client.request({ type: 'mcp', data: { jsonrpc: '2.0', id: 2, method: 'tools/call' } })).data.error.code).toBe(-32601);
    await client.close();
  });

  test('a close sent right behind a step, without waiting, still gets the step\'s reply before the socket closes', async () => {
    const client = await WireClient.open(server.wsUrl);
    await client.request({ type: 'reset', data: { task_index: 0 } });
    client.ws.send(JSON.stringify({ type: 'step', data: { message: '<reversed>a toh lla</reversed>' } }));
    client.ws.send(JSON.stringify({ type: 'close' }));
    const first = await Promise.race([client.next(), client.closed.then(() => 'closed with no reply')]);
    expect(first).toMatchObject({ type: 'observation', data: { done: true, reward: expect.any(Number) } });
    expect((await client.closed).code).toBe(1000);
  });

  test('the session cap: one more session gets CAPACITY_REACHED with the counts, then is closed; a freed slot is taken again', async () => {
    const first = await WireClient.open(server.wsUrl);
    const second = await WireClient.open(server.wsUrl);
    const third = await WireClient.open(server.wsUrl);
    const refused = await third.next();
    expect(refused).toEqual({ type: 'error', data: { code: 'CAPACITY_REACHED', message: expect.stringContaining('--max-sessions'), active_sessions: 2, max_sessions: 2 } });
    expect((await third.closed).code).toBe(1013);
    await first.close();
    await until(() => server.activeSessions === 1);
    const fourth = await WireClient.open(server.wsUrl);
    expect((await fourth.request({ type: 'reset' })).type).toBe('observation');
    await Promise.all([second.close(), fourth.close()]);
  });

  test('a client that disconnects mid-episode frees its session, and its rollout ends', async () => {
    const client = await WireClient.open(server.wsUrl);
    await client.request({ type: 'reset', data: { task_index: 4 } });
    const rollout = rollouts.at(-1)!;
    client.ws.terminate();
    await until(() => server.activeSessions === 0);
    expect((await rollout).stopReason).toBe('aborted');
  });

  test('a frame over the limit closes its session with 1009 (the others go on), and one announcing 100 MB is refused before its payload', async () => {
    const bystander = await WireClient.open(server.wsUrl);
    await bystander.request({ type: 'reset', data: { task_index: 0 } });
    const big = await WireClient.open(server.wsUrl);
    big.ws.send(JSON.stringify({ type: 'step', data: { message: 'x'.repeat(70 * 1024) } }));
    expect((await big.closed).code).toBe(1009);
    expect((await bystander.request({ type: 'step', data: { message: '<reversed>a toh lla</reversed>' } })).data.done).toBe(true);
    await bystander.close();
    // Only the header of a 100 MB frame is sent: the server must answer (close 1009) without waiting for the payload.
    expect(await closeCodeForAnnouncedFrame(server.port, 100 * 2 ** 20)).toBe(1009);
  });

  test('a client that sends requests without reading replies is cut off at 16 waiting; the others go on', async () => {
    const flood = await WireClient.open(server.wsUrl);
    for (let i = 0; i < 40; i++) flood.ws.send(JSON.stringify({ type: 'state' }));
    expect((await flood.closed).code).toBe(1008);
    expect((await playReverseText(server.wsUrl)).data.done).toBe(true);
  });
});

describe('slow environments and slow clients', () => {
  test('drain: a step still running after the grace fails with EXECUTION_ERROR at once, and every socket closes with 1001', async () => {
    let entered: () => void = () => {};
    const inEnvironmentCode = new Promise<void>((resolve) => (entered = resolve));
    class Slow extends MultiTurnEnv {
      override async envResponse(): Promise<Message[]> {
        entered();
        await new Promise((resolve) => setTimeout(resolve, 3000));
        return [{ role: 'user', content: 'late' }];
      }
    }
    const server = await serveForTest(new Slow({ name: 'slow', dataset: [{ question: 'Talk.' }] }));
    const client = await WireClient.open(server.wsUrl);
    await client.request({ type: 'reset' });
    const reply = client.request({ type: 'step', data: { message: 'hi' } });
    await inEnvironmentCode;
    const closing = server.close(100);
    const failed = await reply;
    expect(failed).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR' } });
    expect(failed.data.message).toMatch(/shutting down/);
    expect((await client.closed).code).toBe(1001);
    await closing;
  });

  test('a client that never reads its replies is dropped once they pile up unsent; the others go on', async () => {
    const big = 'x'.repeat(2 ** 20);
    const env = new SingleTurnEnv({ name: 'big', dataset: [{ question: `Reverse this text: ${big}` }] });
    const server = await serveForTest(env, { maxUnreadBytes: 2 ** 20 });
    const reader = await WireClient.open(server.wsUrl);
    const deaf = await WireClient.open(server.wsUrl);
    const deafSocket = (deaf.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    deafSocket.pause();
    // Each reset answers with a 1 MiB observation that the deaf client never reads; sent a few at a time, under the queue limit.
    let closed = false;
    void deaf.closed.then(() => (closed = true));
    for (let batch = 0; batch < 40 && !closed; batch++) {
      for (let i = 0; i < 4; i++) deaf.ws.send(JSON.stringify({ type: 'state' }));
      deaf.ws.send(JSON.stringify({ type: 'reset' }));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await until(() => server.activeSessions === 1);
    // Dropped, not closed for flooding (1008): the connection was cut without a closing handshake.
    deafSocket.resume();
    expect((await deaf.closed).code).toBe(1006);
    expect((await reader.request({ type: 'reset' })).data.observation.prompt.length).toBeGreaterThan(2 ** 20);
    await reader.close();
    await server.close(100);
  });

  test('a POST body over the size limit is refused without holding it', async () => {
    const server = await serveForTest(await loadEnvironmentSpec('reverse-text'), { maxFrameBytes: 64 * 1024 });
    const response = await fetch(`${server.url}/reset`, { method: 'POST', body: JSON.stringify({ pad: 'x'.repeat(200 * 1024) }) });
    expect(response.status).toBe(422);
    expect((await response.json()).detail).toMatch(/over the limit of 65536 bytes/);
    await server.close(100);
  });
});

describe('idle sessions and the token', () => {
  test('a session idle for longer than the timeout is closed and its rollout ends', async () => {
    const env = await loadEnvironmentSpec('reverse-text');
    const rollouts = watchRollouts(env);
    const server = await serveForTest(env, { sessionTimeoutMs: 300 });
    const idle = await WireClient.open(server.wsUrl);
    await idle.request({ type: 'reset' });
    const closed = await idle.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toMatch(/idle/);
    expect((await rollouts[0]!).stopReason).toBe('aborted');
    await until(() => server.activeSessions === 0);
    await server.close(100);
  });

  test('with a token, /ws and the routes but /health need "Authorization: Bearer <token>"', async () => {
    const env = await loadEnvironmentSpec('reverse-text');
    const server = await serveForTest(env, { token: 's3cret' });
    await expect(WireClient.open(server.wsUrl)).rejects.toThrow(/401/);
    await expect(WireClient.open(server.wsUrl, { authorization: 'Bearer wrong' })).rejects.toThrow(/401/);
    const client = await WireClient.open(server.wsUrl, { authorization: 'Bearer s3cret' });
    expect((await client.request({ type: 'reset' })).type).toBe('observation');
    await client.close();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/schema`)).status).toBe(401);
    expect((await fetch(`${server.url}/schema`, { headers: { authorization: 'Bearer s3cret' } })).status).toBe(200);
    await server.close(100);
  });
});

describe('the HTTP routes', () => {
  let env: Environment;
  let server: Awaited<ReturnType<typeof serveForTest>>;
  beforeAll(async () => {
    env = await loadEnvironmentSpec('reverse-text');
    server = await serveForTest(env);
  });
  afterAll(() => server.close(100));

  test('health, schema (an action with exactly one required field), metadata and a fresh state', async () => {
    expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ status: 'healthy' });
    const schema = await (await fetch(`${server.url}/schema`)).json();
    expect(schema.action.required).toEqual(['message']);
    // verifiers takes the titles Action, CallToolAction and ListToolsAction for an MCP environment and lists tools before reset.
    expect(['Action', 'CallToolAction', 'ListToolsAction']).not.toContain(schema.action.title);
    expect(Object.keys(schema)).toEqual(['action', 'observation', 'state']);
    expect(await (await fetch(`${server.url}/metadata`)).json()).toMatchObject({ name: 'reverse-text', version: '0' });
    expect(await (await fetch(`${server.url}/state`)).json()).toEqual({ episode_id: null, step_count: 0, task_index: null, split: null, done: false });
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
    expect((await fetch(`${server.url}/reset`)).status).toBe(405);
  });

  test('the stateless POST /reset and /step play a fresh episode each; a bad action is a 422', async () => {
    const reset = await (await fetch(`${server.url}/reset`, { method: 'POST', body: JSON.stringify({ task_index: 2, split: 'eval' }) })).json();
    expect(reset).toMatchObject({ reward: null, done: false, observation: { task_index: 2, split: 'eval', turn: 0 } });
    const step = await (await fetch(`${server.url}/step`, { method: 'POST', body: JSON.stringify({ action: { message: '<reversed>x</reversed>' }, task_index: 0 }) })).json();
    expect(step).toMatchObject({ done: true, observation: { task_index: 0, turn: 1 } });
    expect(typeof step.reward).toBe('number');
    const bad = await fetch(`${server.url}/step`, { method: 'POST', body: JSON.stringify({ action: { text: 'x' } }) });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail).toMatch(/message/);
    expect((await fetch(`${server.url}/reset`, { method: 'POST', body: '{nope' })).status).toBe(400);
  });

  test('a stateless request holds a session while it runs: over --max-sessions it gets 503 CAPACITY_REACHED, and a WebSocket is refused meanwhile', async () => {
    let entered: () => void = () => {};
    let release: () => void = () => {};
    const inEnvironmentCode = new Promise<void>((resolve) => (entered = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    class Gated extends MultiTurnEnv {
      override async envResponse(): Promise<Message[]> {
        entered();
        await released;
        return [];
      }
      override isCompleted(): boolean {
        return true;
      }
    }
    const gated = await serveForTest(new Gated({ name: 'gated', dataset: [{ question: 'Talk.' }] }), { maxSessions: 1 });
    const post = (route: string, body: unknown) => fetch(`${gated.url}${route}`, { method: 'POST', body: JSON.stringify(body) });
    const running = post('/step', { action: { message: 'hi' } });
    await inEnvironmentCode;
    expect(gated.activeSessions).toBe(1);
    const refused = await post('/reset', {});
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ code: 'CAPACITY_REACHED', detail: expect.stringContaining('--max-sessions'), active_sessions: 1, max_sessions: 1 });
    const socket = await WireClient.open(gated.wsUrl);
    expect((await socket.next()).data.code).toBe('CAPACITY_REACHED');
    expect((await socket.closed).code).toBe(1013);
    release();
    expect(await (await running).json()).toMatchObject({ done: true });
    expect(gated.activeSessions).toBe(0);
    expect((await post('/reset', {})).status).toBe(200);
    await gated.close(100);
  });
});

const HOSTILE_ENV = `
import { MultiTurnEnv, Rubric, type Message } from 'tabrl';

/** One turn; the reply "throw" makes envResponse throw, "hang" makes the reward loop forever. */
class Hostile extends MultiTurnEnv {
  override envResponse(messages: Message[]): Message[] {
    if (messages.at(-1)?.content === 'throw') throw new Error('the game broke');
    return [];
  }
  override isCompleted(): boolean {
    return true;
  }
}

export default function loadEnvironment() {
  return new Hostile({
    name: 'hostile',
    dataset: [{ question: 'Say something.', answer: 'ok' }],
    rubric: new Rubric({ rewards: [{ name: 'hangs', fn: ({ completion }) => {
      if (completion.at(-1)?.content === 'hang') for (;;) {}
      return completion.at(-1)?.content === 'ok' ? 1 : 0;
    } }] }),
  });
}
`;

describe('a hostile environment file', () => {
  let env: Environment;
  let server: Awaited<ReturnType<typeof serveForTest>>;
  beforeAll(async () => {
    env = await loadEnvironmentSpec(writeEnvFile(HOSTILE_ENV), { isolation: { timeLimitMs: 500 } });
    server = await serveForTest(env);
  }, 60_000);
  afterAll(async () => {
    await server?.close(100);
    if (env) closeEnvironment(env);
  });

  test('a reward that never returns fails that step with EXECUTION_ERROR; the server, and a session waiting meanwhile, go on', async () => {
    const waiting = await WireClient.open(server.wsUrl);
    await waiting.request({ type: 'reset' });
    const client = await WireClient.open(server.wsUrl);
    await client.request({ type: 'reset' });
    const failed = await client.request({ type: 'step', data: { message: 'hang' } });
    expect(failed).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR' } });
    expect(failed.data.message).toMatch(/hostile|isolated|time/i);
    // The same session starts again, and the session that waited through the restart finishes its episode.
    await client.request({ type: 'reset' });
    expect((await client.request({ type: 'step', data: { message: 'ok' } })).data).toMatchObject({ done: true, reward: 1 });
    expect((await waiting.request({ type: 'step', data: { message: 'ok' } })).data).toMatchObject({ done: true, reward: 1 });
    await Promise.all([client.close(), waiting.close()]);
  }, 60_000);

  test('environment code that throws fails that step with EXECUTION_ERROR naming the error; the session plays on', async () => {
    const client = await WireClient.open(server.wsUrl);
    await client.request({ type: 'reset' });
    const failed = await client.request({ type: 'step', data: { message: 'throw' } });
    expect(failed).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR' } });
    expect(failed.data.message).toMatch(/the game broke/);
    expect((await client.request({ type: 'step', data: { message: 'ok' } })).data.code).toBe('SESSION_ERROR');
    await client.request({ type: 'reset' });
    expect((await client.request({ type: 'step', data: { message: 'ok' } })).data).toMatchObject({ done: true, reward: 1 });
    await client.close();
  });

  test('a client that disconnects mid-episode ends its rollout in the environment\'s process', async () => {
    const rollouts = watchRollouts(env);
    const client = await WireClient.open(server.wsUrl);
    await client.request({ type: 'reset' });
    client.ws.terminate();
    await until(() => server.activeSessions === 0);
    expect((await rollouts[0]!).stopReason).toBe('aborted');
  });
});

/** Waits until `condition` holds (checked every 20 ms). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Opens a raw WebSocket, sends only the header of a masked text frame announcing `length` bytes, and returns the close code the server answers with. */
function closeCodeForAnnouncedFrame(port: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let upgraded = false;
    let buffer = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(['GET /ws HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'));
    });
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!upgraded) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        upgraded = true;
        buffer = buffer.subarray(end + 4);
        const header = Buffer.alloc(14);
        header[0] = 0x81; // FIN + text
        header[1] = 0x80 | 127; // masked, 64-bit length
        header.writeBigUInt64BE(BigInt(length), 2);
        socket.write(header); // the mask key follows in the same 14 bytes; no payload is ever sent
      }
      // A close frame from the server: opcode 0x8, unmasked, its code in the first two payload bytes.
      if (buffer.length >= 4 && (buffer[0]! & 0x0f) === 0x8) {
        resolve(buffer.readUInt16BE(2));
        socket.destroy();
      }
    });
  });
}
