/**
 * Seeded random initialisation, as Hugging Face's `_init_weights` does for Llama-family models
 * (linear and embedding weights normal(0, initializer_range = 0.02), biases 0, RMSNorm weights 1)
 * and as PEFT does for LoRA (A kaiming-uniform, i.e. uniform(±1/√IC); B zero). Deterministic per
 * seed, on every backend, so a seed in a share link reproduces a run.
 */
import type { ModelConfig } from './config.ts';
import { LORA_TARGET_MODULES, linearSizes, loraParamName, tensorView, type Layout, type LoraConfig } from './layout.ts';

/** Standard deviation of Hugging Face's initializer_range for these models. */
const INITIALIZER_RANGE = 0.02;

/** Returns a deterministic generator of uniform numbers in [0, 1) (mulberry32). */
export function seededUniform(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Returns a deterministic generator of standard normal numbers (Box–Muller over seededUniform). */
function seededNormal(seed: number): () => number {
  const uniform = seededUniform(seed);
  return () => {
    const u1 = 1 - uniform(); // (0, 1]
    const u2 = uniform();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
}

/** Fills the parameter buffer: norm weights 1, biases 0, every other tensor normal(0, 0.02), in layout order. */
export function initParameters(params: Float32Array, layout: Layout, seed: number): void {
  const normal = seededNormal(seed);
  params.fill(0);
  for (const slot of layout.slots) {
    const view = params.subarray(slot.offset, slot.offset + slot.size);
    if (slot.name.endsWith('norm.weight')) view.fill(1);
    else if (slot.name.endsWith('.bias')) view.fill(0);
    else for (let i = 0; i < view.length; i++) view[i] = normal() * INITIALIZER_RANGE;
  }
}

/** Fills the LoRA buffer: every A uniform(±1/√IC) (PEFT's kaiming_uniform with a = √5), every B zero. */
export function initLoraParameters(params: Float32Array, layout: Layout, config: ModelConfig, lora: LoraConfig, seed: number): void {
  const uniform = seededUniform(seed);
  params.fill(0);
  for (let l = 0; l < config.num_hidden_layers; l++) {
    for (const module of LORA_TARGET_MODULES) {
      if (!lora.targetModules.includes(module)) continue;
      const bound = 1 / Math.sqrt(linearSizes(config, module).IC);
      const loraA = tensorView(params, layout, loraParamName(l, module, 'A'));
      for (let i = 0; i < loraA.length; i++) loraA[i] = (2 * uniform() - 1) * bound;
    }
  }
}
