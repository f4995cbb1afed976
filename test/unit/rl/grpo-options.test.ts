// GRPO's options on the trainer itself (CPU backend, the 1-layer letter model): dynamic sampling's
// draw order and bound, the staleness bound, masking truncated rollouts, entropy filtering, the
// ECHO loss (its parameter gradient checked by finite differences) and group rewards.
import { describe, expect, test } from 'vitest';
import { Rubric, SingleTurnEnv, type Trajectory } from '../../../src/envs/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { ModelBackend } from '../../../src/gpu/model/backend.ts';
import { environmentRollouts, GrpoTrainer, type GrpoOptions, type RolloutSource, type ScoredTrajectory, type TrainablePolicy } from '../../../src/rl/grpo-trainer.ts';
import { grpoLoss } from '../../../src/rl/policy-loss.ts';
import { extraTaskIndicesForStep, taskIndicesForStep } from '../../../src/rl/task-order.ts';
import { buildTrainBatch, buildTrainSequence } from '../../../src/rl/token-batch.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, makeLetterEnv, letterDReward } from '../../support/letter-task.ts';

/** A policy that counts weight syncs and samples nothing itself (the fake sources below make the tokens). */
function countingPolicy(): TrainablePolicy & { policyVersion: number } {
  const policy = { policyVersion: 0, syncWeights: async () => { policy.policyVersion += 1; } };
  return policy;
}

/** A trajectory of letter tokens: prompt [1, 2], three sampled tokens; with `envReply`, a second turn after the environment's tokens. */
function fakeTrajectory(taskIndex: number, reward: number, options: { envReply?: number[]; finishReason?: 'stop' | 'length' } = {}): ScoredTrajectory {
  const turns: Trajectory['turns'] = [{ finishReason: options.finishReason ?? 'stop', latencyMs: 0, tokens: { promptIds: [1, 2], completionIds: [3, 4, 5], completionLogprobs: [-2.5, -2.6, -2.7] } }];
  if (options.envReply) turns.push({ finishReason: 'stop', latencyMs: 0, tokens: { promptIds: options.envReply, completionIds: [6], completionLogprobs: [-2.4] } });
  return {
    taskIndex, prompt: [], completion: [], info: {}, state: { prompt: [], completion: [], info: {}, turn: turns.length },
    reward, scores: { fakeReward: reward }, errors: [], stopReason: options.finishReason === 'length' ? 'length' : 'completed', truncated: options.finishReason === 'length', turns,
    timings: { generationMs: 0, scoringMs: 0, totalMs: 0 }, passed: reward >= 1,
  };
}

/** A source whose reward is a function of (task, sampling seed); it records every call in order. */
function fakeSource(numTasks: number, reward: (taskIndex: number, seed: number) => number, calls: Array<{ taskIndex: number; seed: number }>, options: Parameters<typeof fakeTrajectory>[2] = {}): RolloutSource {
  return {
    name: 'fake',
    numTasks,
    rollout: async (taskIndex, samplingArgs) => {
      calls.push({ taskIndex, seed: samplingArgs.seed! });
      return fakeTrajectory(taskIndex, reward(taskIndex, samplingArgs.seed!), options);
    },
  };
}

async function runFake(backend: ModelBackend, source: RolloutSource, options: GrpoOptions) {
  const policy = countingPolicy();
  return new GrpoTrainer(source, backend, policy, { maxTokens: 3, schedule: { lr: 1e-2 }, maxAsync: 0, ...options }).run();
}

describe('dynamic sampling', () => {
  const seed = 2;
  const regular = taskIndicesForStep(0, 2, 10, seed);
  const extra = extraTaskIndicesForStep(0, 3, 10, seed);

  test('draws extra tasks in their fixed order until enough groups are informative, then stops', async () => {
    expect(regular).not.toContain(extra[1]); // the case below needs the one informative task outside the regular ones
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    const calls: Array<{ taskIndex: number; seed: number }> = [];
    // Only task extra[1] has rewards that differ within its group.
    const source = fakeSource(10, (task, s) => (task === extra[1] ? s % 2 : 1), calls);
    const [metrics] = await runFake(backend, source, { steps: 1, tasksPerStep: 2, groupSize: 2, seed, dynamicSampling: true, maxTasksPerStep: 5 });
    // Round 1: the 2 regular tasks (flat) → 2 more: extra[0] (flat), extra[1] (informative) → 1 more: extra[2]; then the bound (5 tasks).
    const groupTasks = calls.filter((_, i) => i % 2 === 0).map((call) => call.taskIndex);
    expect(groupTasks).toEqual([...regular, extra[0], extra[1], extra[2]]);
    expect(metrics!.tasksDrawn).toBe(5);
    expect(metrics!.zeroStdFraction).toBeCloseTo(4 / 5);
    expect(metrics!.groupsDropped).toBe(4);
    expect(metrics!.skipped).toBeUndefined();
    expect(metrics!.tokensTrained).toBe(2 * 3);
    // Every group samples with seeds of its own.
    expect(new Set(calls.map((call) => call.seed)).size).toBe(calls.length);
  });

  test('stops drawing once the step has tasksPerStep informative groups, and never past maxTasksPerStep', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    const informative: Array<{ taskIndex: number; seed: number }> = [];
    await runFake(backend, fakeSource(10, (_, s) => s % 2, informative), { steps: 1, tasksPerStep: 2, groupSize: 2, seed, dynamicSampling: true, maxTasksPerStep: 5 });
    expect(informative.length).toBe(4); // the regular tasks were enough
    const flat: Array<{ taskIndex: number; seed: number }> = [];
    const [metrics] = await runFake(backend, fakeSource(10, () => 1, flat), { steps: 1, tasksPerStep: 2, groupSize: 2, seed, dynamicSampling: true, maxTasksPerStep: 5 });
    expect(flat.length).toBe(5 * 2);
    expect(metrics!.zeroStdFraction).toBe(1);
    expect(metrics!.skipped).toContain('equal rewards');
  });

  test('off by default: a flat step draws its tasks only', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    const calls: Array<{ taskIndex: number; seed: number }> = [];
    const [metrics] = await runFake(backend, fakeSource(10, () => 1, calls), { steps: 1, tasksPerStep: 2, groupSize: 2, seed });
    expect(calls.map((call) => call.taskIndex)).toEqual([regular[0], regular[0], regular[1], regular[1]]);
    expect(metrics!.tasksDrawn).toBe(2);
    expect(() => new GrpoTrainer(fakeSource(10, () => 1, []), backend, countingPolicy(), { steps: 1, tasksPerStep: 4, dynamicSampling: true, maxTasksPerStep: 3 })).toThrow('maxTasksPerStep');
  });
});

describe('maxStaleness', () => {
  const run = async (staleRollouts: 'resample' | 'downweight') => {
    const backend = await createCpuBackend(CONFIG, { seed: 4 });
    const policy = new LetterPolicy(backend);
    return new GrpoTrainer(environmentRollouts(makeLetterEnv(), policy), backend, policy, { steps: 4, tasksPerStep: 1, groupSize: 4, maxTokens: 3, schedule: { lr: 1e-2 }, maxAsync: 2, maxStaleness: 1, staleRollouts }).run();
  };

  test('downweight: steps sampled 2 versions back (max-async 2) train at half weight', async () => {
    const metrics = await run('downweight');
    expect(metrics.map((m) => m.staleness)).toEqual([0, 1, 2, 2]);
    expect(metrics.map((m) => m.stale?.lossWeight ?? 1)).toEqual([1, 1, 0.5, 0.5]);
  });

  test('resample: those steps are rolled out again with the current weights', async () => {
    const metrics = await run('resample');
    expect(metrics.map((m) => m.staleness)).toEqual([0, 1, 0, 0]);
    expect(metrics.map((m) => m.stale?.resampled ?? 0)).toEqual([0, 0, 4, 4]);
  });
});

describe('truncation, entropy filtering and metrics', () => {
  test('maskTruncated leaves rollouts cut by the token limit out of the loss; they are counted either way', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    const source = fakeSource(4, (_, s) => s % 2, [], { finishReason: 'length' });
    const [kept] = await runFake(backend, source, { steps: 1, tasksPerStep: 1, groupSize: 2 });
    expect(kept!.truncatedFraction).toBe(1);
    expect(kept!.tokensTrained).toBe(6);
    const [masked] = await runFake(backend, source, { steps: 1, tasksPerStep: 1, groupSize: 2, maskTruncated: true });
    expect(masked!.truncatedFraction).toBe(1);
    expect(masked!.tokensTrained).toBe(0);
    expect(masked!.skipped).toContain('no rollout was left');
  });

  test('entropyTopQ trains on the top share of tokens by entropy (here −logp: 2.7 and 2.6 of each rollout at q = 0.5)', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    const source = fakeSource(4, (_, s) => s % 2, []);
    const [all] = await runFake(backend, source, { steps: 1, tasksPerStep: 1, groupSize: 2 });
    const [top] = await runFake(backend, source, { steps: 1, tasksPerStep: 1, groupSize: 2, entropyTopQ: 0.5 });
    expect(all!.tokensTrained).toBe(6);
    expect(top!.tokensTrained).toBe(4); // ⌈0.5·6⌉ = 3rd largest entropy is 2.6; both rollouts' 2.6 and 2.7 reach it
    expect(top!.entropy).toBeCloseTo(2.6, 5);
  });

  test('completion lengths, clip fractions and the loss types all report', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    const source = fakeSource(4, (_, s) => s % 2, [], { envReply: [7, 8] });
    for (const lossType of ['dapo', 'bnpo', 'grpo', 'dr_grpo'] as const) {
      const [m] = await runFake(backend, source, { steps: 1, tasksPerStep: 1, groupSize: 2, lossType, scaleRewards: 'group', importanceSampling: 'sequence' });
      expect(m!.completionLength).toEqual({ mean: 4, max: 4 });
      expect(Number.isFinite(m!.loss)).toBe(true);
      expect(m!.clipFractionLow + m!.clipFractionHigh).toBeCloseTo(m!.clipFraction);
      expect(m!.echoLoss).toBeGreaterThan(0);
    }
  });
});

describe('ECHO', () => {
  test('the ECHO loss’s parameter gradient matches finite differences of the loss (CPU backend)', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const sequence = buildTrainSequence([
      { promptIds: [1, 2], completionIds: [3, 4], completionLogprobs: [-2.5, -2.9] },
      { promptIds: [9, 10, 11], completionIds: [5], completionLogprobs: [-2.2] },
    ], 0.7);
    const batch = buildTrainBatch([sequence]);
    const options = { normalizer: 3, echoWeight: 0.5, echoNormalizer: 3 };
    const lossAt = async () => grpoLoss(await backend.logprobs(batch.ids, batch.targets, batch.B, batch.T, 1), batch, options).loss;
    const result = grpoLoss(await backend.logprobs(batch.ids, batch.targets, batch.B, batch.T, 1), batch, options);
    expect(result.echoTokens).toBe(3);
    await backend.zeroGrad();
    await backend.backward(batch.ids, batch.targets, result.weights, batch.B, batch.T, 1);
    const gradients = await backend.getGradients();
    const parameters = await backend.getParameters();
    const name = 'lm_head.weight';
    const gradient = gradients.get(name)!.data;
    // The entries of the rows of the ECHO targets 9, 10 and 11 (and a policy token's) with the largest gradients.
    const entries = [...gradient.keys()].sort((a, b) => Math.abs(gradient[b]!) - Math.abs(gradient[a]!)).slice(0, 6);
    const h = 1e-2;
    for (const at of entries) {
      const tensor = parameters.get(name)!;
      const shifted = (delta: number) => { const data = Float32Array.from(tensor.data); data[at]! += delta; return new Map([[name, { shape: tensor.shape, data }]]); };
      await backend.setParameters(shifted(h));
      const plus = await lossAt();
      await backend.setParameters(shifted(-h));
      const minus = await lossAt();
      await backend.setParameters(shifted(0));
      const numeric = (plus - minus) / (2 * h);
      expect(Math.abs(gradient[at]! - numeric), `entry ${at}: ${gradient[at]} vs ${numeric}`).toBeLessThan(2e-3 + 0.02 * Math.abs(numeric));
    }
    // Without ECHO the gradient differs: the environment tokens add their own.
    const plain = grpoLoss(await backend.logprobs(batch.ids, batch.targets, batch.B, batch.T, 1), batch, { normalizer: 3 });
    expect(plain.weights[batch.echoMask!.indexOf(1)]).toBe(0);
  });

  test('echoWeight changes the update only where environment tokens exist; echoLoss is their mean NLL', async () => {
    const multi = fakeSource(4, (_, s) => s % 2, [], { envReply: [7, 8] });
    const single = fakeSource(4, (_, s) => s % 2, []);
    const after = async (source: RolloutSource, echoWeight: number) => {
      const backend = await createCpuBackend(CONFIG, { seed: 3 });
      const [m] = await runFake(backend, source, { steps: 1, tasksPerStep: 1, groupSize: 2, echoWeight });
      return { m: m!, weights: (await backend.getParameters()).get('lm_head.weight')!.data };
    };
    const [plainMulti, echoMulti, plainSingle, echoSingle] = [await after(multi, 0), await after(multi, 0.5), await after(single, 0), await after(single, 0.5)];
    expect(echoMulti.weights).not.toEqual(plainMulti.weights);
    expect(echoSingle.weights).toEqual(plainSingle.weights);
    expect(plainSingle.m.echoLoss).toBe(0);
    expect(echoMulti.m.echoLoss).toBeCloseTo(plainMulti.m.echoLoss, 6); // measured before the update
    expect(echoMulti.m.echoLoss).toBeGreaterThan(1);
  });
});

describe('group rewards in training', () => {
  test('a group function sees each task’s whole group, adds to the reward and is logged', async () => {
    const seen: number[] = [];
    const rubric = new Rubric({ funcs: [letterDReward] }).addGroupReward(function rankReward(group) {
      seen.push(group.length);
      // 1 for the rollout with the most d's in its group (the first on a tie), 0 elsewhere.
      const counts = group.map((ctx) => [...ctx.completion[0]!.content].filter((c) => c === 'd').length);
      const best = counts.indexOf(Math.max(...counts));
      return counts.map((_, i) => (i === best ? 1 : 0));
    }, 0.5);
    const env = new SingleTurnEnv({ name: 'say-d-ranked', dataset: ['ab', 'ba'].map((question) => ({ question })), rubric });
    const backend = await createCpuBackend(CONFIG, { seed: 4 });
    const policy = new LetterPolicy(backend);
    const [m] = await new GrpoTrainer(environmentRollouts(env, policy), backend, policy, { steps: 1, tasksPerStep: 2, groupSize: 4, maxTokens: 3, maxAsync: 0 }).run();
    expect(seen).toEqual([4, 4]);
    expect(m!.rewards.rankReward).toBeCloseTo(0.25); // one winner in each group of 4
    expect(m!.reward.mean).toBeCloseTo(m!.rewards.letterDReward! + 0.5 * 0.25, 6);
  });
});
