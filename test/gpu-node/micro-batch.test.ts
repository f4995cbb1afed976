/**
 * The micro-batch chosen from a memory budget really allocates within it on Dawn: a small
 * Llama-shaped LoRA model, every createBuffer counted, the chosen batch prepared and trained one
 * step. The accounting (step-memory.ts) gives exactly the bytes of the per-batch buffers the backend
 * made; the tracked peak stays within the budget plus the plan uniforms and scratch the accounting
 * leaves out; every buffer within maxBufferSize. On WebGPU's default limits, as a laptop's browser
 * grants. No adapter is a failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { trackBufferMemory, type BufferTracker } from '../../bench/memory-accounting.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../../src/gpu/model/layout.ts';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../../src/gpu/webgpu/webgpu-backend.ts';
import { randomInts } from '../support/expect-close.ts';

const MiB = 2 ** 20;
/** Llama-shaped and small enough for a software adapter: 2 layers, GQA, a 4,096-token vocabulary. */
const CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM', vocab_size: 4096, hidden_size: 128, intermediate_size: 384, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32, rope_theta: 10_000, rms_norm_eps: 1e-5,
  tie_word_embeddings: true, attention_bias: false, attention_output_bias: false, qk_norm: false,
};
const LORA: LoraConfig = { rank: 8, alpha: 16, targetModules: [...LORA_TARGET_MODULES] };
/** What the accounting leaves out: plan uniforms, grad-norm partials, matmul scratch. */
const UNACCOUNTED_BYTES = 4 * MiB;

let context: GPUContext;
let tracker: BufferTracker;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node micro-batch tests', defaultLimits: true });
  tracker = trackBufferMemory(context.device);
});

afterAll(() => context?.device.destroy());

test('the micro-batch chosen from a budget allocates within it and trains; one more does not fit the budget', { timeout: 120_000 }, async () => {
  const backend = await createWebGPUBackend(context, CONFIG, { seed: 3 }, { lora: LORA });
  try {
    const T = 64;
    // a budget that leaves room for a few sequences beyond the model state
    const state = backend.chooseMicroBatch(T, { budgetBytes: Infinity, maxMicroBatch: 1 }).stateBytes;
    const budgetBytes = state + 12 * MiB;
    const choice = backend.chooseMicroBatch(T, { budgetBytes, maxMicroBatch: 64 });
    expect(choice.B).toBeGreaterThan(1);
    expect(choice.B).toBeLessThan(64);
    expect(choice.stepBytes).toBeLessThanOrEqual(budgetBytes);
    expect(choice.reason).toMatch(new RegExp(`^at ${choice.B + 1}: the step needs \\d+ MiB .* past the memory budget`));
    expect(() => backend.chooseMicroBatch(T, { budgetBytes, maxMicroBatch: 64, forced: choice.B + 1 })).toThrow(/--micro-batch \d+ cannot fit at T 64: .*memory budget.*lower --micro-batch/);

    tracker.resetPeak();
    const before = tracker.liveBytes();
    backend.prepare(choice.B, T);
    // the accounting is the backend's: the per-batch buffers it made are exactly the bytes planned
    expect(backend.batchMemory()).toMatchObject({ bytes: choice.plan.bytes, checkpointing: choice.plan.checkpointing, lmHeadRows: choice.plan.lmHeadRows });
    const N = choice.B * T;
    await backend.zeroGrad();
    const objective = await backend.backward(randomInts(N, 5, CONFIG.vocab_size), randomInts(N, 6, CONFIG.vocab_size), new Float32Array(N).fill(-1 / N), choice.B, T, 1);
    const { gradNorm } = await backend.step({ lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
    expect(Number.isFinite(objective) && gradNorm > 0).toBe(true);
    // the model state was live before; the step's peak on top of it stays within the budget and the scratch left out
    expect(before).toBeGreaterThanOrEqual(choice.stateBytes);
    expect(tracker.peakBytes() - before).toBeGreaterThanOrEqual(choice.plan.bytes);
    expect(tracker.peakBytes() - (before - choice.stateBytes)).toBeLessThanOrEqual(budgetBytes + UNACCOUNTED_BYTES);
    expect(tracker.largestBytes()).toBeLessThanOrEqual(context.device.limits.maxBufferSize);
  } finally {
    backend.dispose();
  }
});
