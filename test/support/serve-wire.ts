/**
 * Both ends of `tabrl serve` for its tests and its benchmarks (bench/serve.ts, bench/serve-python.ts):
 * a client that speaks the wire protocol as a trainer's would (one WebSocket, one request then its
 * reply, in order; it can time each request), one episode played to its end over such a client, the
 * server started in this process over an environment, and the real binary started in a child process
 * (resolved once it prints its listening line). The client also keeps how its socket closed, for the
 * tests of the limits that close a session.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import WebSocket from 'ws';
import { startServeServer, type ServeServer, type ServeServerOptions } from '../../src/cli/serve/server.ts';
import { ServedEnvironment } from '../../src/cli/serve/session.ts';
import type { Environment, Message } from '../../src/envs/index.ts';
import { TABRL_BIN } from './tabrl-cli.ts';

/** A parsed reply frame (loosely typed, for tests to read any field). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Reply = any;

/** One WebSocket session with the server. */
export class WireClient {
  private readonly replies: Reply[] = [];
  private waiting: ((reply: Reply) => void) | undefined;
  /** Resolves with the close code and reason once the socket has closed. */
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(
    readonly ws: WebSocket,
    private readonly latencies: number[] | undefined,
  ) {
    ws.on('message', (data) => {
      const reply = JSON.parse(String(data));
      if (this.waiting) {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting(reply);
      } else this.replies.push(reply);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  /** Opens a session at `url` (ws://HOST:PORT/ws); with `latencies`, each `request()` adds its milliseconds from send to reply there. */
  static open(url: string, headers: Record<string, string> = {}, latencies?: number[]): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      ws.once('open', () => resolve(new WireClient(ws, latencies)));
      ws.once('error', reject);
    });
  }

  /** The next reply frame (one already received, or the next to come). */
  next(): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** Sends a request (an object, sent as JSON, or raw text) and waits for its reply. */
  async request(request: unknown): Promise<Reply> {
    const sent = performance.now();
    this.ws.send(typeof request === 'string' ? request : JSON.stringify(request));
    const reply = await this.next();
    this.latencies?.push(performance.now() - sent);
    return reply;
  }

  /** Closes the socket and waits until it is closed. */
  async close(): Promise<void> {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.close();
    await this.closed;
  }
}

/**
 * Plays one episode on an open session as a trainer would: a reset with `resetData` (or, given
 * `resetReply`, the reply to a reset already sent), then one step per observation with the action
 * `policy` gives for the observation's messages, until the reply that is done or an error. Returns
 * every reply, the reset's first.
 */
export async function playEpisode(client: WireClient, resetData: Record<string, unknown>, policy: (messages: Message[]) => unknown, resetReply?: Reply): Promise<Reply[]> {
  const replies: Reply[] = [resetReply ?? (await client.request({ type: 'reset', data: resetData }))];
  while (replies.at(-1).type === 'observation' && !replies.at(-1).data.done) {
    replies.push(await client.request({ type: 'step', data: await policy(replies.at(-1).data.observation.messages) }));
  }
  return replies;
}

/** Starts a server on 127.0.0.1, a free port, over `env`, in this process. */
export function serveForTest(env: Environment, options: Partial<Omit<ServeServerOptions, 'served'>> & { split?: 'train' | 'eval' } = {}): Promise<ServeServer & { wsUrl: string }> {
  const { split, ...rest } = options;
  return startServeServer({
    served: new ServedEnvironment(env, split ?? 'train'),
    host: '127.0.0.1',
    port: 0,
    maxSessions: 8,
    metadata: { name: env.name, description: 'test', version: '0', readme_content: '' },
    ...rest,
  }).then((server) => Object.assign(server, { wsUrl: `${server.url.replace('http', 'ws')}/ws` }));
}

/** The one line `tabrl serve` prints on standard output once it listens. */
const SERVE_LISTENING_LINE = /^tabrl serve: listening on (http:\/\/[^ ]+) \((ws:\/\/[^ ]+\/ws)\)$/m;

/** A `tabrl serve` running in a child process. */
export interface ServeProcess {
  child: ChildProcess;
  /** http://HOST:PORT */
  url: string;
  /** ws://HOST:PORT/ws */
  wsUrl: string;
  /** What it wrote to standard error so far. */
  stderr(): string;
  /** Resolves with its exit code once it has exited. */
  exited: Promise<number | null>;
  /** Sends SIGTERM and waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `tabrl serve ...args` (with `bin`, another checkout's bin/tabrl.mjs, when given) and
 * resolves once it prints its listening line; rejects, with what it printed, when it exits first or
 * prints no such line within `timeoutMs` (default 60 s; it is then killed).
 */
export function startServeProcess(args: readonly string[], options: { env?: Record<string, string>; bin?: string; timeoutMs?: number } = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [options.bin ?? TABRL_BIN, 'serve', ...args], { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tabrl serve printed no listening line in ${timeoutMs / 1000} s:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = SERVE_LISTENING_LINE.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      const stop = () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return exited;
      };
      resolve({ child, url: match[1]!, wsUrl: match[2]!, stderr: () => stderr, exited, stop });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tabrl serve exited with ${code} before listening:\n${stdout}\n${stderr}`));
    });
  });
}

/**
 * The source of an environment file with one tool: a ToolEnv whose `add` tool adds two numbers,
 * over `dataset`; its rubric scores the last reply equal to the answer (1), any tool call (0.5), and
 * records the turns taken as a metric.
 */
export function adderEnvironmentSource(dataset: readonly { question: string; answer: string }[]): string {
  return `
import { ToolEnv, Rubric, defineTool, type ToolState } from 'tabrl';

const add = defineTool<{ a: number; b: number }>({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  run: ({ a, b }) => String(a + b),
});

export default function loadEnvironment() {
  return new ToolEnv({
    name: 'adder',
    dataset: ${JSON.stringify(dataset)},
    tools: [add],
    maxTurns: 4,
    rubric: new Rubric<ToolState>({ rewards: [
      { name: 'correct', fn: ({ completion, answer }) => (completion.at(-1)?.content.trim() === answer ? 1 : 0) },
      { name: 'usedTool', weight: 0.5, fn: ({ state }) => (state.toolCalls > 0 ? 1 : 0) },
      { name: 'turns', metric: 'info', fn: ({ state }) => state.turn },
    ] }),
  });
}
`;
}
