/**
 * The fast CPU backend against the reference backend through the ModelBackend contract, on a model
 * big enough that its matmuls and attention are split over two worker threads: logits, log-probs,
 * the objective and every gradient of one backward, then three AdamW steps, with full fine-tuning
 * and with LoRA (where only the adapters train and the frozen base still needs dinp).
 */
import { describe, expect, it } from 'vitest';
import { createFastCpuBackend } from '../../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import type { ModelBackend, ModelBackendOptions } from '../../../../src/gpu/model/backend.ts';
import { createCpuBackend } from '../../../../src/gpu/model/cpu-backend.ts';
import { FAST_CPU_TEST_STEP, fastCpuTestBatch, fastCpuTestConfig, kernelPoolsForFile } from '../../../support/fast-cpu-setup.ts';
import { expectClose } from '../../../support/expect-close.ts';

const CONFIG = fastCpuTestConfig({ vocab_size: 77, hidden_size: 60, intermediate_size: 100, num_attention_heads: 6, num_key_value_heads: 2, head_dim: 10 });
const B = 3, T = 45;
const { ids, targets, weights } = fastCpuTestBatch(CONFIG, B, T, 21);
const STEP = FAST_CPU_TEST_STEP;
const kernelsPromise = kernelPoolsForFile([2]).get(2)!;

/** Runs the same backward and three steps on both backends and compares everything the contract exposes. */
async function compareBackends(options: ModelBackendOptions): Promise<void> {
  const reference: ModelBackend = await createCpuBackend(CONFIG, { seed: 5 }, { ...options, loraSeed: 6 });
  const fast: ModelBackend = await createFastCpuBackend(CONFIG, { seed: 5 }, { ...options, loraSeed: 6 }, await kernelsPromise);
  expectClose(await fast.forward(ids, B, T), await reference.forward(ids, B, T), { atol: 1e-5, rtol: 1e-4, label: 'logits' });
  expectClose(await fast.logprobs(ids, targets, B, T, 0.7), await reference.logprobs(ids, targets, B, T, 0.7), { atol: 1e-5, rtol: 1e-4, label: 'logprobs at temperature 0.7' });
  expectClose(await fast.backward(ids, targets, weights, B, T, 1), await reference.backward(ids, targets, weights, B, T, 1), { atol: 1e-6, rtol: 1e-5, label: 'objective' });
  const fastGradients = await fast.getGradients();
  const referenceGradients = await reference.getGradients();
  expect([...fastGradients.keys()]).toEqual([...referenceGradients.keys()]);
  for (const [name, gradient] of referenceGradients) expectClose(fastGradients.get(name)!.data, gradient.data, { atol: 1e-6, rtol: 1e-3, label: name });
  for (let step = 0; step < 3; step++) {
    if (step > 0) {
      await fast.zeroGrad();
      await reference.zeroGrad();
      expectClose(await fast.backward(ids, targets, weights, B, T, 1), await reference.backward(ids, targets, weights, B, T, 1), { atol: 1e-5, rtol: 1e-4, label: `objective before step ${step + 1}` });
    }
    expectClose((await fast.step(STEP)).gradNorm, (await reference.step(STEP)).gradNorm, { atol: 1e-6, rtol: 1e-4, label: `grad norm at step ${step + 1}` });
  }
  // Adam divides by √v: where a gradient is within rounding of zero, f32 against f64 sums change its
  // update by up to lr, so weights are compared to 1e-3 of the 3·lr = 0.03 the steps move them (a
  // wrong or missing update is far beyond that); the objectives above are compared tightly.
  const fastParameters = await fast.getParameters();
  for (const [name, parameter] of await reference.getParameters()) expectClose(fastParameters.get(name)!.data, parameter.data, { atol: 1e-3, rtol: 1e-4, label: `${name} after 3 steps` });
}

describe('fast cpu backend against the reference backend', () => {
  it('full fine-tuning: logits, log-probs, objective, every gradient, 3 AdamW steps', async () => {
    await compareBackends({});
  });

  it('LoRA: the same, with only the adapters training', async () => {
    await compareBackends({ lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'o_proj', 'gate_proj', 'down_proj'] } });
  });
});
