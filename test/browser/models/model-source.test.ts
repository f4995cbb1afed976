/**
 * Loading real-format models in Chromium: the HTTP source (fetch injected, serving a small model
 * folder made in the test; the real Cache Storage under made-up URLs) — progress, the cache, and
 * each failure's message — the local-files source over `File`s, and the loaded model on WebGPU
 * (LoRA, as the engine builds it) against the CPU reference.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { localModelReader, missingLocalFiles } from '../../../src/gpu/io/local-model-files.ts';
import {
  deleteCachedModel,
  fetchModelFiles,
  isModelCached,
  MODEL_CACHE_NAME,
  readFromFiles,
  type ModelDownloadProgress,
  type ModelDownloadSpec,
  type ModelStorage,
} from '../../../src/models/cache.ts';
import { loadHfTokenizer } from '../../../src/gpu/io/hf-tokenizer.ts';
import { loadModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { HF_MODEL_FILES } from '../../../src/models/catalogue.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { loraLayout } from '../../../src/gpu/model/layout.ts';
import { requestGPUDevice, type GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { CHECKPOINT_FORMAT, parseCheckpoint, serializeCheckpoint } from '../../../src/rl/checkpoint.ts';
import { runSft } from '../../../src/rl/sft-trainer.ts';
import { tokenizeTranscript } from '../../../src/rl/tokenize-transcript.ts';
import { createRealModel, freshOptimizerState, initialLoraTensors, REAL_MODEL_LORA, trainableParameters } from '../../../src/workers/engine/real-model.ts';
import { expectClose } from '../../support/expect-close.ts';
import { TINY_HF_CONFIG, tinyHfModelFiles } from '../../support/tiny-hf-model.ts';
import SMOLLM2_TEMPLATE from '../../fixtures/tokenizers/smollm2-chat-template.jinja?raw';

let folder: Map<string, Uint8Array>;
let context: GPUContext;

beforeAll(async () => {
  folder = await tinyHfModelFiles(SMOLLM2_TEMPLATE);
  context = await requestGPUDevice({ label: 'model source tests' });
});

afterAll(() => context?.device.destroy());

let specCount = 0;
/** A spec under a fresh made-up URL, so tests never share cache entries. */
function freshSpec(overrides: Partial<ModelDownloadSpec> = {}): ModelDownloadSpec {
  specCount++;
  return { name: 'Tiny-HF', baseUrl: `https://models.test/run-${Date.now()}-${specCount}/`, files: HF_MODEL_FILES, downloadBytes: 100_000, ...overrides };
}

/** A fetch that serves `files` under any base URL in 4 kB chunks (so progress has several events), counting calls. */
function servingFetch(files: ReadonlyMap<string, Uint8Array>, override?: (name: string) => Response | Error | undefined) {
  const calls: string[] = [];
  const fetch = async (url: string): Promise<Response> => {
    calls.push(url);
    const name = url.slice(url.lastIndexOf('/') + 1);
    const special = override?.(name);
    if (special instanceof Error) throw special;
    if (special) return special;
    const bytes = files.get(name);
    if (!bytes) return new Response('Entry not found', { status: 404, statusText: 'Not Found' });
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(offset, offset + 4096));
        offset += 4096;
      },
    });
    return new Response(body, { headers: { 'content-length': String(bytes.length), 'content-type': 'application/octet-stream' } });
  };
  return { fetch, calls };
}

function storageWith(fetch: ModelStorage['fetch'], extra: Partial<ModelStorage> = {}): ModelStorage {
  return { fetch, caches, estimate: async () => ({ quota: 10e9, usage: 0 }), ...extra };
}

describe('HTTP model source', () => {
  test('progress adds up per file and overall, and a second load comes from the cache with no fetch', async () => {
    const spec = freshSpec();
    const { fetch, calls } = servingFetch(folder);
    const events: ModelDownloadProgress[] = [];
    expect(await isModelCached(spec, storageWith(fetch))).toBe(false);
    const files = await fetchModelFiles(spec, storageWith(fetch), { onProgress: (event) => events.push(event), progressIntervalMs: 0 });
    const totalBytes = [...folder.values()].reduce((sum, bytes) => sum + bytes.length, 0);
    expect([...files.keys()].sort()).toEqual([...folder.keys()].sort());
    for (const [name, bytes] of folder) expect(files.get(name)).toEqual(bytes);
    expect(calls).toHaveLength(folder.size);
    expect(calls[0]).toBe(`${spec.baseUrl}config.json`); // config first: checked before the weights download
    expect(events.length).toBeGreaterThan(folder.size); // the 4 kB chunks of model.safetensors report on the way
    const last = events.at(-1)!;
    expect(last.loaded).toBe(totalBytes);
    expect(last.total).toBe(totalBytes);
    for (const [name, bytes] of folder) {
      const fileEvents = events.filter((event) => event.file === name);
      expect(fileEvents.at(-1)!.fileLoaded, name).toBe(bytes.length);
      expect(fileEvents.at(-1)!.fileTotal, name).toBe(bytes.length);
      for (let i = 1; i < fileEvents.length; i++) expect(fileEvents[i]!.fileLoaded).toBeGreaterThanOrEqual(fileEvents[i - 1]!.fileLoaded);
    }
    for (const event of events) expect(event.loaded).toBeLessThanOrEqual(event.total);

    expect(await isModelCached(spec, storageWith(fetch))).toBe(true);
    const offline = servingFetch(folder, () => new TypeError('Failed to fetch'));
    const cachedEvents: ModelDownloadProgress[] = [];
    const again = await fetchModelFiles(spec, storageWith(offline.fetch), { onProgress: (event) => cachedEvents.push(event) });
    expect(offline.calls).toEqual([]);
    for (const [name, bytes] of folder) expect(again.get(name)).toEqual(bytes);
    expect(cachedEvents.every((event) => event.fromCache)).toBe(true);
    expect(cachedEvents.at(-1)!.loaded).toBe(totalBytes);

    expect(await deleteCachedModel(spec, storageWith(fetch))).toBe(true);
    expect(await isModelCached(spec, storageWith(fetch))).toBe(false);
  });

  test('a missing file (404) names the file and its URL; a missing optional file is fine', async () => {
    const spec = freshSpec();
    const { fetch } = servingFetch(new Map([...folder].filter(([name]) => name !== 'tokenizer.json')));
    await expect(fetchModelFiles(spec, storageWith(fetch))).rejects.toThrow(`tokenizer.json was not found at ${spec.baseUrl}tokenizer.json (HTTP 404)`);
    const optional = freshSpec();
    const withoutGeneration = servingFetch(new Map([...folder].filter(([name]) => name !== 'generation_config.json')));
    const files = await fetchModelFiles(optional, storageWith(withoutGeneration.fetch));
    expect(files.has('generation_config.json')).toBe(false);
    expect(await isModelCached(optional, storageWith(withoutGeneration.fetch))).toBe(true);
    await deleteCachedModel(optional, storageWith(withoutGeneration.fetch));
  });

  test('a rejected fetch says it is likely CORS or offline and what to do', async () => {
    const { fetch } = servingFetch(folder, () => new TypeError('Failed to fetch'));
    const error = await fetchModelFiles(freshSpec(), storageWith(fetch)).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/config\.json/);
    expect((error as Error).message).toMatch(/likely CORS or being offline/);
    expect((error as Error).message).toMatch(/Local folder/);
  });

  test('too little free storage is refused before downloading, with the size needed and the space free', async () => {
    const { fetch, calls } = servingFetch(folder);
    const spec = freshSpec({ downloadBytes: 270e6 });
    await expect(fetchModelFiles(spec, storageWith(fetch, { estimate: async () => ({ quota: 100e6, usage: 88e6 }) }))).rejects.toThrow(
      'Tiny-HF needs about 270 MB of browser storage, but only 12 MB is free for this site',
    );
    expect(calls).toEqual([]);
  });

  test('a cache.put that throws QuotaExceededError becomes the same kind of message', async () => {
    const { fetch } = servingFetch(folder);
    const fullCaches = {
      open: async (name: string) => {
        const cache = await caches.open(name);
        return new Proxy(cache, {
          get(target, property) {
            if (property === 'put') return async () => { throw new DOMException('the quota has been exceeded', 'QuotaExceededError'); };
            const value = Reflect.get(target, property) as unknown;
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        });
      },
    } as unknown as CacheStorage;
    const spec = freshSpec({ downloadBytes: 5e6 });
    await expect(fetchModelFiles(spec, storageWith(fetch, { caches: fullCaches, estimate: async () => ({ quota: 1e9, usage: 999e6 + 500e3 }) }))).rejects.toThrow(
      /Tiny-HF needs about 5 MB of browser storage, but only 500 kB is free for this site/,
    );
  });

  test('an unsupported architecture fails on config.json, before the weights download', async () => {
    const config = JSON.parse(new TextDecoder().decode(folder.get('config.json')!)) as Record<string, unknown>;
    const other = new Map(folder);
    other.set('config.json', new TextEncoder().encode(JSON.stringify({ ...config, architectures: ['GPT2LMHeadModel'] })));
    const { fetch, calls } = servingFetch(other);
    await expect(fetchModelFiles(freshSpec(), storageWith(fetch))).rejects.toThrow(/unsupported architecture "GPT2LMHeadModel"/);
    expect(calls.filter((url) => url.endsWith('model.safetensors'))).toEqual([]);
  });

  test('Cache Storage holds the files under the model cache name', async () => {
    const spec = freshSpec();
    const { fetch } = servingFetch(folder);
    await fetchModelFiles(spec, storageWith(fetch));
    const cache = await caches.open(MODEL_CACHE_NAME);
    expect((await cache.match(`${spec.baseUrl}model.safetensors`))?.headers.get('content-length')).toBe(String(folder.get('model.safetensors')!.length));
    await deleteCachedModel(spec, storageWith(fetch));
    expect(await cache.match(`${spec.baseUrl}model.safetensors`)).toBeUndefined();
  });
});

describe('local files source', () => {
  const asFiles = (names: string[], files = folder) => names.map((name) => new File([files.get(name) as Uint8Array<ArrayBuffer>], name));

  test('reads picked File objects by base name (the shallowest of two)', async () => {
    const picked = asFiles([...folder.keys()]);
    const nested = new File(['{}'], 'config.json');
    Object.defineProperty(nested, 'webkitRelativePath', { value: 'model/old/config.json' });
    const read = localModelReader([nested, ...picked]);
    expect(await read('config.json')).toEqual(folder.get('config.json'));
    const model = await loadModelFolder(read, 'picked');
    expect(model.config).toEqual(TINY_HF_CONFIG);
  });

  test('lists what is missing', () => {
    expect(missingLocalFiles(asFiles(['config.json', 'tokenizer.json']))).toEqual(['tokenizer_config.json', 'model.safetensors']);
    expect(() => localModelReader(asFiles(['config.json']))).toThrow(/lack tokenizer\.json, tokenizer_config\.json, model\.safetensors \(given: config\.json\)/);
  });
});

describe('a loaded model', () => {
  test('fetched files load into the same logits on WebGPU as on the CPU reference', async () => {
    const spec = freshSpec();
    const { fetch } = servingFetch(folder);
    const files = await fetchModelFiles(spec, storageWith(fetch));
    const read = readFromFiles(files, spec.name);
    const tokenizer = await loadHfTokenizer(read, spec.name);
    expect(tokenizer.eosIds).toEqual([260]);
    const text = tokenizer.renderChat([{ role: 'user', content: 'the heat' }], { addGenerationPrompt: true });
    expect(text).toContain('<|im_start|>assistant\n');
    const ids = tokenizer.encode(text);
    expect(ids).toContain(256); // "he"
    expect(ids).toContain(259); // <|im_start|>
    expect(tokenizer.decode(ids)).toBe(text);

    // The engine's own path: picked files → createRealModel (LoRA rank 16, B = 0, so the base's logits).
    const picked = [...files].map(([name, bytes]) => new File([bytes as Uint8Array<ArrayBuffer>], name));
    const real = await createRealModel(context, { kind: 'local', files: picked }, 3, () => {}, new AbortController().signal);
    try {
      expect(real.backend.lora).toEqual(REAL_MODEL_LORA);
      expect(real.trainableParameters).toBe(loraLayout(TINY_HF_CONFIG, REAL_MODEL_LORA).totalSize);
      const cpu = await createCpuBackend(TINY_HF_CONFIG, { tensors: (await loadModelFolder(read, spec.name)).tensors });
      const T = Math.min(ids.length, 48);
      const batch = Int32Array.from(ids.slice(0, T));
      expectClose(await real.backend.forward(batch, 1, T), await cpu.forward(batch, 1, T), { atol: 2e-4, rtol: 2e-3, label: 'logits' });
      const trainable = await trainableParameters(real.backend);
      expect([...trainable.keys()].every((name) => name.includes('lora_'))).toBe(true);
      expect([...trainable.values()].reduce((sum, tensor) => sum + tensor.data.length, 0)).toBe(real.trainableParameters);
      const reply = await real.client.chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'the heat' }], max_tokens: 4, temperature: 0 });
      expect(typeof reply.choices[0]!.message.content).toBe('string');
      cpu.dispose();
    } finally {
      await real.client.forget();
      real.backend.dispose();
      await deleteCachedModel(spec, storageWith(fetch));
    }
  });

  test('SFT trains only the adapters; a checkpoint holds just them and restores exactly; a reset gives the base back', async () => {
    const picked = [...folder].map(([name, bytes]) => new File([bytes as Uint8Array<ArrayBuffer>], name));
    const signal = new AbortController().signal;
    const real = await createRealModel(context, { kind: 'local', files: picked }, 1, () => {}, signal);
    const copy = await createRealModel(context, { kind: 'local', files: picked }, 2, () => {}, signal);
    try {
      const ids = Int32Array.from(real.tokenizer.encode(real.tokenizer.renderChat([{ role: 'user', content: 'the heat' }, { role: 'assistant', content: 'ok' }])).slice(0, 40));
      const base = await real.backend.forward(ids, 1, ids.length);
      const transcripts = [[{ role: 'user' as const, content: 'the heat' }, { role: 'assistant' as const, content: 'hot' }]];
      const sequences = transcripts.map((messages) => tokenizeTranscript(real.tokenizer, messages));
      await runSft(real.backend, sequences, { steps: 3, batchSize: 1, schedule: { lr: 1e-2 }, seed: 0, padId: real.tokenizer.padId, startStep: 0 });
      const trained = await real.backend.forward(ids, 1, ids.length);
      expect(Math.max(...trained.map((value, i) => Math.abs(value - base[i]!)))).toBeGreaterThan(1e-3);

      const files = serializeCheckpoint({ state: { format: CHECKPOINT_FORMAT, phase: 'sft', nextStep: 3, run: {} }, weights: await trainableParameters(real.backend), optimizer: await real.backend.getOptimizerState() });
      const checkpoint = await parseCheckpoint(async (name) => files.get(name)!, 'checkpoint');
      expect([...checkpoint.weights.keys()].every((name) => name.includes('lora_'))).toBe(true);
      expect(files.get('weights.safetensors')!.length).toBeLessThan(8 * real.trainableParameters + 100_000); // the adapters, not the base
      await copy.backend.setParameters(checkpoint.weights);
      await copy.backend.setOptimizerState(checkpoint.optimizer);
      expect((await copy.backend.getOptimizerState()).step).toBe(3);
      expectClose(await copy.backend.forward(ids, 1, ids.length), trained, { atol: 1e-5, rtol: 1e-5, label: 'restored logits' });

      const lora = initialLoraTensors(real.backend.config, real.backend.lora!, 5);
      await real.backend.setParameters(lora);
      await real.backend.setOptimizerState(freshOptimizerState(lora));
      expectClose(await real.backend.forward(ids, 1, ids.length), base, { atol: 1e-5, rtol: 1e-5, label: 'logits after reset' });
      expect((await real.backend.getOptimizerState()).step).toBe(0);
    } finally {
      for (const model of [real, copy]) {
        await model.client.forget();
        model.backend.dispose();
      }
    }
  });
});
