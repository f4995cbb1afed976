/**
 * The playground's WebLLM actions over a faked loader: progress and the loaded model reach the
 * store, a failed load shows its error and throws it, callers of one load share it, a second model
 * waits for the first load and replaces it, and a device loss frees the model so the next use loads
 * it again. WebLLM itself never runs here.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { ChatClientError } from '../../../src/envs/index.ts';
import { createPolicySlice, type PolicySlice } from '../../../src/ui/features/policy/policy-slice.ts';
import type { LoadedWebLLM, WebLLMClient, WebLLMLoadProgress } from '../../../src/workers/webllm-client.ts';

interface PendingLoad {
  modelId: string;
  onProgress: (report: WebLLMLoadProgress) => void;
  onDeviceLost?: (error: ChatClientError) => void;
  resolve: () => void;
  reject: (error: unknown) => void;
  unloaded: boolean;
}

const loads: PendingLoad[] = [];
const store = createStore<PolicySlice>()(createPolicySlice as never);

vi.mock('../../../src/ui/store/index.ts', () => ({ usePlayground: store }));
vi.mock('../../../src/workers/webllm-client.ts', () => ({
  loadWebLLM: (modelId: string, onProgress: (report: WebLLMLoadProgress) => void, onDeviceLost?: (error: ChatClientError) => void) =>
    new Promise<LoadedWebLLM>((resolve, reject) => {
      const load: PendingLoad = {
        modelId, onProgress, ...(onDeviceLost ? { onDeviceLost } : {}), reject, unloaded: false,
        resolve: () => resolve({ modelId, client: { modelId } as unknown as WebLLMClient, unload: async () => { load.unloaded = true; } }),
      };
      loads.push(load);
    }),
  listPrebuiltWebLLMModels: async () => [],
  isWebLLMModelCached: async () => false,
  deleteCachedWebLLMModel: async () => {},
}));
vi.stubGlobal('localStorage', { getItem: () => null, setItem: () => {} });

const actions = await import('../../../src/ui/features/models/webllm-actions.ts');
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(async () => {
  await actions.unloadWebLLM();
  loads.length = 0;
  store.getState().setWebLLMModel('A-MLC');
});

describe('WebLLM actions', () => {
  test('a load reports progress, then the loaded model; callers meanwhile share the one load', async () => {
    const first = actions.webllmClient();
    const second = actions.webllmClient();
    await settle();
    expect(loads).toHaveLength(1);
    expect(store.getState().webllm.status).toBe('loading');
    loads[0]!.onProgress({ progress: 0.25, text: 'Fetching param cache[3/12]' });
    expect(store.getState().webllm).toMatchObject({ status: 'loading', progress: 0.25, text: 'Fetching param cache[3/12]' });
    loads[0]!.resolve();
    expect(await first).toBe(await second);
    expect(store.getState().webllm).toMatchObject({ status: 'ready', progress: 1, loadedModel: 'A-MLC', error: null });
    // Loaded: no new load.
    await actions.webllmClient();
    expect(loads).toHaveLength(1);
  });

  test('a failed load shows its message and throws it; Load swallows it, and the next use tries again', async () => {
    const call = actions.webllmClient();
    await settle();
    loads[0]!.reject(new ChatClientError('WebLLM could not download "A-MLC"', 'network'));
    await expect(call).rejects.toThrow('WebLLM could not download "A-MLC"');
    expect(store.getState().webllm).toMatchObject({ status: 'failed', error: 'WebLLM could not download "A-MLC"', loadedModel: null });
    const retry = actions.loadWebLLMModel();
    await settle();
    expect(loads).toHaveLength(2);
    loads[1]!.reject(new Error('still offline'));
    await retry;
    expect(store.getState().webllm.error).toBe('still offline');
  });

  test('picking another model while one loads: the second load waits, then the first model is unloaded', async () => {
    const first = actions.webllmClient();
    await settle();
    actions.chooseWebLLMModel('B-MLC');
    const second = actions.webllmClient();
    await settle();
    expect(loads.map((load) => load.modelId)).toEqual(['A-MLC']);
    loads[0]!.resolve();
    await first;
    await settle();
    expect(loads.map((load) => load.modelId)).toEqual(['A-MLC', 'B-MLC']);
    expect(loads[0]!.unloaded).toBe(true);
    loads[1]!.resolve();
    await second;
    expect(store.getState().webllm).toMatchObject({ status: 'ready', loadedModel: 'B-MLC' });
  });

  test('a device loss frees the model and says why; the next use loads it again', async () => {
    const call = actions.webllmClient();
    await settle();
    loads[0]!.resolve();
    await call;
    loads[0]!.onDeviceLost!(new ChatClientError('The GPU ran out of memory or was lost', 'server'));
    await settle();
    expect(loads[0]!.unloaded).toBe(true);
    expect(store.getState().webllm).toMatchObject({ status: 'failed', error: 'The GPU ran out of memory or was lost', loadedModel: null });
    void actions.webllmClient();
    await settle();
    expect(loads).toHaveLength(2);
  });
});
