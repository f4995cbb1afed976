// Rewards that measure nothing (every weighted reward function failed in every rollout) stop a
// training run where it first sees them: the measurement before training, the warm-up's expert
// demonstrations, or a GRPO step, before any update. It used to train to the end on the zeros
// scored for the failures. A partial failure trains on, its errors listed.
import { describe, expect, test } from 'vitest';
import { Rubric, ScriptedClient, SingleTurnEnv, type RewardFunction } from '../../../src/envs/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { openModel } from '../../../src/cli/open-model.ts';
import { BrokenRewardsError, environmentRollouts, GrpoTrainer } from '../../../src/rl/grpo-trainer.ts';
import { runTraining, type TrainingRunOptions } from '../../../src/rl/training-run.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, letterDReward } from '../../support/letter-task.ts';

const buggy: RewardFunction = function buggy() {
  throw new Error('reward bug');
};
const notANumber = (() => 'yes') as unknown as RewardFunction;

/** The "say d" task over four prompts, scored by `funcs` with `weights`. */
const letterEnv = (funcs: RewardFunction[], weights: number[]) => new SingleTurnEnv({ name: 'say-d', dataset: ['ab', 'ba', 'cc', 'ac'].map((question) => ({ question })), rubric: new Rubric({ funcs, weights }) });

describe('GRPO on rewards that measure nothing', () => {
  test('a reward that throws in every rollout fails the first step before any update, naming it; a non-number one too', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const policy = new LetterPolicy(backend);
    const before = await backend.getParameters();
    const steps: number[] = [];
    const run = new GrpoTrainer(environmentRollouts(letterEnv([buggy], [1]), policy), backend, policy, { steps: 3, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run({ onStep: (m) => { steps.push(m.step); } });
    await expect(run).rejects.toThrow(BrokenRewardsError);
    await expect(run).rejects.toThrow('GRPO step 1: the reward function buggy failed in every rollout, so the rewards are not measurements; the first error: buggy threw: reward bug');
    expect(steps).toEqual([]);
    const after = await backend.getParameters();
    for (const [name, tensor] of before) expect(Array.from(after.get(name)!.data), name).toEqual(Array.from(tensor.data));

    const named = letterEnv([notANumber], [1]);
    const name = named.rubric.rewards[0]!.name;
    await expect(new GrpoTrainer(environmentRollouts(named, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run()).rejects.toThrow(`the reward function ${name} failed in every rollout`);
  });

  test('with dynamic sampling no more tasks are drawn to be scored by the same broken function', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const policy = new LetterPolicy(backend);
    let calls = 0;
    const counted: RewardFunction = function counted() {
      calls += 1;
      throw new Error('reward bug');
    };
    const run = new GrpoTrainer(environmentRollouts(letterEnv([counted], [1]), policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 2, maxTokens: 2, dynamicSampling: true, maxTasksPerStep: 4, maxAsync: 0 }).run();
    await expect(run).rejects.toThrow(BrokenRewardsError);
    expect(calls).toBe(2);
  });

  test('a weighted function failing beside one that works trains on, with the errors counted; so does a failing weight-0 metric', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const policy = new LetterPolicy(backend);
    for (const weights of [[1, 1], [0, 1]]) {
      const metrics = await new GrpoTrainer(environmentRollouts(letterEnv([buggy, letterDReward], weights), policy), backend, policy, { steps: 2, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run();
      expect(metrics).toHaveLength(2);
      expect(metrics[0]!.rolloutsWithErrors).toBe(2);
    }
  });
});

describe('runTraining on rewards that measure nothing', () => {
  const OPTIONS: TrainingRunOptions = { seed: 3, maxTokens: 2, evalTasks: 2, warmup: null, grpo: { steps: 3, tasksPerStep: 1, groupSize: 2 } };
  const env = () => new SingleTurnEnv({ name: 'say-hi', dataset: [{ question: 'say hi', answer: 'hi' }, { question: 'say yo', answer: 'yo' }], rubric: new Rubric({ funcs: [buggy] }) });

  test('stops at the measurement before training (reported first), or at the first GRPO step without measurements; no step is trained', { timeout: 60_000 }, async () => {
    const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
    const measured: string[] = [];
    const trained: number[] = [];
    const hooks = { onEvaluation: ({ label }: { label: string }) => { measured.push(label); }, onGrpoStep: ({ step }: { step: number }) => { trained.push(step); } };
    await expect(runTraining(env(), model, null, OPTIONS, hooks)).rejects.toThrow(/^the measurement before training: the reward function buggy failed in every rollout.*Fix the reward function and train again$/);
    expect(measured).toEqual(['before']);
    await expect(runTraining(env(), model, null, { ...OPTIONS, evalTasks: 0 }, hooks)).rejects.toThrow(/^GRPO step 1: the reward function buggy failed/);
    expect(trained).toEqual([]);
    model.backend.dispose();
  });

  test("stops at the warm-up's demonstrations, which the broken reward would pick", { timeout: 60_000 }, async () => {
    const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
    const expert = new ScriptedClient(['hi', 'yo']);
    const run = runTraining(env(), model, expert, { ...OPTIONS, evalTasks: 0, warmup: { demonstrations: 2, steps: 2, batchSize: 2, lr: 1e-3 } });
    await expect(run).rejects.toThrow(BrokenRewardsError);
    await expect(run).rejects.toThrow(/^the 2 expert demonstrations: the reward function buggy failed in every rollout/);
    model.backend.dispose();
  });
});
