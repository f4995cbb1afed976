/**
 * The CPU backend beyond the golden fixtures: LoRA checked algebraically against the full model
 * with merged weights (W' = W + (alpha/r)·B·A, so dB = (alpha/r)·dW'·Aᵀ and dA = (alpha/r)·Bᵀ·dW'),
 * frozen base under LoRA, seeded init, padding invariance, gradient accumulation and clear errors.
 */
import { describe, expect, it } from 'vitest';
import type { NamedTensors } from '../../../src/gpu/model/backend.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { linearModuleName, loraParamName, type LoraConfig, type LoraTargetModule } from '../../../src/gpu/model/layout.ts';
import { expectClose, randomArray, randomInts } from '../../support/expect-close.ts';

const CONFIG: ModelConfig = {
  architecture: 'Qwen3ForCausalLM',
  vocab_size: 23,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 6,
  rope_theta: 10000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: false,
  attention_bias: true,
  attention_output_bias: true,
  qk_norm: true,
};
const B = 2, T = 5;
const ids = randomInts(B * T, 1, CONFIG.vocab_size);
const targets = randomInts(B * T, 2, CONFIG.vocab_size);
const weights = Float32Array.from(randomArray(B * T, 3), (x) => x / (B * T)); // mixed signs, like GRPO advantages
const STEP = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };

/** Returns a·b for row-major a (n, k) and b (k, m). */
function matmul(a: Float32Array, b: Float32Array, n: number, k: number, m: number): Float32Array {
  const out = new Float32Array(n * m);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) {
    let sum = 0;
    for (let p = 0; p < k; p++) sum += a[i * k + p]! * b[p * m + j]!;
    out[i * m + j] = sum;
  }
  return out;
}

/** Returns the transpose of a row-major (n, m) matrix. */
function transpose(a: Float32Array, n: number, m: number): Float32Array {
  const out = new Float32Array(n * m);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) out[j * n + i] = a[i * m + j]!;
  return out;
}

describe('cpu backend with LoRA', () => {
  const lora: LoraConfig = { rank: 3, alpha: 6, targetModules: ['q_proj', 'v_proj', 'o_proj', 'down_proj'] };

  it('equals the full model with merged weights, in logits and in the chain rule of its gradients', async () => {
    const adapted = await createCpuBackend(CONFIG, { seed: 11 }, { lora, loraSeed: 12 });
    const params = await adapted.getParameters();
    // give every B a random value (B starts at zero, which would hide bugs in dA)
    const randomB: NamedTensors = new Map();
    let seed = 100;
    for (const [name, tensor] of params) if (name.includes('lora_B')) randomB.set(name, { shape: tensor.shape, data: randomArray(tensor.data.length, seed++, 0.3) });
    await adapted.setParameters(randomB);
    const all = await adapted.getParameters();

    const scale = lora.alpha / lora.rank;
    const merged: NamedTensors = new Map([...all].filter(([name]) => !name.includes('lora_')));
    const shapes = new Map<string, { A: Float32Array; B: Float32Array; OC: number; IC: number }>();
    for (let l = 0; l < CONFIG.num_hidden_layers; l++) {
      for (const module of lora.targetModules) {
        const weightName = `${linearModuleName(l, module)}.weight`;
        const [OC, IC] = merged.get(weightName)!.shape as [number, number];
        const A = all.get(loraParamName(l, module, 'A'))!.data; // (r, IC)
        const Bm = all.get(loraParamName(l, module, 'B'))!.data; // (OC, r)
        const delta = matmul(Bm, A, OC, lora.rank, IC);
        const weight = merged.get(weightName)!.data.map((w, i) => w + scale * delta[i]!);
        merged.set(weightName, { shape: [OC, IC], data: weight });
        shapes.set(`${l}.${module}`, { A, B: Bm, OC, IC });
      }
    }
    const full = await createCpuBackend(CONFIG, { tensors: merged });
    expectClose(await adapted.forward(ids, B, T), await full.forward(ids, B, T), { atol: 1e-5, rtol: 1e-4, label: 'logits' });

    const objectiveAdapted = await adapted.backward(ids, targets, weights, B, T, 0.9);
    const objectiveFull = await full.backward(ids, targets, weights, B, T, 0.9);
    expectClose(objectiveAdapted, objectiveFull, { atol: 1e-6, label: 'objective' });
    const gradsAdapted = await adapted.getGradients();
    const gradsFull = await full.getGradients();
    expect([...gradsAdapted.keys()].every((name) => name.includes('lora_'))).toBe(true);
    for (let l = 0; l < CONFIG.num_hidden_layers; l++) {
      for (const module of lora.targetModules as LoraTargetModule[]) {
        const { A, B: Bm, OC, IC } = shapes.get(`${l}.${module}`)!;
        const dW = gradsFull.get(`${linearModuleName(l, module)}.weight`)!.data; // (OC, IC)
        const expectedDB = matmul(dW, transpose(A, lora.rank, IC), OC, IC, lora.rank).map((x) => x * scale);
        const expectedDA = matmul(transpose(Bm, OC, lora.rank), dW, lora.rank, OC, IC).map((x) => x * scale);
        expectClose(gradsAdapted.get(loraParamName(l, module, 'B'))!.data, expectedDB, { atol: 1e-6, rtol: 1e-3, label: `layer ${l} ${module} dB` });
        expectClose(gradsAdapted.get(loraParamName(l, module, 'A'))!.data, expectedDA, { atol: 1e-6, rtol: 1e-3, label: `layer ${l} ${module} dA` });
      }
    }
  });

  it('starts equal to the base model (B = 0), trains only the adapters, and lowers the loss', async () => {
    const base = await createCpuBackend(CONFIG, { seed: 21 });
    const adapted = await createCpuBackend(CONFIG, { seed: 21 }, { lora, loraSeed: 1 });
    expectClose(await adapted.forward(ids, B, T), await base.forward(ids, B, T), { atol: 0, rtol: 0, label: 'logits at init' });
    const before = await adapted.getParameters();
    const sft = new Float32Array(B * T).fill(-1 / (B * T));
    const losses: number[] = [];
    for (let step = 0; step < 15; step++) {
      await adapted.zeroGrad();
      losses.push(await adapted.backward(ids, targets, sft, B, T, 1));
      await adapted.step({ ...STEP, lr: 3e-2 });
    }
    expect(losses.at(-1)!).toBeLessThan(losses[0]! - 0.1);
    const after = await adapted.getParameters();
    for (const [name, tensor] of before) {
      const changed = tensor.data.some((x, i) => x !== after.get(name)!.data[i]);
      expect(changed, name).toBe(name.includes('lora_'));
    }
  });
});

describe('cpu backend', () => {
  it('initialises like Hugging Face, deterministically per seed', async () => {
    const a = await (await createCpuBackend(CONFIG, { seed: 5 })).getParameters();
    const b = await (await createCpuBackend(CONFIG, { seed: 5 })).getParameters();
    const c = await (await createCpuBackend(CONFIG, { seed: 6 })).getParameters();
    const embed = a.get('model.embed_tokens.weight')!.data;
    expectClose(embed, b.get('model.embed_tokens.weight')!.data, { atol: 0, rtol: 0, label: 'same seed' });
    expect(embed[0]).not.toBe(c.get('model.embed_tokens.weight')!.data[0]);
    const std = Math.sqrt(embed.reduce((s, x) => s + x * x, 0) / embed.length);
    expect(std).toBeGreaterThan(0.017);
    expect(std).toBeLessThan(0.023);
    expect(Array.from(a.get('model.layers.1.self_attn.k_norm.weight')!.data)).toEqual(new Array(6).fill(1));
    expect(Array.from(a.get('model.layers.0.self_attn.q_proj.bias')!.data)).toEqual(new Array(24).fill(0));
  });

  it('is causal: right padding never changes the logits of earlier tokens', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const padded = ids.slice();
    padded[T - 1] = 0;
    padded[T - 2] = 0;
    const V = CONFIG.vocab_size;
    const logits = await backend.forward(ids, B, T);
    const paddedLogits = await backend.forward(padded, B, T);
    expectClose(paddedLogits.subarray(0, (T - 2) * V), logits.subarray(0, (T - 2) * V), { atol: 0, rtol: 0, label: 'unpadded prefix' });
  });

  it('returns log-softmax of the logits at a temperature, and accumulates gradients across backward calls', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 8 });
    const V = CONFIG.vocab_size;
    const logits = await backend.forward(ids, B, T);
    const logprobs = await backend.logprobs(ids, targets, B, T, 0.5);
    const expected = Array.from(targets, (target, n) => {
      const row = Array.from(logits.subarray(n * V, (n + 1) * V), (x) => x / 0.5);
      const max = Math.max(...row);
      return row[target]! - max - Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
    });
    expectClose(logprobs, expected, { atol: 1e-5, label: 'logprobs at temperature 0.5' });

    await backend.backward(ids, targets, weights, B, T, 1);
    const once = await backend.getGradients();
    await backend.backward(ids, targets, weights, B, T, 1);
    const twice = await backend.getGradients();
    for (const [name, tensor] of once) expectClose(twice.get(name)!.data, tensor.data.map((x) => 2 * x), { atol: 1e-7, rtol: 1e-5, label: name });
    const norm = await backend.gradNorm();
    await backend.zeroGrad();
    expect(await backend.gradNorm()).toBe(0);
    expect(norm).toBeGreaterThan(0);
  });

  it('reports the pre-clip norm from step and clips to maxGradNorm', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 9 });
    await backend.backward(ids, targets, weights, B, T, 1);
    const norm = await backend.gradNorm();
    const { gradNorm } = await backend.step({ ...STEP, maxGradNorm: norm / 2 });
    expect(gradNorm).toBeCloseTo(norm, 5);
    expect(await backend.gradNorm()).toBeCloseTo(norm / 2, 4);
  });

  it('explains bad inputs and parameters', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 10 });
    await expect(backend.forward(Int32Array.from([1, 99]), 1, 2)).rejects.toThrow(/ids\[1\] = 99 is outside the vocabulary \[0, 23\)/);
    await expect(backend.forward(Int32Array.from([1, 2]), 1, 3)).rejects.toThrow(/ids has 2 values, expected B\*T = 3/);
    await expect(backend.backward(ids, targets, new Float32Array(3), B, T, 1)).rejects.toThrow(/weights has 3 values/);
    await expect(backend.setParameters(new Map([['model.nope.weight', { shape: [1], data: new Float32Array(1) }]]))).rejects.toThrow(
      /unknown parameter model\.nope\.weight/,
    );
    await expect(backend.setParameters(new Map([['model.norm.weight', { shape: [4, 4], data: new Float32Array(16) }]]))).rejects.toThrow(
      /parameter model\.norm\.weight: shape \[4,4\] with 16 values, expected \[16\]/,
    );
    const params = await backend.getParameters();
    params.delete('lm_head.weight');
    await expect(createCpuBackend(CONFIG, { tensors: params })).rejects.toThrow(/missing 1 parameter\(s\): lm_head\.weight/);
  });
});
