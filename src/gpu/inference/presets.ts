/**
 * Model shapes: `tiny`, the offline default (a small Llama over the byte tokenizer, seeded random
 * weights until trained), and the config.json shapes of the real checkpoints, for random-weight
 * benchmarks without downloading anything. Which real checkpoints exist, where they live and how
 * big they are is the model catalogue's (src/models/catalogue.ts). This file fetches nothing.
 */
import type { ModelConfig } from '../model/config.ts';
import { BYTE_VOCAB_SIZE } from '../io/byte-tokenizer.ts';

/** The tiny from-scratch model: 2 layers, hidden 64, 4 heads over 2 KV heads, tied embeddings, the byte tokenizer's vocabulary. */
export const TINY_CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  vocab_size: BYTE_VOCAB_SIZE,
  hidden_size: 64,
  intermediate_size: 192,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: true,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
};

/**
 * nano, TabRL's small pretrained byte-level model (shipped under public/models/nano, made by
 * scripts/nano/pretrain.ts on the CPU): 3 layers, hidden 96, 3 heads over 1 KV head, tied embeddings.
 * nano-wordle (public/models/nano-wordle, lesson 6's model) and nano-tools (public/models/nano-tools,
 * lesson 7's model) have the same shape.
 */
export const NANO_CONFIG: ModelConfig = {
  ...TINY_CONFIG,
  hidden_size: 96,
  intermediate_size: 256,
  num_hidden_layers: 3,
  num_attention_heads: 3,
  num_key_value_heads: 1,
  head_dim: 32,
};

/**
 * nano-2m, nano's larger sibling for lesson 6 (shipped under public/models/nano-2m, made by
 * scripts/nano/pretrain.ts on the CPU): 6 layers, hidden 192, MLP 512, 6 heads over 2 KV heads
 * (head size 32), tied embeddings, 2.41M parameters.
 */
export const NANO_2M_CONFIG: ModelConfig = {
  ...NANO_CONFIG,
  hidden_size: 192,
  intermediate_size: 512,
  num_hidden_layers: 6,
  num_attention_heads: 6,
  num_key_value_heads: 2,
  head_dim: 32,
};

/** The shapes of HuggingFaceTB/SmolLM2-135M-Instruct (its config.json), for random-weight benchmarks. */
export const SMOLLM2_135M_CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  vocab_size: 49152,
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  head_dim: 64,
  rope_theta: 100000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: true,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
};

/** The shapes of HuggingFaceTB/SmolLM2-360M-Instruct (its config.json). */
export const SMOLLM2_360M_CONFIG: ModelConfig = {
  ...SMOLLM2_135M_CONFIG,
  hidden_size: 960,
  intermediate_size: 2560,
  num_hidden_layers: 32,
  num_attention_heads: 15,
  num_key_value_heads: 5,
  head_dim: 64,
};

/** The shapes of Qwen/Qwen2.5-0.5B-Instruct (its config.json): QKV bias, tied embeddings. */
export const QWEN2_5_0_5B_CONFIG: ModelConfig = {
  architecture: 'Qwen2ForCausalLM',
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  head_dim: 64,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  attention_bias: true,
  attention_output_bias: false,
  qk_norm: false,
};

/** The shapes of Qwen/Qwen3-0.6B (its config.json): per-head q/k norm, head_dim 128 (NH·HS ≠ C), tied embeddings. */
export const QWEN3_0_6B_CONFIG: ModelConfig = {
  architecture: 'Qwen3ForCausalLM',
  vocab_size: 151936,
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  head_dim: 128,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: true,
};
