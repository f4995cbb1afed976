/**
 * The fast CPU backend gives the same results on 1 and on 2 kernel threads: the pool splits a gemm
 * by output rows and attention by (batch, KV head), and every output element keeps its order of
 * summation, so the objective, every gradient, the log-probs and the weights after two AdamW steps
 * are expected bitwise equal. The shapes are big enough that the matmuls and the attention are
 * over the pool's threshold (2 MFLOP) and do run split at 2 threads, and are off the kernel's blocks.
 */
import { describe, expect, it } from 'vitest';
import { createFastCpuBackend } from '../../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import type { ModelBackend, ModelBackendOptions } from '../../../../src/gpu/model/backend.ts';
import { FAST_CPU_TEST_STEP, fastCpuTestBatch, fastCpuTestConfig, kernelPoolsForFile } from '../../../support/fast-cpu-setup.ts';

const CONFIG = fastCpuTestConfig({ vocab_size: 267, hidden_size: 130, intermediate_size: 350, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 16 });
// Attention forward: 2·B·NH·T²·HS = 3.1 MFLOP over B·KVH = 6 units; the MLP matmuls 2·(B·T)·130·350 = 17 MFLOP.
const B = 3, T = 63;
const { ids, targets, weights } = fastCpuTestBatch(CONFIG, B, T, 31);
const STEP = FAST_CPU_TEST_STEP;
const pools = kernelPoolsForFile([1, 2]);
const oneThread = pools.get(1)!;
const twoThreads = pools.get(2)!;

/** Everything the contract exposes after the same log-probs, backward and two steps. */
async function run(backend: ModelBackend): Promise<{ logprobs: Float32Array; objectives: number[]; gradNorms: number[]; gradients: Map<string, Float32Array>; parameters: Map<string, Float32Array> }> {
  const logprobs = await backend.logprobs(ids, targets, B, T, 0.7);
  const objectives = [await backend.backward(ids, targets, weights, B, T, 1)];
  const gradients = new Map([...(await backend.getGradients())].map(([name, tensor]) => [name, tensor.data.slice()]));
  const gradNorms = [(await backend.step(STEP)).gradNorm];
  await backend.zeroGrad();
  objectives.push(await backend.backward(ids, targets, weights, B, T, 1));
  gradNorms.push((await backend.step(STEP)).gradNorm);
  const parameters = new Map([...(await backend.getParameters())].map(([name, tensor]) => [name, tensor.data.slice()]));
  return { logprobs, objectives, gradNorms, gradients, parameters };
}

/** Runs the same work on both pools and expects identical results. */
async function compareThreadCounts(options: ModelBackendOptions): Promise<void> {
  expect((await oneThread).threadCount).toBe(1);
  expect((await twoThreads).threadCount).toBe(2);
  const single = await run(await createFastCpuBackend(CONFIG, { seed: 7 }, { ...options, loraSeed: 8 }, await oneThread));
  const split = await run(await createFastCpuBackend(CONFIG, { seed: 7 }, { ...options, loraSeed: 8 }, await twoThreads));
  expect(split.objectives).toEqual(single.objectives);
  expect(split.objectives.every(Number.isFinite)).toBe(true);
  expect(split.gradNorms).toEqual(single.gradNorms);
  expect(split.gradNorms[0]).toBeGreaterThan(0);
  expect(split.logprobs).toEqual(single.logprobs);
  expect([...split.gradients.keys()]).toEqual([...single.gradients.keys()]);
  for (const [name, gradient] of single.gradients) expect(split.gradients.get(name), name).toEqual(gradient);
  for (const [name, parameter] of single.parameters) expect(split.parameters.get(name), `${name} after 2 steps`).toEqual(parameter);
}

describe('fast cpu backend: 1 thread against 2 threads', () => {
  it('full fine-tuning: the same log-probs, objective, gradients and weights after 2 AdamW steps', async () => {
    await compareThreadCounts({});
  });

  it('LoRA: the same, with only the adapters training', async () => {
    await compareThreadCounts({ lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'o_proj', 'gate_proj', 'down_proj'] } });
  });
});
