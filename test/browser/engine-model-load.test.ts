/**
 * The engine worker with the models the app ships. After a model load that fails, the model it held
 * before comes back when that needs no download (a shipped model from the app's files, tiny from its
 * seed), with its seed, and the error says which model is loaded; a cancelled load behaves the same
 * way. nano-2m, the larger shipped model, on the WebGPU backend (SwiftShader without a GPU) and on the
 * fast CPU backend the tab falls back to: it loads from the app's files, one SFT step trains it (and
 * one GRPO step on the CPU, rollouts sampled through the engine's chat as the sandbox makes them), a checkpoint
 * brings the trained weights back, a reset its shipped ones, and a missing or mismatched folder is
 * refused naming nano-2m, with nano-2m loaded again. The WebGPU tests share one engine
 * worker (one device start on SwiftShader is most of their time).
 */
import * as Comlink from 'comlink';
import { afterAll, expect, test } from 'vitest';
import type { Message } from '../../src/envs/index.ts';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import { findShippedModel, shippedModelParameters } from '../../src/models/shipped-models.ts';
import { CHECKPOINT_FORMAT } from '../../src/rl/checkpoint.ts';
import type { EngineApi, EngineChoice, EngineRolloutFunction } from '../../src/workers/engine/protocol.ts';
import type { SandboxTrajectory } from '../../src/workers/sandbox/protocol.ts';

const NANO_URL = '/models/nano/';
const NANO_2M_URL = '/models/nano-2m/';
const CORRUPT_FOLDER = [new File(['{"architectures": ["LlamaForCausalLM"], "hidden_size": '], 'config.json')];

const workers: Worker[] = [];
let webgpuEngine: Comlink.Remote<EngineApi> | null = null;

/** A fresh engine worker. */
function newEngine(): Comlink.Remote<EngineApi> {
  const worker = new Worker(new URL('../../src/workers/engine.worker.ts', import.meta.url), { type: 'module' });
  workers.push(worker);
  return Comlink.wrap<EngineApi>(worker);
}

/** The engine worker the WebGPU ('auto') tests share, in the order they run. */
function sharedWebGPUEngine(): Comlink.Remote<EngineApi> {
  webgpuEngine ??= newEngine();
  return webgpuEngine;
}

afterAll(() => {
  for (const worker of workers) worker.terminate();
});

test('a failed load brings back the model held before: nano after nano, tiny (same seed) after tiny', { timeout: 180_000 }, async () => {
  const engine = sharedWebGPUEngine();
  const noProgress = Comlink.proxy(() => {});
  expect((await engine.start(7, Comlink.proxy(() => {}))).model).toBe('tiny');
  await expect(engine.loadModel(1, { kind: 'local', files: CORRUPT_FOLDER, seed: 2 }, noProgress)).rejects.toThrow(/config\.json.*\(the tiny model is loaded instead\)/s);
  expect(await engine.start(7, Comlink.proxy(() => {}))).toMatchObject({ model: 'tiny', seed: 7 });

  const nano = await engine.loadModel(2, { kind: 'shipped', id: 'nano', url: NANO_URL, seed: 4 }, noProgress);
  expect(nano.model).toBe('nano');
  const nanoWeights = await engine.getWeights();
  await expect(engine.loadModel(3, { kind: 'local', files: CORRUPT_FOLDER, seed: 9 }, noProgress)).rejects.toThrow(/\(the nano model is loaded instead\)/);
  expect(await engine.start(7, Comlink.proxy(() => {}))).toMatchObject({ model: 'nano', seed: 4 });
  // The pretrained weights themselves are back, not a fresh model under nano's name.
  const back = await engine.getWeights();
  expect([...back.keys()].sort()).toEqual([...nanoWeights.keys()].sort());
  for (const [name, tensor] of nanoWeights) expect(back.get(name)!.data).toEqual(tensor.data);
});

/** Whether every tensor of `a` equals `b`'s, value for value. */
function sameWeights(a: NamedTensors, b: NamedTensors): boolean {
  return a.size === b.size && [...a].every(([name, tensor]) => {
    const other = b.get(name)?.data;
    return other !== undefined && other.length === tensor.data.length && tensor.data.every((value, i) => value === other[i]);
  });
}

/** One rollout of a reversal task through the engine's `complete`, as the sandbox makes it: rewarded by the share of the reversed text's bytes it starts with. */
function reversalRollout(engine: Comlink.Remote<EngineApi>): EngineRolloutFunction {
  let requestId = 0;
  const texts = ['crane', 'slate'];
  return async (taskIndex, samplingArgs) => {
    const text = texts[taskIndex % texts.length]!;
    const prompt: Message[] = [{ role: 'user', content: text }];
    const outcome = await engine.complete(++requestId, { model: 'policy', messages: prompt, ...samplingArgs });
    if (!outcome.ok) throw new Error(outcome.message);
    const choice = outcome.completion.choices[0]!;
    const completion: Message[] = [{ role: 'assistant', content: choice.message.content }];
    const target = [...text].reverse().join('');
    let same = 0;
    while (same < target.length && choice.message.content[same] === target[same]) same++;
    const reward = same / target.length;
    const trajectory: SandboxTrajectory = {
      taskIndex, prompt, completion, info: {}, state: { prompt, completion, info: {}, turn: 1 }, reward, scores: { prefix: reward }, errors: [],
      stopReason: 'completed', truncated: false, turns: [{ finishReason: choice.finish_reason, latencyMs: 0, ...(choice.tokens ? { tokens: choice.tokens } : {}) }],
      timings: { generationMs: 0, scoringMs: 0, totalMs: 0 }, passed: reward === 1,
    };
    return trajectory;
  };
}

test.each<[string, EngineChoice]>([['WebGPU', 'auto'], ['the fast CPU backend', 'cpu']])(
  'nano-2m on %s: loads from the app\'s files, trains, checkpoints, resets to its shipped weights, and a broken folder names it',
  { timeout: 240_000 },
  async (_backend, choice) => {
    const engine = choice === 'auto' ? sharedWebGPUEngine() : newEngine();
    const noProgress = Comlink.proxy(() => {});
    const started = await engine.start(7, Comlink.proxy(() => {}), choice);
    expect(started.adapter).toMatch(choice === 'cpu' ? /^CPU/ : /^(?!CPU)/);
    const loaded = await engine.loadModel(1, { kind: 'shipped', id: 'nano-2m', url: NANO_2M_URL, seed: 4 }, noProgress);
    const parameters = shippedModelParameters(findShippedModel('nano-2m')!);
    expect(loaded).toMatchObject({ model: 'nano-2m', parameters, trainableParameters: parameters, loraRank: null, seed: 4 });
    expect(loaded.modelName).toBe(`nano-2m (pretrained, ${(parameters / 1e6).toFixed(2)}M)`);
    const shipped = await engine.getWeights();

    const transcripts: Message[][] = [
      [{ role: 'user', content: 'crane' }, { role: 'assistant', content: 'enarc' }],
      [{ role: 'user', content: 'slate' }, { role: 'assistant', content: 'etals' }],
    ];
    const sft = await engine.sft(2, transcripts, { steps: 1, batchSize: 2, lr: 1e-3, seed: 4 }, Comlink.proxy(() => {}));
    expect(sft).toHaveLength(1);
    expect(Number.isFinite(sft[0]!.loss)).toBe(true);
    // GRPO on the CPU only: on SwiftShader its step (the decoder's kernels and path trial) doubled this test's time, and the
    // WebGPU decoder on nano-2m is exercised by the e2e evaluation (test/e2e/nano.test.ts), its GRPO path by nano's step there.
    if (choice === 'cpu') {
      const grpo = await engine.grpo(3, 'reverse', 2, Comlink.proxy(reversalRollout(engine)), { steps: 1, tasksPerStep: 1, groupSize: 2, schedule: { lr: 1e-3 }, maxTokens: 4, maxAsync: 0, temperature: 1, seed: 4 }, Comlink.proxy(() => {}));
      expect(grpo.map((metrics) => metrics.step)).toEqual([0]);
      expect(Number.isFinite(grpo[0]!.loss)).toBe(true);
    }
    const trained = await engine.getWeights();
    expect(sameWeights(trained, shipped)).toBe(false);

    const checkpoint = await engine.saveCheckpoint({ format: CHECKPOINT_FORMAT, phase: 'grpo', nextStep: 1, run: {} });
    expect(await engine.reset(4)).toMatchObject({ model: 'nano-2m', seed: 4 });
    expect(sameWeights(await engine.getWeights(), shipped)).toBe(true);
    expect((await engine.restoreCheckpoint(checkpoint)).state).toMatchObject({ phase: 'grpo', nextStep: 1 });
    expect(sameWeights(await engine.getWeights(), trained)).toBe(true);

    // A missing folder, and nano's folder where nano-2m's should be: refused naming nano-2m; nano-2m is back with its shipped weights.
    await expect(engine.loadModel(4, { kind: 'shipped', id: 'nano-2m', url: '/models/no-such-folder/', seed: 5 }, noProgress)).rejects.toThrow(
      /^nano-2m: config\.json could not be fetched .*models\/nano-2m folder is missing\. Choose another model.*\(the nano-2m model is loaded instead\)$/s,
    );
    await expect(engine.loadModel(5, { kind: 'shipped', id: 'nano-2m', url: NANO_URL, seed: 5 }, noProgress)).rejects.toThrow(
      /^nano-2m: the app's models\/nano-2m folder is damaged \(its config\.json describes another model: hidden_size 96, not 192.*\(the nano-2m model is loaded instead\)$/s,
    );
    expect(await engine.start(7, Comlink.proxy(() => {}))).toMatchObject({ model: 'nano-2m', seed: 4 });
    expect(sameWeights(await engine.getWeights(), shipped)).toBe(true);
  },
);
