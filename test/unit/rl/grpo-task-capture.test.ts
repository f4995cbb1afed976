// GRPO draws a step's tasks when it samples the step: a rollout sampled ahead of a task-pool refresh (synthesis during training, max-async 1)
// rolls out and is scored against the task it was drawn for, even when it starts after the refresh retired that task; and a run resumed
// from a checkpoint taken after the refresh (the new pool, the rollouts sampled before it) trains as the uninterrupted run.
import { describe, expect, test } from 'vitest';
import { Rubric, SingleTurnEnv, type RewardContext, type Task } from '../../../src/envs/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { environmentRollouts, GrpoTrainer, type GrpoOptions, type GrpoStepMetrics, type RolloutSource, type SavedRolloutBatch } from '../../../src/rl/grpo-trainer.ts';
import { taskIndicesForStep } from '../../../src/rl/task-order.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy } from '../../support/letter-task.ts';

const SEED = 2;
const OPTIONS: GrpoOptions = { steps: 3, tasksPerStep: 1, groupSize: 8, maxTokens: 4, schedule: { lr: 3e-2 }, maxAsync: 1, concurrency: 1, seed: SEED, weightDecay: 0 };

/** Reward: the share of emitted letters that are the task's answer (a letter outside a..p is never emitted: reward 0, a flat group). */
const answerLetterReward = (ctx: RewardContext) => [...ctx.completion[0]!.content].filter((c) => c === ctx.answer).length / ctx.completion[0]!.content.length;

/** Pool A: step 0's task asks for "z" (flat rewards, so step 0 skips its update and does not wait for step 1's rollouts); the other asks for "d". */
function poolA(): Task[] {
  const first = taskIndicesForStep(0, 1, 2, SEED)[0]!;
  return [0, 1].map((i) => (i === first ? { question: 'ab', answer: 'z' } : { question: 'ba', answer: 'd' }));
}
/** The refreshed pool: one new task; both of pool A's are retired. */
const POOL_B: Task[] = [{ question: 'cd', answer: 'e' }];

interface Rolled {
  step: number;
  question: string;
  answer: string | undefined;
  reward: number;
}

/**
 * A run whose pool is refreshed after step 0 (in onStep, as tabrl train's refresher does). Step 1 is sampled ahead before the refresh, and
 * its rollouts are held until the refresh is done, so each starts after it. With `stopAfterRefresh`, the run saves what a checkpoint after
 * step 0 holds (weights, optimizer, the pool, the rollouts ahead) and stops there.
 */
async function runWithRefresh(options: { stopAfterRefresh?: boolean } = {}) {
  const backend = await createCpuBackend(CONFIG, { seed: 7 });
  const policy = new LetterPolicy(backend);
  const env = new SingleTurnEnv({ name: 'letters', dataset: poolA(), rubric: new Rubric({ funcs: [answerLetterReward] }) });
  const inner = environmentRollouts(env, policy);
  let refreshed!: () => void;
  const refreshDone = new Promise<void>((resolve) => (refreshed = resolve));
  const rolled: Rolled[] = [];
  const source: RolloutSource = {
    ...inner,
    get numTasks() {
      return inner.numTasks;
    },
    rollout: async (taskIndex, samplingArgs, rolloutOptions) => {
      if (rolloutOptions.step === 1) await refreshDone;
      const trajectory = await inner.rollout(taskIndex, samplingArgs, rolloutOptions);
      rolled.push({ step: rolloutOptions.step, question: trajectory.prompt.at(-1)!.content, answer: trajectory.answer, reward: trajectory.reward });
      return trajectory;
    },
  };
  const stop = new AbortController();
  const trainer = new GrpoTrainer(source, backend, policy, OPTIONS);
  let checkpoint: { weights: Awaited<ReturnType<typeof backend.getParameters>>; optimizer: Awaited<ReturnType<typeof backend.getOptimizerState>>; pool: Task[]; ahead: SavedRolloutBatch[] } | undefined;
  const metrics = await trainer.run({
    signal: stop.signal,
    onStep: async (m) => {
      if (m.step !== 0) return;
      env.dataset.splice(0, env.dataset.length, ...POOL_B);
      refreshed();
      if (!options.stopAfterRefresh) return;
      const ahead = await trainer.rolloutsAhead();
      checkpoint = { weights: await backend.getParameters(), optimizer: await backend.getOptimizerState(), pool: [...env.dataset], ahead: ahead! };
      stop.abort();
    },
  });
  return { metrics, rolled, checkpoint };
}

/** The same run resumed at step 1 from `checkpoint`, as tabrl train --resume does. */
async function resume(checkpoint: NonNullable<Awaited<ReturnType<typeof runWithRefresh>>['checkpoint']>): Promise<GrpoStepMetrics[]> {
  const backend = await createCpuBackend(CONFIG, { seed: 99 });
  await backend.setParameters(checkpoint.weights);
  await backend.setOptimizerState(checkpoint.optimizer);
  const policy = new LetterPolicy(backend);
  const env = new SingleTurnEnv({ name: 'letters', dataset: checkpoint.pool, rubric: new Rubric({ funcs: [answerLetterReward] }) });
  const trainer = new GrpoTrainer(environmentRollouts(env, policy), backend, policy, { ...OPTIONS, startStep: 1, rolloutsAhead: checkpoint.ahead });
  return trainer.run();
}

describe('GRPO with the task pool refreshed between steps (max-async 1)', () => {
  test('a rollout sampled before the refresh is scored against its own task, though it starts after the refresh retired it', async () => {
    const { metrics, rolled } = await runWithRefresh();
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    expect(metrics[0]!.skipped).toContain('every group had equal rewards');
    const [asked, other] = [poolA()[taskIndicesForStep(0, 1, 2, SEED)[0]!]!, poolA()[1 - taskIndicesForStep(0, 1, 2, SEED)[0]!]!];
    // Step 1 was drawn from pool A before the refresh: all 8 of its rollouts roll out pool A's other task and are scored for its answer "d".
    const stepOne = rolled.filter((r) => r.step === 1);
    expect(stepOne).toHaveLength(8);
    expect(stepOne.every((r) => r.question === other.question && r.answer === 'd')).toBe(true);
    expect(metrics[1]!.rewards.answerLetterReward).toBeCloseTo(stepOne.reduce((sum, r) => sum + r.reward, 0) / 8, 12);
    // Step 0 had pool A's first task; step 2, sampled after the refresh, draws from the refreshed pool.
    expect(rolled.filter((r) => r.step === 0).every((r) => r.question === asked.question && r.answer === 'z')).toBe(true);
    expect(rolled.filter((r) => r.step === 2).every((r) => r.question === 'cd' && r.answer === 'e')).toBe(true);
  });

  test('resumed from a checkpoint taken after the refresh (the new pool, the rollouts sampled before it), the run trains as the uninterrupted one', async () => {
    const whole = await runWithRefresh();
    const stopped = await runWithRefresh({ stopAfterRefresh: true });
    const checkpoint = stopped.checkpoint!;
    expect(checkpoint.pool).toEqual(POOL_B);
    // The checkpoint keeps step 1's rollouts as sampled: pool A's task, though the pool it saves no longer has it.
    expect(checkpoint.ahead.map((batch) => batch.step)).toEqual([1]);
    expect(checkpoint.ahead[0]!.trajectories.every((t) => t.answer === 'd' && t.prompt.at(-1)!.content === 'ba')).toBe(true);
    const resumed = await resume(checkpoint);
    expect(resumed.map((m) => m.step)).toEqual([1, 2]);
    const figures = (m: GrpoStepMetrics) => ({ reward: m.reward, loss: m.loss, gradNorm: m.gradNorm, skipped: m.skipped, tokensTrained: m.tokensTrained });
    expect(resumed.map(figures)).toEqual(whole.metrics.slice(1).map(figures));
    // Not a trivial match: step 1 trained (its group for "d" was informative).
    expect(whole.metrics[1]!.skipped).toBeUndefined();
  });
});
