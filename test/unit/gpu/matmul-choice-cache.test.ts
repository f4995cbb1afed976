/**
 * The matmul choice cache (src/gpu/webgpu/matmul-choice-cache.ts) with a fake TuningStore and a
 * counted fake trial: nothing here touches a GPU. A "later visit" is a cleared in-process cache over
 * the same store.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { clearMatmulChoiceCache, matmulChoiceVersion, resolveMatmulChoice } from '../../../src/gpu/webgpu/matmul-choice-cache.ts';
import type { MatmulChoice } from '../../../src/gpu/webgpu/matmul-variants.ts';
import { STORE_TIMEOUT_MS } from '../../../src/gpu/webgpu/tuning-cache.ts';
import { brokenStores, GPU, memoryStore, OTHER_GPU, silentStore } from './fake-tuning-stores.ts';

/** What the fake trial picks: not the default of any adapter kind, so a default cannot pass for it. */
const TRIAL_CHOICE: MatmulChoice = { forward: 'tile8x16', inputGrad: 'tile16x16', weightGrad: 'tile4x4', source: 'trial' };

/** A trial that counts its runs and returns `choice`. */
function countedTrial(choice: MatmulChoice = TRIAL_CHOICE): { run: () => Promise<MatmulChoice>; runs: () => number } {
  let runs = 0;
  return {
    run: async () => {
      runs++;
      return choice;
    },
    runs: () => runs,
  };
}

let info: ReturnType<typeof vi.spyOn>;
let warn: ReturnType<typeof vi.spyOn>;
let error: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  clearMatmulChoiceCache();
  info = vi.spyOn(console, 'info').mockImplementation(() => {});
  warn = vi.spyOn(console, 'warn');
  error = vi.spyOn(console, 'error');
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('resolveMatmulChoice', () => {
  test('the first visit runs the trial and stores its choice; a later visit reads it and skips the trial', async () => {
    const store = memoryStore();
    const trial = countedTrial();
    const first = await resolveMatmulChoice(GPU, store, trial.run);
    expect(first).toEqual(TRIAL_CHOICE);
    expect(trial.runs()).toBe(1);
    expect(store.values.size).toBe(1);

    clearMatmulChoiceCache(); // a new worker on a later visit: only the store remembers
    const later = await resolveMatmulChoice(GPU, store, trial.run);
    expect(trial.runs()).toBe(1);
    expect(later).toEqual({ ...TRIAL_CHOICE, source: 'cached' });
    expect(info).not.toHaveBeenCalled();
  });

  test('a later device in the same process skips the trial without a store', async () => {
    const trial = countedTrial();
    await resolveMatmulChoice(GPU, undefined, trial.run);
    expect(await resolveMatmulChoice(GPU, undefined, trial.run)).toEqual({ ...TRIAL_CHOICE, source: 'cached' });
    expect(trial.runs()).toBe(1);
  });

  test('another adapter does not reuse the choice', async () => {
    const store = memoryStore();
    const trial = countedTrial();
    await resolveMatmulChoice(GPU, store, trial.run);
    clearMatmulChoiceCache();
    await resolveMatmulChoice(OTHER_GPU, store, trial.run);
    expect(trial.runs()).toBe(2);
    expect(store.values.size).toBe(2);
  });

  test('a choice stored under another kernel-set version is ignored, tried again and overwritten', async () => {
    const store = memoryStore();
    await resolveMatmulChoice(GPU, store, countedTrial().run);
    const [key, value] = [...store.values][0]!;
    expect(value).toMatchObject({ version: matmulChoiceVersion() });
    store.values.set(key, { ...(value as object), version: 'an older kernel set', forward: 'workgroup' });

    clearMatmulChoiceCache();
    const trial = countedTrial();
    expect(await resolveMatmulChoice(GPU, store, trial.run)).toEqual(TRIAL_CHOICE);
    expect(trial.runs()).toBe(1);
    expect(store.values.get(key)).toEqual({ version: matmulChoiceVersion(), forward: 'tile8x16', inputGrad: 'tile16x16', weightGrad: 'tile4x4' });
  });

  /** A valid entry of the current kernel set, for the corrupt cases to differ from in one way each. */
  const valid = (): Record<string, unknown> => ({ version: matmulChoiceVersion(), forward: 'tile8x16', inputGrad: 'tile16x16', weightGrad: 'tile4x4' });
  test.each<[string, () => unknown]>([
    ['JSON text instead of an object', () => JSON.stringify(valid())],
    ['null', () => null],
    ['a number', () => 42],
    ['an unknown variant', () => ({ ...valid(), forward: 'tile32x32' })],
    ['a missing product', () => ({ ...valid(), weightGrad: undefined })],
    ['no version', () => ({ ...valid(), version: undefined })],
  ])('a corrupt stored value (%s) is ignored and the trial runs', async (_what, corrupt) => {
    const store = memoryStore();
    const key = 'matmul-choice:acme|rdna9|0x1234|Acme R9|';
    store.values.set(key, valid());
    expect(await resolveMatmulChoice(GPU, store, countedTrial().run)).toMatchObject({ source: 'cached' }); // the valid entry is read under this key

    clearMatmulChoiceCache();
    store.values.set(key, corrupt());
    const trial = countedTrial();
    expect(await resolveMatmulChoice(GPU, store, trial.run)).toEqual(TRIAL_CHOICE);
    expect(trial.runs()).toBe(1);
    expect(store.values.get(key)).toEqual(valid());
    expect(info).not.toHaveBeenCalled();
  });

  test('a store whose calls reject or throw falls back to the trial, says so with console.info only, and the process still remembers', async () => {
    for (const broken of brokenStores()) {
      clearMatmulChoiceCache();
      info.mockClear();
      const trial = countedTrial();
      expect(await resolveMatmulChoice(GPU, broken, trial.run)).toEqual(TRIAL_CHOICE);
      expect(trial.runs()).toBe(1);
      expect(info).toHaveBeenCalledTimes(2); // the read and the write
      expect(String(info.mock.calls[0]![0])).toMatch(/timing the kernels instead/);
      expect(await resolveMatmulChoice(GPU, broken, trial.run)).toEqual({ ...TRIAL_CHOICE, source: 'cached' });
      expect(trial.runs()).toBe(1);
    }
    expect(warn).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
  });

  test('a store that never answers delays the trial by at most STORE_TIMEOUT_MS per call', async () => {
    vi.useFakeTimers();
    const silent = silentStore();
    const trial = countedTrial();
    let settled: MatmulChoice | undefined;
    void resolveMatmulChoice(GPU, silent, trial.run).then((choice) => (settled = choice));
    await vi.advanceTimersByTimeAsync(STORE_TIMEOUT_MS - 1);
    expect(trial.runs()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(trial.runs()).toBe(1);
    expect(settled).toBeUndefined(); // waiting on the write now
    await vi.advanceTimersByTimeAsync(STORE_TIMEOUT_MS);
    expect(settled).toEqual(TRIAL_CHOICE);
    expect(info).toHaveBeenCalledTimes(2);
  });

  test('a trial that fails stores nothing and lets the error through (tuneMatmul keeps the default)', async () => {
    const store = memoryStore();
    await expect(resolveMatmulChoice(GPU, store, () => Promise.reject(new Error('device lost')))).rejects.toThrow('device lost');
    expect(store.values.size).toBe(0);
    const trial = countedTrial();
    await resolveMatmulChoice(GPU, store, trial.run);
    expect(trial.runs()).toBe(1);
  });
});

describe('matmulChoiceVersion', () => {
  test('is stable within a process and names the trial procedure and a kernel hash', () => {
    expect(matmulChoiceVersion()).toBe(matmulChoiceVersion());
    expect(matmulChoiceVersion()).toMatch(/^\d+-[0-9a-f]{8}$/);
  });
});
