/**
 * The WebGPU decoder over a backend with f16 frozen weights (frozenWeightsF16, LoRA), on Mesa 25's
 * lavapipe (shader-f16; see f16-weights.test.ts for how it is found): KV-cache logits against the
 * same backend's full forward at every position, and a fork. No lavapipe is a failure, never a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import type { LoraConfig } from '../../src/gpu/model/layout.ts';
import type { GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../../src/gpu/webgpu/webgpu-decoder.ts';
import { TINY_CONFIG } from '../support/gpu/backend-cases.ts';
import { expectClose, randomInts } from '../support/expect-close.ts';
import { requestLavapipeDevice } from '../support/lavapipe.ts';

const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'gate_proj', 'down_proj'] };
const TOL = { atol: 2e-5, rtol: 1e-4 };

let context: GPUContext;

beforeAll(async () => {
  context = await requestLavapipeDevice('gpu-node decoder f16 tests');
});

afterAll(() => context?.device.destroy());

test('decoding over f16 frozen weights matches the same backend\'s full forward at every position, and after a fork', async () => {
  context.device.pushErrorScope('validation');
  const config = { ...TINY_CONFIG, tie_word_embeddings: true };
  const backend = await createWebGPUBackend(context, config, { seed: 3 }, { lora: LORA, loraSeed: 4, frozenWeightsF16: true });
  const tweaked: NamedTensors = new Map();
  for (const [name, tensor] of await backend.getParameters()) {
    if (name.includes('lora_B')) tweaked.set(name, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
  }
  await backend.setParameters(tweaked);
  const decoder = await createWebGPUDecoder(backend);
  try {
    const V = config.vocab_size;
    const tokens = Array.from(randomInts(19, 5, V));
    const full = await backend.forward(Int32Array.from(tokens), 1, tokens.length);
    const row = (t: number) => full.subarray(t * V, (t + 1) * V);
    const seq = decoder.newSequence();
    expectClose(await decoder.prefill([seq], [tokens.slice(0, 6)]), row(5), { ...TOL, label: 'prefill' });
    for (let t = 6; t < 12; t++) expectClose(await decoder.decode([seq], [tokens[t]!]), row(t), { ...TOL, label: `decode t=${t}` });
    const [child] = decoder.fork(seq, 1);
    expectClose(await decoder.prefill([child!], [tokens.slice(12)]), row(tokens.length - 1), { ...TOL, label: 'forked and extended' });
  } finally {
    decoder.dispose();
    backend.dispose();
  }
  expect((await context.device.popErrorScope())?.message, 'WebGPU validation error').toBeUndefined();
});
