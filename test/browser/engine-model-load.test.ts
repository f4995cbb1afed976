/**
 * The engine worker after a model load that fails: the model it held before comes back when that
 * needs no download (nano from the app's files, tiny from its seed), with its seed, and the error
 * says which model is loaded; a cancelled load behaves the same way.
 */
import * as Comlink from 'comlink';
import { expect, test } from 'vitest';
import type { EngineApi } from '../../src/workers/engine/protocol.ts';

const NANO_URL = '/models/nano/';
const CORRUPT_FOLDER = [new File(['{"architectures": ["LlamaForCausalLM"], "hidden_size": '], 'config.json')];

test('a failed load brings back the model held before: nano after nano, tiny (same seed) after tiny', { timeout: 180_000 }, async () => {
  const worker = new Worker(new URL('../../src/workers/engine.worker.ts', import.meta.url), { type: 'module' });
  const engine = Comlink.wrap<EngineApi>(worker);
  const noProgress = Comlink.proxy(() => {});
  try {
    expect((await engine.start(7, Comlink.proxy(() => {}))).model).toBe('tiny');
    await expect(engine.loadModel(1, { kind: 'local', files: CORRUPT_FOLDER, seed: 2 }, noProgress)).rejects.toThrow(/config\.json.*\(the tiny model is loaded instead\)/s);
    expect(await engine.start(7, Comlink.proxy(() => {}))).toMatchObject({ model: 'tiny', seed: 7 });

    const nano = await engine.loadModel(2, { kind: 'nano', url: NANO_URL, seed: 4 }, noProgress);
    expect(nano.model).toBe('nano');
    const nanoWeights = await engine.getWeights();
    await expect(engine.loadModel(3, { kind: 'local', files: CORRUPT_FOLDER, seed: 9 }, noProgress)).rejects.toThrow(/\(the nano model is loaded instead\)/);
    expect(await engine.start(7, Comlink.proxy(() => {}))).toMatchObject({ model: 'nano', seed: 4 });
    // The pretrained weights themselves are back, not a fresh model under nano's name.
    const back = await engine.getWeights();
    expect([...back.keys()].sort()).toEqual([...nanoWeights.keys()].sort());
    for (const [name, tensor] of nanoWeights) expect(back.get(name)!.data).toEqual(tensor.data);
  } finally {
    worker.terminate();
  }
});
