/**
 * Real checkpoints in the engine worker: where a model's files come from (a Hugging Face preset,
 * downloaded and cached, or files the person picked), and how it is built on the device — its
 * Hugging Face tokenizer and chat template, LoRA rank 16 on every linear layer (as `tabrl train`
 * does for model folders), frozen weights as f16 where the adapter has shader-f16, and a KV cache
 * big enough for real prompts. It also says, per preset, whether the device can hold it at all.
 */
import { loadHfTokenizer } from '../../gpu/io/hf-tokenizer.ts';
import { localModelReader, type PickedFile } from '../../gpu/io/local-model-files.ts';
import { browserModelStorage, fetchModelFiles, presetDownloadSpec, readFromFiles, type ModelDownloadProgress } from '../../models/cache.ts';
import { modelFitProblem } from '../../gpu/io/model-fit.ts';
import { loadModelFolder, type ReadFile } from '../../gpu/io/model-folder.ts';
import type { Tokenizer } from '../../gpu/io/tokenizer.ts';
import { LocalChatClient } from '../../gpu/inference/local-chat-client.ts';
import { findRealPreset, REAL_MODEL_PRESETS } from '../../models/catalogue.ts';
import type { ModelBackend, NamedTensors, OptimizerState } from '../../gpu/model/backend.ts';
import type { ModelConfig } from '../../gpu/model/config.ts';
import { initLoraParameters } from '../../gpu/model/init.ts';
import { LORA_TARGET_MODULES, loraLayout, paramShapes, type LoraConfig } from '../../gpu/model/layout.ts';
import type { GPUContext } from '../../gpu/webgpu/device.ts';
import { createWebGPUBackend } from '../../gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../../gpu/webgpu/webgpu-decoder.ts';

/** LoRA of rank 16 (alpha 32) on every linear layer: what real models train with in the tab. */
export const REAL_MODEL_LORA: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };

/** The KV cache of a real model's decoder: 1 GiB, or the device's largest buffer if smaller. */
const REAL_MODEL_CACHE_BYTES = 2 ** 30;

/** Where a real model comes from: a preset by id (downloaded, cached) or picked files. */
export type RealModelSource = { kind: 'preset'; id: string } | { kind: 'local'; files: readonly PickedFile[] };

/** A real model on the device, ready for chat and training. */
export interface RealModel {
  /** The preset's id, or "local". */
  id: string;
  /** Display name: the preset's, or the local config's architecture. */
  name: string;
  backend: ModelBackend;
  tokenizer: Tokenizer;
  client: LocalChatClient;
  parameters: number;
  trainableParameters: number;
}

/** Returns, for each real preset, null when this device can hold it, or why it cannot. */
export function presetFitProblems(context: GPUContext): Record<string, string | null> {
  return Object.fromEntries(REAL_MODEL_PRESETS.map((preset) => [preset.id, modelFitProblem(preset.config, context.device.limits, { f16: context.features.shaderF16 })]));
}

/** Opens the files of a source: a preset is checked against the device, then fetched (cache first) with progress. */
async function openSource(
  context: GPUContext,
  source: RealModelSource,
  onProgress: (progress: ModelDownloadProgress) => void,
  signal: AbortSignal,
): Promise<{ id: string; label: string; readFile: ReadFile }> {
  if (source.kind === 'local') return { id: 'local', label: 'the chosen folder', readFile: localModelReader(source.files, 'the chosen files') };
  const preset = findRealPreset(source.id);
  if (!preset) throw new Error(`unknown model "${source.id}"; choose tiny or one of ${REAL_MODEL_PRESETS.map((item) => item.id).join(', ')}`);
  const problem = presetFitProblems(context)[preset.id];
  if (problem) throw new Error(`${preset.name} is too large for this GPU: ${problem}. Choose a smaller model.`);
  const files = await fetchModelFiles(presetDownloadSpec(preset), browserModelStorage(), { onProgress, signal });
  return { id: preset.id, label: preset.name, readFile: readFromFiles(files, preset.name) };
}

/** Loads a real model's weights and tokenizer and builds it on the device with LoRA; `seed` initialises the adapters. */
export async function createRealModel(context: GPUContext, source: RealModelSource, seed: number, onProgress: (progress: ModelDownloadProgress) => void, signal: AbortSignal): Promise<RealModel> {
  const { id, label, readFile } = await openSource(context, source, onProgress, signal);
  const loaded = await loadModelFolder(readFile, label);
  const tokenizer = await loadHfTokenizer(readFile, label);
  const problem = modelFitProblem(loaded.config, context.device.limits, { f16: context.features.shaderF16 });
  if (problem) throw new Error(`${label} is too large for this GPU: ${problem}. Choose a smaller model.`);
  if (signal.aborted) throw new Error('Loading the model was cancelled.');
  const backend = await createWebGPUBackend(
    context,
    loaded.config,
    { tensors: loaded.tensors },
    {
      lora: REAL_MODEL_LORA,
      loraSeed: seed,
      frozenWeightsF16: context.features.shaderF16,
      activationsF16: context.features.shaderF16,
    },
  );
  const cacheBytes = Math.min(REAL_MODEL_CACHE_BYTES, context.device.limits.maxBufferSize);
  const name = source.kind === 'preset' ? label : `local ${loaded.config.architecture.replace(/ForCausalLM$/, '')}`;
  const client = new LocalChatClient({ backend, tokenizer, model: id, defaultMaxTokens: 256, createDecoder: (model) => createWebGPUDecoder(model, { cacheBytes }) });
  return { id, name, backend, tokenizer, client, parameters: countParameters(loaded.config), trainableParameters: loraLayout(loaded.config, REAL_MODEL_LORA).totalSize };
}

/** Number of base parameters of a config. */
export function countParameters(config: ModelConfig): number {
  return paramShapes(config).reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, 1), 0);
}

/** The LoRA adapters as freshly initialised from `seed` (A uniform, B zero), under PEFT names. */
export function initialLoraTensors(config: ModelConfig, lora: LoraConfig, seed: number): NamedTensors {
  const layout = loraLayout(config, lora);
  const values = new Float32Array(layout.totalSize);
  initLoraParameters(values, layout, config, lora, seed);
  return new Map(layout.slots.map((slot) => [slot.name, { shape: [...slot.shape], data: values.slice(slot.offset, slot.offset + slot.size) }]));
}

/** AdamW before its first step for these trainable tensors: step 0, zero moments. */
export function freshOptimizerState(trainable: NamedTensors): OptimizerState {
  const zeros = () => new Map([...trainable].map(([name, tensor]) => [name, { shape: [...tensor.shape], data: new Float32Array(tensor.data.length) }]));
  return { step: 0, m: zeros(), v: zeros() };
}

/** The parameters that train: everything when fully fine-tuned, only the LoRA adapters otherwise (the frozen base never goes in a checkpoint). */
export async function trainableParameters(backend: ModelBackend): Promise<NamedTensors> {
  const all = await backend.getParameters();
  if (!backend.lora) return all;
  const names = new Set(loraLayout(backend.config, backend.lora).slots.map((slot) => slot.name));
  return new Map([...all].filter(([name]) => names.has(name)));
}
