// The store types reach the editor module, which imports a Vite-generated module; its declarations are not in the Node program.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="../../../src/ui/virtual-modules.d.ts" />
/** The playground store's slices: narrow updates leave the rest alone, and the training slice accumulates a run. */
import { beforeEach, describe, expect, test } from 'vitest';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { createPlaygroundState, type PlaygroundState } from '../../../src/ui/store/index.ts';
import { DEFAULT_SETTINGS, IDLE_RUN } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { DEFAULT_TRAINING_SETTINGS, IDLE_JOB, unfinishedJob, type TrainingRun } from '../../../src/ui/features/training/training-slice.ts';
import type { SavedEnvironment } from '../../../src/ui/features/environment/environment-storage.ts';
import type { EngineGrpoOptions, GrpoStepMetrics } from '../../../src/workers/engine-bridge.ts';

let store: StoreApi<PlaygroundState>;

beforeEach(() => {
  // A fresh store per test, from the same slices as the app's (src/ui/store/index.ts).
  store = createStore<PlaygroundState>()(createPlaygroundState);
});

const environment = (id: string, name = id): SavedEnvironment => ({ id, name, source: `// ${name}` }) as SavedEnvironment;

function run(overrides: Partial<TrainingRun> = {}): TrainingRun {
  return { id: 'run-1', environment: 'reverse-text', args: {}, settings: DEFAULT_TRAINING_SETTINGS, seed: 0, createdAt: 1, updatedAt: 1, sft: [], grpo: [], evaluations: [], checkpointStep: null, ...overrides };
}

const grpoStep = (step: number, reward: number) => ({ step, reward: { mean: reward, std: 0 } }) as GrpoStepMetrics;

describe('editor slice', () => {
  test('upsert puts an environment first and replaces one with the same id', () => {
    const state = () => store.getState();
    state().setEnvironments([environment('a'), environment('b')]);
    state().upsertEnvironment(environment('c'));
    expect(state().environments.map((item) => item.id)).toEqual(['c', 'a', 'b']);
    state().upsertEnvironment(environment('b', 'renamed'));
    expect(state().environments.map((item) => [item.id, item.name])).toEqual([['b', 'renamed'], ['c', 'c'], ['a', 'a']]);
    state().removeEnvironment('c');
    expect(state().environments.map((item) => item.id)).toEqual(['b', 'a']);
  });
});

describe('opening another file', () => {
  test("arguments belong to the file they were set for: another file gets its own ({} when never set), and coming back restores them", () => {
    const state = () => store.getState();
    state().setEnvironments([environment('wordle'), environment('reverse')]);
    state().setCurrentId('wordle');
    state().setSettings({ argsJson: '{"compact":true,"answers":"practice"}', numTasks: 100 });
    state().setCurrentId('reverse');
    expect(state().settings.argsJson).toBe('{}');
    state().setSettings({ argsJson: '{"numTasks":3}' });
    state().setCurrentId('wordle');
    expect(state().settings.argsJson).toBe('{"compact":true,"answers":"practice"}');
    state().setCurrentId('reverse');
    expect(state().settings.argsJson).toBe('{"numTasks":3}');
    expect(state().argsByEnvironment).toEqual({ wordle: '{"compact":true,"answers":"practice"}', reverse: '{"numTasks":3}' });
  });

  test("the last file's finished evaluation and job outcome (with its note) are cleared; work under way is kept", () => {
    const state = () => store.getState();
    state().setCurrentId('a');
    state().updateRun({ status: 'done', total: 4, done: 4, summary: { reward: { mean: 1 } } as never });
    state().selectRecord(2);
    state().updateJob({ status: 'done', phase: 'done', note: 'Continuing the run with its own code (from the file “Lesson 3 · arithmetic”); the open file “Lesson 3 · arithmetic” differs and is not used.' });
    state().setCurrentId('b');
    expect(state().run).toBe(IDLE_RUN);
    expect(state().selectedRecord).toBe(0);
    expect(state().job).toEqual(IDLE_JOB);

    state().updateRun({ status: 'running', total: 4, done: 1 });
    state().updateJob({ status: 'failed', failure: 'x' });
    state().setCurrentId('a');
    expect(state().run).toMatchObject({ status: 'running', done: 1 });
    expect(state().job).toEqual(IDLE_JOB);
    state().updateJob({ status: 'running', note: 'n' });
    state().setCurrentId('b');
    expect(state().job).toMatchObject({ status: 'running', note: 'n' });
  });
});

describe('policy slice', () => {
  test('setEndpoint changes only the fields it is given', () => {
    store.getState().setEndpoint({ model: 'm' });
    expect(store.getState()).toMatchObject({ baseURL: 'http://localhost:8000/v1', model: 'm' });
    store.getState().setEndpoint({ baseURL: 'https://x/v1' });
    expect(store.getState()).toMatchObject({ baseURL: 'https://x/v1', model: 'm' });
  });
});

describe('evaluation slice', () => {
  test('setSettings merges into the settings, without touching the defaults object', () => {
    store.getState().setSettings({ numTasks: 3 });
    store.getState().setSettings({ seed: 7 });
    expect(store.getState().settings).toEqual({ ...DEFAULT_SETTINGS, numTasks: 3, seed: 7 });
    expect(DEFAULT_SETTINGS.numTasks).toBe(10);
  });

  test('updateRun merges an object or the result of a function of the run', () => {
    store.getState().updateRun({ status: 'running', total: 4 });
    store.getState().updateRun((current) => ({ done: current.done + 1 }));
    store.getState().updateRun((current) => ({ done: current.done + 1 }));
    expect(store.getState().run).toEqual({ ...IDLE_RUN, status: 'running', total: 4, done: 2 });
    expect(IDLE_RUN.done).toBe(0);
  });
});

describe('training slice', () => {
  test('updateJob and setTrainingSettings change only the given fields', () => {
    store.getState().updateJob({ status: 'running', mode: 'train', total: 60 });
    store.getState().updateJob({ done: 5 });
    expect(store.getState().job).toEqual({ ...IDLE_JOB, status: 'running', mode: 'train', total: 60, done: 5 });
    store.getState().setTrainingSettings({ grpoSteps: 2 });
    expect(store.getState().trainingSettings).toEqual({ ...DEFAULT_TRAINING_SETTINGS, grpoSteps: 2 });
    store.getState().setEngine({ status: 'failed', error: 'no WebGPU' });
    expect(store.getState().engine).toEqual({ status: 'failed', info: null, error: 'no WebGPU' });
  });

  test('a run accumulates step metrics through functional updates, as batched reports arrive', () => {
    store.getState().setTrainingRun(run());
    const append = (steps: GrpoStepMetrics[]) => store.getState().setTrainingRun((current) => (current ? { ...current, grpo: [...current.grpo, ...steps] } : current));
    append([grpoStep(0, 0.1), grpoStep(1, 0.2)]);
    append([grpoStep(2, 0.4)]);
    expect(store.getState().trainingRun!.grpo.map((metrics) => [metrics.step, metrics.reward.mean])).toEqual([[0, 0.1], [1, 0.2], [2, 0.4]]);
    // A report that arrives after the run was closed does not bring it back.
    store.getState().setTrainingRun(null);
    append([grpoStep(3, 0.5)]);
    expect(store.getState().trainingRun).toBeNull();
  });

  test('an unfinished job is the one a later Warm up / Train continues', () => {
    const options = { steps: 200, tasksPerStep: 2, groupSize: 4, schedule: { lr: 1e-3 }, maxTokens: 8, maxAsync: 1, temperature: 1, seed: 2 };
    expect(unfinishedJob(null)).toBeNull();
    expect(unfinishedJob(run())).toBeNull();
    expect(unfinishedJob(run({ lastJob: { phase: 'grpo', offset: 2, nextStep: 200, options } }))).toBeNull();
    expect(unfinishedJob(run({ lastJob: { phase: 'grpo', offset: 2, nextStep: 7, options } }))).toMatchObject({ phase: 'grpo', nextStep: 7 });
  });

  test('a GRPO job stored with its rate as `lr` continues with it as the trainer\'s schedule.lr', () => {
    const { schedule: _schedule, ...rest } = { steps: 200, tasksPerStep: 2, groupSize: 4, schedule: { lr: 1e-3 }, maxTokens: 8, maxAsync: 1, temperature: 1, seed: 2 };
    const stored = { ...rest, lr: 3e-3 } as unknown as EngineGrpoOptions;
    const job = unfinishedJob(run({ lastJob: { phase: 'grpo', offset: 2, nextStep: 7, options: stored } }));
    expect(job?.options).toEqual({ ...rest, schedule: { lr: 3e-3 } });
  });
});

describe('the judge, studio and lesson slices', () => {
  test("live in the one store beside the policy: the judge's endpoint and key flag leave the policy's alone, and the other way round", () => {
    store.getState().setJudgeEndpoint({ baseURL: 'http://judge.test/v1', model: 'judge-m' });
    store.getState().setJudgeHasApiKey(true);
    store.getState().setJudgeKind('endpoint');
    expect(store.getState()).toMatchObject({ baseURL: 'http://localhost:8000/v1', hasApiKey: false });
    store.getState().setEndpoint({ baseURL: 'http://policy.test/v1' });
    expect(store.getState().judge).toEqual({ kind: 'endpoint', baseURL: 'http://judge.test/v1', model: 'judge-m', hasApiKey: true });
    expect(store.getState().baseURL).toBe('http://policy.test/v1');
  });

  test('a studio update merges into the studio (a function sees the studio state) and a lesson view update into the lesson view', () => {
    const before = store.getState().studio;
    store.getState().setStudio({ k: 5 });
    store.getState().setStudio((studio) => ({ documents: [...studio.documents, { name: 'a.txt', text: 'A' }] }));
    expect(store.getState().studio).toEqual({ ...before, k: 5, documents: [{ name: 'a.txt', text: 'A' }] });
    store.getState().setLessonView({ openLessonId: 3 });
    expect(store.getState().lessonView).toMatchObject({ openLessonId: 3, note: null, linkError: null });
    expect(store.getState().run).toBe(IDLE_RUN);
  });
});
