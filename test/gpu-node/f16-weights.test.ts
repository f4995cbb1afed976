/**
 * f16 storage of frozen weights (frozenWeightsF16), on an adapter that has shader-f16: Mesa 25's
 * lavapipe, extracted by scripts/ensure-lavapipe.mjs (run by `npm test`) and selected here through
 * VK_ICD_FILENAMES before Dawn starts (each gpu-node file is its own process). SwiftShader, the
 * default CPU adapter, has no shader-f16. No lavapipe is a failure, never a skip.
 * Checks: the CPU f16 codec; each *_f16w kernel against its CPU reference with the weights rounded
 * to f16 first (so the tolerance stays the f32 one); the f16-weight LoRA backend against the f32 LoRA
 * backend holding the same rounded weights (logits, log-probs, LoRA gradients, one AdamW step), and
 * the cost of the rounding against the unrounded f32 weights.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import type { LoraConfig } from '../../src/gpu/model/layout.ts';
import * as ref from '../../src/gpu/reference/index.ts';
import type { GPUContext } from '../../src/gpu/webgpu/device.ts';
import { encodeF16, roundToF16 } from '../../src/gpu/io/half.ts';
import { createTensor, KernelPlan, Kernels, readTensor, type GPUTensor } from '../../src/gpu/webgpu/kernels.ts';
import * as gpu from '../../src/gpu/webgpu/ops.ts';
import { createWebGPUBackend, isF16StorableWeight } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { TINY_CONFIG } from '../support/gpu/backend-cases.ts';
import { expectClose, randomArray, randomInts } from '../support/expect-close.ts';
import { requestLavapipeDevice } from '../support/lavapipe.ts';

const TOLERANCE = { atol: 2e-5, rtol: 1e-4 };
const GRAD_TOLERANCE = { atol: 2e-6, rtol: 2e-3 };

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  context = await requestLavapipeDevice('gpu-node f16 weight tests');
  kernels = new Kernels(context);
});

afterAll(() => context?.device.destroy());

/** Uploads values as f16 (padded to 4 bytes) and returns the tensor tagged dtype 'f16'. */
function uploadF16(values: Float32Array): GPUTensor {
  const halves = new Uint16Array(Math.ceil(values.length / 2) * 2);
  halves.set(encodeF16(values));
  const tensor = createTensor(context.device, halves.byteLength, 'f16 weight');
  context.device.queue.writeBuffer(tensor.buffer, 0, halves.buffer, 0, halves.byteLength);
  return { ...tensor, dtype: 'f16' };
}

/** Runs a check in a validation error scope and fails on any WebGPU validation error. */
async function withoutValidationErrors(check: () => Promise<void>): Promise<void> {
  context.device.pushErrorScope('validation');
  await check();
  const error = await context.device.popErrorScope();
  expect(error?.message, 'WebGPU validation error').toBeUndefined();
}

test('the adapter is lavapipe with shader-f16', () => {
  expect(context.adapter.architecture + context.adapter.description, 'adapter').toMatch(/llvmpipe/);
  expect(context.features.shaderF16, 'shader-f16 on the device').toBe(true);
});

for (const [N, kernel] of [[37, 'matmul_forward_f16w'], [1, 'matmul_forward_narrow_f16w']] as const) test(`${kernel} matches reference (N=${N}, IC=52, OC=68, bias, accumulate)`, async () => {
  const [IC, OC, alpha] = [52, 68, 0.75];
  const inp = randomArray(N * IC, 1);
  const weight = randomArray(OC * IC, 2);
  const bias = randomArray(OC, 3);
  const out0 = randomArray(N * OC, 4);
  const product = new Float32Array(N * OC);
  ref.matmulForward(product, inp, roundToF16(weight), null, N, IC, OC);
  const expected = out0.map((x, i) => x + alpha * product[i]! + bias[i % OC]!);
  await withoutValidationErrors(async () => {
    const plan = new KernelPlan(kernels);
    const out = createTensor(context.device, out0);
    const dispatch = gpu.matmulForward(plan, out, createTensor(context.device, inp), uploadF16(weight), createTensor(context.device, bias), N, IC, OC, { alpha, accumulate: true });
    expect(dispatch.label.startsWith(`${kernel}|`), dispatch.label).toBe(true);
    plan.submit();
    expectClose(await readTensor(context.device, out, N * OC * 4), expected, { ...TOLERANCE, label: 'out' });
  });
});

test('matmul_backward_dinp_f16w matches reference (N=37, IC=52, OC=68, accumulate)', async () => {
  const [N, IC, OC] = [37, 52, 68];
  const dout = randomArray(N * OC, 1);
  const weight = randomArray(OC * IC, 2);
  const dinp0 = randomArray(N * IC, 3);
  const expected = dinp0.slice();
  ref.matmulBackward(expected, null, null, dout, new Float32Array(N * IC), roundToF16(weight), N, IC, OC);
  await withoutValidationErrors(async () => {
    const plan = new KernelPlan(kernels);
    const dinp = createTensor(context.device, dinp0);
    const dispatch = gpu.matmulBackwardInput(plan, dinp, createTensor(context.device, dout), uploadF16(weight), N, IC, OC);
    expect(dispatch.label).toMatch(/^matmul_backward_dinp_f16w\|/);
    plan.submit();
    expectClose(await readTensor(context.device, dinp, N * IC * 4), expected, { ...TOLERANCE, label: 'dinp' });
  });
});

test('embedding_forward_f16w matches reference (odd sizes, repeated ids)', async () => {
  const [N, C, V] = [67, 37, 11];
  const ids = randomInts(N, 1, V);
  const wte = randomArray(V * C, 2);
  const expected = new Float32Array(N * C);
  ref.embeddingForward(expected, ids, roundToF16(wte), N, C);
  await withoutValidationErrors(async () => {
    const plan = new KernelPlan(kernels);
    const out = createTensor(context.device, N * C * 4);
    gpu.embeddingForward(plan, out, createTensor(context.device, ids), uploadF16(wte), N, C);
    plan.submit();
    expectClose(await readTensor(context.device, out, N * C * 4), expected, { atol: 0, rtol: 0, label: 'out' });
  });
});

test('an f16 tensor given to an f32 kernel is an error, not garbage', () => {
  const plan = new KernelPlan(kernels);
  const f16 = uploadF16(randomArray(8 * 8, 1));
  const f32 = createTensor(context.device, 8 * 8 * 4);
  expect(() => gpu.matmulBackwardWeight(plan, f32, f32, f16, 8, 8, 8)).toThrow(/only the \*_f16w kernels read f16/);
});

const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };

const VARIANTS: Array<{ name: string; config: ModelConfig }> = [
  { name: 'Llama, untied LM head', config: TINY_CONFIG },
  { name: 'Qwen2-style QKV bias, tied embeddings', config: { ...TINY_CONFIG, architecture: 'Qwen2ForCausalLM', attention_bias: true, tie_word_embeddings: true } },
];

// The first variant compiles every training pipeline on lavapipe: with Mesa's shader cache cold (a fresh
// machine) that alone took 120 s on 2 loaded cores, so these get more than the project's 120 s.
for (const { name, config } of VARIANTS) {
  test(`f16-weight LoRA backend matches the f32 LoRA backend on the same rounded weights: ${name}`, { timeout: 400_000 }, async () => {
    const [B, T] = [2, 7];
    const N = B * T;
    const ids = randomInts(N, 11, config.vocab_size);
    const targets = randomInts(N, 12, config.vocab_size);
    const weights = Float32Array.from({ length: N }, (_, i) => (i % 5 === 4 ? 0 : -1 / N));
    const f32 = await createWebGPUBackend(context, config, { seed: 3 }, { lora: LORA, loraSeed: 4 });
    const original = await f32.getParameters();
    // give LoRA B values so the adapters matter, and round the frozen matrices to f16 for the f32 twin
    const rounded: NamedTensors = new Map();
    for (const [tensorName, tensor] of original) {
      if (tensorName.includes('lora_B')) rounded.set(tensorName, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
      else rounded.set(tensorName, { shape: tensor.shape, data: isF16StorableWeight(tensorName) ? roundToF16(tensor.data) : tensor.data });
    }
    const f16 = await createWebGPUBackend(context, config, { tensors: rounded }, { lora: LORA, loraSeed: 4, frozenWeightsF16: true });
    const exact = await createWebGPUBackend(context, config, { tensors: original }, { lora: LORA, loraSeed: 4 });
    await exact.setParameters(new Map([...rounded].filter(([tensorName]) => tensorName.includes('lora_B'))));
    await f32.setParameters(rounded);
    try {
      await withoutValidationErrors(async () => {
        // parameters come back as f32: the frozen matrices exactly as rounded, the rest untouched
        const back = await f16.getParameters();
        expect([...back.keys()].sort()).toEqual([...rounded.keys()].sort());
        for (const [tensorName, tensor] of rounded) expectClose(back.get(tensorName)!.data, tensor.data, { atol: 0, rtol: 0, label: `getParameters ${tensorName}` });

        const logits = await f16.forward(ids, B, T);
        expectClose(logits, await f32.forward(ids, B, T), { ...TOLERANCE, label: 'logits' });
        expectClose(await f16.logprobs(ids, targets, B, T, 0.8), await f32.logprobs(ids, targets, B, T, 0.8), { ...TOLERANCE, label: 'logprobs at 0.8' });
        await f16.zeroGrad();
        await f32.zeroGrad();
        expectClose(await f16.backward(ids, targets, weights, B, T, 1), await f32.backward(ids, targets, weights, B, T, 1), { ...TOLERANCE, label: 'objective' });
        const [gradsF16, gradsF32] = [await f16.getGradients(), await f32.getGradients()];
        expect([...gradsF16.keys()].every((gradName) => gradName.includes('lora_'))).toBe(true);
        for (const [gradName, grad] of gradsF32) expectClose(gradsF16.get(gradName)!.data, grad.data, { ...GRAD_TOLERANCE, label: `gradient ${gradName}` });
        const settings = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 0.5 };
        const [stepF16, stepF32] = [await f16.step(settings), await f32.step(settings)];
        expectClose(stepF16.gradNorm, stepF32.gradNorm, { atol: 1e-6, rtol: 1e-4, label: 'grad norm' });
        const [afterF16, afterF32] = [await f16.getParameters(), await f32.getParameters()];
        for (const [tensorName, tensor] of afterF32) expectClose(afterF16.get(tensorName)!.data, tensor.data, { atol: 1e-4, rtol: 1e-4, label: `after one AdamW step, ${tensorName}` });

        // what the rounding costs against the unrounded f32 weights (weights ~N(0, 0.02): relative error ≤ 2^-11)
        const exactLogits = await exact.forward(ids, B, T);
        const maxDifference = logits.reduce((max, x, i) => Math.max(max, Math.abs(x - exactLogits[i]!)), 0);
        console.log(`f16 weights vs unrounded f32 (${name}): max |Δlogit| = ${maxDifference.toExponential(2)}`);
        expectClose(logits, exactLogits, { atol: 1e-3, rtol: 1e-2, label: 'logits against unrounded f32 weights' });

        // memory: the frozen matrices take half the bytes
        const [bytesF16, bytesF32] = [f16.parameterBytes(), f32.parameterBytes()];
        console.log(`parameter bytes (${name}): f32 ${bytesF32.f32} → f32 ${bytesF16.f32} + f16 ${bytesF16.f16}`);
        expect(bytesF16.f32 + bytesF16.f16).toBeLessThan(0.6 * bytesF32.f32);
      });
    } finally {
      f16.dispose();
      f32.dispose();
      exact.dispose();
    }
  });
}

test('frozenWeightsF16 without LoRA or without shader-f16 is an error that says why', async () => {
  await expect(createWebGPUBackend(context, TINY_CONFIG, { seed: 1 }, { frozenWeightsF16: true })).rejects.toThrow(/without LoRA every weight trains in f32/);
  const noF16 = { ...context, features: { ...context.features, shaderF16: false } };
  await expect(createWebGPUBackend(noF16, TINY_CONFIG, { seed: 1 }, { lora: LORA, frozenWeightsF16: true })).rejects.toThrow(/needs the shader-f16 feature/);
});
