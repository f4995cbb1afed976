/**
 * WebLLM as a policy: `WebLLMClient` answers our chat requests with a prebuilt, quantised MLC model
 * running in its own web worker (webllm.worker.ts), for evaluating an environment or making SFT
 * warm-up data with a larger model than the in-tab engine trains. It only generates: WebLLM has no
 * training, LoRA or token-level logprob recompute, so it is never the student.
 *
 * This file imports `@mlc-ai/web-llm` only dynamically (`loadWebLLM` and the cache helpers), so the
 * main bundle and the offline default never load it. The client itself works over the small subset
 * of WebLLM's engine interface in `WebLLMEngineLike`, so tests drive it with a fake engine.
 */
import type { AppConfig, ModelRecord } from '@mlc-ai/web-llm';
import { ChatClientError, type ChatClient, type ChatCompletion, type ChatRequest } from '../envs/client.ts';
import type { FinishReason, Message, ToolCall, ToolSchema } from '../envs/types.ts';

/** The chat request we send to WebLLM (its OpenAI-style fields; never streamed). */
export interface WebLLMChatRequest {
  messages: Message[];
  stream: false;
  n?: number;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string[];
  seed?: number;
  tools?: ToolSchema[];
  logprobs?: boolean;
  top_logprobs?: number;
}

/** WebLLM's non-streamed chat completion, as far as we read it. */
export interface WebLLMChatCompletion {
  id?: string;
  choices: {
    index: number;
    message: { content: string | null; tool_calls?: ToolCall[] };
    /** 'abort' when `interruptGenerate` cut the generation short. */
    finish_reason: FinishReason | 'abort';
    logprobs?: { content: { token: string; logprob: number }[] | null } | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number };
}

/** The part of WebLLM's `MLCEngineInterface` the client uses (a `WebWorkerMLCEngine` has it). */
export interface WebLLMEngineLike {
  chat: { completions: { create(request: WebLLMChatRequest): Promise<WebLLMChatCompletion> } };
  /** Stops the generation in progress; it then finishes with finish_reason 'abort'. */
  interruptGenerate(): void;
}

/** Options of `WebLLMClient`. */
export interface WebLLMClientOptions {
  /** The loaded model's id in WebLLM's app config, e.g. "Qwen2.5-0.5B-Instruct-q4f16_1-MLC". */
  modelId: string;
  /** Whether WebLLM supports `tools` for this model (its `functionCallingModelIds`; default false). */
  supportsTools?: boolean;
  /** Called once when the GPU device is lost (or out of memory): the model must be loaded again. */
  onDeviceLost?: (error: ChatClientError) => void;
}

/**
 * A ChatClient over one loaded WebLLM model. WebLLM runs one generation at a time (a single-sequence
 * KV cache), so requests are serialised here: concurrent calls wait in a queue, in order, and `n>1`
 * is WebLLM's own loop of full generations. An AbortSignal removes a waiting request from the queue
 * or interrupts the running one (`interruptGenerate`); either way the call rejects with an 'aborted'
 * ChatClientError. `top_k` is not part of WebLLM's request and is ignored; the request's `model`
 * is ignored too (the loaded model answers).
 */
export class WebLLMClient implements ChatClient {
  private queue: Promise<void> = Promise.resolve();
  /** Set once the GPU device is lost: every later call fails the same way at once. */
  private broken: ChatClientError | null = null;

  constructor(
    private readonly engine: WebLLMEngineLike,
    readonly options: WebLLMClientOptions,
  ) {}

  readonly chat = { completions: { create: (request: ChatRequest) => this.enqueue(request) } };

  private enqueue(request: ChatRequest): Promise<ChatCompletion> {
    // The next request waits until WebLLM has really finished this one (an aborted call rejects at
    // once, but its interrupted generation still ends in the engine first).
    let release!: () => void;
    const finished = new Promise<void>((resolve) => (release = resolve));
    const previous = this.queue;
    this.queue = previous.then(() => finished);
    return previous.then(() => this.generate(request, release));
  }

  private async generate(request: ChatRequest, release: () => void): Promise<ChatCompletion> {
    const { signal } = request;
    let body: WebLLMChatRequest;
    try {
      if (signal?.aborted) throw abortedError();
      if (this.broken) throw this.broken;
      body = toWebLLMRequest(request, this.options);
    } catch (error) {
      release();
      throw error;
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => {
        this.engine.interruptGenerate();
        reject(abortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const call = startGeneration(this.engine, body);
      call.then(release, release);
      const completion = await Promise.race([call, aborted]);
      if (completion.choices.some((choice) => choice.finish_reason === 'abort')) throw abortedError();
      return fromWebLLMCompletion(completion, this.options.modelId);
    } catch (error) {
      const mapped = toChatClientError(error, this.options.modelId);
      if (isDeviceLoss(error) && !this.broken) {
        this.broken = mapped;
        this.options.onDeviceLost?.(mapped);
      }
      throw mapped;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      // Keep the losing branch of the race from surfacing as an unhandled rejection.
      aborted.catch(() => {});
    }
  }
}

/** Starts a generation; a synchronous throw becomes a rejected promise, so the queue is always released. */
function startGeneration(engine: WebLLMEngineLike, body: WebLLMChatRequest): Promise<WebLLMChatCompletion> {
  try {
    return engine.chat.completions.create(body);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Maps our request to WebLLM's: sampling fields as they are, tools only when the model supports them. */
function toWebLLMRequest(request: ChatRequest, options: WebLLMClientOptions): WebLLMChatRequest {
  const tools = request.tools && request.tools.length > 0 ? request.tools : undefined;
  if (tools && !options.supportsTools) {
    throw new ChatClientError(
      `WebLLM model "${options.modelId}" cannot call tools (WebLLM supports tools only for its Hermes function-calling models); evaluate this tool environment with the in-tab model or an endpoint instead`,
      'bad_request',
    );
  }
  const body: WebLLMChatRequest = {
    messages: request.messages.map(toWebLLMMessage),
    stream: false,
  };
  if (request.n !== undefined) body.n = request.n;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.max_tokens !== undefined) body.max_tokens = request.max_tokens;
  if (request.stop && request.stop.length > 0) body.stop = request.stop;
  if (request.seed !== undefined) body.seed = Math.trunc(request.seed);
  if (tools) body.tools = tools;
  if (request.logprobs) {
    // WebLLM fills per-token logprobs only when top_logprobs > 0.
    body.logprobs = true;
    body.top_logprobs = 1;
  }
  return body;
}

function toWebLLMMessage(message: Message): Message {
  const mapped: Message = { role: message.role, content: message.content };
  if (message.tool_calls) mapped.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) mapped.tool_call_id = message.tool_call_id;
  return mapped;
}

/** Maps WebLLM's completion to ours; a stop string WebLLM left at the end of the text is cut. */
function fromWebLLMCompletion(completion: WebLLMChatCompletion, modelId: string): ChatCompletion {
  return {
    id: completion.id ?? '',
    model: modelId,
    choices: completion.choices.map((choice, index) => {
      const message: Message = { role: 'assistant', content: choice.message.content ?? '' };
      if (choice.message.tool_calls && choice.message.tool_calls.length > 0) message.tool_calls = choice.message.tool_calls;
      const logprobs = choice.logprobs?.content ? { content: choice.logprobs.content.map(({ token, logprob }) => ({ token, logprob })) } : null;
      return { index: choice.index ?? index, message, finish_reason: choice.finish_reason === 'abort' ? 'stop' : choice.finish_reason, logprobs };
    }),
    ...(completion.usage ? { usage: { prompt_tokens: completion.usage.prompt_tokens, completion_tokens: completion.usage.completion_tokens, total_tokens: completion.usage.total_tokens } } : {}),
  };
}

function abortedError(): ChatClientError {
  return new ChatClientError('the request was cancelled (WebLLM generation interrupted)', 'aborted');
}

/** Text of an error from WebLLM: an Error, or the "Name: message" string its worker protocol sends. */
function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === 'object' && error !== null && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}

function isDeviceLoss(error: unknown): boolean {
  return /DeviceLostError|device (was )?lost|out of memory|\bOOM\b/i.test(errorText(error));
}

/**
 * Turns whatever WebLLM threw (an Error in the page, a string from its worker) into a ChatClientError
 * that says what happened and what to do: unknown model, no WebGPU, a missing GPU feature, GPU
 * memory or device loss, a failed download, an interrupted request.
 */
export function toChatClientError(error: unknown, modelId: string): ChatClientError {
  if (error instanceof ChatClientError) return error;
  const text = errorText(error);
  if (/\bAbortError\b/.test(text)) return abortedError();
  if (/ModelNotFoundError|Cannot find model record/i.test(text)) {
    return new ChatClientError(`WebLLM has no prebuilt model "${modelId}"; pick one from the WebLLM model list`, 'not_found');
  }
  if (/WebGPUNotAvailableError|WebGPUNotFoundError|WebGPU is not supported|Cannot find WebGPU|requestAdapter|no (WebGPU )?adapter/i.test(text)) {
    return new ChatClientError(`WebLLM needs WebGPU, and this browser has none (${firstLine(text)}); use a recent Chrome or Edge with WebGPU enabled, or pick another policy`, 'not_found');
  }
  if (/ShaderF16SupportError|shader-f16/i.test(text)) {
    return new ChatClientError(`WebLLM model "${modelId}" needs the GPU feature shader-f16, which this browser's adapter lacks; pick a q4f32 or q0f32 variant of the model`, 'not_found');
  }
  if (/FeatureSupportError|requires feature/i.test(text)) {
    return new ChatClientError(`WebLLM model "${modelId}" needs a GPU feature this browser lacks (${firstLine(text)}); pick another model`, 'not_found');
  }
  if (isDeviceLoss(error)) {
    return new ChatClientError(
      `The GPU ran out of memory or was lost while WebLLM ran "${modelId}" (${firstLine(text)}); close other GPU-heavy tabs, pick a smaller model, and load it again`,
      'device',
    );
  }
  if (/Failed to fetch|Cannot fetch|Unable to fetch|NetworkError|Load failed|ERR_|network|status (4|5)\d\d/i.test(text)) {
    return new ChatClientError(
      `WebLLM could not download "${modelId}" (${firstLine(text)}); its weights come from huggingface.co and its library from raw.githubusercontent.com — check the connection and try Load again`,
      'network',
    );
  }
  return new ChatClientError(`WebLLM failed on "${modelId}": ${firstLine(text)}`, 'server');
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

// ---------------------------------------------------------------- the prebuilt model list

/** A prebuilt WebLLM model that suits a browser tab, for the model picker. */
export interface WebLLMModelInfo {
  id: string;
  /** GPU memory WebLLM says the model needs, in MB. */
  vramMB: number;
  /** WebLLM marks it as able to run on limited devices (phones). */
  lowResource: boolean;
  /** GPU features it needs, e.g. ["shader-f16"]. */
  requiredFeatures: string[];
  /** Whether WebLLM supports `tools` for it. */
  supportsTools: boolean;
}

/** Models above this VRAM requirement are left out of the picker by default (MB). */
const DEFAULT_MAX_VRAM_MB = 4096;

/**
 * The text-generation models of an app config that need at most `maxVramMB` of GPU memory, smallest
 * first (embedding and vision models, and records without a VRAM figure, are left out).
 */
export function listBrowserModels(appConfig: Pick<AppConfig, 'model_list'>, options: { maxVramMB?: number; functionCallingModelIds?: readonly string[] } = {}): WebLLMModelInfo[] {
  const maxVramMB = options.maxVramMB ?? DEFAULT_MAX_VRAM_MB;
  return appConfig.model_list
    .filter((record: ModelRecord) => (record.model_type === undefined || record.model_type === 0) && typeof record.vram_required_MB === 'number' && record.vram_required_MB <= maxVramMB)
    .map((record) => ({
      id: record.model_id,
      vramMB: record.vram_required_MB!,
      lowResource: record.low_resource_required ?? false,
      requiredFeatures: record.required_features ?? [],
      supportsTools: options.functionCallingModelIds?.includes(record.model_id) ?? false,
    }))
    .sort((a, b) => a.vramMB - b.vramMB || a.id.localeCompare(b.id));
}

/** What the page knows of its GPU, for `modelFitProblems`. */
export interface GpuFacts {
  /** `navigator.gpu` exists. */
  hasWebGPU: boolean;
  /** An adapter was found (false: WebGPU exists but no GPU is usable). */
  hasAdapter: boolean;
  /** The adapter's features. */
  features: readonly string[];
  /** `navigator.deviceMemory` in GB (Chrome; capped at 8), when known. */
  deviceMemoryGB?: number;
}

/** Reasons `model` will probably not run on this GPU, each a sentence saying what to do; empty when it seems to fit. */
export function modelFitProblems(model: WebLLMModelInfo, gpu: GpuFacts): string[] {
  if (!gpu.hasWebGPU) return ['This browser has no WebGPU, which WebLLM needs: use a recent Chrome or Edge (or enable WebGPU), or pick another policy.'];
  if (!gpu.hasAdapter) return ['WebGPU found no usable GPU adapter, so WebLLM cannot run here: check that hardware acceleration is on, or pick another policy.'];
  const problems: string[] = [];
  const missing = model.requiredFeatures.filter((feature) => !gpu.features.includes(feature));
  if (missing.length > 0) problems.push(`This model needs the GPU feature ${missing.join(', ')}, which this adapter lacks: pick a q4f32 or q0f32 variant.`);
  // deviceMemory is the device's RAM (rounded, at most 8 GB); a GPU sharing it seldom gets more than half.
  if (gpu.deviceMemoryGB !== undefined && model.vramMB > (gpu.deviceMemoryGB * 1024) / 2) {
    problems.push(
      `This model needs about ${formatMB(model.vramMB)} of GPU memory and this device reports ${gpu.deviceMemoryGB} GB of memory, so it may not fit: pick a smaller model if loading fails.`,
    );
  }
  return problems;
}

/** "944 MB" or "1.4 GB". */
export function formatMB(megabytes: number): string {
  return megabytes >= 1024 ? `${(megabytes / 1024).toFixed(1)} GB` : `${Math.round(megabytes)} MB`;
}

// ---------------------------------------------------------------- loading (lazy import)

/** A progress report of a model load (WebLLM's initProgressCallback). */
export interface WebLLMLoadProgress {
  /** 0..1. */
  progress: number;
  text: string;
}

/** A loaded WebLLM model: its client, and a way to free its worker and GPU memory. */
export interface LoadedWebLLM {
  modelId: string;
  client: WebLLMClient;
  unload(): Promise<void>;
}

type WebLLMModule = typeof import('@mlc-ai/web-llm');
let modulePromise: Promise<WebLLMModule> | undefined;

/** Imports `@mlc-ai/web-llm` once, on first use (a separate chunk). */
function webllmModule(): Promise<WebLLMModule> {
  modulePromise ??= import('@mlc-ai/web-llm');
  return modulePromise;
}

/** The prebuilt models that suit a browser tab (imports WebLLM). */
export async function listPrebuiltWebLLMModels(maxVramMB = DEFAULT_MAX_VRAM_MB): Promise<WebLLMModelInfo[]> {
  const webllm = await webllmModule();
  return listBrowserModels(webllm.prebuiltAppConfig, { maxVramMB, functionCallingModelIds: webllm.functionCallingModelIds });
}

/** Whether the model's weights are in WebLLM's browser cache (so loading needs no download). */
export async function isWebLLMModelCached(modelId: string): Promise<boolean> {
  const webllm = await webllmModule();
  return webllm.hasModelInCache(modelId, webllm.prebuiltAppConfig);
}

/** Deletes the model's weights, library and config from WebLLM's browser cache. */
export async function deleteCachedWebLLMModel(modelId: string): Promise<void> {
  const webllm = await webllmModule();
  await webllm.deleteModelAllInfoInCache(modelId, webllm.prebuiltAppConfig);
}

/**
 * Loads a prebuilt model in a new WebLLM worker (downloading it into the browser cache the first
 * time), reporting progress. Failures become ChatClientErrors that say what to do; the worker is
 * terminated on failure.
 */
export async function loadWebLLM(modelId: string, onProgress: (report: WebLLMLoadProgress) => void, onDeviceLost?: (error: ChatClientError) => void): Promise<LoadedWebLLM> {
  if (!('gpu' in navigator) || !navigator.gpu) throw toChatClientError(new Error('WebGPUNotAvailableError: WebGPU is not supported'), modelId);
  const webllm = await webllmModule();
  if (!webllm.prebuiltAppConfig.model_list.some((record) => record.model_id === modelId)) throw toChatClientError(new Error('ModelNotFoundError: Cannot find model record'), modelId);
  const worker = new Worker(new URL('./webllm.worker.ts', import.meta.url), { type: 'module', name: 'tabrl-webllm' });
  try {
    const engine = await webllm.CreateWebWorkerMLCEngine(worker, modelId, {
      appConfig: webllm.prebuiltAppConfig,
      initProgressCallback: (report) => onProgress({ progress: report.progress, text: report.text }),
    });
    const supportsTools = webllm.functionCallingModelIds.includes(modelId);
    const client = new WebLLMClient(engine as unknown as WebLLMEngineLike, { modelId, supportsTools, ...(onDeviceLost ? { onDeviceLost } : {}) });
    return {
      modelId,
      client,
      unload: async () => {
        try {
          await engine.unload();
        } finally {
          worker.terminate();
        }
      },
    };
  } catch (error) {
    worker.terminate();
    throw toChatClientError(error, modelId);
  }
}
