/**
 * GRPO's KL reference and async sampling on WebGPU in Node + Dawn: the reference log-probs
 * (LoRA switched off by a second recorded plan; a frozen copy for full fine-tuning) against the
 * models they stand for, the GPU memory the reference costs, and sampling that does not depend on
 * what a sequence is batched with. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createWebGPUDecoder } from '../../src/gpu/webgpu/webgpu-decoder.ts';
import { ByteTokenizer } from '../../src/gpu/io/byte-tokenizer.ts';
import { generate } from '../../src/gpu/inference/generate.ts';
import { TINY_CONFIG } from '../../src/gpu/inference/presets.ts';
import type { ModelBackendOptions, ModelWeights } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES } from '../../src/gpu/model/layout.ts';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { checkFullFineTuneReference, checkLoraReference, KL_CONFIG } from '../unit/rl/kl-reference-cases.ts';

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node KL reference tests' });
});

afterAll(() => context?.device.destroy());

const create = (config: ModelConfig, weights: ModelWeights, options?: ModelBackendOptions) => createWebGPUBackend(context, config, weights, options);

async function withValidation(body: () => Promise<void>): Promise<void> {
  context.device.pushErrorScope('validation');
  await body();
  const error = await context.device.popErrorScope();
  expect(error?.message, 'WebGPU validation error').toBeUndefined();
}

test('LoRA: the reference log-probs are the base model\'s (no adapters; adapters with B = 0)', () => withValidation(() => checkLoraReference(create, 0)));

test('full fine-tuning: the reference is the frozen starting weights', () => withValidation(() => checkFullFineTuneReference(create, 0)));

test('the LoRA reference allocates no weights: only the uniforms of its recorded plan; full fine-tuning adds one copy of the parameters', () =>
  withValidation(async () => {
    const lora = { rank: 8, alpha: 16, targetModules: [...LORA_TARGET_MODULES] };
    const adapted = await create(KL_CONFIG, { seed: 1 }, { lora });
    const [B, T] = [2, 16];
    const ids = new Int32Array(B * T).map((_, i) => i % KL_CONFIG.vocab_size);
    await adapted.logprobs(ids, ids, B, T, 1);
    expect(adapted.referenceBytes()).toBe(0);
    await adapted.logprobs(ids, ids, B, T, 1, { weights: 'reference' });
    const uniforms = adapted.referenceBytes();
    const { f32, lora: loraBytes } = adapted.parameterBytes();
    console.log(`KL reference with LoRA r=8 on a ${KL_CONFIG.num_hidden_layers}-layer model: ${uniforms} bytes of plan uniforms; parameters ${f32} bytes, adapters ${loraBytes} bytes`);
    expect(uniforms).toBeGreaterThan(0);
    expect(uniforms).toBeLessThan(f32 / 4);

    const full = await create(KL_CONFIG, { seed: 1 });
    await full.setReference(await full.getParameters());
    await full.logprobs(ids, ids, B, T, 1, { weights: 'reference' });
    expect(full.referenceBytes()).toBe(full.parameterBytes().f32 + uniforms);
    adapted.dispose();
    full.dispose();
  }));

// Each decode path is batch-independent bit for bit; which path `auto` takes depends on a timed
// trial per batch size, and the two paths agree only to float rounding, so each is forced here.
for (const decodePath of ['fused', 'layered'] as const) {
  test(`WebGPU sampling (${decodePath} path): a seeded sample gets the same tokens and log-probs alone and batched with other requests`, () =>
    withValidation(async () => {
      const tokenizer = new ByteTokenizer();
      const backend = await create(TINY_CONFIG, { seed: 5 });
      const prompt = (text: string) => tokenizer.encode(text);
      const request = { prompt: prompt('the seeded one'), temperature: 1, topK: 0, maxTokens: 12, seed: 77 };
      const decoder = () => createWebGPUDecoder(backend, { decodePath });
      const alone = (await generate(await decoder(), tokenizer, [request]))[0]!.samples[0]!;
      const batched = await generate(await decoder(), tokenizer, [
        { prompt: prompt('x'), temperature: 1, maxTokens: 3, seed: 1 },
        request,
        { prompt: prompt('a much longer prompt than the others'), temperature: 0.7, maxTokens: 12, seed: 2 },
        { ...request, seed: 78 },
      ]);
      expect(batched[1]!.samples[0]!.tokenIds).toEqual(alone.tokenIds);
      expect(batched[1]!.samples[0]!.logprobs).toEqual(alone.logprobs);
      backend.dispose();
    }));
}
