/**
 * Model presets for sampling and benchmarks: `tiny`, the offline default (a small Llama over the
 * byte tokenizer, seeded random weights until trained), and the shapes of the real checkpoints the
 * engine targets, for random-weight benchmarks without downloading anything.
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

/** Presets by the name the CLI takes (`tabrl generate tiny`); only `tiny` has a tokenizer that ships with TabRL. */
export const MODEL_PRESETS: Readonly<Record<string, ModelConfig>> = {
  tiny: TINY_CONFIG,
  'smollm2-135m-shapes': SMOLLM2_135M_CONFIG,
};
