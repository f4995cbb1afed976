/**
 * A test client of `tabrl serve`'s wire protocol, as a trainer's client would speak it: one
 * WebSocket (the `ws` package), one request then its reply, in order. It also keeps how the socket
 * closed, for the tests of the limits that close a session.
 */
import WebSocket from 'ws';
import { startServeServer, type ServeServer, type ServeServerOptions } from '../../../src/cli/serve/server.ts';
import { ServedEnvironment } from '../../../src/cli/serve/session.ts';
import type { Environment } from '../../../src/envs/index.ts';

/** A parsed reply frame (loosely typed, for tests to read any field). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Reply = any;

/** One WebSocket session with the server. */
export class WireClient {
  private readonly replies: Reply[] = [];
  private waiting: ((reply: Reply) => void) | undefined;
  /** Resolves with the close code and reason once the socket has closed. */
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
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

  /** Opens a session at `url` (ws://HOST:PORT/ws). */
  static open(url: string, headers: Record<string, string> = {}): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      ws.once('open', () => resolve(new WireClient(ws)));
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
  request(request: unknown): Promise<Reply> {
    this.ws.send(typeof request === 'string' ? request : JSON.stringify(request));
    return this.next();
  }

  /** Closes the socket and waits until it is closed. */
  async close(): Promise<void> {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.close();
    await this.closed;
  }
}

/** Starts a server on 127.0.0.1, a free port, over `env`. */
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
