/**
 * Model presets: `tiny`, the offline default (a small Llama over the byte tokenizer, seeded random
 * weights until trained); the real checkpoints the in-tab engine downloads from Hugging Face (repo,
 * files, approximate download size and their config.json shapes); and those shapes by name, for
 * random-weight benchmarks without downloading anything. This file fetches nothing.
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

/** One file of a model repository: its name, and whether a missing file (HTTP 404) is fine. */
export interface ModelFile {
  name: string;
  optional?: boolean;
}

/** A real checkpoint the in-tab engine can download: where it lives, what to fetch, how big it is, and its shapes. */
export interface RealModelPreset {
  /** Stable id, as links and the store spell it (e.g. "smollm2-135m-instruct"). */
  id: string;
  /** Display name. */
  name: string;
  /** Hugging Face repository, "owner/name". */
  repo: string;
  /** The files to fetch from the repository's main branch. */
  files: readonly ModelFile[];
  /** Approximate size of all files in bytes (bf16 weights plus tokenizer), for the quota check and the picker. */
  downloadBytes: number;
  /** The shapes from its config.json (the downloaded config.json is what the engine uses; these size the device check). */
  config: ModelConfig;
}

/** The files every preset fetches: weights, config and the tokenizer with its chat template and stop tokens. */
export const HF_MODEL_FILES: readonly ModelFile[] = [
  { name: 'config.json' },
  { name: 'generation_config.json', optional: true },
  { name: 'tokenizer_config.json' },
  { name: 'tokenizer.json' },
  { name: 'model.safetensors' },
];

const MB = 1_000_000;

/** The real checkpoints, smallest first; the first is the default real model. */
export const REAL_MODEL_PRESETS: readonly RealModelPreset[] = [
  { id: 'smollm2-135m-instruct', name: 'SmolLM2-135M-Instruct', repo: 'HuggingFaceTB/SmolLM2-135M-Instruct', files: HF_MODEL_FILES, downloadBytes: 272 * MB, config: SMOLLM2_135M_CONFIG },
  { id: 'smollm2-360m-instruct', name: 'SmolLM2-360M-Instruct', repo: 'HuggingFaceTB/SmolLM2-360M-Instruct', files: HF_MODEL_FILES, downloadBytes: 726 * MB, config: SMOLLM2_360M_CONFIG },
  { id: 'qwen2.5-0.5b-instruct', name: 'Qwen2.5-0.5B-Instruct', repo: 'Qwen/Qwen2.5-0.5B-Instruct', files: HF_MODEL_FILES, downloadBytes: 996 * MB, config: QWEN2_5_0_5B_CONFIG },
  { id: 'qwen3-0.6b', name: 'Qwen3-0.6B', repo: 'Qwen/Qwen3-0.6B', files: HF_MODEL_FILES, downloadBytes: 1_515 * MB, config: QWEN3_0_6B_CONFIG },
];

/** The id of the default real model (SmolLM2-135M-Instruct). */
export const DEFAULT_REAL_PRESET_ID = 'smollm2-135m-instruct';

/** Returns the real preset with this id, or undefined. */
export function findRealPreset(id: string): RealModelPreset | undefined {
  return REAL_MODEL_PRESETS.find((preset) => preset.id === id);
}

/** Returns the download URL of a file of a Hugging Face repository's main branch. */
export function huggingFaceFileUrl(repo: string, file: string): string {
  return `https://huggingface.co/${repo}/resolve/main/${file}`;
}

/** Presets by the name the CLI takes (`tabrl generate tiny`); only `tiny` has a tokenizer that ships with TabRL (real presets need their downloaded folder in Node). */
export const MODEL_PRESETS: Readonly<Record<string, ModelConfig>> = {
  tiny: TINY_CONFIG,
  'smollm2-135m-shapes': SMOLLM2_135M_CONFIG,
  ...Object.fromEntries(REAL_MODEL_PRESETS.map((preset) => [preset.id, preset.config])),
};
