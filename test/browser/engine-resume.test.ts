/**
 * The engine worker's exact Continue at max-async 1 with KL: a GRPO job's periodic checkpoint keeps
 * the rollouts already sampled for the next step and the tiny model's frozen KL reference; a fresh
 * model restored from it and continued samples exactly the tokens the uninterrupted job sampled and
 * ends with its weights. Rollouts are made here, on the page, through the engine's `complete` (as the
 * sandbox makes them).
 *
 * Bit for bit up to the step trained on the saved rollouts; after it, to float rounding. The WebGPU
 * decoder batches the requests that are in flight together, and which requests share a batch depends
 * on timing (the step's update runs beside the sampling of the next). A batch's plan (its size bucket,
 * the fused or the layered path) changes the order of the sums, so a sampled token's log-prob can
 * differ in its last bits between two runs of the same request; those log-probs are the clipped
 * objective's old policy. A CI run once saw a loss 2e-6 apart (relative) after the resume point.
 */
import * as Comlink from 'comlink';
import { expect, test } from 'vitest';
import type { Message } from '../../src/envs/index.ts';
import type { TurnTokens } from '../../src/chat/protocol.ts';
import type { CheckpointFiles, EngineApi, EngineGrpoOptions, EngineRolloutFunction } from '../../src/workers/engine/protocol.ts';
import type { SandboxTrajectory } from '../../src/workers/sandbox/protocol.ts';

const TASKS = ['abc', 'hello', 'xyz', 'tab'];

/** One rollout of task `taskIndex`: a single completion scored by its first byte, so every group has a signal. */
function rolloutThrough(engine: Comlink.Remote<EngineApi>, sampled: Map<number, TurnTokens>): EngineRolloutFunction {
  let requestId = 0;
  return async (taskIndex, samplingArgs) => {
    const prompt: Message[] = [{ role: 'user', content: TASKS[taskIndex]! }];
    const outcome = await engine.complete(++requestId, { model: 'policy', messages: prompt, ...samplingArgs });
    if (!outcome.ok) throw new Error(outcome.message);
    const choice = outcome.completion.choices[0]!;
    if (choice.tokens && samplingArgs.seed !== undefined) sampled.set(samplingArgs.seed, choice.tokens);
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
    const sampledFull = new Map<number, TurnTokens>(); // by sampling seed, a function of (seed, step, group, i)
    const full = await engine.grpo(1, 'first-byte', TASKS.length, Comlink.proxy(rolloutThrough(engine, sampledFull)), options, Comlink.proxy(() => {}), Comlink.proxy((files: CheckpointFiles, nextStep: number) => { checkpoints.set(nextStep, files); }));
    expect(full.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    expect(full.filter((m) => m.skipped === undefined).length).toBeGreaterThan(1);
    const uninterrupted = await engine.getWeights();

    const atTwo = checkpoints.get(2)!;
    expect([...atTwo.keys()].sort()).toEqual(['optimizer.safetensors', 'reference.safetensors', 'rollouts.json', 'state.json', 'weights.safetensors']);
    await engine.reset(3);
    const restored = await engine.restoreCheckpoint(atTwo);
    expect(restored.state).toMatchObject({ phase: 'grpo', nextStep: 2 });
    const sampledRest = new Map<number, TurnTokens>();
    const rest = await engine.grpo(2, 'first-byte', TASKS.length, Comlink.proxy(rolloutThrough(engine, sampledRest)), { ...options, startStep: 2 }, Comlink.proxy(() => {}));
    expect(rest.map((m) => m.step)).toEqual([2, 3]);
    // Step 2 trains on the saved rollouts: bit for bit. Step 3 was sampled again: the same tokens, their log-probs to rounding (file comment).
    expect(rest[0]!.loss).toBe(full[2]!.loss);
    expect(rest[0]!.kl).toBe(full[2]!.kl);
    expect(sampledRest.size).toBe(options.tasksPerStep * options.groupSize); // step 3 only: step 2's rollouts came from the checkpoint
    for (const [seed, tokens] of sampledRest) {
      const before = sampledFull.get(seed)!;
      expect(tokens.completionIds, `seed ${seed}`).toEqual(before.completionIds);
      tokens.completionLogprobs.forEach((logprob, i) => expect(Math.abs(logprob - before.completionLogprobs[i]!), `seed ${seed}, token ${i}`).toBeLessThan(1e-5));
    }
    expect(Math.abs(rest[1]!.loss - full[3]!.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(full[3]!.loss)));
    expect(Math.abs(rest[1]!.kl - full[3]!.kl)).toBeLessThan(1e-6);
    const resumed = await engine.getWeights();
    let largest = 0;
    for (const [name, tensor] of uninterrupted) {
      const data = resumed.get(name)!.data;
      expect(data.length, name).toBe(tensor.data.length);
      for (let i = 0; i < data.length; i++) largest = Math.max(largest, Math.abs(data[i]! - tensor.data[i]!));
    }
    expect(largest).toBeLessThan(1e-5); // one AdamW step moves a weight by up to lr = 3e-3
  } finally {
    worker.terminate();
  }
});
