/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for tests:
 * replies come from a policy function, and status codes can be scripted to test retries and errors.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatRequest, Message } from '../../src/envs/index.ts';

/** What the server answers for one request: a reply text, or an HTTP failure. */
export type FakeReply = string | { status: number; body?: unknown; headers?: Record<string, string> };

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

/** Starts a fake endpoint; `policy` maps each request to a reply. */
export async function startFakeOpenAIServer(policy: (messages: Message[], request: ChatRequest, index: number) => FakeReply | Promise<FakeReply>): Promise<FakeOpenAIServer> {
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
    if (typeof reply !== 'string') {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body ?? { error: { message: `scripted ${reply.status}` } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${index}`,
        object: 'chat.completion',
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
