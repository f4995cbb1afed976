import { describe, expect, test } from 'vitest';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { CHECKPOINT_FORMAT, parseCheckpoint, serializeCheckpoint, type Checkpoint } from '../../../src/rl/checkpoint.ts';
import { environmentRollouts, GrpoTrainer, type GrpoOptions } from '../../../src/rl/grpo-trainer.ts';
import { LETTER_MODEL, LetterPolicy, makeLetterEnv } from '../../support/letter-task.ts';

const OPTIONS: GrpoOptions = { steps: 4, tasksPerStep: 2, groupSize: 4, maxTokens: 3, schedule: { lr: 2e-2 }, maxAsync: 0, seed: 9 };

async function checkpointOf(backend: Awaited<ReturnType<typeof createCpuBackend>>, nextStep: number): Promise<Checkpoint> {
  return {
    state: { format: CHECKPOINT_FORMAT, phase: 'grpo', nextStep, run: { note: 'test' } },
    weights: await backend.getParameters(),
    optimizer: await backend.getOptimizerState(),
  };
}

describe('checkpoints', () => {
  for (const maxAsync of [0, 1, 2]) {
    test(`max-async ${maxAsync}: a GRPO run stopped after 2 steps and resumed from its files takes the same next steps as an uninterrupted run`, async () => {
      const options = { ...OPTIONS, maxAsync };
      const uninterrupted = await createCpuBackend(LETTER_MODEL, { seed: 2 });
      const policyA = new LetterPolicy(uninterrupted);
      const full = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyA), uninterrupted, policyA, options).run();

      // The same run, checkpointed between steps 1 and 2 (with the rollouts already sampled ahead) and stopped there.
      const first = await createCpuBackend(LETTER_MODEL, { seed: 2 });
      const policyB = new LetterPolicy(first);
      const stop = new AbortController();
      let files = new Map<string, Uint8Array>();
      const trainerB = new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyB), first, policyB, options);
      await trainerB.run({
        signal: stop.signal,
        onStep: async (metrics) => {
          if (metrics.step !== 1) return;
          const rolloutsAhead = (await trainerB.rolloutsAhead())!;
          expect(rolloutsAhead.map((batch) => batch.step)).toEqual([2, 3].slice(0, maxAsync));
          files = serializeCheckpoint({ ...(await checkpointOf(first, 2)), rolloutsAhead });
          stop.abort();
        },
      });

      const restored = await parseCheckpoint(async (name) => files.get(name)!);
      expect(restored.state).toMatchObject({ phase: 'grpo', nextStep: 2, run: { note: 'test' } });
      expect(restored.optimizer.step).toBe(2);
      expect(restored.rolloutsAhead?.length ?? 0).toBe(maxAsync);
      const resumed = await createCpuBackend(LETTER_MODEL, { tensors: restored.weights });
      await resumed.setOptimizerState(restored.optimizer);
      const policyC = new LetterPolicy(resumed);
      const rest = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyC), resumed, policyC, {
        ...options,
        startStep: restored.state.nextStep,
        ...(restored.rolloutsAhead ? { rolloutsAhead: restored.rolloutsAhead } : {}),
      }).run();

      expect(rest.map((m) => m.step)).toEqual([2, 3]);
      expect(rest.map((m) => m.reward.mean)).toEqual(full.slice(2).map((m) => m.reward.mean));
      expect(rest.map((m) => m.loss)).toEqual(full.slice(2).map((m) => m.loss));
      expect(rest.map((m) => m.staleness)).toEqual(full.slice(2).map((m) => m.staleness));
      const [a, b] = [await uninterrupted.getParameters(), await resumed.getParameters()];
      for (const [name, tensor] of a) expect(b.get(name)!.data, name).toEqual(tensor.data);
    });
  }

  test('max-async 1 without the rollouts ahead (an older checkpoint) resumes, but not bit-exactly', async () => {
    const options = { ...OPTIONS, maxAsync: 1 };
    const uninterrupted = await createCpuBackend(LETTER_MODEL, { seed: 2 });
    const policyA = new LetterPolicy(uninterrupted);
    const full = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyA), uninterrupted, policyA, options).run();
    const first = await createCpuBackend(LETTER_MODEL, { seed: 2 });
    const policyB = new LetterPolicy(first);
    await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyB), first, policyB, { ...options, steps: 2 }).run();
    const resumed = await createCpuBackend(LETTER_MODEL, { tensors: await first.getParameters() });
    await resumed.setOptimizerState(await first.getOptimizerState());
    const policyC = new LetterPolicy(resumed);
    const rest = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyC), resumed, policyC, { ...options, startStep: 2 }).run();
    expect(rest.map((m) => m.step)).toEqual([2, 3]);
    expect(rest.map((m) => m.loss)).not.toEqual(full.slice(2).map((m) => m.loss));
  });

  test('rollouts.json and reference.safetensors round-trip, non-finite numbers included; a format-1 checkpoint still loads', async () => {
    const backend = await createCpuBackend(LETTER_MODEL, { seed: 1 });
    const reference = await backend.getParameters();
    const trajectory = { prompt: [], completion: [], info: {}, state: { prompt: [], completion: [], info: {}, turn: 0 }, reward: Number.NaN, scores: { r: -Infinity }, errors: [], stopReason: 'completed' as const, truncated: false, turns: [], timings: { generationMs: 1, scoringMs: 2, totalMs: 3 }, passed: false };
    const rolloutsAhead = [{ step: 5, trajectories: [trajectory], versionsBehind: 1, sampleMs: 12.5 }];
    const files = serializeCheckpoint({ ...(await checkpointOf(backend, 5)), rolloutsAhead, reference });
    const restored = await parseCheckpoint(async (name) => files.get(name)!);
    expect(restored.rolloutsAhead).toEqual(rolloutsAhead);
    for (const [name, tensor] of reference) expect(restored.reference!.get(name)!.data, name).toEqual(tensor.data);

    const plain = serializeCheckpoint(await checkpointOf(backend, 5));
    expect([...plain.keys()].sort()).toEqual(['optimizer.safetensors', 'state.json', 'weights.safetensors']);
    const formatOne = async (name: string) => (name === 'state.json' ? new TextEncoder().encode(JSON.stringify({ format: 1, phase: 'grpo', nextStep: 5, run: {} })) : plain.get(name)!);
    const old = await parseCheckpoint(formatOne);
    expect(old.state.format).toBe(1);
    expect(old.rolloutsAhead).toBeUndefined();
    const missing = async (name: string) => {
      if (name === 'rollouts.json') throw new Error('ENOENT');
      return files.get(name)!;
    };
    await expect(parseCheckpoint(missing, 'runs/y')).rejects.toThrow('runs/y: cannot read rollouts.json (ENOENT)');
  });

  test('a missing or corrupt file is named in the error', async () => {
    const backend = await createCpuBackend(LETTER_MODEL, { seed: 1 });
    const files = serializeCheckpoint(await checkpointOf(backend, 0));
    const without = (name: string) => async (file: string) => {
      if (file === name) throw new Error('ENOENT');
      return files.get(file)!;
    };
    await expect(parseCheckpoint(without('optimizer.safetensors'), 'runs/x')).rejects.toThrow('runs/x: cannot read optimizer.safetensors (ENOENT); the checkpoint is incomplete');
    const truncated = async (file: string) => (file === 'weights.safetensors' ? files.get(file)!.slice(0, 100) : files.get(file)!);
    await expect(parseCheckpoint(truncated, 'runs/x')).rejects.toThrow('runs/x/weights.safetensors');
    const badState = async (file: string) => (file === 'state.json' ? new TextEncoder().encode('{"format": 99}') : files.get(file)!);
    await expect(parseCheckpoint(badState, 'runs/x')).rejects.toThrow('checkpoint format 99');
  });

  test('restoring optimizer state checks every tensor', async () => {
    const backend = await createCpuBackend(LETTER_MODEL, { seed: 1 });
    const state = await backend.getOptimizerState();
    state.m.delete('lm_head.weight');
    await expect(backend.setOptimizerState(state)).rejects.toThrow('optimizer state m: missing lm_head.weight');
  });
});
