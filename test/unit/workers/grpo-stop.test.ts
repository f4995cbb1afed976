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
});
