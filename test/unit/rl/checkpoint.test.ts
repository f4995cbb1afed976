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
  test('a GRPO run stopped after 2 steps and resumed from its files takes the same next steps as an uninterrupted run', async () => {
    const uninterrupted = await createCpuBackend(LETTER_MODEL, { seed: 2 });
    const policyA = new LetterPolicy(uninterrupted);
    const full = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyA), uninterrupted, policyA, OPTIONS).run();

    const first = await createCpuBackend(LETTER_MODEL, { seed: 2 });
    const policyB = new LetterPolicy(first);
    await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyB), first, policyB, { ...OPTIONS, steps: 2 }).run();
    const files = serializeCheckpoint(await checkpointOf(first, 2));

    const restored = await parseCheckpoint(async (name) => files.get(name)!);
    expect(restored.state).toMatchObject({ phase: 'grpo', nextStep: 2, run: { note: 'test' } });
    expect(restored.optimizer.step).toBe(2);
    const resumed = await createCpuBackend(LETTER_MODEL, { tensors: restored.weights });
    await resumed.setOptimizerState(restored.optimizer);
    const policyC = new LetterPolicy(resumed);
    const rest = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policyC), resumed, policyC, { ...OPTIONS, startStep: restored.state.nextStep }).run();

    expect(rest.map((m) => m.step)).toEqual([2, 3]);
    expect(rest.map((m) => m.reward.mean)).toEqual(full.slice(2).map((m) => m.reward.mean));
    expect(rest.map((m) => m.loss)).toEqual(full.slice(2).map((m) => m.loss));
    const [a, b] = [await uninterrupted.getParameters(), await resumed.getParameters()];
    for (const [name, tensor] of a) expect(b.get(name)!.data, name).toEqual(tensor.data);
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
