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

  // Each malformed answer comes first and is retried; the second attempt gets a good reply.
  test.each([
    ['message: null', { status: 200, body: { choices: [{ index: 0, message: null, finish_reason: 'stop' }] } }, 'answered with choices[0].message = null'],
    ['a body cut off mid-stream', { cut: true as const }, 'broke the connection in the middle of its answer'],
    ['broken JSON', { raw: '{"choices": [{"message": {"role": "assis' }, 'answered with broken JSON'],
  ])('%s is a bad response, retried, and says what came back', async (_label, glitch, message) => {
    server = await startFakeOpenAIServer((_m, _r, index) => (index === 0 ? glitch : 'ok'));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, backoffMs: 1 });
    expect((await client.chat.completions.create(request)).choices[0]!.message.content).toBe('ok');
    expect(server.requests).toHaveLength(2);

    await server.close();
    server = await startFakeOpenAIServer(() => glitch);
    const failing = new OpenAIHttpClient({ baseURL: server.baseURL, backoffMs: 1, maxRetries: 1 });
    const error = (await failing.chat.completions.create(request).catch((e: unknown) => e)) as ChatClientError;
    expect(error.kind).toBe('bad_response');
    expect(error.fatal).toBe(false);
    expect(error.message).toContain(message);
    expect(error.message).toContain('gave up after 2 attempts');
  });

  test('an HTML page is not retried: the endpoint is not OpenAI-compatible', async () => {
    server = await startFakeOpenAIServer(() => ({ raw: '<html>welcome</html>' }));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, backoffMs: 1 });
    await expect(client.chat.completions.create(request)).rejects.toThrow('did not answer with JSON (it starts "<html>welcome</html>")');
    expect(server.requests).toHaveLength(1);
  });

  test('a server that never answers times out on every attempt', async () => {
    server = await startFakeOpenAIServer(() => ({ hang: true }));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, timeoutMs: 50, backoffMs: 1, maxRetries: 1 });
    const error = (await client.chat.completions.create(request).catch((e: unknown) => e)) as ChatClientError;
    expect(error.kind).toBe('timeout');
    expect(error.message).toMatch(/no answer from .* within 50 ms.*gave up after 2 attempts/);
    expect(server.requests).toHaveLength(2);
  });

  test('a timeout a timer cannot hold is refused at once rather than firing after 1 ms', () => {
    expect(() => new OpenAIHttpClient({ baseURL: 'http://127.0.0.1:1/v1', timeoutMs: 3e9 })).toThrow('out of range; give between 1 ms and 2147483647 ms');
    expect(() => new OpenAIHttpClient({ baseURL: 'http://127.0.0.1:1/v1', timeoutMs: 0 })).toThrow('out of range');
  });

  test('many retries under one signal leave no abort listeners behind (no MaxListenersExceededWarning)', async () => {
    server = await startFakeOpenAIServer(() => ({ status: 503 }));
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, backoffMs: 0, maxRetries: 14 });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const controller = new AbortController();
    try {
      await expect(client.chat.completions.create({ ...request, signal: controller.signal })).rejects.toThrow('gave up after 15 attempts');
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(server.requests).toHaveLength(15);
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
