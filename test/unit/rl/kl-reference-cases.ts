/**
 * The KL reference of a backend (`logprobs(..., { weights: 'reference' })`), checked the same way on
 * every backend: with LoRA it is the base model (equal to a model without adapters, and to the
 * adapted model with its B matrices zeroed), with full fine-tuning the copy frozen by setReference.
 * test/unit/rl/kl-reference.test.ts runs these on the CPU backend, test/gpu-node/kl-reference.test.ts on WebGPU.
 */
import { expect } from 'vitest';
import type { ModelBackend, ModelBackendOptions, ModelWeights, NamedTensors } from '../../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import type { LoraConfig } from '../../../src/gpu/model/layout.ts';
import { expectClose } from '../../support/expect-close.ts';

/** Builds a backend of the kind under test. */
export type CreateBackend = (config: ModelConfig, weights: ModelWeights, options?: ModelBackendOptions) => Promise<ModelBackend>;

/** A 2-layer model with sizes that are multiples of 4 (as the WebGPU backend needs). */
export const KL_CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM', vocab_size: 24, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, rope_theta: 10000, rms_norm_eps: 1e-5,
  tie_word_embeddings: false, attention_bias: false, attention_output_bias: false, qk_norm: false,
};

const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'o_proj', 'up_proj', 'down_proj'] };
const [B, T] = [3, 7];

/** Seeded token ids in [0, V) for a (B, T) batch, and their next-token targets. */
function batch(seed: number): { ids: Int32Array; targets: Int32Array } {
  const ids = new Int32Array(B * T);
  let x = seed;
  for (let i = 0; i < ids.length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    ids[i] = (x >>> 8) % KL_CONFIG.vocab_size;
  }
  const targets = ids.map((_, i) => ids[(i + 1) % ids.length]!);
  return { ids, targets };
}

/** Takes `steps` AdamW steps that raise the log-prob of the batch's targets, so the trained weights move away from the start. */
async function train(backend: ModelBackend, steps: number): Promise<void> {
  const { ids, targets } = batch(1);
  for (let i = 0; i < steps; i++) {
    await backend.zeroGrad();
    await backend.backward(ids, targets, new Float32Array(B * T).fill(-1 / (B * T)), B, T, 1);
    await backend.step({ lr: 5e-2, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
  }
}

/** The largest |a − b| over two arrays. */
function maxDifference(a: Float32Array, b: Float32Array): number {
  return a.reduce((max, x, i) => Math.max(max, Math.abs(x - b[i]!)), 0);
}

/** LoRA: after training, the reference log-probs are the base model's — a model without adapters, and the adapted one with B zeroed. */
export async function checkLoraReference(create: CreateBackend, tolerance: number): Promise<void> {
  const adapted = await create(KL_CONFIG, { seed: 21 }, { lora: LORA, loraSeed: 22 });
  await train(adapted, 4);
  const { ids, targets } = batch(2);
  const policy = await adapted.logprobs(ids, targets, B, T, 0.8);
  const reference = await adapted.logprobs(ids, targets, B, T, 0.8, { weights: 'reference' });
  expect(maxDifference(policy, reference), 'the trained adapters change the log-probs').toBeGreaterThan(1e-3);

  const parameters = await adapted.getParameters();
  const base: NamedTensors = new Map([...parameters].filter(([name]) => !name.includes('lora_')));
  const plain = await create(KL_CONFIG, { tensors: base });
  expectClose(reference, await plain.logprobs(ids, targets, B, T, 0.8), { atol: tolerance, rtol: tolerance, label: 'reference vs the base without adapters' });

  const zeroB: NamedTensors = new Map([...parameters].filter(([name]) => name.includes('lora_B')).map(([name, t]) => [name, { shape: t.shape, data: new Float32Array(t.data.length) }]));
  await adapted.setParameters(zeroB);
  expectClose(reference, await adapted.logprobs(ids, targets, B, T, 0.8), { atol: tolerance, rtol: tolerance, label: 'reference vs the adapters with B = 0' });

  // The policy's own log-probs still come after a reference call (the plans do not leak into each other).
  await adapted.setParameters(new Map([...parameters].filter(([name]) => name.includes('lora_B'))));
  await adapted.logprobs(ids, targets, B, T, 0.8, { weights: 'reference' });
  expectClose(await adapted.logprobs(ids, targets, B, T, 0.8), policy, { atol: 0, rtol: 0, label: 'policy after a reference call' });
  await expect(adapted.setReference(base)).rejects.toThrow('with LoRA the KL reference is the base model');
  expect(await adapted.getReference()).toBeNull();
  plain.dispose();
  adapted.dispose();
}

/** Full fine-tuning: the reference is the frozen copy — the starting weights after training — and asking without one says what to do. */
export async function checkFullFineTuneReference(create: CreateBackend, tolerance: number): Promise<void> {
  const backend = await create(KL_CONFIG, { seed: 31 });
  const { ids, targets } = batch(3);
  await expect(backend.logprobs(ids, targets, B, T, 1, { weights: 'reference' })).rejects.toThrow('full fine-tuning needs setReference');
  const start = await backend.getParameters();
  await backend.setReference(start);
  await train(backend, 4);
  const policy = await backend.logprobs(ids, targets, B, T, 1);
  const reference = await backend.logprobs(ids, targets, B, T, 1, { weights: 'reference' });
  expect(maxDifference(policy, reference), 'training changes the log-probs').toBeGreaterThan(1e-3);
  const fresh = await create(KL_CONFIG, { tensors: start });
  expectClose(reference, await fresh.logprobs(ids, targets, B, T, 1), { atol: tolerance, rtol: tolerance, label: 'reference vs the starting weights' });
  const frozen = (await backend.getReference())!;
  for (const [name, tensor] of start) expect(frozen.get(name)!.data, name).toEqual(tensor.data);
  expectClose(await backend.logprobs(ids, targets, B, T, 1), policy, { atol: 0, rtol: 0, label: 'policy after a reference call' });
  await backend.setReference(null);
  expect(await backend.getReference()).toBeNull();
  fresh.dispose();
  backend.dispose();
}
