/**
 * Every model the app ships (SHIPPED_MODELS: nano, nano-wordle, nano-tools, nano-2m) is a first-class in-tab choice, over a
 * faked engine bridge and environment storage (no worker, no GPU): the saved choice (localStorage)
 * keeps it across a reload, a share link carries it and restores it when accepted, a lesson whose
 * preset names it loads it when the lesson starts, and the engine is asked for the app's own folder
 * of that model. Unknown ids are refused everywhere.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { usePlayground } from '../../../src/ui/store/index.ts';
import type { EngineInfo, EngineModelSpec } from '../../../src/workers/engine-bridge.ts';
import { SHIPPED_MODELS } from '../../../src/models/shipped-models.ts';
import { decodeShareHash, encodeShareHash, type SharedState } from '../../../src/ui/features/share/url-state.ts';
import type { Lesson } from '../../../src/ui/features/lessons/lessons.ts';

const store = usePlayground;
const initialState = store.getState();
const saved = new Map<string, string>();
const loads: EngineModelSpec[] = [];
const added: { name: string; source: string }[] = [];
const info = (model: string, seed = 0): EngineInfo => ({ adapter: 'test', model, parameters: 1, seed });

vi.mock('../../../src/workers/engine-bridge.ts', () => ({
  onEngineError: () => {},
  startEngine: async (seed: number) => info('tiny', seed),
  loadEngineModel: async (spec: EngineModelSpec) => {
    loads.push(spec);
    return info(spec.kind === 'shipped' || spec.kind === 'preset' ? spec.id : spec.kind, spec.seed);
  },
}));
vi.mock('../../../src/models/cache.ts', () => ({
  browserModelStorage: () => ({}),
  isModelCached: async () => false,
  deleteCachedModel: async () => true,
  presetDownloadSpec: (preset: { name: string }) => ({ name: preset.name }),
}));
vi.mock('../../../src/ui/features/environment/environment-storage.ts', () => ({ putEnvironment: async () => {} }));
vi.mock('../../../src/ui/features/environment/environment-actions.ts', () => ({
  openEnvironment: (id: string) => usePlayground.getState().setCurrentId(id),
  addEnvironment: async (fields: { name: string; source: string }) => {
    added.push(fields);
    return 'env-added';
  },
}));
// Monaco and the sandbox frame need a DOM: the source is what the file holds.
vi.mock('../../../src/ui/features/environment/monaco-setup.ts', () => ({ compileModel: async () => ({ ok: false, problems: [] }) }));
vi.mock('../../../src/ui/features/environment/editor-models.ts', () => ({ environmentModel: (_id: string, source: string) => ({ getValue: () => source }), disposeEnvironmentModel: () => {} }));
vi.mock('../../../src/ui/features/jobs/sandbox-frame.ts', () => ({ createIframeSandbox: async () => ({}) }));
vi.mock('../../../src/workers/sandbox-bridge.ts', () => ({ SandboxStoppedError: class extends Error {}, openSandbox: async () => { throw new Error('no sandbox here'); } }));
vi.stubGlobal('localStorage', { getItem: (key: string) => saved.get(key) ?? null, setItem: (key: string, value: string) => saved.set(key, value), removeItem: (key: string) => saved.delete(key) });
vi.stubGlobal('location', { pathname: '/', search: '', hash: '', origin: 'http://127.0.0.1' });
vi.stubGlobal('history', { replaceState: () => {} });

const models = await import('../../../src/ui/features/models/model-actions.ts');
const share = await import('../../../src/ui/features/share/share-actions.ts');
const lessons = await import('../../../src/ui/features/lessons/lesson-actions.ts');

const SHIPPED_IDS = SHIPPED_MODELS.map((model) => model.id);

/** A share link's state with the in-tab model `inTabModel`, as a link from another tab carries it. */
function linkState(inTabModel: string): SharedState {
  return {
    source: 'export default function loadEnvironment() { return 1; }\n',
    name: 'shared env',
    args: {},
    policy: 'in-tab',
    model: 'default',
    baseURL: 'http://localhost:8000/v1',
    evaluation: { numTasks: 4, rolloutsPerTask: 1, concurrency: 1, maxTokens: 8, temperature: 0, seed: 3, timeLimitMs: 5000 },
    inTabModel,
  };
}

/** A made-up lesson whose preset trains `inTabModel` in the tab (the real lessons are left alone). */
function lessonWith(inTabModel: string): Lesson {
  return {
    id: 99,
    title: 'A lesson on a shipped model',
    goal: 'Train the model the preset names.',
    steps: ['Press **Start lesson**.'],
    preset: {
      fileName: `Lesson 99 · reverse-text (${inTabModel})`,
      environment: { kind: 'builtin', builtin: 'reverse-text' },
      args: { compact: true },
      policy: 'in-tab',
      inTabModel,
      mode: 'evaluate',
      evaluation: { numTasks: 2 },
      training: {},
    },
  };
}

beforeEach(() => {
  saved.clear();
  loads.length = 0;
  added.length = 0;
  store.setState(initialState, true);
  store.getState().setInTabModel('tiny');
  store.getState().setEngine({ status: 'ready', info: info('tiny'), error: null });
});

describe.each(SHIPPED_IDS)('the shipped model %s in the tab', (id) => {
  test('is an in-tab model id; loading it asks the engine for the app\'s own folder of it', async () => {
    expect(models.isInTabModelId(id)).toBe(true);
    models.chooseInTabModel(id);
    expect(await models.loadChosenModel()).toBe(true);
    expect(loads).toEqual([{ kind: 'shipped', id, url: `/models/${id}/`, seed: store.getState().settings.seed }]);
    expect(store.getState().engine.info?.model).toBe(id);
    expect(await models.loadChosenModel()).toBe(false); // loaded already
  });

  test('the saved choice keeps it across a reload', () => {
    models.chooseInTabModel(id);
    expect(saved.get('tabrl.inTabModel')).toBe(id);
    store.getState().setInTabModel('tiny'); // a fresh page
    models.restoreInTabModel();
    expect(store.getState().inTabModel).toBe(id);
  });

  test('a share link carries it ("itm") and accepting the link chooses it', async () => {
    const hash = encodeShareHash(linkState(id));
    expect(hash).toMatch(new RegExp(`(^|&)itm=${id}(&|$)`));
    share.openHash(`#${hash}`);
    expect(store.getState().review?.inTabModel).toBe(id);
    await share.acceptReview();
    expect(store.getState().inTabModel).toBe(id);
    expect(saved.get('tabrl.inTabModel')).toBe(id);
    expect(added.map((environment) => environment.name)).toEqual(['shared env (shared)']);
    // and the setup made here carries it again
    expect(decodeShareHash(encodeShareHash(share.currentSetup({ source: 'x', name: 'mine' }))).inTabModel).toBe(id);
  });

  test('a lesson whose preset names it chooses it and the engine loads it when the lesson starts', async () => {
    const note = await lessons.startLesson(lessonWith(id));
    expect(note).toContain(`in-tab model (${id})`);
    expect(store.getState().inTabModel).toBe(id);
    expect(store.getState().policy).toBe('in-tab');
    await vi.waitFor(() => expect(store.getState().engine.info?.model).toBe(id));
    expect(loads).toEqual([{ kind: 'shipped', id, url: `/models/${id}/`, seed: store.getState().settings.seed }]);
  });
});

describe('ids that are not shipped', () => {
  test('are not restored from storage or a link, and loading one by name says what to choose', async () => {
    for (const id of ['nano-3m', 'models/nano-2m', 'NANO-2M']) {
      expect(models.isInTabModelId(id)).toBe(false);
      saved.set('tabrl.inTabModel', id);
      models.restoreInTabModel();
      expect(store.getState().inTabModel).toBe('tiny');
    }
    share.openHash(`#${encodeShareHash(linkState('nano-3m'))}`);
    await share.acceptReview();
    expect(store.getState().inTabModel).toBe('tiny');
    store.getState().setInTabModel('nano-3m');
    await expect(models.loadChosenModel()).rejects.toThrow(new RegExp(`Unknown in-tab model "nano-3m"; choose tiny, ${SHIPPED_IDS.join(', ')} or one of smollm2-135m-instruct`));
    expect(loads).toEqual([]);
  });
});
