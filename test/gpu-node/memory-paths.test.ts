/**
 * The WebGPU backend's memory-saving paths give the plain path's numbers: activation checkpointing
 * (a layer's intermediates recomputed in backward) and the LM head in several chunks of tokens
 * (logits never whole), against the same backend with every intermediate kept and one chunk, and a
 * real-format model (SmolLM2-135M's shapes and 49,152-token vocabulary, 2 layers, random weights,
 * LoRA r 16) against the CPU backend, which holds the full logits. Also: 'auto' checkpoints exactly
 * the shapes past the threshold, and a batch that cannot fit fails naming the limit and what to lower.
 * No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ModelBackend, NamedTensors } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { createFastCpuBackend } from '../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../../src/gpu/model/layout.ts';
import { SMOLLM2_135M_CONFIG } from '../../src/gpu/inference/presets.ts';
import { chooseCheckpointing, CHECKPOINT_ABOVE_BYTES } from '../../src/gpu/webgpu/activations.ts';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend, type WebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { TINY_CONFIG } from '../support/gpu/backend-cases.ts';
import { expectClose, randomInts } from '../support/expect-close.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node memory path tests' });
});

afterAll(() => context?.device.destroy());

const ALL_MODULES: LoraConfig = { rank: 4, alpha: 8, targetModules: [...LORA_TARGET_MODULES] };

/** One batch: ids, targets and per-token weights with some masked tokens. */
function batchOf(config: ModelConfig, B: number, T: number): { ids: Int32Array; targets: Int32Array; weights: Float32Array } {
  const N = B * T;
  return {
    ids: randomInts(N, 21, config.vocab_size),
    targets: randomInts(N, 22, config.vocab_size),
    weights: Float32Array.from({ length: N }, (_, i) => (i % 7 === 3 ? 0 : ((i % 3) - 1) / N)),
  };
}

/** Gives the LoRA B matrices non-zero values (they start at zero) so the adapters change the forward pass. */
async function perturbLoraB(backends: ModelBackend[]): Promise<void> {
  const tweaked: NamedTensors = new Map();
  for (const [name, tensor] of await backends[0]!.getParameters()) {
    if (name.includes('lora_B')) tweaked.set(name, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
  }
  for (const backend of backends) await backend.setParameters(tweaked);
}

/** Runs log-probs and one backward on both backends and compares log-probs, objective and every gradient. */
async function expectSameStep(actual: ModelBackend, expected: ModelBackend, B: number, T: number, tolerance: { atol: number; rtol: number }, what: string): Promise<void> {
  const { ids, targets, weights } = batchOf(actual.config, B, T);
  expectClose(await actual.logprobs(ids, targets, B, T, 0.7), await expected.logprobs(ids, targets, B, T, 0.7), { ...tolerance, label: `${what}: logprobs at 0.7` });
  await actual.zeroGrad();
  await expected.zeroGrad();
  expectClose(await actual.backward(ids, targets, weights, B, T, 1), await expected.backward(ids, targets, weights, B, T, 1), { ...tolerance, label: `${what}: objective` });
  const expectedGradients = await expected.getGradients();
  const actualGradients = await actual.getGradients();
  expect([...actualGradients.keys()].sort()).toEqual([...expectedGradients.keys()].sort());
  for (const [name, tensor] of expectedGradients) expectClose(actualGradients.get(name)!.data, tensor.data, { ...tolerance, label: `${what}: gradient ${name}` });
}

/** The tiny Llama with 4 layers: checkpointing reuses each residual gradient slot two layers later. */
const TINY_4_LAYERS: ModelConfig = { ...TINY_CONFIG, num_hidden_layers: 4 };

/** B 3 × T 37 runs each layer over the whole batch; at T 64 (rows aligned) with a 1-byte group budget, over one sequence at a time. */
const TINY_VARIANTS: Array<{ name: string; config: ModelConfig; lora: LoraConfig | null; T: number; groupSequences: number }> = [
  { name: 'plain Llama, full fine-tuning', config: TINY_4_LAYERS, lora: null, T: 37, groupSequences: 3 },
  { name: 'Qwen3-style q/k norm, QKV bias, tied embeddings, full fine-tuning', config: { ...TINY_4_LAYERS, head_dim: 12, qk_norm: true, attention_bias: true, tie_word_embeddings: true }, lora: null, T: 37, groupSequences: 3 },
  { name: 'LoRA on every linear', config: TINY_4_LAYERS, lora: ALL_MODULES, T: 37, groupSequences: 3 },
  { name: 'Qwen3-style, full fine-tuning, layers run one sequence at a time', config: { ...TINY_4_LAYERS, head_dim: 12, qk_norm: true, attention_bias: true }, lora: null, T: 64, groupSequences: 1 },
  { name: 'LoRA on every linear, layers run one sequence at a time', config: TINY_4_LAYERS, lora: ALL_MODULES, T: 64, groupSequences: 1 },
];

for (const variant of TINY_VARIANTS) {
  test(`checkpointed activations and a chunked LM head give the plain path's log-probs and gradients: ${variant.name}`, async () => {
    context.device.pushErrorScope('validation');
    const [B, T] = [3, variant.T]; // 111 tokens: LM-head chunks of 64 + 47 rows; 192: 3 × 64
    const options = { lora: variant.lora, loraSeed: 4 };
    const plain = await createWebGPUBackend(context, variant.config, { seed: 3 }, { ...options, activationCheckpointing: false });
    const saving = await createWebGPUBackend(context, variant.config, { seed: 3 }, {
      ...options,
      activationCheckpointing: true,
      lmHeadChunkBytes: 64 * variant.config.vocab_size * 4,
      ...(variant.groupSequences < B ? { layerGroupBytes: 1 } : {}),
    });
    try {
      if (variant.lora) await perturbLoraB([plain, saving]);
      await expectSameStep(saving, plain, B, T, { atol: 2e-6, rtol: 1e-4 }, variant.name);
      expect(plain.batchMemory()).toMatchObject({ checkpointing: false, lmHeadRows: B * T });
      expect(saving.batchMemory()).toMatchObject({ checkpointing: true, lmHeadRows: 64, groupSequences: variant.groupSequences });
      expect(saving.batchMemory()!.bytes).toBeLessThan(plain.batchMemory()!.bytes);
    } finally {
      plain.dispose();
      saving.dispose();
    }
    expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
  });
}

test('a real-format model (SmolLM2-135M shapes, 49,152-token vocabulary, 2 layers, LoRA r 16) trains checkpointed and chunked as the CPU backend with full logits', async () => {
  context.device.pushErrorScope('validation');
  const config: ModelConfig = { ...SMOLLM2_135M_CONFIG, num_hidden_layers: 2 };
  const lora: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };
  const [B, T] = [2, 35]; // 70 tokens: LM-head chunks of 64 + 6 rows (64 rows × 49,152 × 4 bytes = 12 MiB)
  // The fast CPU backend (itself checked against the reference and the PyTorch fixtures) keeps this test's CPU side within CI time.
  const cpu = await createFastCpuBackend(config, { seed: 5 }, { lora, loraSeed: 6 });
  const gpu: WebGPUBackend = await createWebGPUBackend(context, config, { seed: 5 }, { lora, loraSeed: 6, activationCheckpointing: true, lmHeadChunkBytes: 12 * 2 ** 20 });
  try {
    await perturbLoraB([cpu, gpu]);
    await expectSameStep(gpu, cpu, B, T, { atol: 2e-5, rtol: 2e-3 }, 'SmolLM2-shaped');
    expect(gpu.batchMemory()).toMatchObject({ checkpointing: true, lmHeadRows: 64 });
  } finally {
    gpu.dispose();
    cpu.dispose();
  }
  expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
}, 120_000);

test('frozen weights split over several buffers (a small cap per buffer) give the one-buffer numbers, parameters included', async () => {
  context.device.pushErrorScope('validation');
  const options = { lora: ALL_MODULES, loraSeed: 4 };
  const whole = await createWebGPUBackend(context, TINY_4_LAYERS, { seed: 3 }, options);
  const split = await createWebGPUBackend(context, TINY_4_LAYERS, { seed: 3 }, { ...options, maxParamBufferBytes: 40 * 1024 });
  try {
    expect(whole.parameterBuffers()).toHaveLength(1);
    expect(split.parameterBuffers().length).toBeGreaterThan(3);
    expect(split.parameterBuffers().every((buffer) => buffer.size <= 40 * 1024)).toBe(true);
    await perturbLoraB([whole, split]);
    const [expected, actual] = [await whole.getParameters(), await split.getParameters()];
    for (const [name, tensor] of expected) expect(actual.get(name)?.data, name).toEqual(tensor.data);
    await expectSameStep(split, whole, 2, 9, { atol: 0, rtol: 0 }, 'split weights');
  } finally {
    whole.dispose();
    split.dispose();
  }
  expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
  // trained weights stay in one buffer: AdamW runs over it
  const full = await createWebGPUBackend(context, TINY_CONFIG, { seed: 3 }, { maxParamBufferBytes: 16 * 1024 });
  expect(full.parameterBuffers()).toHaveLength(1);
  full.dispose();
});

test("'auto' checkpoints the shapes whose plain activations pass 256 MiB or the device's buffer limit", () => {
  const limits = { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 31 };
  const lora: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };
  // SmolLM2-135M at B 8 × T 256: 3.3 GB of plain activations per role
  expect(chooseCheckpointing('auto', SMOLLM2_135M_CONFIG, 8, 256, lora, limits, 64)).toBe(true);
  expect(chooseCheckpointing('auto', SMOLLM2_135M_CONFIG, 1, 16, lora, limits, 64)).toBe(false);
  expect(chooseCheckpointing(false, SMOLLM2_135M_CONFIG, 8, 256, lora, limits, 64)).toBe(false);
  expect(chooseCheckpointing(true, TINY_CONFIG, 1, 4, null, limits, 64)).toBe(true);
  // a small batch past a small device's buffer limit
  const small = { maxBufferSize: 2 ** 20, maxStorageBufferBindingSize: 2 ** 20 };
  expect(chooseCheckpointing('auto', SMOLLM2_135M_CONFIG, 1, 16, lora, small, 64)).toBe(true);
  expect(CHECKPOINT_ABOVE_BYTES).toBe(256 * 2 ** 20);
});

test('a batch that cannot fit even checkpointed fails naming the limit and the setting to lower, and the backend still runs a smaller one', async () => {
  const backend = await createWebGPUBackend(context, TINY_CONFIG, { seed: 1 }, { activationCheckpointing: true });
  try {
    const { maxBufferSize, maxStorageBufferBindingSize } = context.device.limits;
    // one layer's attention probabilities (B, NH, T, T) past one binding
    const T = Math.ceil(Math.sqrt(maxStorageBufferBindingSize / 4 / TINY_CONFIG.num_attention_heads)) + 1;
    const ids = new Int32Array(T);
    await expect(backend.logprobs(ids, ids, 1, T, 1)).rejects.toThrow(/maxStorageBufferBindingSize.*micro-batch/);
    // kept activations past one buffer: many short rows
    const B = Math.ceil(maxBufferSize / 4 / (TINY_CONFIG.hidden_size * (TINY_CONFIG.num_hidden_layers + 2))) + 1;
    const rows = new Int32Array(B);
    await expect(backend.logprobs(rows, rows, B, 1, 1)).rejects.toThrow(/maxBufferSize|maxStorageBufferBindingSize/);
    expect(() => backend.prepare(B, 1)).toThrow(/micro-batch/); // before any sampling
    expect(backend.batchMemory()).toBeNull();
    backend.prepare(2, 5);
    expect(backend.batchMemory()).toMatchObject({ checkpointing: true, groupSequences: 2 });
    const small = batchOf(TINY_CONFIG, 2, 5);
    expect((await backend.logprobs(small.ids, small.targets, 2, 5, 1)).every(Number.isFinite)).toBe(true);
  } finally {
    backend.dispose();
  }
});
