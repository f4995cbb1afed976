// GRPO end to end on the CPU backend: a tiny random model learns, from reward alone, to emit a
// chosen letter (test/support/letter-task.ts); the real sampler, LocalChatClient, is tested elsewhere.
import { describe, expect, test } from 'vitest';
import { Rubric, SingleTurnEnv } from '../../../src/envs/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { environmentRollouts, GrpoTrainer, TrainingError, type GrpoStepMetrics, type SamplingPolicy } from '../../../src/rl/grpo-trainer.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, letterDReward, makeLetterEnv as makeEnv } from '../../support/letter-task.ts';

type Completion = Awaited<ReturnType<SamplingPolicy['chat']['completions']['create']>>;

/** `letters` with every completion 40 ms late, far longer than an update of the letter model takes; `observe` wraps each (delayed) call. */
function slowLetters(letters: LetterPolicy, observe: (call: () => Promise<Completion>) => Promise<Completion> = (call) => call()): SamplingPolicy {
  return {
    get policyVersion() {
      return letters.policyVersion;
    },
    syncWeights: () => letters.syncWeights(),
    chat: {
      completions: {
        create: (request) =>
          observe(async () => {
            await new Promise((resolve) => setTimeout(resolve, 40));
            return letters.chat.completions.create(request);
          }),
      },
    },
  };
}

describe('GrpoTrainer', () => {
  test('a tiny model learns to say "d" from reward alone, on-policy, with every metric reported', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 3 });
    const policy = new LetterPolicy(backend);
    const metrics: GrpoStepMetrics[] = [];
    const trainer = new GrpoTrainer(environmentRollouts(makeEnv(), policy), backend, policy, {
      steps: 30, tasksPerStep: 2, groupSize: 8, maxTokens: 4, schedule: { lr: 3e-2 }, maxAsync: 0, microBatchSize: 5, seed: 1, weightDecay: 0,
    });
    await trainer.run({ onStep: (m) => { metrics.push(m); } });

    expect(metrics.map((m) => m.step)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const first = mean(metrics.slice(0, 5).map((m) => m.reward.mean));
    const last = mean(metrics.slice(-5).map((m) => m.reward.mean));
    expect(first).toBeLessThan(0.3);
    expect(last).toBeGreaterThan(first + 0.4);
    for (const m of metrics) {
      expect(m.staleness).toBe(0);
      expect(m.rollouts).toBe(16);
      expect(m.tokensSampled).toBe(64);
      if (!m.skipped) {
        expect(m.tokensTrained).toBe(64 - m.groupsDropped * 32);
        expect(Number.isFinite(m.loss) && m.gradNorm > 0).toBe(true);
      }
    }
    // On-policy: the first micro-batch sees exactly the sampling weights, so nothing is clipped.
    expect(metrics[0]!.clipFraction).toBe(0);
    expect(metrics[0]!.entropy).toBeGreaterThan(1);
  });

  test('microBatchFor chooses the micro-batch from the step\'s training length: the backward passes take its B, and the step equals a fixed micro-batch of that size', async () => {
    const run = async (sizing: { microBatchSize: number } | { microBatchFor: (T: number) => number }) => {
      const backend = await createCpuBackend(CONFIG, { seed: 5 });
      const shapes: Array<[number, number]> = [];
      const backward = backend.backward.bind(backend);
      backend.backward = (ids, targets, weights, B, T, temperature) => {
        shapes.push([B, T]);
        return backward(ids, targets, weights, B, T, temperature);
      };
      const metrics: GrpoStepMetrics[] = [];
      const trainer = new GrpoTrainer(environmentRollouts(makeEnv(), new LetterPolicy(backend)), backend, new LetterPolicy(backend), {
        steps: 2, tasksPerStep: 2, groupSize: 8, maxTokens: 4, schedule: { lr: 3e-2 }, maxAsync: 0, seed: 1, weightDecay: 0, dropUninformativeGroups: false, ...sizing,
      });
      await trainer.run({ onStep: (m) => { metrics.push(m); } });
      return { shapes, losses: metrics.map((m) => m.loss) };
    };
    const lengths: number[] = [];
    const chosen = await run({ microBatchFor: (T) => { lengths.push(T); return 6; } });
    const fixed = await run({ microBatchSize: 6 });
    expect(lengths).toHaveLength(2); // once per step
    expect(chosen.shapes.map(([B]) => B)).toEqual([6, 6, 4, 6, 6, 4]); // 16 sequences a step
    // the T it was asked for is the step's longest: every micro-batch's T is within it
    expect(Math.max(...chosen.shapes.slice(0, 3).map(([, T]) => T))).toBe(lengths[0]);
    expect(chosen.losses).toEqual(fixed.losses);
    expect(chosen.shapes).toEqual(fixed.shapes);
  });

  test('max-async 1: rollouts are sampled one step ahead and report staleness 1', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 4 });
    const policy = new LetterPolicy(backend);
    const trainer = new GrpoTrainer(environmentRollouts(makeEnv(), policy), backend, policy, { steps: 3, tasksPerStep: 1, groupSize: 4, maxTokens: 3, schedule: { lr: 1e-2 }, maxAsync: 1 });
    const metrics = await trainer.run();
    expect(metrics.map((m) => m.staleness)).toEqual([0, 1, 1]);
  });

  test('max-async 1 with a sampler that reads the live weights: no update lands while a rollout is in flight', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 4 });
    let updates = 0;
    const counted = Object.assign(Object.create(backend) as typeof backend, {
      step: async (options: Parameters<typeof backend.step>[0]) => {
        updates++;
        return backend.step(options);
      },
    });
    // LetterPolicy reads the backend's weights at every token (as the WebGPU decoder does).
    const seen: Array<{ start: number; end: number }> = [];
    const slow = slowLetters(new LetterPolicy(backend), async (call) => {
      const start = updates;
      const completion = await call();
      seen.push({ start, end: updates });
      return completion;
    });
    const metrics = await new GrpoTrainer(environmentRollouts(makeEnv(), slow), counted, slow, { steps: 3, tasksPerStep: 1, groupSize: 4, maxTokens: 3, schedule: { lr: 1e-2 }, maxAsync: 1 }).run();
    expect(metrics.map((m) => m.staleness)).toEqual([0, 1, 1]);
    expect(updates).toBe(3);
    expect(seen).toHaveLength(12);
    expect(seen.filter(({ start, end }) => start !== end)).toEqual([]);
  });

  test("max-async 1: a step's time is the wall time since the previous step ended, though its sampling overlapped the update before", async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 4 });
    const slow = slowLetters(new LetterPolicy(backend)); // sampling is the step's time
    const trainer = new GrpoTrainer(environmentRollouts(makeEnv(), slow), backend, slow, { steps: 3, tasksPerStep: 1, groupSize: 4, maxTokens: 3, schedule: { lr: 1e-2 }, maxAsync: 1 });
    const started = performance.now();
    const metrics = await trainer.run();
    const wall = performance.now() - started;
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    // Steps 0 and 1 were sampled at once, so sampling plus update counts their shared time twice…
    expect(sum(metrics.map((m) => m.timings.sampleMs + m.timings.updateMs))).toBeGreaterThan(wall);
    // …while the steps' own times partition the run.
    expect(sum(metrics.map((m) => m.timings.stepMs))).toBeLessThanOrEqual(wall);
    expect(sum(metrics.map((m) => m.timings.stepMs))).toBeGreaterThan(0.5 * wall);
    for (const m of metrics) expect(m.timings.stepMs).toBeGreaterThanOrEqual(m.timings.updateMs);
  });

  test('a step where every rollout fails stops the run with the first error', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 5 });
    const failing: SamplingPolicy = { policyVersion: 0, syncWeights: async () => {}, chat: { completions: { create: async () => { throw new Error('GPU device lost'); } } } };
    const trainer = new GrpoTrainer(environmentRollouts(makeEnv(), failing), backend, failing, { steps: 2, tasksPerStep: 1, groupSize: 2 });
    await expect(trainer.run()).rejects.toThrow(TrainingError);
    await expect(new GrpoTrainer(environmentRollouts(makeEnv(), failing), backend, failing, { steps: 1, tasksPerStep: 1, groupSize: 2 }).run()).rejects.toThrow('GPU device lost');
  });

  test('groups with equal rewards are dropped and such a step skips the update', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 6 });
    const constantEnv = new SingleTurnEnv({ name: 'flat', dataset: [{ question: 'ab' }], rubric: new Rubric({ rewards: [{ fn: () => 1, name: 'constantReward' }] }) });
    const before = await backend.getParameters();
    const policy = new LetterPolicy(backend);
    const [metrics] = await new GrpoTrainer(environmentRollouts(constantEnv, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 4, maxTokens: 2 }).run();
    expect(metrics!.groupsDropped).toBe(1);
    expect(metrics!.skipped).toContain('equal rewards');
    const after = await backend.getParameters();
    expect(after.get('lm_head.weight')!.data).toEqual(before.get('lm_head.weight')!.data);
  });

  test('turn rewards alone teach: with a constant reward, a per-turn score for "d" keeps groups informative and the model learns "d"', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 3 });
    const policy = new LetterPolicy(backend);
    const rubric = new Rubric({ rewards: [{ fn: () => 1, name: 'constantReward' }] }).addTurnReward((ctx) => [letterDReward(ctx)], 1, 'dTurnReward');
    const env = new SingleTurnEnv({ name: 'say-d-per-turn', dataset: makeEnv().dataset, rubric });
    const metrics = await new GrpoTrainer(environmentRollouts(env, policy), backend, policy, {
      steps: 30, tasksPerStep: 2, groupSize: 8, maxTokens: 4, schedule: { lr: 3e-2 }, maxAsync: 0, microBatchSize: 5, seed: 1, weightDecay: 0,
    }).run();
    expect(metrics.every((m) => m.reward.mean === 1)).toBe(true);
    const first = mean(metrics.slice(0, 5).map((m) => m.rewards.dTurnReward!));
    const last = mean(metrics.slice(-5).map((m) => m.rewards.dTurnReward!));
    expect(first).toBeLessThan(0.3);
    expect(last).toBeGreaterThan(first + 0.4);
    // Without turn rewards every group would be dropped (equal rewards); with them the first steps train on all.
    expect(metrics.slice(0, 3).map((m) => m.groupsDropped)).toEqual([0, 0, 0]);
  });

  test('turn rewards that do not fit the rollout (wrong count, not finite) are left out: the rollout keeps its outcome advantage', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 3 });
    const policy = new LetterPolicy(backend);
    const source = environmentRollouts(makeEnv(), policy);
    let call = 0;
    const corrupted = { ...source, rollout: async (...args: Parameters<typeof source.rollout>) => ({ ...(await source.rollout(...args)), turnRewards: call++ % 2 === 0 ? [Number.NaN] : [1, 2] }) };
    const [metrics] = await new GrpoTrainer(corrupted, backend, policy, { steps: 1, tasksPerStep: 2, groupSize: 4, maxTokens: 4, schedule: { lr: 1e-2 }, maxAsync: 0 }).run();
    expect(metrics!.skipped).toBeUndefined();
    expect(Number.isFinite(metrics!.loss) && metrics!.gradNorm > 0).toBe(true);
  });

  test('turn rewards with GSPO (one ratio and one advantage per sequence) stop the run with the reason', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 3 });
    const policy = new LetterPolicy(backend);
    const env = new SingleTurnEnv({ name: 'say-d-per-turn', dataset: makeEnv().dataset, rubric: new Rubric().addTurnReward((ctx) => [letterDReward(ctx)], 1, 'dTurnReward') });
    const trainer = new GrpoTrainer(environmentRollouts(env, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 4, maxTokens: 2, importanceSampling: 'sequence' });
    await expect(trainer.run()).rejects.toThrow("importanceSampling 'sequence' (GSPO)");
    expect(() => new GrpoTrainer(environmentRollouts(env, policy), backend, policy, { steps: 1, turnCredit: 'all' as never })).toThrow('turnCredit must be');
  });
});

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
