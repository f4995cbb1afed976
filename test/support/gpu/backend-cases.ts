/**
 * The WebGPU backend against the CPU backend on tiny random models (plain Llama, Qwen2-style QKV
 * bias with tied embeddings, Qwen3-style q/k norm, LoRA): logits, log-probs at a temperature, the
 * backward objective, every gradient and a few AdamW steps with clipping; and the check that
 * a tiny model overfits a fixed batch on WebGPU. Written once, run in Chromium and in Node + Dawn.
 */
import type { ModelBackend, NamedTensors } from '../../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { LoraConfig } from '../../../src/gpu/model/layout.ts';
import type { GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { createWebGPUBackend } from '../../../src/gpu/webgpu/webgpu-backend.ts';
import { expectClose, randomInts } from '../expect-close.ts';

/** One backend check: a name for the test and a body that throws on mismatch. */
export interface BackendCase {
  name: string;
  run: (context: GPUContext) => Promise<void>;
}

/** A tiny Llama: sizes not multiples of the workgroup size, vocabulary not a power of two. */
export const TINY_CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  vocab_size: 260,
  hidden_size: 32,
  intermediate_size: 44,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 8,
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: false,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
};

const VARIANTS: Array<{ name: string; config: ModelConfig; lora: LoraConfig | null }> = [
  { name: 'plain Llama', config: TINY_CONFIG, lora: null },
  {
    name: 'Qwen2-style QKV bias, tied embeddings',
    config: { ...TINY_CONFIG, architecture: 'Qwen2ForCausalLM', attention_bias: true, tie_word_embeddings: true },
    lora: null,
  },
  {
    name: 'Qwen3-style q/k norm, heads·head_dim ≠ hidden',
    config: { ...TINY_CONFIG, architecture: 'Qwen3ForCausalLM', head_dim: 12, qk_norm: true, tie_word_embeddings: true },
    lora: null,
  },
  {
    name: 'LoRA on every linear',
    config: TINY_CONFIG,
    lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] },
  },
];

const TOLERANCE = { atol: 2e-5, rtol: 1e-4 };
const GRAD_TOLERANCE = { atol: 2e-6, rtol: 2e-3 };

function expectSameTensors(actual: NamedTensors, expected: NamedTensors, options: { atol: number; rtol: number }, what: string): void {
  for (const [name, tensor] of expected) {
    const other = actual.get(name);
    if (!other) throw new Error(`${what}: webgpu backend has no tensor ${name}`);
    expectClose(other.data, tensor.data, { ...options, label: `${what} ${name}` });
  }
}

async function compareWithCpu(context: GPUContext, config: ModelConfig, lora: LoraConfig | null): Promise<void> {
  const [B, T] = [2, 7];
  const N = B * T;
  const ids = randomInts(N, 11, config.vocab_size);
  const targets = randomInts(N, 12, config.vocab_size);
  const weights = Float32Array.from({ length: N }, (_, i) => (i % 5 === 4 ? 0 : -1 / N)); // some masked tokens
  const cpu = await createCpuBackend(config, { seed: 3 }, { lora, loraSeed: 4 });
  const gpu = await createWebGPUBackend(context, config, { seed: 3 }, { lora, loraSeed: 4 });
  try {
    // LoRA B starts at zero; give it values so the adapters matter in the forward pass
    if (lora) {
      const tweaked: NamedTensors = new Map();
      for (const [name, tensor] of await cpu.getParameters()) {
        if (name.includes('lora_B')) tweaked.set(name, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
      }
      await cpu.setParameters(tweaked);
      await gpu.setParameters(tweaked);
    }
    expectClose(await gpu.forward(ids, B, T), await cpu.forward(ids, B, T), { ...TOLERANCE, label: 'logits' });
    expectClose(await gpu.logprobs(ids, targets, B, T, 0.8), await cpu.logprobs(ids, targets, B, T, 0.8), { ...TOLERANCE, label: 'logprobs at 0.8' });
    const settings = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 0.5 };
    for (let step = 0; step < 3; step++) {
      await cpu.zeroGrad();
      await gpu.zeroGrad();
      const expected = await cpu.backward(ids, targets, weights, B, T, step === 0 ? 0.8 : 1);
      expectClose(await gpu.backward(ids, targets, weights, B, T, step === 0 ? 0.8 : 1), expected, { ...TOLERANCE, label: `objective, step ${step}` });
      expectSameTensors(await gpu.getGradients(), await cpu.getGradients(), GRAD_TOLERANCE, `step ${step} gradient`);
      expectClose(await gpu.gradNorm(), await cpu.gradNorm(), { atol: 1e-6, rtol: 1e-4, label: `grad norm, step ${step}` });
      const [gpuStep, cpuStep] = [await gpu.step(settings), await cpu.step(settings)];
      expectClose(gpuStep.gradNorm, cpuStep.gradNorm, { atol: 1e-6, rtol: 1e-4, label: `step ${step} grad norm` });
    }
    // AdamW divides by √v, so gradients near zero turn f32 rounding into differences of a fraction of lr
    expectSameTensors(await gpu.getParameters(), await cpu.getParameters(), { atol: 1e-4, rtol: 1e-4 }, 'after 3 AdamW steps, parameter');
    // a new batch shape re-records the plans
    const shortIds = ids.subarray(0, 5);
    expectClose(await gpu.forward(shortIds, 1, 5), await cpu.forward(shortIds, 1, 5), { atol: 1e-4, rtol: 1e-3, label: 'logits at (B, T) = (1, 5)' });
  } finally {
    gpu.dispose();
    cpu.dispose();
  }
}

/** Returns the mean negative log-prob of targets, the SFT loss that backward's weights −1/N give. */
async function meanLoss(backend: ModelBackend, ids: Int32Array, targets: Int32Array, B: number, T: number): Promise<number> {
  const logprobs = await backend.logprobs(ids, targets, B, T, 1);
  return -logprobs.reduce((sum, x) => sum + x, 0) / logprobs.length;
}

/** The backend cases, run by test/browser/gpu/backend.test.ts and test/gpu-node/backend.test.ts. */
export const BACKEND_CASES: BackendCase[] = [
  ...VARIANTS.map(({ name, config, lora }) => ({
    name: `webgpu backend matches the cpu backend: ${name}`,
    run: (context: GPUContext) => compareWithCpu(context, config, lora),
  })),
  {
    name: 'a tiny model overfits a fixed batch on WebGPU',
    run: async (context) => {
      const [B, T] = [4, 16];
      const N = B * T;
      const ids = randomInts(N, 21, TINY_CONFIG.vocab_size);
      const targets = randomInts(N, 22, TINY_CONFIG.vocab_size);
      const weights = new Float32Array(N).fill(-1 / N); // minimise the mean negative log-prob
      const backend = await createWebGPUBackend(context, TINY_CONFIG, { seed: 5 });
      try {
        const initial = await meanLoss(backend, ids, targets, B, T);
        for (let step = 0; step < 40; step++) {
          await backend.zeroGrad();
          await backend.backward(ids, targets, weights, B, T, 1);
          await backend.step({ lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
        }
        const final = await meanLoss(backend, ids, targets, B, T);
        if (!(initial > 5 && final < 0.2 * initial)) {
          throw new Error(`the loss did not fall far below its start: ${initial.toFixed(3)} → ${final.toFixed(3)} after 40 AdamW steps`);
        }
      } finally {
        backend.dispose();
      }
    },
  },
];
