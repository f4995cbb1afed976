/**
 * The in-tab model actions over a faked engine bridge: the choice is remembered (a local folder is
 * not), a load reports progress and the new model to the store and is shared by concurrent callers,
 * the engine's own model is not reloaded, a failure shows its message with tiny back in the engine,
 * Cancel aborts the download and returns the choice to tiny, and a local choice with no files says
 * to pick them again. No worker or GPU is involved.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import type { PlaygroundState } from '../../../src/ui/store/index.ts';
import { createEvaluationSlice } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { createPolicySlice } from '../../../src/ui/features/policy/policy-slice.ts';
import { createTrainingSlice } from '../../../src/ui/features/training/training-slice.ts';
import type { EngineInfo, EngineLoadProgress, EngineModelSpec } from '../../../src/workers/engine-bridge.ts';

interface PendingLoad {
  spec: EngineModelSpec;
  onProgress?: (progress: EngineLoadProgress) => void;
  signal?: AbortSignal;
  resolve: (info: EngineInfo) => void;
  reject: (error: unknown) => void;
}

const loads: PendingLoad[] = [];
const saved = new Map<string, string>();
const store = createStore<PlaygroundState>()(((...args: Parameters<typeof createPolicySlice>) => ({ ...createPolicySlice(...args), ...createEvaluationSlice(...args), ...createTrainingSlice(...args) })) as never);
const info = (model: string): EngineInfo => ({ adapter: 'test', model, parameters: 1, seed: 0 });

vi.mock('../../../src/ui/store/index.ts', () => ({ usePlayground: store }));
vi.mock('../../../src/workers/engine-bridge.ts', () => ({
  startEngine: async () => info('tiny'),
  loadEngineModel: (spec: EngineModelSpec, hooks: { onProgress?: (progress: EngineLoadProgress) => void; signal?: AbortSignal }) =>
    new Promise<EngineInfo>((resolve, reject) => {
      hooks.signal?.addEventListener('abort', () => reject(new Error('aborted')));
      loads.push({ spec, ...hooks, resolve, reject });
    }),
}));
vi.mock('../../../src/models/cache.ts', () => ({
  browserModelStorage: () => ({}),
  isModelCached: async (spec: { name: string }) => spec.name === 'SmolLM2-135M-Instruct',
  deleteCachedModel: async () => true,
  presetDownloadSpec: (preset: { name: string }) => ({ name: preset.name }),
}));
vi.stubGlobal('localStorage', { getItem: (key: string) => saved.get(key) ?? null, setItem: (key: string, value: string) => saved.set(key, value) });

const actions = await import('../../../src/ui/features/models/model-actions.ts');
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => {
  loads.length = 0;
  saved.clear();
  store.getState().setInTabModel('tiny');
  store.getState().setEngine({ status: 'ready', info: info('tiny'), error: null });
  store.getState().setModelLoad({ status: 'idle', target: null, loaded: 0, total: 0, error: null });
});

describe('in-tab model actions', () => {
  test('the choice is remembered; a local folder or an unknown id is not restored', () => {
    actions.chooseInTabModel('qwen3-0.6b');
    expect(saved.get('tabrl.inTabModel')).toBe('qwen3-0.6b');
    store.getState().setInTabModel('tiny');
    actions.restoreInTabModel();
    expect(store.getState().inTabModel).toBe('qwen3-0.6b');
    for (const value of ['local', 'gpt-2']) {
      store.getState().setInTabModel('tiny');
      saved.set('tabrl.inTabModel', value);
      actions.restoreInTabModel();
      expect(store.getState().inTabModel).toBe('tiny');
    }
  });

  test('a load reports progress and the new model, concurrent callers share it, and the loaded model is not loaded again', async () => {
    actions.chooseInTabModel('smollm2-135m-instruct');
    const first = actions.loadChosenModel();
    const second = actions.loadChosenModel();
    await settle();
    expect(loads).toHaveLength(1);
    expect(loads[0]!.spec).toEqual({ kind: 'preset', id: 'smollm2-135m-instruct', seed: 0 });
    expect(store.getState().modelLoad).toMatchObject({ status: 'loading', target: 'smollm2-135m-instruct' });
    loads[0]!.onProgress?.({ file: 'model.safetensors', fileLoaded: 5, fileTotal: 10, loaded: 7, total: 12, fromCache: false });
    expect(store.getState().modelLoad).toMatchObject({ loaded: 7, total: 12 });
    loads[0]!.resolve(info('smollm2-135m-instruct'));
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    expect(store.getState().engine.info?.model).toBe('smollm2-135m-instruct');
    expect(store.getState().modelLoad.status).toBe('idle');
    expect(await actions.loadChosenModel()).toBe(false);
    expect(loads).toHaveLength(1);
    await settle();
    expect(store.getState().cachedModels).toMatchObject({ 'smollm2-135m-instruct': true, 'qwen3-0.6b': false });
  });

  test('a failed load shows its message, leaves tiny in the engine and selects it in the picker', async () => {
    actions.chooseInTabModel('smollm2-135m-instruct');
    const load = actions.loadChosenModel();
    await settle();
    loads[0]!.reject(new Error('tokenizer.json was not found at https://huggingface.co/… (HTTP 404)'));
    await expect(load).rejects.toThrow(/HTTP 404/);
    expect(store.getState().modelLoad).toMatchObject({ status: 'failed', error: expect.stringMatching(/tokenizer\.json was not found/) });
    expect(store.getState().engine.info?.model).toBe('tiny');
    expect(store.getState().inTabModel).toBe('tiny');
    expect(saved.get('tabrl.inTabModel')).toBe('tiny');
  });

  test('Cancel aborts the download and returns the choice to tiny', async () => {
    actions.chooseInTabModel('smollm2-135m-instruct');
    const load = actions.loadChosenModel();
    await settle();
    actions.cancelModelLoad();
    await expect(load).rejects.toThrow(/cancelled; the in-tab model is tiny/);
    expect(loads[0]!.signal?.aborted).toBe(true);
    expect(store.getState().inTabModel).toBe('tiny');
    expect(saved.get('tabrl.inTabModel')).toBe('tiny');
    expect(store.getState().modelLoad.status).toBe('idle');
  });

  test('picked files load as "local"; a local choice without files says to pick them again', async () => {
    store.getState().setInTabModel('local');
    await expect(actions.loadChosenModel()).rejects.toThrow(/Choose the model folder again/);
    const files = [new File(['{}'], 'config.json')];
    actions.chooseLocalModel(files);
    const load = actions.loadChosenModel();
    await settle();
    expect(loads.at(-1)!.spec).toEqual({ kind: 'local', files, seed: 0 });
    loads.at(-1)!.resolve(info('local'));
    expect(await load).toBe(true);
    actions.chooseLocalModel([new File(['{}'], 'config.json')]); // another folder: loads again though the model stays "local"
    const again = actions.loadChosenModel();
    await settle();
    loads.at(-1)!.resolve(info('local'));
    expect(await again).toBe(true);
  });
});
