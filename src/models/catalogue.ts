/**
 * The model catalogue: the real checkpoints the in-tab engine can download from Hugging Face (id,
 * repository, files, approximate download size and their config.json shapes), and every preset by
 * the name the CLI takes. Data only; it fetches nothing (the cache is cache.ts). src/models sits
 * above src/gpu (it uses the model shapes) and below src/workers, src/cli and src/ui.
 */
import type { ModelConfig } from '../gpu/model/config.ts';
import { QWEN2_5_0_5B_CONFIG, QWEN3_0_6B_CONFIG, SMOLLM2_135M_CONFIG, SMOLLM2_360M_CONFIG, TINY_CONFIG } from '../gpu/inference/presets.ts';

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
