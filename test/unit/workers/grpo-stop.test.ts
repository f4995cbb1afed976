/**
 * Stop during a playground GRPO job, as the engine worker runs it: the trainer over the engine's
 * rollout source (sandboxRolloutSource), whose rollouts the app's sandbox answers. With max-async 1
 * the next step's rollouts are in flight while a step trains; once Stop shuts the sandbox down they
 * reject with "stopped". That rejection must reach whoever waits for the batch, never the worker's
 * global scope as an unhandled rejection (in the tab: an uncaught `stopped` error).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { environmentRollouts, GrpoTrainer } from '../../../src/rl/grpo-trainer.ts';
import { PauseGate } from '../../../src/workers/engine/pause-gate.ts';
import { sandboxRolloutSource } from '../../../src/workers/engine/sandbox-rollouts.ts';
import type { SandboxTrajectory } from '../../../src/workers/sandbox-bridge.ts';
import { Rubric, SingleTurnEnv, type RewardContext } from '../../../src/envs/index.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, makeLetterEnv } from '../../support/letter-task.ts';

const unhandled: unknown[] = [];
const collect = (reason: unknown) => unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', collect);
  unhandled.length = 0;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Stop during GRPO with rollouts sampled ahead', () => {
  test('the next step\'s rollouts failing with "stopped" before the step the run waits for are no unhandled rejection', async () => {
    process.on('unhandledRejection', collect);
    const backend = await createCpuBackend(CONFIG, { seed: 5 });
    const policy = new LetterPolicy(backend);
    const stop = new AbortController();
    const groupSize = 4;
    // The app's side at Stop: the rollouts of step 0 (the step the run waits for) wind down and come back
    // 30 ms later; those sampled ahead for step 1 fail sooner, 5 ms after Stop, as the shut-down sandbox's calls do.
    const sandbox = environmentRollouts(makeLetterEnv(), policy);
    let calls = 0;
    const appRollout = (taskIndex: number, samplingArgs: Parameters<typeof sandbox.rollout>[1]): Promise<SandboxTrajectory> => {
      calls += 1;
      const stepZero = calls <= groupSize;
      return new Promise((resolve, reject) =>
        stop.signal.addEventListener('abort', () => {
          if (stepZero) setTimeout(() => resolve(sandbox.rollout(taskIndex, samplingArgs, { step: 0 })), 30);
          else setTimeout(() => reject(new Error('stopped')), 5);
        }),
      );
    };
    const source = sandboxRolloutSource({ name: 'say-d', numTasks: 4, rollout: appRollout, signal: stop.signal, pauseGate: new PauseGate() });
    const trainer = new GrpoTrainer(source, backend, policy, { steps: 3, tasksPerStep: 1, groupSize, maxTokens: 2, schedule: { lr: 1e-2 }, maxAsync: 1 });
    const steps: number[] = [];
    const run = trainer.run({ signal: stop.signal, onStep: (metrics) => void steps.push(metrics.step) });
    // Stop once both steps' rollouts are in flight.
    await expect.poll(() => calls).toBe(2 * groupSize);
    stop.abort();
    const outcome = await run.then(
      () => 'ended',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    await sleep(20);
    // Stopped before step 0 trained: nothing was trained, and the run ended without an error.
    expect(outcome).toBe('ended');
    expect(steps).toEqual([]);
    expect(unhandled).toEqual([]);
  });
  test('the next step\'s rollouts failing with "stopped" while a step trains are no unhandled rejection', async () => {
    process.on('unhandledRejection', collect);
    const backend = await createCpuBackend(CONFIG, { seed: 5 });
    const policy = new LetterPolicy(backend);
    const stop = new AbortController();
    const groupSize = 4;
    // A reward that differs between almost any two replies (the first letter's place in a..p), so step 0 has something to train on.
    const firstLetter = (ctx: RewardContext) => (ctx.completion[0]!.content.charCodeAt(0) - 97) / 15;
    const sandbox = environmentRollouts(new SingleTurnEnv({ name: 'first-letter', dataset: ['ab', 'ba', 'cc', 'ac'].map((question) => ({ question })), rubric: new Rubric({ funcs: [firstLetter] }) }), policy);
    let calls = 0;
    // Step 0's rollouts come back at once; those sampled ahead for step 1 are under way at Stop and fail 5 ms after it.
    const appRollout = (taskIndex: number, samplingArgs: Parameters<typeof sandbox.rollout>[1]): Promise<SandboxTrajectory> => {
      calls += 1;
      if (calls <= groupSize) return sandbox.rollout(taskIndex, samplingArgs, { step: 0 });
      return new Promise((_resolve, reject) => stop.signal.addEventListener('abort', () => setTimeout(() => reject(new Error('stopped')), 5)));
    };
    // Stop comes while step 0 trains, as its gradient norm is read back (30 ms here, as a GPU read-back takes a while).
    let trained = 0;
    const training = Object.assign(Object.create(backend) as typeof backend, {
      gradNorm: async () => {
        trained += 1;
        stop.abort();
        await sleep(30);
        return backend.gradNorm();
      },
    });
    const source = sandboxRolloutSource({ name: 'first-letter', numTasks: 4, rollout: appRollout, signal: stop.signal, pauseGate: new PauseGate() });
    const trainer = new GrpoTrainer(source, training, policy, { steps: 3, tasksPerStep: 1, groupSize, maxTokens: 2, schedule: { lr: 1e-2 }, maxAsync: 1, temperature: 2 });
    const steps: number[] = [];
    const outcome = await trainer.run({ signal: stop.signal, onStep: (metrics) => void steps.push(metrics.step) }).then(
      () => 'ended',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    await sleep(20);
    expect(trained).toBe(1);
    // Step 0 was trained; the run then ends on step 1's stopped rollouts (the engine worker reports a stopped job's steps so far).
    expect(steps).toEqual([0]);
    expect(outcome).toBe('stopped');
    expect(unhandled).toEqual([]);
  }, 30_000);
});
