/**
 * A ChatClient for any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp
 * server, hosted APIs) over fetch: per-request timeouts, retries with exponential backoff on 429
 * and 5xx (honouring Retry-After), and errors that say what was tried and what to do.
 */
import { ChatClientError, type ChatClient, type ChatCompletion, type ChatRequest } from './client.ts';
import { errorMessage } from '../common/error-message.ts';

/** Options of the HTTP client. */
export interface OpenAIHttpClientOptions {
  /** Base URL up to `/v1`, e.g. `http://localhost:8000/v1`. */
  baseURL: string;
  apiKey?: string;
  /** Milliseconds before one attempt is abandoned (default 120 000). */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx and network errors (default 3). */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled each retry (default 500). */
  backoffMs?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

const RETRYABLE_STATUS = (status: number) => status === 429 || status >= 500;

/** The longest timeout a timer can hold (2^31 − 1 ms, about 24.8 days); longer ones fire at once in Node and browsers. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A failure worth another attempt: rate limits, server errors, timeouts, and answers broken on the way (cut off, garbled). */
class RetryableError extends ChatClientError {}

/** Talks to `${baseURL}/chat/completions`. */
export class OpenAIHttpClient implements ChatClient {
  readonly baseURL: string;
  private readonly options: Required<Omit<OpenAIHttpClientOptions, 'apiKey' | 'baseURL'>> & { apiKey?: string };

  constructor(options: OpenAIHttpClientOptions) {
    const url = URL.canParse(options.baseURL) ? new URL(options.baseURL) : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ChatClientError(`"${options.baseURL}" is not an http(s) URL; give the endpoint's base URL, e.g. http://localhost:8000/v1`, 'bad_request');
    }
    this.baseURL = url.href.replace(/\/+$/, '');
    const timeoutMs = options.timeoutMs ?? 120_000;
    if (!(timeoutMs > 0) || timeoutMs > MAX_TIMEOUT_MS) {
      throw new ChatClientError(`a request timeout of ${timeoutMs} ms is out of range; give between 1 ms and ${MAX_TIMEOUT_MS} ms (about 24.8 days)`, 'bad_request');
    }
    this.options = {
      apiKey: options.apiKey,
      timeoutMs,
      maxRetries: options.maxRetries ?? 3,
      backoffMs: options.backoffMs ?? 500,
      headers: options.headers ?? {},
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    };
  }

  readonly chat = { completions: { create: (request: ChatRequest) => this.createCompletion(request) } };

  private async createCompletion(request: ChatRequest): Promise<ChatCompletion> {
    const { signal, ...body } = request;
    const url = `${this.baseURL}/chat/completions`;
    const payload = JSON.stringify(stripUndefined({ ...body, tools: body.tools && body.tools.length > 0 ? body.tools : undefined }));
    let lastError: ChatClientError | undefined;

    for (let attempt = 0; attempt <= this.options.maxRetries; attempt++) {
      if (signal?.aborted) throw new ChatClientError('the request was cancelled', 'aborted');
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), this.options.timeoutMs);
      const onAbort = () => timeout.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      let retryAfterMs: number | undefined;
      try {
        const response = await this.options.fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
            ...this.options.headers,
          },
          body: payload,
          signal: timeout.signal,
        });
        if (response.ok) return await parseCompletion(response, url);
        const detail = await errorDetail(response);
        lastError = httpError(response.status, url, request.model, detail);
        if (!RETRYABLE_STATUS(response.status)) throw lastError;
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      } catch (error) {
        if (signal?.aborted) throw new ChatClientError('the request was cancelled', 'aborted');
        if (timeout.signal.aborted) {
          lastError = new ChatClientError(`no answer from ${url} within ${formatMs(this.options.timeoutMs)}; the server may be overloaded (raise the timeout or lower the concurrency)`, 'timeout');
        } else if (error instanceof RetryableError) {
          lastError = new ChatClientError(error.message, error.kind, error.status);
        } else if (error instanceof ChatClientError) {
          throw error;
        } else {
          lastError = new ChatClientError(`could not reach ${url} (${causeOf(error)}); is the server running, and is the base URL right?`, 'network');
        }
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
      if (attempt < this.options.maxRetries) await sleep(retryAfterMs ?? this.options.backoffMs * 2 ** attempt, signal);
    }
    const tries = this.options.maxRetries + 1;
    throw new ChatClientError(`${lastError!.message} (gave up after ${tries} attempt${tries === 1 ? '' : 's'})`, lastError!.kind, lastError!.status);
  }
}

function httpError(status: number, url: string, model: string, detail: string): ChatClientError {
  const suffix = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) return new ChatClientError(`${url} refused the API key (HTTP ${status})${suffix}; check the key`, 'auth', status);
  if (status === 404) return new ChatClientError(`${url} answered 404${suffix}; check the base URL (it usually ends in /v1) and that model "${model}" exists`, 'not_found', status);
  if (status === 429) return new ChatClientError(`${url} is rate-limiting (HTTP 429)${suffix}`, 'rate_limit', status);
  if (status >= 500) return new ChatClientError(`${url} failed with HTTP ${status}${suffix}`, 'server', status);
  return new ChatClientError(`${url} rejected the request (HTTP ${status})${suffix}`, 'bad_request', status);
}

/**
 * Reads a 200 answer. A body cut off on the way, JSON broken mid-way and a choice whose message is
 * null are glitches worth retrying; a well-formed answer of another shape (or an HTML page) is not.
 */
async function parseCompletion(response: Response, url: string): Promise<ChatCompletion> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new RetryableError(`${url} broke the connection in the middle of its answer (${causeOf(error)})`, 'bad_response');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const start = text.trimStart();
    const excerpt = JSON.stringify(start.slice(0, 80));
    if (start.startsWith('{') || start.startsWith('[')) throw new RetryableError(`${url} answered with broken JSON (cut off or garbled, ${text.length} bytes, starting ${excerpt})`, 'bad_response');
    throw new ChatClientError(`${url} did not answer with JSON (it starts ${excerpt}); is it an OpenAI-compatible endpoint?`, 'bad_response');
  }
  const completion = body as Partial<ChatCompletion>;
  if (!Array.isArray(completion.choices) || completion.choices.length === 0) {
    throw new ChatClientError(`${url} answered without choices[0].message; is it an OpenAI-compatible chat-completions endpoint?`, 'bad_response');
  }
  const broken = completion.choices.findIndex((choice) => typeof choice?.message !== 'object' || choice.message === null);
  if (broken >= 0) throw new RetryableError(`${url} answered with choices[${broken}].message = ${JSON.stringify(completion.choices[broken]?.message ?? null)} instead of a message`, 'bad_response');
  for (const choice of completion.choices) {
    choice.message.content ??= '';
    choice.finish_reason ??= 'stop';
  }
  return { id: completion.id ?? '', model: completion.model ?? '', choices: completion.choices, ...(completion.usage ? { usage: completion.usage } : {}) };
}

async function errorDetail(response: Response): Promise<string> {
  try {
    const text = await response.text();
    try {
      const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
      const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
      if (message) return message.slice(0, 300);
    } catch {
      // not JSON: use the text itself
    }
    return text.trim().slice(0, 300);
  } catch {
    return '';
  }
}

function parseRetryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(seconds * 1000, 60_000);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, Math.min(date - Date.now(), 60_000)) : undefined;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${+(ms / 1000).toFixed(1)} s`;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? errorMessage(error);
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Waits `ms`, or less when `signal` aborts; its abort listener goes when it resolves, so retries do not pile listeners up. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
