/** The remembered setup: saved on every change of what it holds, read back checked (unknown keys, wrong types and damaged entries are left out). */
import { describe, expect, test } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { readStoredSetup, rememberSetup } from '../../../src/ui/app/setup-storage.ts';
import type { PlaygroundState } from '../../../src/ui/store/index.ts';
import { createEvaluationSlice } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { createPolicySlice } from '../../../src/ui/features/policy/policy-slice.ts';
import { createTrainingSlice } from '../../../src/ui/features/training/training-slice.ts';

function memoryStorage(): Storage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return { items, getItem: (key: string) => items.get(key) ?? null, setItem: (key: string, value: string) => void items.set(key, value) } as Storage & { items: Map<string, string> };
}

const newStore = () => createStore<PlaygroundState>()(((...args: Parameters<typeof createPolicySlice>) => ({ ...createPolicySlice(...args), ...createEvaluationSlice(...args), ...createTrainingSlice(...args) })) as never);

describe('setup storage', () => {
  test('a lesson-like setup is saved as it changes and comes back after a "reload"', () => {
    const storage = memoryStorage();
    const store = newStore();
    const stop = rememberSetup(store, storage);
    store.getState().setSettings({ numTasks: 32, temperature: 0, argsJson: '{"compact":true}' });
    store.getState().setTrainingSettings({ grpoSteps: 60, klBeta: 0.05 });
    store.getState().setMode('warmup');
    store.getState().setPolicy('in-tab');
    stop();
    const read = readStoredSetup(storage);
    expect(read.settings).toMatchObject({ numTasks: 32, temperature: 0, argsJson: '{"compact":true}' });
    expect(read.trainingSettings).toMatchObject({ grpoSteps: 60, klBeta: 0.05 });
    expect(read).toMatchObject({ mode: 'warmup', policy: 'in-tab' });
  });

  test("each file's arguments are remembered by its id, and damaged entries are left out", () => {
    const storage = memoryStorage();
    const store = newStore();
    const stop = rememberSetup(store, storage);
    store.getState().setArgsByEnvironment({ 'env-wordle': '{"compact":true}', 'env-reverse': '{}' });
    stop();
    expect(readStoredSetup(storage).argsByEnvironment).toEqual({ 'env-wordle': '{"compact":true}', 'env-reverse': '{}' });
    storage.items.set('tabrl.setup', JSON.stringify({ argsByEnvironment: { a: '{}', b: 3, c: null } }));
    expect(readStoredSetup(storage).argsByEnvironment).toEqual({ a: '{}' });
  });

  test('a damaged or foreign entry changes only what it gets right', () => {
    const storage = memoryStorage();
    expect(readStoredSetup(storage)).toEqual({ settings: {}, argsByEnvironment: {}, trainingSettings: {} });
    storage.items.set('tabrl.setup', '{not json');
    expect(readStoredSetup(storage)).toEqual({ settings: {}, argsByEnvironment: {}, trainingSettings: {} });
    storage.items.set('tabrl.setup', JSON.stringify({ settings: { numTasks: '12', seed: 7, bogus: 1 }, trainingSettings: { grpoSteps: null, tasksPerStep: 3 }, mode: 'fly', policy: 'expert' }));
    expect(readStoredSetup(storage)).toEqual({ settings: { seed: 7 }, argsByEnvironment: {}, trainingSettings: { tasksPerStep: 3 }, policy: 'expert' });
  });
});
