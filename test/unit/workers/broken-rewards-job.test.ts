/**
 * The playground's GRPO job on rewards that measure nothing, in Node over a real comlink
 * MessageChannel, as group-rewards-relay.test.ts runs it: the sandbox's real API loads an
 * environment whose reward throws, the app's bridge answers its model calls with a letter policy,
 * and the engine's rollout source (sandboxRolloutSource, given the weights the page reads from the
 * sandbox's EnvironmentInfo) feeds the trainer. The job fails at its first step with the shared
 * rule's message instead of training on the zeros; a partial failure trains on.
 */
import * as Comlink from 'comlink';
import { afterEach, expect, test, vi } from 'vitest';
import { Rubric, SingleTurnEnv, type RewardFunction } from '../../../src/envs/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { BrokenRewardsError, GrpoTrainer } from '../../../src/rl/grpo-trainer.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';
import { sandboxRolloutSource } from '../../../src/workers/engine/sandbox-rollouts.ts';
import { PauseGate } from '../../../src/workers/engine/pause-gate.ts';
import { auditScoring } from '../../../src/ui/features/training/training-rollouts.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, letterDReward } from '../../support/letter-task.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox } = await import('../../../src/workers/sandbox-bridge.ts');

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

const buggy: RewardFunction = function buggy() {
  throw new Error('reward bug');
};

/** GRPO as the playground runs it, on the "say d" task scored by `funcs` with `weights`: the steps it trained, or its failure. */
async function trainThroughSandbox(funcs: RewardFunction[], weights: number[]) {
  const backend = await createCpuBackend(CONFIG, { seed: 3 });
  const policy = new LetterPolicy(backend);
  const env = () => new SingleTurnEnv({ name: 'say-d', dataset: ['ab', 'ba'].map((question) => ({ question })), rubric: new Rubric({ funcs, weights }) });
  const createFrame = async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    Comlink.expose(createSandboxApi(() => ({ default: env })), channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
  const session = await openSandbox({ code: 'env', label: 'say-d', args: {}, client: policy, timeLimitMs: 5_000, createFrame });
  const source = sandboxRolloutSource({
    name: session.info.name,
    numTasks: session.info.numTasks,
    rollout: (taskIndex, samplingArgs) => session.rollout(taskIndex, samplingArgs, 'policy'),
    signal: new AbortController().signal,
    pauseGate: new PauseGate(),
    // What training-actions.ts sends the engine (EngineGrpoOptions.rewardWeights).
    rewardWeights: auditScoring(session.info).weights,
  });
  try {
    return await new GrpoTrainer(source, backend, policy, { steps: 2, tasksPerStep: 2, groupSize: 2, maxTokens: 2 }).run();
  } finally {
    session.dispose();
  }
}

test('a reward that throws in every rollout fails the job at its first step, naming the function and the first error', async () => {
  const run = trainThroughSandbox([buggy], [1]);
  await expect(run).rejects.toThrow(BrokenRewardsError);
  await expect(run).rejects.toThrow(/^GRPO step 1: the reward function buggy failed in every rollout, so the rewards are not measurements; the first error: buggy threw: reward bug.*Fix the reward function and train again$/);
});

test('the same reward beside one that works trains every step, the errors counted', async () => {
  const metrics = await trainThroughSandbox([buggy, letterDReward], [1, 1]);
  expect(metrics).toHaveLength(2);
  expect(metrics[0]!.rolloutsWithErrors).toBe(4);
});
