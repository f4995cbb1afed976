/**
 * A real-format model as the engine builds it (createRealModel: HF tokenizer, LoRA rank 16, frozen
 * weights as f16 where the device has shader-f16, the WebGPU decoder) on Mesa 25's lavapipe, which
 * has shader-f16 (see f16-weights.test.ts): logits against the CPU reference over the same weights
 * rounded to f16, a greedy chat reply from the decoder that matches the backend's own forward, and a
 * checkpoint of only the adapters. No lavapipe is a failure, never a skip.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadModelFolder } from '../../src/gpu/io/model-folder.ts';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import type { LocalChatChoice } from '../../src/gpu/inference/local-chat-client.ts';
import { createCpuBackend } from '../../src/gpu/model/cpu-backend.ts';
import type { GPUContext } from '../../src/gpu/webgpu/device.ts';
import { roundToF16 } from '../../src/gpu/io/half.ts';
import { isF16StorableWeight } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { createRealModel, trainableParameters } from '../../src/workers/engine/real-model.ts';
import { TINY_HF_CONFIG, tinyHfModelFiles } from '../support/tiny-hf-model.ts';
import { expectClose } from '../support/expect-close.ts';
import { requestLavapipeDevice } from '../support/lavapipe.ts';

const TEMPLATE = readFileSync(new URL('../fixtures/tokenizers/smollm2-chat-template.jinja', import.meta.url), 'utf8');

let context: GPUContext;

beforeAll(async () => {
  context = await requestLavapipeDevice('gpu-node real model f16 tests');
});

afterAll(() => context?.device.destroy());

// Every pipeline compiles on lavapipe here: over 120 s with Mesa's shader cache cold (a fresh machine), seconds when warm.
test('a real-format model runs with f16 frozen weights and LoRA: CPU-reference logits, a decoder reply, an adapters-only checkpoint', { timeout: 400_000 }, async () => {
  expect(context.features.shaderF16).toBe(true);
  const folder = await tinyHfModelFiles(TEMPLATE);
  const picked = [...folder].map(([name, bytes]) => ({ name, arrayBuffer: async () => bytes.slice().buffer }));
  context.device.pushErrorScope('validation');
  const real = await createRealModel(context, { kind: 'local', files: picked }, 0, () => {}, new AbortController().signal);
  try {
    expect((real.backend as { halfParamLayout?: unknown }).halfParamLayout).not.toBeNull(); // the frozen matrices are f16
    const { tensors } = await loadModelFolder(async (name) => folder.get(name)!, 'tiny');
    const rounded: NamedTensors = new Map([...tensors].map(([name, tensor]) => [name, isF16StorableWeight(name) ? { shape: tensor.shape, data: roundToF16(tensor.data) } : tensor]));
    const cpu = await createCpuBackend(TINY_HF_CONFIG, { tensors: rounded });
    const ids = Int32Array.from(real.tokenizer.encode(real.tokenizer.renderChat([{ role: 'user', content: 'the heat is on' }], { addGenerationPrompt: true })));
    const logits = await real.backend.forward(ids, 1, ids.length);
    expectClose(logits, await cpu.forward(ids, 1, ids.length), { atol: 1e-4, rtol: 1e-3, label: 'logits (f16 weights)' });

    // The greedy reply's first token is the argmax of the backend's last-position logits.
    const reply = await real.client.chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'the heat is on' }], max_tokens: 3, temperature: 0, logprobs: true });
    const V = TINY_HF_CONFIG.vocab_size;
    const last = logits.subarray((ids.length - 1) * V, ids.length * V).subarray(0, real.tokenizer.vocabSize);
    const argmax = last.indexOf(Math.max(...last));
    const choice = reply.choices[0] as LocalChatChoice;
    expect(choice.tokens.promptIds).toEqual([...ids]);
    expect(choice.tokens.completionIds[0]).toBe(argmax);
    expect(reply.choices[0]!.message.content).toBeTypeOf('string');

    const trainable = await trainableParameters(real.backend);
    expect([...trainable.keys()].every((name) => name.includes('lora_'))).toBe(true);
    expect([...trainable.values()].reduce((sum, tensor) => sum + tensor.data.length, 0)).toBe(real.trainableParameters);
    cpu.dispose();
  } finally {
    await real.client.forget();
    real.backend.dispose();
  }
  expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
});
