/**
 * A frozen vocabulary table stored in row chunks (row-chunks.ts) gives the whole table's numbers: a
 * real-format model (SmolLM2-135M's shapes, its tied 49,152 × 576 embedding, 1 layer, random weights,
 * LoRA r 16) on a backend whose frozen buffers are capped at 32 MiB, so the 108 MiB table lies in 4
 * chunks (3 of 14,560 rows, one of 5,472), against the same model with the table whole. The gather,
 * the LM head's logits, log-probs and entropy and the backward through them are compared, parameters
 * read back too. Also: the accounting sees the same chunks and scratch the backend allocates, and the
 * KV-cache decoder reads a chunked table as the whole one. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ModelBackend, NamedTensors } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../../src/gpu/model/layout.ts';
import { SMOLLM2_135M_CONFIG } from '../../src/gpu/inference/presets.ts';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../../src/gpu/webgpu/webgpu-decoder.ts';
import { lmHeadChunkSizes } from '../../src/gpu/webgpu/step-memory.ts';
import { expectClose, randomInts } from '../support/expect-close.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node vocabulary chunk tests' });
});

afterAll(() => context?.device.destroy());

const MiB = 2 ** 20;
const CONFIG: ModelConfig = { ...SMOLLM2_135M_CONFIG, num_hidden_layers: 1 };
const LORA: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };

/** Gives the LoRA B matrices non-zero values (they start at zero) so the adapters change the forward pass. */
async function perturbLoraB(backends: ModelBackend[]): Promise<void> {
  const tweaked: NamedTensors = new Map();
  for (const [name, tensor] of await backends[0]!.getParameters()) {
    if (name.includes('lora_B')) tweaked.set(name, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
  }
  for (const backend of backends) await backend.setParameters(tweaked);
}

test('a tied 49,152-token embedding in 4 row chunks (32 MiB cap) trains as the whole table: logits, log-probs, objective, every gradient', async () => {
  context.device.pushErrorScope('validation');
  const [B, T] = [2, 24]; // 48 tokens: ids spread over every chunk
  const N = B * T;
  const whole = await createWebGPUBackend(context, CONFIG, { seed: 5 }, { lora: LORA, loraSeed: 6 });
  const chunked = await createWebGPUBackend(context, CONFIG, { seed: 5 }, { lora: LORA, loraSeed: 6, maxParamBufferBytes: 32 * MiB });
  try {
    const settings = { lora: LORA, limits: context.device.limits, maxParamBufferBytes: 32 * MiB };
    expect(lmHeadChunkSizes(CONFIG, settings)).toEqual([14_560, 14_560, 14_560, 5_472]);
    expect(chunked.parameterBuffers().every((buffer) => buffer.size <= 32 * MiB)).toBe(true);
    expect(whole.parameterBuffers().some((buffer) => buffer.size > 100 * MiB)).toBe(true);
    await perturbLoraB([whole, chunked]);
    // the table reads back whole and equal
    const [expectedParams, actualParams] = [await whole.getParameters(), await chunked.getParameters()];
    expect([...actualParams.keys()].sort()).toEqual([...expectedParams.keys()].sort());
    const [table, wholeTable] = [actualParams.get('model.embed_tokens.weight')!, expectedParams.get('model.embed_tokens.weight')!];
    expect(table.shape).toEqual([49_152, 576]);
    // byte for byte (vitest's toEqual walks 28M floats one by one)
    expect(Buffer.from(table.data.buffer, table.data.byteOffset, table.data.byteLength).equals(Buffer.from(wholeTable.data.buffer, wholeTable.data.byteOffset, wholeTable.data.byteLength))).toBe(true);

    // ids in every chunk, the last rows of the table included
    const ids = randomInts(N, 31, CONFIG.vocab_size);
    ids[0] = 0;
    ids[1] = CONFIG.vocab_size - 1;
    ids[2] = 14_560; // the first row of the second chunk
    ids[3] = 14_559; // the last row of the first
    const targets = randomInts(N, 32, CONFIG.vocab_size);
    targets[4] = CONFIG.vocab_size - 1;
    targets[5] = 43_680; // the first row of the last chunk
    const weights = Float32Array.from({ length: N }, (_, i) => (i % 7 === 3 ? 0 : ((i % 3) - 1) / N));
    const tolerance = { atol: 1e-5, rtol: 1e-4 };

    expectClose(await chunked.forward(ids, B, T), await whole.forward(ids, B, T), { ...tolerance, label: 'logits' });
    expectClose(await chunked.logprobs(ids, targets, B, T, 0.7), await whole.logprobs(ids, targets, B, T, 0.7), { ...tolerance, label: 'logprobs at 0.7' });
    expectClose(await chunked.logprobs(ids, targets, B, T, 1, { weights: 'reference' }), await whole.logprobs(ids, targets, B, T, 1, { weights: 'reference' }), { ...tolerance, label: 'KL reference logprobs' });
    await whole.zeroGrad();
    await chunked.zeroGrad();
    expectClose(await chunked.backward(ids, targets, weights, B, T, 1), await whole.backward(ids, targets, weights, B, T, 1), { ...tolerance, label: 'objective' });
    const [expected, actual] = [await whole.getGradients(), await chunked.getGradients()];
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [name, tensor] of expected) expectClose(actual.get(name)!.data, tensor.data, { ...tolerance, label: `gradient ${name}` });
    expect([...expected.values()].some((tensor) => tensor.data.some((value) => value !== 0))).toBe(true);

    // the accounting is the backend's: the chunked head's column scratch included
    const choice = chunked.chooseMicroBatch(T, { budgetBytes: Infinity, maxMicroBatch: B, forced: B });
    expect(chunked.batchMemory()).toMatchObject({ bytes: choice.plan.bytes, lmHeadRows: choice.plan.lmHeadRows });
    expect(choice.plan.buffers.map((buffer) => buffer.label)).toContain('LM head vocabulary chunk');
    expect(whole.chooseMicroBatch(T, { budgetBytes: Infinity, maxMicroBatch: B, forced: B }).plan.buffers.map((buffer) => buffer.label)).not.toContain('LM head vocabulary chunk');
  } finally {
    whole.dispose();
    chunked.dispose();
  }
  expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
}, 120_000);

test("the WebGPU decoder over a table in row chunks gives the whole table's logits, prefill and a decode step", async () => {
  context.device.pushErrorScope('validation');
  // Llama-shaped, small: a tied 4,096 × 128 embedding (2 MiB) in 4 chunks of 1,024 rows under a 512 KiB cap
  const config: ModelConfig = {
    architecture: 'LlamaForCausalLM', vocab_size: 4096, hidden_size: 128, intermediate_size: 384, num_hidden_layers: 1,
    num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32, rope_theta: 10_000, rms_norm_eps: 1e-5,
    tie_word_embeddings: true, attention_bias: false, attention_output_bias: false, qk_norm: false,
  };
  const lora: LoraConfig = { rank: 4, alpha: 8, targetModules: [...LORA_TARGET_MODULES] };
  const whole = await createWebGPUBackend(context, config, { seed: 7 }, { lora, loraSeed: 8 });
  const chunked = await createWebGPUBackend(context, config, { seed: 7 }, { lora, loraSeed: 8, maxParamBufferBytes: 512 * 1024 });
  try {
    expect(lmHeadChunkSizes(config, { lora, limits: context.device.limits, maxParamBufferBytes: 512 * 1024 })).toEqual([1024, 1024, 1024, 1024]);
    await perturbLoraB([whole, chunked]);
    const logitsOf = async (backend: ModelBackend) => {
      const decoder = await createWebGPUDecoder(backend);
      try {
        const [a, b] = [decoder.newSequence(), decoder.newSequence()];
        const prefill = await decoder.prefill([a, b], [[0, 4095, 1024, 1023, 17], [3071, 2048, 9]]);
        const step = await decoder.decode([a, b], [3072, 5]);
        return { prefill, step };
      } finally {
        decoder.dispose();
      }
    };
    const [expected, actual] = [await logitsOf(whole), await logitsOf(chunked)];
    expect(actual.prefill.length).toBe(2 * 4096);
    expectClose(actual.prefill, expected.prefill, { atol: 1e-5, rtol: 1e-4, label: 'prefill logits' });
    expectClose(actual.step, expected.step, { atol: 1e-5, rtol: 1e-4, label: 'decode-step logits' });
  } finally {
    whole.dispose();
    chunked.dispose();
  }
  expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
});
