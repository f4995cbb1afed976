/**
 * The decode path cache (src/gpu/webgpu/decode-path-cache.ts) with a fake TuningStore and a counted
 * fake trial: nothing here touches a GPU. A "later visit" is a cleared in-process cache over the
 * same store.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { clearDecodePathCache, decodePathKey, decodePathVersion, resolveDecodePath, type DecodePathKey } from '../../../src/gpu/webgpu/decode-path-cache.ts';
import type { DecodePath, PathTrialResult } from '../../../src/gpu/webgpu/decode-path-trial.ts';
import type { AdapterDescription } from '../../../src/gpu/webgpu/device.ts';
import { STORE_TIMEOUT_MS } from '../../../src/gpu/webgpu/tuning-cache.ts';
import { brokenStores, GPU, memoryStore, OTHER_GPU, silentStore } from './fake-tuning-stores.ts';

const KEY: DecodePathKey = { config: TINY_CONFIG, bucket: 8, fusedWorkgroupSize: 64, fusedSequences: 'auto' };

/** A trial result that picks `path`. */
function result(path: DecodePath): PathTrialResult {
  return { path, times: { fused: [path === 'fused' ? 1 : 2], layered: [path === 'layered' ? 1 : 2] }, rounds: 1, elapsedMs: 3 };
}

/** A trial that counts its runs and picks `path` ('layered': not the tie-break, so a default cannot pass for it). */
function countedTrial(path: DecodePath = 'layered'): { run: () => Promise<PathTrialResult>; runs: () => number } {
  let runs = 0;
  return {
    run: async () => {
      runs++;
      return result(path);
    },
    runs: () => runs,
  };
}

let info: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  clearDecodePathCache();
  info = vi.spyOn(console, 'info').mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('resolveDecodePath', () => {
  test('the first visit runs the trial and stores its path; a later visit reads it and skips the trial', async () => {
    const store = memoryStore();
    const trial = countedTrial();
    expect(await resolveDecodePath(GPU, store, KEY, trial.run)).toEqual({ path: 'layered', trial: result('layered') });
    expect(trial.runs()).toBe(1);
    expect([...store.values]).toEqual([[`decode-path:${decodePathKey(GPU, KEY)}`, { version: decodePathVersion(), path: 'layered' }]]);

    clearDecodePathCache(); // a new worker on a later visit: only the store remembers
    expect(await resolveDecodePath(GPU, store, KEY, trial.run)).toEqual({ path: 'layered', trial: null });
    expect(trial.runs()).toBe(1);
    expect(info).not.toHaveBeenCalled();
  });

  test('in one process the trial runs once per key, also for concurrent calls and without a store', async () => {
    const trial = countedTrial();
    const [a, b] = await Promise.all([resolveDecodePath(GPU, undefined, KEY, trial.run), resolveDecodePath(GPU, undefined, KEY, trial.run)]);
    expect(a).toEqual({ path: 'layered', trial: result('layered') });
    expect(b).toBe(a);
    expect(await resolveDecodePath(GPU, undefined, { ...KEY }, trial.run)).toBe(a);
    expect(trial.runs()).toBe(1);
  });

  test.each<[string, AdapterDescription, DecodePathKey]>([
    ['another adapter', OTHER_GPU, KEY],
    ['another batch bucket', GPU, { ...KEY, bucket: 16 }],
    ['another model shape', GPU, { ...KEY, config: { ...TINY_CONFIG, num_hidden_layers: TINY_CONFIG.num_hidden_layers + 1 } }],
    ['another model flag', GPU, { ...KEY, config: { ...TINY_CONFIG, qk_norm: !TINY_CONFIG.qk_norm } }],
    ['another fused workgroup size', GPU, { ...KEY, fusedWorkgroupSize: 4 }],
    ['forced sequences per workgroup', GPU, { ...KEY, fusedSequences: 4 }],
  ])('%s does not reuse a stored path', async (_what, adapter, key) => {
    const store = memoryStore();
    await resolveDecodePath(GPU, store, KEY, countedTrial().run);
    clearDecodePathCache();
    const trial = countedTrial('fused');
    expect(await resolveDecodePath(adapter, store, key, trial.run)).toEqual({ path: 'fused', trial: result('fused') });
    expect(trial.runs()).toBe(1);
    expect(store.values.size).toBe(2);
  });

  /** A valid entry of the current version, for the stale and corrupt cases to differ from in one way each. */
  const valid = (): Record<string, unknown> => ({ version: decodePathVersion(), path: 'fused' });
  test.each<[string, () => unknown]>([
    ['another kernel set or procedure', () => ({ ...valid(), version: '0-00000000' })],
    ['no version', () => ({ path: 'fused' })],
    ['JSON text instead of an object', () => JSON.stringify(valid())],
    ['null', () => null],
    ['a number', () => 42],
    ['an unknown path', () => ({ ...valid(), path: 'turbo' })],
    ['no path', () => ({ version: decodePathVersion() })],
  ])('a stale or corrupt stored value (%s) is ignored, tried again and overwritten', async (_what, corrupt) => {
    const store = memoryStore();
    const key = `decode-path:${decodePathKey(GPU, KEY)}`;
    store.values.set(key, valid());
    expect(await resolveDecodePath(GPU, store, KEY, countedTrial().run)).toEqual({ path: 'fused', trial: null }); // the valid entry is read under this key

    clearDecodePathCache();
    store.values.set(key, corrupt());
    const trial = countedTrial();
    expect(await resolveDecodePath(GPU, store, KEY, trial.run)).toEqual({ path: 'layered', trial: result('layered') });
    expect(trial.runs()).toBe(1);
    expect(store.values.get(key)).toEqual({ version: decodePathVersion(), path: 'layered' });
    expect(info).not.toHaveBeenCalled();
  });

  test('a store whose calls reject or throw falls back to the trial, says so with console.info only, and the process still remembers', async () => {
    const warn = vi.spyOn(console, 'warn');
    const error = vi.spyOn(console, 'error');
    for (const broken of brokenStores()) {
      clearDecodePathCache();
      info.mockClear();
      const trial = countedTrial();
      expect(await resolveDecodePath(GPU, broken, KEY, trial.run)).toEqual({ path: 'layered', trial: result('layered') });
      expect(trial.runs()).toBe(1);
      expect(info).toHaveBeenCalledTimes(2); // the read and the write
      expect(String(info.mock.calls[0]![0])).toMatch(/^The decode path choice could not be read from storage .*the timed trial instead/);
      expect((await resolveDecodePath(GPU, broken, KEY, trial.run))?.path).toBe('layered');
      expect(trial.runs()).toBe(1);
    }
    expect(warn).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
  });

  test('a store that never answers delays the trial by at most STORE_TIMEOUT_MS per call', async () => {
    vi.useFakeTimers();
    const silent = silentStore();
    const trial = countedTrial();
    let settled: unknown;
    void resolveDecodePath(GPU, silent, KEY, trial.run).then((resolved) => (settled = resolved));
    await vi.advanceTimersByTimeAsync(STORE_TIMEOUT_MS - 1);
    expect(trial.runs()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(trial.runs()).toBe(1);
    expect(settled).toBeUndefined(); // waiting on the write now
    await vi.advanceTimersByTimeAsync(STORE_TIMEOUT_MS);
    expect(settled).toEqual({ path: 'layered', trial: result('layered') });
    expect(info).toHaveBeenCalledTimes(2);
  });

  test('a trial that fails settles to null, stores nothing, and is not retried in the process (the decoder decodes layered)', async () => {
    const store = memoryStore();
    let runs = 0;
    const failing = (): Promise<PathTrialResult> => {
      runs++;
      return Promise.reject(new Error('the KV cache is full'));
    };
    expect(await resolveDecodePath(GPU, store, KEY, failing)).toBeNull();
    expect(await resolveDecodePath(GPU, store, KEY, failing)).toBeNull();
    expect(runs).toBe(1);
    expect(store.values.size).toBe(0);

    clearDecodePathCache(); // a later visit tries again
    const trial = countedTrial();
    expect((await resolveDecodePath(GPU, store, KEY, trial.run))?.path).toBe('layered');
    expect(trial.runs()).toBe(1);
  });
});

describe('decodePathVersion', () => {
  test('is stable within a process and names the trial procedure and a kernel hash', () => {
    expect(decodePathVersion()).toBe(decodePathVersion());
    expect(decodePathVersion()).toMatch(/^\d+-[0-9a-f]{8}$/);
  });
});
