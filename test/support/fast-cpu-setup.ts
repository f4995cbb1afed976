/**
 * The model setup the fast CPU backend's tests share: a 2-layer Qwen2-style config (biased q/k/v,
 * untied head) with the sizes a test picks off the kernels' blocks, kernel pools at 1 and 2 threads
 * disposed after the file, a seeded training batch whose per-token weights have mixed signs like
 * GRPO advantages, and the AdamW step the tests take. Node only (worker threads).
 */
import { afterAll } from 'vitest';
import { createNodeWasmKernels } from '../../src/gpu/fast-cpu/node-kernel-threads.ts';
import type { WasmKernels } from '../../src/gpu/fast-cpu/wasm-kernels.ts';
import type { OptimizerStepOptions } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { randomArray, randomInts } from './expect-close.ts';

/** The sizes a test chooses; everything else is fixed. */
export type FastCpuTestSizes = Pick<ModelConfig, 'vocab_size' | 'hidden_size' | 'intermediate_size' | 'num_attention_heads' | 'num_key_value_heads' | 'head_dim'>;

/** A 2-layer Qwen2-style config (attention bias, untied LM head, no q/k norm) with the given sizes. */
export function fastCpuTestConfig(sizes: FastCpuTestSizes): ModelConfig {
  return {
    architecture: 'Qwen2ForCausalLM',
    num_hidden_layers: 2,
    rope_theta: 10000,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
    attention_bias: true,
    attention_output_bias: false,
    qk_norm: false,
    ...sizes,
  };
}

/** The AdamW step of the fast-backend tests (a large lr, so that three steps move the weights visibly). */
export const FAST_CPU_TEST_STEP: OptimizerStepOptions = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };

/** A seeded batch of B·T ids and targets in the vocabulary, and per-token weights in (−1/(B·T), 1/(B·T)). */
export function fastCpuTestBatch(config: ModelConfig, B: number, T: number, seed: number): { ids: Int32Array; targets: Int32Array; weights: Float32Array } {
  return {
    ids: randomInts(B * T, seed, config.vocab_size),
    targets: randomInts(B * T, seed + 1, config.vocab_size),
    weights: Float32Array.from(randomArray(B * T, seed + 2), (x) => x / (B * T)),
  };
}

/** Kernel pools at each thread count, created now and disposed after the test file (call at the file's top level). */
export function kernelPoolsForFile(threadCounts: number[]): Map<number, Promise<WasmKernels>> {
  const pools = new Map(threadCounts.map((threads) => [threads, createNodeWasmKernels(threads)]));
  afterAll(async () => {
    for (const pool of pools.values()) (await pool).dispose();
  });
  return pools;
}
