/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for tests:
 * replies come from a policy function, and failures can be scripted to test retries and errors —
 * status codes, a server that never answers, a body that is not JSON, and a body cut off mid-stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatRequest, Message } from '../../src/envs/index.ts';

/**
 * What the server answers for one request: a reply text; a status with a JSON body; `raw` text sent
 * as it is (invalid JSON, say); `cut`, half a valid body and then a broken connection; or `hang`,
 * a request that is read and never answered.
 */
export type FakeReply =
  | string
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { raw: string; status?: number }
  | { cut: true }
  | { hang: true };

/** The JSON body of a successful completion that answers `reply`. */
export function completionBody(reply: string, model: string, index: number): Record<string, unknown> {
  return {
    id: `chatcmpl-${index}`,
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** A started fake server. */
export interface FakeOpenAIServer {
  /** Base URL ending in /v1. */
  baseURL: string;
  /** Every request body received, in order. */
  requests: ChatRequest[];
  /** Authorization headers received, in order. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** Maps a request (its messages, its body, its 0-based index among the requests) to the fake endpoint's reply. */
export type FakePolicy = (messages: Message[], request: ChatRequest, index: number) => FakeReply | Promise<FakeReply>;

/** Starts a fake endpoint; `policy` maps each request to a reply. */
export async function startFakeOpenAIServer(policy: FakePolicy): Promise<FakeOpenAIServer> {
  const requests: ChatRequest[] = [];
  const authorizations: (string | undefined)[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const request = JSON.parse(await readBody(req)) as ChatRequest;
    const index = requests.length;
    requests.push(request);
    authorizations.push(req.headers.authorization);
    const reply = await policy(request.messages, request, index);
    if (typeof reply === 'string') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completionBody(reply, request.model, index)));
    } else if ('hang' in reply) {
      hanging.add(res);
    } else if ('cut' in reply) {
      // Promise the whole body, send half of it, then drop the connection.
      const body = JSON.stringify(completionBody('this answer is cut off', request.model, index));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      res.write(body.slice(0, body.length >> 1), () => res.destroy());
    } else if ('raw' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(reply.raw);
    } else {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body ?? { error: { message: `scripted ${reply.status}` } }));
    }
  });
  const hanging = new Set<ServerResponse>();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs `body` against a fake endpoint started for it, and closes the endpoint however `body` ends. */
export async function withFakeOpenAIServer<T>(policy: FakePolicy, body: (server: FakeOpenAIServer) => Promise<T>): Promise<T> {
  const server = await startFakeOpenAIServer(policy);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
