/**
 * WebLLMClient against a fake WebLLM engine: request mapping, n>1, stop strings, tools, abort
 * (interruptGenerate), errors becoming clear ChatClientErrors, serialised requests, and the filter
 * of the prebuilt model list. No WebLLM code runs here (it needs WebGPU and a model download).
 */
import { describe, expect, test } from 'vitest';
import { ChatClientError, type ChatRequest } from '../../../src/envs/index.ts';
import {
  listBrowserModels,
  modelFitProblems,
  toChatClientError,
  WebLLMClient,
  type WebLLMChatCompletion,
  type WebLLMChatRequest,
  type WebLLMEngineLike,
} from '../../../src/workers/webllm-client.ts';

const MODEL = 'SmolLM2-360M-Instruct-q4f32_1-MLC';

/** A fake engine: records requests, answers with `answer(request)` after the test releases it (or at once). */
class FakeEngine implements WebLLMEngineLike {
  readonly requests: WebLLMChatRequest[] = [];
  interrupts = 0;
  /** When false, an interrupt is only counted: the generation ends when the test releases it. */
  interruptEndsGeneration = true;
  /** Generations running now, and the most at once. */
  running = 0;
  maxRunning = 0;
  private pending: { resolve: (value: WebLLMChatCompletion) => void; reject: (error: unknown) => void; request: WebLLMChatRequest }[] = [];

  constructor(
    private readonly answer: (request: WebLLMChatRequest) => WebLLMChatCompletion | Error | string = (request) => completion(request, 'ok'),
    private readonly manual = false,
  ) {}

  readonly chat = {
    completions: {
      create: (request: WebLLMChatRequest) => {
        this.requests.push(structuredClone(request));
        this.running++;
        this.maxRunning = Math.max(this.maxRunning, this.running);
        return new Promise<WebLLMChatCompletion>((resolve, reject) => {
          const done = { resolve: (value: WebLLMChatCompletion) => { this.running--; resolve(value); }, reject: (error: unknown) => { this.running--; reject(error); }, request };
          if (this.manual) this.pending.push(done);
          else queueMicrotask(() => this.finish(done));
        });
      },
    },
  };

  interruptGenerate(): void {
    this.interrupts++;
    if (!this.interruptEndsGeneration) return;
    // WebLLM finishes an interrupted generation with finish_reason 'abort'.
    const current = this.pending.shift();
    current?.resolve({ choices: [{ index: 0, message: { content: 'partial' }, finish_reason: 'abort' }] });
  }

  /** Answers the oldest waiting generation (manual mode). */
  release(): void {
    const next = this.pending.shift();
    if (next) this.finish(next);
  }

  private finish(done: { resolve: (value: WebLLMChatCompletion) => void; reject: (error: unknown) => void; request: WebLLMChatRequest }): void {
    const result = this.answer(done.request);
    if (result instanceof Error || typeof result === 'string') done.reject(result);
    else done.resolve(result);
  }
}

function completion(request: WebLLMChatRequest, text: string): WebLLMChatCompletion {
  const n = request.n ?? 1;
  return {
    id: 'chatcmpl-1',
    choices: Array.from({ length: n }, (_, index) => ({ index, message: { content: `${text} ${index}` }, finish_reason: 'stop' as const })),
    usage: { prompt_tokens: 7, completion_tokens: 3 * n, total_tokens: 7 + 3 * n },
  };
}

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'anything', messages: [{ role: 'user', content: 'hi' }], ...overrides });

async function rejection(promise: Promise<unknown>): Promise<ChatClientError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ChatClientError);
  return error as ChatClientError;
}

describe('WebLLMClient', () => {
  test('maps the request (messages, sampling fields, stop, seed) and the answer back, with the loaded model as the model', async () => {
    const engine = new FakeEngine();
    const client = new WebLLMClient(engine, { modelId: MODEL });
    const answer = await client.chat.completions.create(request({
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi', name: 'ada' }],
      temperature: 0.7, top_p: 0.9, top_k: 40, max_tokens: 32, stop: ['</answer>'], seed: 5,
    }));
    expect(engine.requests).toEqual([{
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }],
      stream: false, temperature: 0.7, top_p: 0.9, max_tokens: 32, stop: ['</answer>'], seed: 5,
    }]);
    expect(answer.model).toBe(MODEL);
    expect(answer.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'ok 0' }, finish_reason: 'stop', logprobs: null }]);
    expect(answer.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  test('n>1 is passed to WebLLM and every choice comes back', async () => {
    const engine = new FakeEngine();
    const answer = await new WebLLMClient(engine, { modelId: MODEL }).chat.completions.create(request({ n: 3, seed: 1 }));
    expect(engine.requests[0]!.n).toBe(3);
    expect(answer.choices.map((choice) => choice.message.content)).toEqual(['ok 0', 'ok 1', 'ok 2']);
  });

  test('an empty stop list is left out, and logprobs ask WebLLM for top_logprobs 1 (it fills them only then)', async () => {
    const engine = new FakeEngine(() => ({ choices: [{ index: 0, message: { content: 'a' }, finish_reason: 'length', logprobs: { content: [{ token: 'a', logprob: -0.5 }] } }] }));
    const answer = await new WebLLMClient(engine, { modelId: MODEL }).chat.completions.create(request({ stop: [], logprobs: true }));
    expect(engine.requests[0]).not.toHaveProperty('stop');
    expect(engine.requests[0]).toMatchObject({ logprobs: true, top_logprobs: 1 });
    expect(answer.choices[0]).toMatchObject({ finish_reason: 'length', logprobs: { content: [{ token: 'a', logprob: -0.5 }] } });
  });

  test('tools go to models that support them; other models refuse a tool request with a clear error', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'add', description: 'adds', parameters: { type: 'object' } } }];
    const toolCall = { id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{"a":1}' } };
    const engine = new FakeEngine(() => ({ choices: [{ index: 0, message: { content: null, tool_calls: [toolCall] }, finish_reason: 'tool_calls' }] }));
    const answer = await new WebLLMClient(engine, { modelId: 'Hermes-3-Llama-3.1-8B-q4f16_1-MLC', supportsTools: true }).chat.completions.create(request({ tools }));
    expect(engine.requests[0]!.tools).toEqual(tools);
    expect(answer.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: '', tool_calls: [toolCall] } });

    const plain = new FakeEngine();
    const error = await rejection(new WebLLMClient(plain, { modelId: MODEL }).chat.completions.create(request({ tools })));
    expect(error.kind).toBe('bad_request');
    expect(error.message).toMatch(/cannot call tools/);
    expect(plain.requests).toEqual([]);
  });

  test('an abort interrupts the running generation (interruptGenerate) and rejects with an aborted error', async () => {
    const engine = new FakeEngine(undefined, true);
    const client = new WebLLMClient(engine, { modelId: MODEL });
    const controller = new AbortController();
    const call = client.chat.completions.create(request({ signal: controller.signal }));
    await Promise.resolve();
    await Promise.resolve();
    expect(engine.running).toBe(1);
    controller.abort();
    const error = await rejection(call);
    expect(error.kind).toBe('aborted');
    expect(engine.interrupts).toBe(1);
    // The client is still usable afterwards.
    const next = client.chat.completions.create(request());
    await Promise.resolve();
    await Promise.resolve();
    engine.release();
    expect((await next).choices[0]!.message.content).toBe('ok 0');
  });

  test('after an abort, the next request waits until the interrupted generation has really ended in WebLLM', async () => {
    const engine = new FakeEngine(undefined, true);
    engine.interruptEndsGeneration = false;
    const client = new WebLLMClient(engine, { modelId: MODEL });
    const controller = new AbortController();
    const call = client.chat.completions.create(request({ signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort();
    expect((await rejection(call)).kind).toBe('aborted');
    const next = client.chat.completions.create(request());
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(engine.requests).toHaveLength(1);
    engine.release(); // the interrupted generation ends
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(engine.requests).toHaveLength(2);
    expect(engine.maxRunning).toBe(1);
    engine.release();
    expect((await next).choices[0]!.message.content).toBe('ok 0');
  });

  test('an engine that throws synchronously does not block the queue', async () => {
    let calls = 0;
    const engine: WebLLMEngineLike = {
      chat: { completions: { create: (body) => { if (calls++ === 0) throw new Error('sync boom'); return Promise.resolve(completion(body, 'later')); } } },
      interruptGenerate: () => {},
    };
    const client = new WebLLMClient(engine, { modelId: MODEL });
    await expect(client.chat.completions.create(request())).rejects.toThrow(/sync boom/);
    expect((await client.chat.completions.create(request())).choices[0]!.message.content).toBe('later 0');
  });

  test('a request aborted while it waits in the queue never reaches the engine; an aborted signal rejects at once', async () => {
    const engine = new FakeEngine(undefined, true);
    const client = new WebLLMClient(engine, { modelId: MODEL });
    const first = client.chat.completions.create(request());
    const controller = new AbortController();
    const second = client.chat.completions.create(request({ signal: controller.signal }));
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 0));
    engine.release();
    await first;
    expect((await rejection(second)).kind).toBe('aborted');
    expect(engine.requests).toHaveLength(1);
    expect(engine.interrupts).toBe(0);
    expect((await rejection(client.chat.completions.create(request({ signal: AbortSignal.abort() })))).kind).toBe('aborted');
  });

  test('a generation WebLLM reports as interrupted (finish_reason abort) is an aborted error, not an answer', async () => {
    const engine = new FakeEngine(() => ({ choices: [{ index: 0, message: { content: 'half' }, finish_reason: 'abort' }] }));
    expect((await rejection(new WebLLMClient(engine, { modelId: MODEL }).chat.completions.create(request()))).kind).toBe('aborted');
  });

  test('requests are serialised: one generation at a time, answered in the order they came', async () => {
    const engine = new FakeEngine((req) => completion(req, String(req.messages[0]!.content)), true);
    const client = new WebLLMClient(engine, { modelId: MODEL });
    const calls = ['a', 'b', 'c'].map((content) => client.chat.completions.create(request({ messages: [{ role: 'user', content }] })));
    const order: string[] = [];
    calls.forEach((call) => void call.then((answer) => order.push(answer.choices[0]!.message.content)));
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(engine.running).toBe(1);
      engine.release();
    }
    await Promise.all(calls);
    expect(engine.maxRunning).toBe(1);
    expect(order).toEqual(['a 0', 'b 0', 'c 0']);
  });

  test('a failed request does not block the queue', async () => {
    let calls = 0;
    const engine = new FakeEngine((req) => (calls++ === 0 ? new Error('boom') : completion(req, 'fine')));
    const client = new WebLLMClient(engine, { modelId: MODEL });
    const [failed, next] = await Promise.allSettled([client.chat.completions.create(request()), client.chat.completions.create(request())]);
    expect(failed.status).toBe('rejected');
    expect(next).toMatchObject({ status: 'fulfilled', value: { choices: [{ message: { content: 'fine 0' } }] } });
  });

  test('a device loss (out of GPU memory) becomes a clear error, and later calls fail the same way without reaching the engine', async () => {
    // WebLLM's worker protocol sends errors as "Name: message" strings.
    const engine = new FakeEngine(() => 'DeviceLostError: The WebGPU device was lost while loading the model. This issue often occurs due to running out of memory (OOM).');
    const lost: string[] = [];
    const client = new WebLLMClient(engine, { modelId: MODEL, onDeviceLost: (reported) => lost.push(reported.message) });
    const error = await rejection(client.chat.completions.create(request()));
    expect(lost).toEqual([error.message]);
    expect(error.message).toMatch(/GPU ran out of memory or was lost/);
    // Fatal: an evaluation stops at once instead of failing every rollout alike.
    expect(error).toMatchObject({ kind: 'device', fatal: true });
    expect(error.message).toMatch(/pick a smaller model/);
    const again = await rejection(client.chat.completions.create(request()));
    expect(again.message).toBe(error.message);
    expect(engine.requests).toHaveLength(1);
    expect(lost).toHaveLength(1);
  });
});

describe('toChatClientError', () => {
  const cases: [string, unknown, ChatClientError['kind'], RegExp][] = [
    ['an unknown model', new Error('Cannot find model record in appConfig for Nope-MLC. Please check...'), 'not_found', /no prebuilt model "m"/],
    ['no WebGPU', 'WebGPUNotAvailableError: WebGPU is not supported in your current environment', 'not_found', /needs WebGPU/],
    ['no shader-f16', 'ShaderF16SupportError: This model requires WebGPU extension shader-f16', 'not_found', /q4f32 or q0f32/],
    ['a failed download', new TypeError('Failed to fetch'), 'network', /could not download "m".*huggingface\.co/],
    ['a failed fetch in the worker', 'Error: Cannot fetch https://huggingface.co/mlc-ai/x/resolve/main/mlc-chat-config.json', 'network', /check the connection/],
    ['an AbortError', new DOMException('The operation was aborted.', 'AbortError'), 'aborted', /cancelled/],
    ['anything else', new Error('strange'), 'server', /WebLLM failed on "m": Error: strange/],
  ];
  test.each(cases)('%s', (_label, error, kind, message) => {
    const mapped = toChatClientError(error, 'm');
    expect(mapped.kind).toBe(kind);
    expect(mapped.message).toMatch(message);
  });
});

describe('the prebuilt model list', () => {
  const record = (model_id: string, vram_required_MB: number | undefined, extra: Record<string, unknown> = {}) => ({ model: `https://huggingface.co/mlc-ai/${model_id}`, model_id, model_lib: 'lib.wasm', ...(vram_required_MB === undefined ? {} : { vram_required_MB }), ...extra });
  const appConfig = {
    model_list: [
      record('Big-8B-q4f16_1-MLC', 5000),
      record('Qwen2.5-0.5B-Instruct-q4f16_1-MLC', 944.62),
      record('SmolLM2-135M-Instruct-q0f16-MLC', 359.69, { required_features: ['shader-f16'], low_resource_required: true }),
      record('snowflake-arctic-embed-m-q0f32-MLC-b4', 100, { model_type: 1 }),
      record('Phi-3.5-vision-instruct-q4f16_1-MLC', 400, { model_type: 2 }),
      record('NoFigure-MLC', undefined),
    ],
  };

  test('keeps text models within the VRAM limit, smallest first, with their requirements', () => {
    expect(listBrowserModels(appConfig, { functionCallingModelIds: ['Qwen2.5-0.5B-Instruct-q4f16_1-MLC'] })).toEqual([
      { id: 'SmolLM2-135M-Instruct-q0f16-MLC', vramMB: 359.69, lowResource: true, requiredFeatures: ['shader-f16'], supportsTools: false },
      { id: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC', vramMB: 944.62, lowResource: false, requiredFeatures: [], supportsTools: true },
    ]);
    expect(listBrowserModels(appConfig, { maxVramMB: 8000 }).map((model) => model.id)).toContain('Big-8B-q4f16_1-MLC');
  });

  test('the installed WebLLM has small prebuilt models, SmolLM2 and Qwen among them', async () => {
    const { prebuiltAppConfig } = await import('@mlc-ai/web-llm');
    const models = listBrowserModels(prebuiltAppConfig);
    expect(models.length).toBeGreaterThan(5);
    expect(models.every((model) => model.vramMB <= 4096)).toBe(true);
    expect(models.map((model) => model.id)).toEqual(expect.arrayContaining(['SmolLM2-360M-Instruct-q4f32_1-MLC', 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC']));
  });

  test('fit problems: no WebGPU, no adapter, a missing feature, too little memory', () => {
    const smol = { id: 'SmolLM2-135M-Instruct-q0f16-MLC', vramMB: 359.69, lowResource: true, requiredFeatures: ['shader-f16'], supportsTools: false };
    const qwen = { ...smol, id: 'Qwen3-0.6B-q4f32_1-MLC', vramMB: 1924.98, requiredFeatures: [] };
    expect(modelFitProblems(smol, { hasWebGPU: false, hasAdapter: false, features: [] })[0]).toMatch(/no WebGPU/);
    expect(modelFitProblems(smol, { hasWebGPU: true, hasAdapter: false, features: [] })[0]).toMatch(/no usable GPU adapter/);
    expect(modelFitProblems(smol, { hasWebGPU: true, hasAdapter: true, features: [] })).toEqual([expect.stringMatching(/shader-f16.*q4f32 or q0f32/)]);
    expect(modelFitProblems(smol, { hasWebGPU: true, hasAdapter: true, features: ['shader-f16'], deviceMemoryGB: 8 })).toEqual([]);
    expect(modelFitProblems(qwen, { hasWebGPU: true, hasAdapter: true, features: [], deviceMemoryGB: 2 })).toEqual([expect.stringMatching(/1\.9 GB of GPU memory.*reports 2 GB/)]);
  });
});
