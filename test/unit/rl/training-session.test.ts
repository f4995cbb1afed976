// The one training session with a host's own parts, as the engine worker runs it: GRPO alone from a
// rollout source of its own, no measurements, checkpoints to a store and progress to a reporter.
// The store hears every periodic checkpoint and the end's, each taken after its step's report and
// before the pause point; and a session continued from a checkpoint ends with the weights of one
// that was never interrupted (the resume of an interrupted run, whichever host runs it).
import { expect, test } from 'vitest';
import { openModel } from '../../../src/cli/open-model.ts';
import { loadBuiltinEnvironment } from '../../../src/envs/builtin/index.ts';
import { LocalChatClient } from '../../../src/gpu/inference/local-chat-client.ts';
import { environmentRollouts } from '../../../src/rl/grpo-trainer.ts';
import { runTrainingSession, type TrainingPosition, type TrainingRunOptions } from '../../../src/rl/training-session.ts';

const OPTIONS: TrainingRunOptions = { seed: 4, maxTokens: 4, evalTasks: 8, warmup: null, grpo: { steps: 4, tasksPerStep: 1, groupSize: 2, schedule: { lr: 1e-2 }, maxAsync: 1 }, checkpointEvery: 2 };

async function session(resumeFrom?: TrainingPosition, weights?: Awaited<ReturnType<Awaited<ReturnType<typeof openModel>>['backend']['getParameters']>>) {
  const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 5, numTasks: 20 });
  const model = await openModel('tiny', { backend: 'cpu', seed: 4 });
  if (weights) await model.backend.setParameters(weights);
  const policy = new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, defaultMaxTokens: 4 });
  const events: string[] = [];
  const saved: TrainingPosition[] = [];
  const report = await runTrainingSession(
    {
      backend: model.backend,
      policy,
      padId: model.tokenizer.padId,
      rollouts: environmentRollouts(env, policy),
      checkpoints: {
        save: async (position) => {
          saved.push(position);
          events.push(`checkpoint ${position.phase} ${position.nextStep}`);
        },
      },
      reporter: {
        grpoStep: (metrics) => void events.push(`step ${metrics.step}`),
        betweenSteps: async () => void events.push('between'),
      },
    },
    { ...OPTIONS, ...(resumeFrom ? { resumeFrom } : {}) },
  );
  return { report, events, saved, model };
}

test('a GRPO-only session with no measurer takes no measurement, checkpoints every 2 steps after the report and before the pause point', { timeout: 120_000 }, async () => {
  const { report, events, saved, model } = await session();
  expect(report.evaluations).toEqual([]);
  expect(report.grpo.map((m) => m.step)).toEqual([0, 1, 2, 3]);
  expect(events).toEqual(['step 0', 'between', 'step 1', 'checkpoint grpo 2', 'between', 'step 2', 'between', 'step 3', 'checkpoint grpo 4', 'between']);
  // With max-async 1 the checkpoint after step 1 keeps the rollouts of step 2, sampled ahead.
  expect(saved[0]!.rolloutsAhead?.map((batch) => batch.step)).toEqual([2]);
  // The last periodic checkpoint is the end's position: it is not taken twice.
  expect(saved.map((position) => position.nextStep)).toEqual([2, 4]);
  model.backend.dispose();
});

test('continued from its checkpoint after step 1, the session ends with the weights of the uninterrupted one', { timeout: 180_000 }, async () => {
  const whole = await session();
  const uninterrupted = await whole.model.backend.getParameters();
  whole.model.backend.dispose();

  // The first half: stopped by its step count at 2, as a checkpoint would leave it.
  const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 5, numTasks: 20 });
  const first = await openModel('tiny', { backend: 'cpu', seed: 4 });
  const policy = new LocalChatClient({ backend: first.backend, tokenizer: first.tokenizer, defaultMaxTokens: 4 });
  let position: TrainingPosition | undefined;
  let optimizer: Awaited<ReturnType<typeof first.backend.getOptimizerState>> | undefined;
  let weights: Awaited<ReturnType<typeof first.backend.getParameters>> | undefined;
  const stop = new AbortController();
  await runTrainingSession(
    {
      backend: first.backend,
      policy,
      padId: first.tokenizer.padId,
      rollouts: environmentRollouts(env, policy),
      checkpoints: {
        save: async (saved) => {
          if (position) return;
          position = saved;
          weights = await first.backend.getParameters();
          optimizer = await first.backend.getOptimizerState();
          stop.abort();
        },
      },
      signal: stop.signal,
    },
    OPTIONS,
  );
  first.backend.dispose();
  expect(position?.nextStep).toBe(2);

  const second = await openModel('tiny', { backend: 'cpu', seed: 4 });
  await second.backend.setParameters(weights!);
  await second.backend.setOptimizerState(optimizer!);
  const secondPolicy = new LocalChatClient({ backend: second.backend, tokenizer: second.tokenizer, defaultMaxTokens: 4 });
  const rest = await runTrainingSession({ backend: second.backend, policy: secondPolicy, padId: second.tokenizer.padId, rollouts: environmentRollouts(env, secondPolicy) }, { ...OPTIONS, resumeFrom: position! });
  expect(rest.grpo.map((m) => m.step)).toEqual([2, 3]);
  const resumed = await second.backend.getParameters();
  for (const [name, tensor] of uninterrupted) expect(Array.from(resumed.get(name)!.data), name).toEqual(Array.from(tensor.data));
  second.backend.dispose();
});
