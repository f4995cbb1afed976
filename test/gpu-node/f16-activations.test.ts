/**
 * f16 activations (activationsF16): a checkpointed batch keeps its layer outputs as f16, on Mesa 25's
 * lavapipe, the driver with shader-f16 where the engine turns them on (selected as in
 * f16-weights.test.ts; no lavapipe is a failure, never a skip). Checks: the two conversion kernels
 * against the CPU codec bit for bit; the f16-activation backend against the same backend with f32
 * activations (log-probs, the KL reference's under LoRA, objective, every gradient) on tiny 4-layer models, grouped and not, and on
 * a real-format model (SmolLM2's 49,152-token vocabulary and tied embedding, small hidden size, 3
 * layers, LoRA r16, f16 frozen weights as the engine runs it); that the f16 path really rounds
 * (its log-probs differ from the f32 path's, within f16's precision) and really holds fewer bytes,
 * exactly as step-memory.ts accounts them.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../../src/gpu/model/layout.ts';
import { SMOLLM2_135M_CONFIG } from '../../src/gpu/inference/presets.ts';
import type { GPUContext } from '../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { batchMemoryPlan } from '../../src/gpu/webgpu/step-memory.ts';
import { createWebGPUBackend, type WebGPUBackend, type WebGPUBackendOptions } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { TINY_CONFIG } from '../support/gpu/backend-cases.ts';
import { KERNEL_CASES } from '../support/gpu/kernel-cases.ts';
import { expectClose, randomInts } from '../support/expect-close.ts';
import { requestLavapipeDevice } from '../support/lavapipe.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestLavapipeDevice('gpu-node f16 activation tests');
});

afterAll(() => context?.device.destroy());

/** Runs a check in a validation error scope and fails on any WebGPU validation error. */
async function withoutValidationErrors(check: () => Promise<void>): Promise<void> {
  context.device.pushErrorScope('validation');
  await check();
  const error = await context.device.popErrorScope();
  expect(error?.message, 'WebGPU validation error').toBeUndefined();
}

test('the conversion kernels match the CPU f16 codec bit for bit on lavapipe', async () => {
  const conversions = KERNEL_CASES.filter((kernelCase) => kernelCase.name.startsWith('convert_f32_to_f16'));
  expect(conversions).toHaveLength(1);
  await withoutValidationErrors(() => conversions[0]!.run(new Kernels(context)));
});

/** One batch: ids, targets and per-token weights with some masked tokens. */
function batchOf(config: ModelConfig, B: number, T: number): { ids: Int32Array; targets: Int32Array; weights: Float32Array } {
  const N = B * T;
  return {
    ids: randomInts(N, 31, config.vocab_size),
    targets: randomInts(N, 32, config.vocab_size),
    weights: Float32Array.from({ length: N }, (_, i) => (i % 7 === 3 ? 0 : ((i % 3) - 1) / N)),
  };
}

/** Returns ‖a − b‖ / ‖b‖ over all values. */
function relativeError(a: Float32Array, b: Float32Array): number {
  let difference = 0;
  let norm = 0;
  for (let i = 0; i < b.length; i++) {
    difference += (a[i]! - b[i]!) ** 2;
    norm += b[i]! ** 2;
  }
  return Math.sqrt(difference / norm);
}

/** How close the f16-activation step must come to the f32 one; see each use for why. */
interface F16Tolerance {
  /** Largest |Δ log-prob| (nats). */
  logprob: number;
  /** Largest ‖Δg‖ / ‖g‖ of any gradient tensor. */
  gradient: number;
}

/**
 * Builds two backends from the same weights (checkpointed, one with f16 activations), runs log-probs
 * and one backward on both, and checks: the f16 path rounds (log-probs differ) within `tolerance`, its
 * objective and every gradient are close, and its per-batch buffers are what step-memory.ts accounts,
 * the f16 outputs' buffer half of the f32 bytes it replaces.
 */
async function expectCloseToF32(config: ModelConfig, options: WebGPUBackendOptions, B: number, T: number, groupSequences: number, tolerance: F16Tolerance, what: string): Promise<void> {
  const common: WebGPUBackendOptions = { ...options, activationCheckpointing: true, ...(groupSequences < B ? { layerGroupBytes: 1 } : {}) };
  const f32 = await createWebGPUBackend(context, config, { seed: 5 }, common);
  const tensors: NamedTensors = await f32.getParameters();
  if (options.lora) for (const [name, tensor] of tensors) if (name.includes('lora_B')) tensors.set(name, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
  await f32.setParameters(tensors);
  const f16 = await createWebGPUBackend(context, config, { tensors }, { ...common, activationsF16: true });
  try {
    const { ids, targets, weights } = batchOf(config, B, T);
    const [logprobs16, logprobs32] = [await f16.logprobs(ids, targets, B, T, 0.7), await f32.logprobs(ids, targets, B, T, 0.7)];
    const largest = logprobs16.reduce((max, value, i) => Math.max(max, Math.abs(value - logprobs32[i]!)), 0);
    console.log(`${what}: largest |Δ log-prob| ${largest.toExponential(2)}`);
    expect(largest, `${what}: the f16 path rounds the layer outputs`).toBeGreaterThan(0);
    expectClose(logprobs16, logprobs32, { atol: tolerance.logprob, rtol: 0, label: `${what}: logprobs at 0.7` });
    if (options.lora) {
      // the KL reference's forward (adapters off) runs through the same f16 outputs
      const [reference16, reference32] = [await f16.logprobs(ids, targets, B, T, 0.7, { weights: 'reference' }), await f32.logprobs(ids, targets, B, T, 0.7, { weights: 'reference' })];
      expect(reference16.some((value, i) => value !== logprobs16[i]), 'the reference skips the adapters').toBe(true);
      expectClose(reference16, reference32, { atol: tolerance.logprob, rtol: 0, label: `${what}: KL reference logprobs` });
    }

    for (const backend of [f16, f32]) await backend.zeroGrad();
    const [objective16, objective32] = [await f16.backward(ids, targets, weights, B, T, 1), await f32.backward(ids, targets, weights, B, T, 1)];
    expectClose(objective16, objective32, { atol: tolerance.logprob, rtol: 0, label: `${what}: objective` });
    const [gradients16, gradients32] = [await f16.getGradients(), await f32.getGradients()];
    expect([...gradients16.keys()].sort()).toEqual([...gradients32.keys()].sort());
    let worst = { name: '', error: 0 };
    for (const [name, gradient] of gradients32) {
      const error = relativeError(gradients16.get(name)!.data, gradient.data);
      if (!(error <= worst.error)) worst = { name, error };
    }
    console.log(`${what}: largest ‖Δg‖/‖g‖ ${worst.error.toExponential(2)} (${worst.name})`);
    expect(worst.error, `${what}: ‖Δg‖/‖g‖ of ${worst.name}`).toBeLessThanOrEqual(tolerance.gradient);

    // the batch holds what the accounting says, and the f16 outputs take half the bytes they replace
    const memory16 = f16.batchMemory()!;
    const memory32 = f32.batchMemory()!;
    expect(memory16.groupSequences).toBe(groupSequences);
    const settings = { lora: options.lora ?? null, activationCheckpointing: true, limits: context.device.limits, alignment: context.device.limits.minStorageBufferOffsetAlignment / 4 };
    const plan16 = batchMemoryPlan(config, B, T, { ...settings, activationsF16: true, ...(groupSequences < B ? { layerGroupBytes: 1 } : {}) });
    expect(plan16.halfOutputs).toBe(true);
    expect(memory16.bytes, `${what}: bytes allocated = bytes accounted`).toBe(plan16.bytes);
    const halfBytes = plan16.buffers.find((buffer) => buffer.label === 'layer outputs (f16)')!.bytes;
    const outputBytes = B * T * config.hidden_size * 4;
    expect(halfBytes).toBeGreaterThanOrEqual(((config.num_hidden_layers - 1) * outputBytes) / 2);
    expect(halfBytes).toBeLessThan(((config.num_hidden_layers - 1) * outputBytes) / 2 + 256 * config.num_hidden_layers);
    // smaller overall though the layer buffer gains an f32 input and output of one group
    expect(memory16.bytes).toBeLessThan(memory32.bytes - ((config.num_hidden_layers - 1) * outputBytes) / 2 + 2 * groupSequences * T * config.hidden_size * 4 + 4096);
  } finally {
    f16.dispose();
    f32.dispose();
  }
}

const TINY_4_LAYERS: ModelConfig = { ...TINY_CONFIG, num_hidden_layers: 4 };
const TINY_LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: [...LORA_TARGET_MODULES] };

// Each kept output is rounded by at most 2^-11 (4.9e-4) of itself, up to three times on the way to the
// last layer, and backward's recompute reads the same rounded values, so the f16 path is the f32 model
// with its layer outputs perturbed by f16's relative precision. On these models (weights ~N(0, 0.02))
// that moved log-probs by 1.4e-4 and gradients by 1e-3 of their norm at most (measured on lavapipe,
// printed by the test): the bounds below leave 5–7× room and are still far below what a kernel that
// read the wrong rows or left a slot stale gives (O(1) errors).
const F16_TOLERANCE: F16Tolerance = { logprob: 1e-3, gradient: 5e-3 };

test('f16 activations stay close to f32: tiny Qwen3-style model, full fine-tuning, layers one sequence at a time', { timeout: 300_000 }, async () => {
  const config: ModelConfig = { ...TINY_4_LAYERS, head_dim: 12, qk_norm: true, attention_bias: true, tie_word_embeddings: true };
  await withoutValidationErrors(() => expectCloseToF32(config, {}, 3, 64, 1, F16_TOLERANCE, 'tiny Qwen3-style, full fine-tuning'));
});

test('f16 activations stay close to f32: tiny Llama, LoRA on every linear, the whole batch at once (T not a multiple of 64)', { timeout: 300_000 }, async () => {
  await withoutValidationErrors(() => expectCloseToF32(TINY_4_LAYERS, { lora: TINY_LORA }, 3, 37, 3, F16_TOLERANCE, 'tiny Llama, LoRA'));
});

/** SmolLM2-135M's vocabulary (49,152 tokens), tied embedding and head layout at a small width and depth: cheap, with a real-sized LM head. */
const REAL_FORMAT: ModelConfig = { ...SMOLLM2_135M_CONFIG, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 3, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16 };

// A 49,152-way softmax sums many logits, each moved by the rounded final residual; measured 2.0e-4 in
// log-prob and 5.7e-4 of a LoRA gradient's norm at most, so the tiny models' bounds hold here too.
test('f16 activations stay close to f32 on a real-format model (vocabulary 49,152, LoRA r16, f16 frozen weights): log-probs, objective, every LoRA gradient', { timeout: 300_000 }, async () => {
  expect(REAL_FORMAT.vocab_size).toBeGreaterThan(32_000);
  const lora: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };
  await withoutValidationErrors(() => expectCloseToF32(REAL_FORMAT, { lora, frozenWeightsF16: true }, 2, 64, 1, F16_TOLERANCE, 'real-format, LoRA r16'));
});

test('a 1-layer model and an uncheckpointed batch keep f32 activations (nothing to store as f16)', async () => {
  const oneLayer = await createWebGPUBackend(context, { ...TINY_CONFIG, num_hidden_layers: 1 }, { seed: 1 }, { activationCheckpointing: true, activationsF16: true });
  const plain = await createWebGPUBackend(context, TINY_CONFIG, { seed: 1 }, { activationCheckpointing: false, activationsF16: true });
  try {
    for (const backend of [oneLayer, plain] as WebGPUBackend[]) {
      backend.prepare(2, 8);
      const plan = batchMemoryPlan(backend.config, 2, 8, { lora: null, activationCheckpointing: backend.activationCheckpointing, limits: context.device.limits, alignment: 64, activationsF16: true });
      expect(plan.halfOutputs).toBe(false);
      expect(plan.buffers.map((buffer) => buffer.label)).not.toContain('layer outputs (f16)');
      expect(backend.batchMemory()!.bytes).toBe(plan.bytes);
    }
  } finally {
    oneLayer.dispose();
    plain.dispose();
  }
});
