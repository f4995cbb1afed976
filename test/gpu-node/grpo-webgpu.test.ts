/**
 * GRPO on the WebGPU backend (Dawn; the software adapter in CI): a tiny random model learns, from
 * reward alone, to emit the rewarded letter, and its mean reward climbs by a clear margin between
 * the first and the last steps. Seeded, so the run is the same every time. No adapter is a failure.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { environmentRollouts, GrpoTrainer, type GrpoStepMetrics } from '../../src/rl/grpo-trainer.ts';
import { LETTER_MODEL, LetterPolicy, makeLetterEnv } from '../support/letter-task.ts';

let context: GPUContext;
beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node GRPO' });
});
afterAll(() => context?.device.destroy());

test('GRPO on WebGPU: a tiny model learns a rewarded behaviour in 30 seeded steps', async () => {
  const backend = await createWebGPUBackend(context, LETTER_MODEL, { seed: 3 });
  const metrics: GrpoStepMetrics[] = [];
  const policy = new LetterPolicy(backend);
  const trainer = new GrpoTrainer(environmentRollouts(makeLetterEnv(), policy), backend, policy, {
    steps: 30, tasksPerStep: 2, groupSize: 8, maxTokens: 4, schedule: { lr: 3e-2 }, maxAsync: 0, microBatchSize: 8, seed: 1,
  });
  await trainer.run({ onStep: (m) => { metrics.push(m); } });
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const first = mean(metrics.slice(0, 5).map((m) => m.reward.mean));
  const last = mean(metrics.slice(-5).map((m) => m.reward.mean));
  expect(first).toBeLessThan(0.3);
  expect(last).toBeGreaterThan(first + 0.4);
  expect(metrics.every((m) => m.skipped !== undefined || (Number.isFinite(m.loss) && m.gradNorm > 0))).toBe(true);
  expect(context.firstError()).toBeUndefined();

  // Checkpoint round trip: AdamW's moments and step move to a fresh backend unchanged.
  const state = await backend.getOptimizerState();
  expect(state.step).toBe(metrics.filter((m) => !m.skipped).length);
  const restored = await createWebGPUBackend(context, LETTER_MODEL, { tensors: await backend.getParameters() });
  await restored.setOptimizerState(state);
  const again = await restored.getOptimizerState();
  expect(again.step).toBe(state.step);
  for (const [name, tensor] of state.v) expect(again.v.get(name)!.data, name).toEqual(tensor.data);
  for (const [name, tensor] of state.m) expect(again.m.get(name)!.data, name).toEqual(tensor.data);
  restored.dispose();
  backend.dispose();
});
