/**
 * The pretrained models that ship with TabRL in public/models: one list, by the name that the CLI's
 * `--model`, the tab's model picker, share links, the saved choice and lessons all use (the folder's
 * name under public/models), with each model's shapes, a label and a one-line description. Each is a
 * byte-level folder made by scripts/nano/pretrain.ts (config.json, model.safetensors in f16, the
 * byte tokenizer's files, pretraining.json) and trains whole, like tiny. Data only: it reads no
 * folder (the CLI's open-model.ts and the engine worker do).
 */
import { NANO_2M_CONFIG, NANO_CONFIG } from '../gpu/inference/presets.ts';
import type { ModelConfig } from '../gpu/model/config.ts';
import { paramShapes } from '../gpu/model/layout.ts';

/** A model folder shipped under public/models. */
export interface ShippedModel {
  /** The name everything uses and the folder's name under public/models ("nano-2m"). */
  id: string;
  /** The model picker's label. */
  label: string;
  /** One line on what it is and what it is for, for the model picker. */
  description: string;
  /** The shapes its config.json holds (the folder test checks that they match). */
  config: ModelConfig;
}

/** The shipped models, smallest first; the tab's default model (DEFAULT_LESSON_MODEL) is one of them. */
export const SHIPPED_MODELS: readonly ShippedModel[] = [
  { id: 'nano', label: 'Nano, pretrained', description: 'byte tokenizer · Wordle, reverse-text', config: NANO_CONFIG },
  { id: 'nano-wordle', label: 'Nano-wordle, pretrained', description: "nano's shape · reads Wordle boards from varied games (lesson 6)", config: NANO_CONFIG },
  { id: 'nano-tools', label: 'Nano-tools, pretrained', description: "nano's shape · also carries ids into tool calls (lesson 7)", config: NANO_CONFIG },
  { id: 'nano-2m', label: 'Nano-2M, pretrained', description: 'nano with 6 layers, hidden 192 · Wordle, reverse-text', config: NANO_2M_CONFIG },
];

/** Returns the shipped model with this id, or undefined. */
export function findShippedModel(id: string): ShippedModel | undefined {
  return SHIPPED_MODELS.find((model) => model.id === id);
}

/** The ids of the shipped models, for messages and usage texts ("nano, nano-wordle, nano-tools, nano-2m" once joined). */
export function shippedModelIds(): string[] {
  return SHIPPED_MODELS.map((model) => model.id);
}

/** The number of parameters of a shipped model, from its shapes. */
export function shippedModelParameters(model: ShippedModel): number {
  return paramShapes(model.config).reduce((sum, [, shape]) => sum + shape.reduce((product, size) => product * size, 1), 0);
}

/** About how many bytes the tab fetches for a shipped model: its weights in f16 (config.json and the safetensors header add a few kB). */
export function shippedModelDownloadBytes(model: ShippedModel): number {
  return 2 * shippedModelParameters(model);
}

/** The path of a shipped model's folder relative to the app's root (public/ in the repository): "models/nano-2m/". */
export function shippedModelPath(id: string): string {
  return `models/${id}/`;
}
