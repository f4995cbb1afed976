/**
 * The playground's WebLLM actions: pick a prebuilt model, load it (progress into the store), check
 * and clear its cache, probe the GPU for guidance, and hand out the loaded model's client to the
 * evaluation and the warm-up teacher. One model is loaded at a time; WebLLM itself is imported only
 * when one of these runs (see src/workers/webllm-client.ts).
 */
import {
  deleteCachedWebLLMModel,
  isWebLLMModelCached,
  listPrebuiltWebLLMModels,
  loadWebLLM,
  type GpuFacts,
  type LoadedWebLLM,
  type WebLLMClient,
  type WebLLMModelInfo,
} from '../../../workers/webllm-client.ts';
import { usePlayground } from '../../store/index.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';

const store = usePlayground;
const WEBLLM_STORAGE = 'tabrl.webllm';

/** The WebLLM model of this page (see action-state.ts). */
const webllm = actionState(() => ({
  /** The loaded model, or null. */
  loaded: null as LoadedWebLLM | null,
  /** The load in progress, shared by everyone who asks for the same model meanwhile. */
  loading: null as { modelId: string; promise: Promise<WebLLMClient> } | null,
  /** The prebuilt list, filtered once. */
  models: null as Promise<WebLLMModelInfo[]> | null,
}));

/** Restores the last picked WebLLM model from localStorage. */
export function restoreWebLLMModel(): void {
  const saved = localStorage.getItem(WEBLLM_STORAGE);
  if (saved) store.getState().setWebLLMModel(saved);
}

/** Picks the WebLLM model (remembered in localStorage); a different model than the loaded one is loaded on next use. */
export function chooseWebLLMModel(modelId: string): void {
  store.getState().setWebLLMModel(modelId);
  localStorage.setItem(WEBLLM_STORAGE, modelId);
  const { webllm } = store.getState();
  if (webllm.status === 'failed' || (webllm.status === 'ready' && webllm.loadedModel !== modelId)) {
    store.getState().setWebLLM({ status: 'idle', progress: 0, text: '', error: null });
  }
}

/** The prebuilt models that suit a browser tab (WebLLM's list, filtered once). */
export function webllmModels(): Promise<WebLLMModelInfo[]> {
  webllm.models ??= listPrebuiltWebLLMModels().catch((error: unknown) => {
    webllm.models = null;
    throw error;
  });
  return webllm.models;
}

/** What the page knows of its GPU: WebGPU, an adapter, its features, and the device's memory. */
export async function probeGpu(): Promise<GpuFacts> {
  const deviceMemory = (navigator as Navigator & { deviceMemory?: number }).deviceMemory;
  const memory = typeof deviceMemory === 'number' ? { deviceMemoryGB: deviceMemory } : {};
  if (!('gpu' in navigator) || !navigator.gpu) return { hasWebGPU: false, hasAdapter: false, features: [], ...memory };
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await navigator.gpu.requestAdapter();
  } catch {
    adapter = null;
  }
  return { hasWebGPU: true, hasAdapter: adapter !== null, features: adapter ? [...adapter.features] : [], ...memory };
}

/** Whether the model's weights are in the browser cache (false when the cache cannot be read). */
export async function webllmModelCached(modelId: string): Promise<boolean> {
  try {
    return await isWebLLMModelCached(modelId);
  } catch {
    return false;
  }
}

/** Deletes the model from the browser cache, unloading it first if it is loaded. */
export async function deleteWebLLMModel(modelId: string): Promise<void> {
  if (webllm.loaded?.modelId === modelId) await unloadWebLLM();
  await deleteCachedWebLLMModel(modelId);
}

/** Frees the loaded model's worker and GPU memory. */
export async function unloadWebLLM(): Promise<void> {
  const current = webllm.loaded;
  webllm.loaded = null;
  store.getState().setWebLLM({ status: 'idle', progress: 0, text: '', error: null, loadedModel: null });
  await current?.unload().catch(() => {});
}

/**
 * The client of the picked WebLLM model, loading it first when needed (progress and failures go to
 * the store, so the WebLLM fields show them); throws the load's clear error when it fails.
 */
export function webllmClient(): Promise<WebLLMClient> {
  const modelId = store.getState().webllmModel;
  if (webllm.loaded?.modelId === modelId) return Promise.resolve(webllm.loaded.client);
  if (webllm.loading?.modelId === modelId) return webllm.loading.promise;
  // Loads run one after another, so two models are never loading (or loaded) at once.
  const before = webllm.loading?.promise.catch(() => undefined);
  const entry = { modelId, promise: Promise.resolve() as unknown as Promise<WebLLMClient> };
  entry.promise = (async () => {
    // Always yields once, so `loading` below is set before this body can finish.
    await before;
    if (webllm.loaded?.modelId === modelId) return webllm.loaded.client;
    if (webllm.loaded) await unloadWebLLM();
    store.getState().setWebLLM({ status: 'loading', progress: 0, text: `Loading ${modelId}…`, error: null, loadedModel: null });
    try {
      const model = await loadWebLLM(
        modelId,
        (report) => store.getState().setWebLLM({ progress: report.progress, text: report.text }),
        (error) => void forgetLostModel(modelId, error.message),
      );
      webllm.loaded = model;
      store.getState().setWebLLM({ status: 'ready', progress: 1, text: `${modelId} is loaded.`, error: null, loadedModel: modelId });
      return model.client;
    } catch (error) {
      store.getState().setWebLLM({ status: 'failed', error: errorMessage(error), loadedModel: null });
      throw error;
    } finally {
      if (webllm.loading === entry) webllm.loading = null;
    }
  })();
  webllm.loading = entry;
  return entry.promise;
}

/** After a device loss the loaded model is unusable: free it and show why, so the next use loads it again. */
async function forgetLostModel(modelId: string, reason: string): Promise<void> {
  if (webllm.loaded?.modelId !== modelId) return;
  await unloadWebLLM();
  store.getState().setWebLLM({ status: 'failed', error: reason });
}

/** Loads the picked model now (the Load button); failures are shown in the WebLLM fields, not thrown. */
export async function loadWebLLMModel(): Promise<void> {
  await webllmClient().catch(() => {});
}
