// runTraining's checkpoints around the measurement after the warm-up: a stop during it must not leave
// a checkpoint that says GRPO step 0 (the measurement would be lost for good on resume).
import { expect, test } from 'vitest';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../../src/envs/builtin/index.ts';
import { ScriptedClient } from '../../../src/envs/index.ts';
import { runTraining, type TrainingPosition, type TrainingRunOptions } from '../../../src/rl/training-run.ts';
import { openModel } from '../../../src/cli/open-model.ts';
import { createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import type { ModelBackend } from '../../../src/gpu/model/backend.ts';

const OPTIONS: TrainingRunOptions = {
  seed: 3,
  maxTokens: 4,
  evalTasks: 2,
  warmup: { demonstrations: 8, steps: 2, batchSize: 2, lr: 3e-3 },
  grpo: null,
};

test('a stop during the measurement after warm-up leaves the checkpoint before it, and a resume takes the measurement', { timeout: 120_000 }, async () => {
  const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 5, numTasks: 20 });
  const expert = new ScriptedClient(await loadBuiltinExpert('reverse-text', env));
  const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
  const stop = new AbortController();
  const saved: TrainingPosition[] = [];
  const first = await runTraining(env, model, expert, OPTIONS, {
    signal: stop.signal,
    onPhase: (phase, detail) => {
      if (phase === 'evaluate' && detail === 'after warm-up') stop.abort();
    },
    onCheckpoint: (position) => { saved.push(position); },
  });
  expect(first.evaluations.map((evaluation) => evaluation.label)).toEqual(['before']);
  expect(saved.at(-1)).toEqual({ phase: 'sft', nextStep: 2 });
  expect(saved.some((position) => position.phase === 'grpo')).toBe(false);

  const resumedSaves: TrainingPosition[] = [];
  const resumed = await runTraining(env, model, expert, { ...OPTIONS, resumeFrom: { phase: 'sft', nextStep: 2 } }, { onCheckpoint: (position) => { resumedSaves.push(position); } });
  expect(resumed.sft).toEqual([]);
  expect(resumed.evaluations.map((evaluation) => evaluation.label)).toEqual(['after warm-up']);
  expect(resumedSaves).toEqual([{ phase: 'sft', nextStep: 2 }, { phase: 'grpo', nextStep: 0 }]);
  model.backend.dispose();
});

test("a model's createDecoder is what the run's measurements and GRPO games sample with", { timeout: 120_000 }, async () => {
  const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 5, numTasks: 20 });
  const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
  let built = 0;
  const createDecoder = async (backend: ModelBackend) => {
    built += 1;
    return createCpuDecoder(backend);
  };
  const report = await runTraining(env, { ...model, createDecoder }, null, { ...OPTIONS, warmup: null, grpo: { steps: 1, tasksPerStep: 1, groupSize: 2, schedule: { lr: 1e-3 }, maxAsync: 0 } });
  expect(report.evaluations.map((evaluation) => evaluation.label)).toEqual(['before', 'after GRPO']);
  expect(built).toBeGreaterThan(0); // the run sampled with it, not with a CPU decoder of its own
  model.backend.dispose();
});
