/**
 * Group rewards in the playground's GRPO jobs, in Node over a real comlink MessageChannel: the
 * sandbox's real API (createSandboxApi) runs an environment with a group reward, the app's real
 * bridge (openSandbox) answers its model calls with a letter policy on the CPU backend, and the
 * engine's rollout source (sandboxRolloutSource) feeds the GRPO trainer as the engine worker does.
 * A group reward's scores reach the step's rewards; a throwing one is an error on its group's
 * rollouts; a fatal one stops the run; a hanging one hits the sandbox's time limit.
 */
import { describe, expect, test, vi } from 'vitest';
import { Rubric, SingleTurnEnv, type GroupRewardFunction } from '../../../src/envs/index.ts';
import { JudgeError } from '../../../src/envs/studio/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { GrpoTrainer, TrainingError } from '../../../src/rl/grpo-trainer.ts';
import { sandboxRolloutSource } from '../../../src/workers/engine/sandbox-rollouts.ts';
import { PauseGate } from '../../../src/workers/engine/pause-gate.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, letterDReward } from '../../support/letter-task.ts';
import { inProcessSandboxFrame } from '../../support/in-process-sandbox-frame.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox, SandboxTimeoutError } = await import('../../../src/workers/sandbox-bridge.ts');

/** The "say d" task (two prompts) with `groupReward` as the group reward `positionReward`, weight 0.5. */
function letterEnvWith(groupReward: GroupRewardFunction) {
  return new SingleTurnEnv({
    name: 'say-d-grouped',
    dataset: ['ab', 'ba'].map((question) => ({ question })),
    rubric: new Rubric({ funcs: [letterDReward], groupRewards: [{ fn: groupReward, weight: 0.5, name: 'positionReward' }] }),
  });
}

/** GRPO in this process as the playground runs it: rollouts and group scores asked of a sandbox session. */
async function trainThroughSandbox(groupReward: GroupRewardFunction, timeLimitMs = 5_000) {
  const backend = await createCpuBackend(CONFIG, { seed: 3 });
  const policy = new LetterPolicy(backend);
  const session = await openSandbox({ code: 'env', label: 'say-d-grouped', args: {}, client: policy, timeLimitMs, createFrame: inProcessSandboxFrame(() => letterEnvWith(groupReward)) });
  const source = sandboxRolloutSource({
    name: session.info.name,
    numTasks: session.info.numTasks,
    rollout: (taskIndex, samplingArgs) => session.rollout(taskIndex, samplingArgs, 'policy'),
    ...(session.info.groupRewardNames?.length ? { scoreGroup: session.scoreGroup } : {}),
    signal: new AbortController().signal,
    pauseGate: new PauseGate(),
  });
  const viewed: ReturnType<typeof source.takeStep>[] = [];
  const trainer = new GrpoTrainer(source, backend, policy, { steps: 1, tasksPerStep: 2, groupSize: 4, maxTokens: 2 });
  try {
    const metrics = await trainer.run({ onStep: (step) => { viewed.push(source.takeStep(step.step)); } });
    return { info: session.info, metrics, viewed };
  } finally {
    session.dispose();
  }
}

describe('group rewards in a GRPO job over the sandbox', () => {
  test("a group reward runs in the sandbox on each whole group, and its scores reach the step's rewards and the viewer's rollouts", async () => {
    const groupsSeen: string[][] = [];
    // Scores the rollouts of a group by their place in it: 0, 1/3, 2/3, 1 (mean 0.5, whatever was sampled).
    const positionReward: GroupRewardFunction = (group) => {
      groupsSeen.push(group.map((ctx) => String(ctx.prompt.at(-1)?.content)));
      return group.map((_, i) => i / (group.length - 1));
    };
    const { info, metrics, viewed } = await trainThroughSandbox(positionReward);
    expect(info.groupRewardNames).toEqual(['positionReward']);
    expect(info.groupRewardWeights).toEqual([0.5]);
    // Two groups of four, each one task's rollouts.
    expect(groupsSeen).toHaveLength(2);
    for (const group of groupsSeen) {
      expect(group).toHaveLength(4);
      expect(new Set(group).size).toBe(1);
    }
    const step = metrics[0]!;
    expect(step.rewards.positionReward).toBeCloseTo(0.5, 9);
    expect(step.rolloutsWithErrors).toBe(0);
    // The viewer gets the group-scored rollouts: each reward is its letter score plus 0.5 × its place.
    const rollouts = viewed[0]!;
    expect(rollouts).toHaveLength(8);
    rollouts.forEach((trajectory, i) => {
      const place = (i % 4) / 3;
      expect(trajectory.scores.positionReward).toBeCloseTo(place, 9);
      expect(trajectory.reward).toBeCloseTo(trajectory.scores.letterDReward! + 0.5 * place, 9);
    });
    const meanReward = rollouts.reduce((sum, t) => sum + t.reward, 0) / rollouts.length;
    expect(step.reward.mean).toBeCloseTo(meanReward, 9);
  });

  test("a throwing group reward is an error on its group's rollouts (scored 0), and training goes on", async () => {
    const { metrics, viewed } = await trainThroughSandbox(() => {
      throw new Error('ranking exploded');
    });
    expect(metrics).toHaveLength(1);
    expect(metrics[0]!.rolloutsWithErrors).toBe(8);
    expect(metrics[0]!.rewards.positionReward).toBe(0);
    for (const trajectory of viewed[0]!) {
      expect(trajectory.errors).toContainEqual(expect.objectContaining({ source: 'reward', name: 'positionReward', message: expect.stringContaining('ranking exploded') }));
    }
  });

  test('a fatal group reward (an unreachable judge) stops the run with its message, as a per-rollout one does', async () => {
    const run = trainThroughSandbox(() => {
      throw new JudgeError('the judge is unreachable (network): connection refused', 'unreachable');
    });
    await expect(run).rejects.toThrow(TrainingError);
    await expect(run).rejects.toThrow(/positionReward.*the judge is unreachable/);
  });

  test('a group reward that never returns hits the time limit: the sandbox is shut down, naming the group', async () => {
    const run = trainThroughSandbox(() => new Promise<number[]>(() => {}), 200);
    await expect(run).rejects.toThrow(SandboxTimeoutError);
    await expect(run).rejects.toThrow(/group rewards of task \d.*more than 0\.2 s/);
  });
});
