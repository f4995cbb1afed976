/**
 * The engine worker's exact Continue at max-async 1 with KL: a GRPO job's periodic checkpoint keeps
 * the rollouts already sampled for the next step and the tiny model's frozen KL reference; a fresh
 * model restored from it and continued ends with the same weights as the uninterrupted job. Rollouts
 * are made here, on the page, through the engine's `complete` (as the sandbox makes them).
 */
import * as Comlink from 'comlink';
import { expect, test } from 'vitest';
import type { Message } from '../../src/envs/index.ts';
import type { CheckpointFiles, EngineApi, EngineGrpoOptions, EngineRolloutFunction } from '../../src/workers/engine/protocol.ts';
import type { SandboxTrajectory } from '../../src/workers/sandbox/protocol.ts';

const TASKS = ['abc', 'hello', 'xyz', 'tab'];

/** One rollout of task `taskIndex`: a single completion scored by its first byte, so every group has a signal. */
function rolloutThrough(engine: Comlink.Remote<EngineApi>): EngineRolloutFunction {
  let requestId = 0;
  return async (taskIndex, samplingArgs) => {
    const prompt: Message[] = [{ role: 'user', content: TASKS[taskIndex]! }];
    const outcome = await engine.complete(++requestId, { model: 'policy', messages: prompt, ...samplingArgs });
    if (!outcome.ok) throw new Error(outcome.message);
    const choice = outcome.completion.choices[0]!;
    const completion: Message[] = [{ role: 'assistant', content: choice.message.content }];
    const reward = (choice.message.content.charCodeAt(0) || 0) / 255;
    const trajectory: SandboxTrajectory = {
      taskIndex, prompt, completion, info: {}, state: { prompt, completion, info: {}, turn: 1 }, reward, scores: { firstByte: reward }, errors: [],
      stopReason: 'completed', truncated: false, turns: [{ finishReason: choice.finish_reason, latencyMs: 0, ...(choice.tokens ? { tokens: choice.tokens } : {}) }],
      timings: { generationMs: 0, scoringMs: 0, totalMs: 0 }, passed: reward > 0.5,
    };
    return trajectory;
  };
}

test('a GRPO job continued from its periodic checkpoint (max-async 1, KL β > 0) ends with the uninterrupted job\'s weights', { timeout: 240_000 }, async () => {
  const worker = new Worker(new URL('../../src/workers/engine.worker.ts', import.meta.url), { type: 'module' });
  const engine = Comlink.wrap<EngineApi>(worker);
  try {
    await engine.start(3, Comlink.proxy(() => {}));
    const options: EngineGrpoOptions = { steps: 4, tasksPerStep: 2, groupSize: 4, schedule: { lr: 3e-3 }, maxTokens: 6, maxAsync: 1, temperature: 1, seed: 5, klBeta: 0.05, checkpointEvery: 1 };
    const checkpoints = new Map<number, CheckpointFiles>();
    const rollout = Comlink.proxy(rolloutThrough(engine));
    const full = await engine.grpo(1, 'first-byte', TASKS.length, rollout, options, Comlink.proxy(() => {}), Comlink.proxy((files: CheckpointFiles, nextStep: number) => { checkpoints.set(nextStep, files); }));
    expect(full.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    expect(full.filter((m) => m.skipped === undefined).length).toBeGreaterThan(1);
    const uninterrupted = await engine.getWeights();

    const atTwo = checkpoints.get(2)!;
    expect([...atTwo.keys()].sort()).toEqual(['optimizer.safetensors', 'reference.safetensors', 'rollouts.json', 'state.json', 'weights.safetensors']);
    await engine.reset(3);
    const restored = await engine.restoreCheckpoint(atTwo);
    expect(restored.state).toMatchObject({ phase: 'grpo', nextStep: 2 });
    const rest = await engine.grpo(2, 'first-byte', TASKS.length, rollout, { ...options, startStep: 2 }, Comlink.proxy(() => {}));
    expect(rest.map((m) => m.step)).toEqual([2, 3]);
    expect(rest.map((m) => m.loss)).toEqual(full.slice(2).map((m) => m.loss));
    expect(rest.map((m) => m.kl)).toEqual(full.slice(2).map((m) => m.kl));
    const resumed = await engine.getWeights();
    for (const [name, tensor] of uninterrupted) expect(resumed.get(name)!.data, name).toEqual(tensor.data);
  } finally {
    worker.terminate();
  }
});
