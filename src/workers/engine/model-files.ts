/**
 * The trained model as files, out and back in: a LoRA model exports its PEFT adapter
 * (adapter_model.safetensors + adapter_config.json, src/rl/export.ts) and a fully fine-tuned one its
 * model folder (config.json + model.safetensors); `readModelImport` checks such files against the
 * loaded model (architecture and sizes, LoRA rank, alpha and modules, every tensor's name and shape)
 * and returns the tensors to load, or throws a message that says what does not fit and what to do.
 * Pure: no GPU, no DOM.
 */
import { parseSafetensors } from '../../gpu/io/safetensors.ts';
import { loadModelFolder, serializeModelFolder } from '../../gpu/io/model-folder.ts';
import type { NamedTensors } from '../../gpu/model/backend.ts';
import { modelConfigToJson, type ModelConfig } from '../../gpu/model/config.ts';
import { loraLayout, type LoraConfig } from '../../gpu/model/layout.ts';
import { exportPeftAdapter } from '../../rl/export.ts';
import { errorMessage } from '../../common/error-message.ts';

/** What an export holds: a PEFT adapter (LoRA) or a whole model folder (full fine-tuning). */
export type ModelExportKind = 'adapter' | 'model';

/** The files of the trained model: the adapter of a LoRA model, else the model folder. `baseModel` names the base in adapter_config.json. */
export function exportModelFiles(parameters: NamedTensors, config: ModelConfig, lora: LoraConfig | null, baseModel: string): { kind: ModelExportKind; files: Map<string, Uint8Array> } {
  if (lora) return { kind: 'adapter', files: exportPeftAdapter(parameters, config, lora, baseModel) };
  const base: NamedTensors = new Map([...parameters].filter(([name]) => !name.startsWith('base_model.')));
  return { kind: 'model', files: serializeModelFolder(config, base) };
}

/** Tensors read from imported files, checked against the model, and what they are. */
export interface ModelImport {
  kind: ModelExportKind;
  tensors: NamedTensors;
}

/** Checks imported model files (an adapter or a model folder) against the loaded model; returns the tensors to set or throws saying what does not fit. */
export async function readModelImport(files: ReadonlyMap<string, Uint8Array>, config: ModelConfig, lora: LoraConfig | null, label: string, modelName: string): Promise<ModelImport> {
  if (files.has('adapter_config.json') || files.has('adapter_model.safetensors')) return { kind: 'adapter', tensors: readAdapter(files, config, lora, label, modelName) };
  if (files.has('config.json') || files.has('model.safetensors')) return { kind: 'model', tensors: await readModelFolder(files, config, label, modelName) };
  throw new Error(
    `${label} holds neither a PEFT adapter (adapter_config.json + adapter_model.safetensors) nor a model folder (config.json + model.safetensors); it has ${[...files.keys()].join(', ') || 'no files'}.`,
  );
}

function readAdapter(files: ReadonlyMap<string, Uint8Array>, config: ModelConfig, lora: LoraConfig | null, label: string, modelName: string): NamedTensors {
  if (!lora)
    throw new Error(
      `${label} is a LoRA adapter, but the loaded model (${modelName}) is fully fine-tuned and has no adapters. Import its model folder (config.json + model.safetensors) instead, or load a model trained with LoRA.`,
    );
  const configBytes = files.get('adapter_config.json');
  const weights = files.get('adapter_model.safetensors');
  if (!configBytes || !weights) throw new Error(`${label} lacks ${configBytes ? 'adapter_model.safetensors' : 'adapter_config.json'}; an adapter needs both files.`);
  let adapterConfig: { r?: unknown; lora_alpha?: unknown; target_modules?: unknown };
  try {
    adapterConfig = JSON.parse(new TextDecoder().decode(configBytes)) as typeof adapterConfig;
  } catch (error) {
    throw new Error(`${label}/adapter_config.json is not valid JSON (${errorMessage(error)}).`);
  }
  const modules = Array.isArray(adapterConfig.target_modules) ? [...adapterConfig.target_modules].map(String).sort() : null;
  const expected = [...lora.targetModules].sort();
  if (adapterConfig.r !== lora.rank || adapterConfig.lora_alpha !== lora.alpha || !modules || modules.join() !== expected.join()) {
    throw new Error(
      `${label} does not fit the loaded model: its adapter has rank ${String(adapterConfig.r)}, alpha ${String(adapterConfig.lora_alpha)} on ${modules?.join(', ') ?? '?'}, ` +
        `the model's adapters rank ${lora.rank}, alpha ${lora.alpha} on ${expected.join(', ')}. Load the base model it was trained on with the same LoRA settings.`,
    );
  }
  const tensors = parseSafetensors(weights, `${label}/adapter_model.safetensors`).tensors;
  checkTensors(
    tensors,
    loraLayout(config, lora).slots.map((slot) => [slot.name, slot.shape]),
    label,
    modelName,
  );
  return tensors;
}

async function readModelFolder(files: ReadonlyMap<string, Uint8Array>, config: ModelConfig, label: string, modelName: string): Promise<NamedTensors> {
  const loaded = await loadModelFolder(async (name) => {
    const bytes = files.get(name);
    if (!bytes) throw new Error('not in the archive');
    return bytes;
  }, label);
  const theirs = JSON.stringify(modelConfigToJson(loaded.config));
  const ours = JSON.stringify(modelConfigToJson(config));
  if (theirs !== ours) {
    const differences = Object.entries(config).filter(([key, value]) => (loaded.config as unknown as Record<string, unknown>)[key] !== value);
    throw new Error(
      `${label} does not fit the loaded model (${modelName}): its config.json differs in ${differences.map(([key, value]) => `${key} (${String((loaded.config as unknown as Record<string, unknown>)[key])} there, ${String(value)} here)`).join(', ')}. ` +
        'Load the model it was trained from first, or import weights exported from this model.',
    );
  }
  return loaded.tensors;
}

function checkTensors(tensors: NamedTensors, expected: Array<[string, number[]]>, label: string, modelName: string): void {
  for (const [name, shape] of expected) {
    const tensor = tensors.get(name);
    if (!tensor) throw new Error(`${label} does not fit the loaded model (${modelName}): it has no ${name}.`);
    if (tensor.shape.join() !== shape.join()) throw new Error(`${label} does not fit the loaded model (${modelName}): ${name} has shape [${tensor.shape}], the model needs [${shape}].`);
  }
  const known = new Set(expected.map(([name]) => name));
  const extra = [...tensors.keys()].filter((name) => !known.has(name));
  if (extra.length > 0) throw new Error(`${label} does not fit the loaded model (${modelName}): it has tensors the model lacks, e.g. ${extra.slice(0, 3).join(', ')}.`);
}
