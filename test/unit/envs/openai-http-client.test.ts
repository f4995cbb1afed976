import { createServer } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { ChatClientError, OpenAIHttpClient } from '../../../src/envs/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], temperature: 0.3, max_tokens: 8 };

describe('OpenAIHttpClient', () => {
  test('posts chat completions with the key and sampling arguments, and returns the reply', async () => {
    server = await startFakeOpenAIServer((messages) => `echo: ${messages.at(-1)!.content}`);
    const client = new OpenAIHttpClient({ baseURL: `${server.baseURL}/`, apiKey: 'sk-test' });
    const completion = await client.chat.completions.create(request);
    expect(completion.choices[0]!.message).toEqual({ role: 'assistant', content: 'echo: hi' });
    expect(completion.usage?.completion_tokens).toBe(5);
    expect(server.requests[0]).toEqual(request);
    expect(server.authorizations[0]).toBe('Bearer sk-test');
  });

  test('retries 5xx and 429 (honouring Retry-After) and then succeeds', async () => {
    server = await startFakeOpenAIServer((_m, _r, index) => [{ status: 503 }, { status: 429, headers: { 'retry-after': '0' } }, 'ok'][index] ?? 'late');
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, backoffMs: 1 });
    const completion = await client.chat.completions.create(request);
    expect(completion.choices[0]!.message.content).toBe('ok');
    expect(server.requests).toHaveLength(3);
  });

  test('gives up after the retries with what was tried', async () => {
    server = await startFakeOpenAIServer(() => ({ status: 500, body: { error: { message: 'GPU on fire' } } }));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, backoffMs: 1, maxRetries: 2 });
    const error = await client.chat.completions.create(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatClientError);
    expect((error as ChatClientError).message).toMatch(/HTTP 500: GPU on fire .*gave up after 3 attempts/);
    expect(server.requests).toHaveLength(3);
  });

  test('a refused key is fatal and not retried', async () => {
    server = await startFakeOpenAIServer(() => ({ status: 401, body: { error: { message: 'Incorrect API key' } } }));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, apiKey: 'bad', backoffMs: 1 });
    const error = (await client.chat.completions.create(request).catch((e: unknown) => e)) as ChatClientError;
    expect(error.kind).toBe('auth');
    expect(error.fatal).toBe(true);
    expect(error.message).toContain('refused the API key (HTTP 401): Incorrect API key; check the key');
    expect(server.requests).toHaveLength(1);
  });

  test('a wrong path says to check the base URL', async () => {
    server = await startFakeOpenAIServer(() => 'unused');
    const client = new OpenAIHttpClient({ baseURL: server.baseURL.replace('/v1', '/v2') });
    const error = (await client.chat.completions.create(request).catch((e: unknown) => e)) as ChatClientError;
    expect(error.kind).toBe('not_found');
    expect(error.message).toContain('check the base URL');
  });

  test('an unreachable endpoint is a fatal network error naming the URL', async () => {
    const port = await freePort();
    const client = new OpenAIHttpClient({ baseURL: `http://127.0.0.1:${port}/v1`, backoffMs: 1, maxRetries: 1 });
    const error = (await client.chat.completions.create(request).catch((e: unknown) => e)) as ChatClientError;
    expect(error.kind).toBe('network');
    expect(error.fatal).toBe(true);
    expect(error.message).toContain(`could not reach http://127.0.0.1:${port}/v1/chat/completions (ECONNREFUSED)`);
  });

  test('a slow server times out', async () => {
    server = await startFakeOpenAIServer(() => new Promise((resolve) => setTimeout(() => resolve('slow'), 500)));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, timeoutMs: 50, maxRetries: 0 });
    const error = (await client.chat.completions.create(request).catch((e: unknown) => e)) as ChatClientError;
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('no answer from');
  });

  test('a response without choices is reported as not OpenAI-compatible', async () => {
    server = await startFakeOpenAIServer(() => ({ status: 200, body: { hello: 'world' } }));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL });
    await expect(client.chat.completions.create(request)).rejects.toThrow('answered without choices[0].message');
  });

  test('a base URL that is not a URL is rejected at once', () => {
    expect(() => new OpenAIHttpClient({ baseURL: 'localhost:8000' })).toThrow('is not an http(s) URL');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
