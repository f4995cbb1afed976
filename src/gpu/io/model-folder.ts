/**
 * Loads a Hugging Face-style model folder (config.json + model.safetensors, or a sharded
 * model.safetensors.index.json) through a caller-supplied readFile, so the same code runs in Node
 * (fs) and in the browser (fetch, OPFS). It reads weights only; tokenizers and chat templates are
 * another module's job.
 */
import type { NamedTensors } from '../model/backend.ts';
import { modelConfigToJson, parseModelConfig, type ModelConfig } from '../model/config.ts';
import { paramShapes } from '../model/layout.ts';
import { parseSafetensors, serializeSafetensors } from './safetensors.ts';
import { errorMessage } from '../../common/error-message.ts';

/** Reads one file of the folder by its name (e.g. "config.json"); rejects when it does not exist. */
export type ReadFile = (name: string) => Promise<Uint8Array>;

/** A loaded model: its config, every base parameter as f32 under its Hugging Face name, and the tensor names it ignored. */
export interface LoadedModel {
  config: ModelConfig;
  tensors: NamedTensors;
  ignored: string[];
}

/** Loads config.json and the safetensors weights of a model folder; label names the folder in errors. */
export async function loadModelFolder(readFile: ReadFile, label = 'model folder'): Promise<LoadedModel> {
  const configBytes = await readFile('config.json').catch((error: Error) => {
    throw new Error(`${label}: cannot read config.json (${error.message})`);
  });
  let configJson: unknown;
  try {
    configJson = JSON.parse(new TextDecoder().decode(configBytes));
  } catch (error) {
    throw new Error(`${label}/config.json: not valid JSON (${errorMessage(error)})`);
  }
  const config = parseModelConfig(configJson, `${label}/config.json`);

  const all: NamedTensors = new Map();
  const single = await readFile('model.safetensors').catch((error: Error) => error);
  if (single instanceof Uint8Array) {
    for (const [name, tensor] of parseSafetensors(single, `${label}/model.safetensors`).tensors) all.set(name, tensor);
  } else {
    const indexBytes = await readFile('model.safetensors.index.json').catch((error: Error) => {
      throw new Error(`${label}: cannot read model.safetensors (${single.message}) nor model.safetensors.index.json (${error.message})`);
    });
    const index = JSON.parse(new TextDecoder().decode(indexBytes)) as { weight_map?: Record<string, string> };
    const shards = [...new Set(Object.values(index.weight_map ?? {}))];
    if (shards.length === 0) throw new Error(`${label}/model.safetensors.index.json: empty weight_map`);
    for (const shard of shards) {
      const bytes = await readFile(shard).catch((error: Error) => {
        throw new Error(`${label}: cannot read shard ${shard} (${error.message})`);
      });
      for (const [name, tensor] of parseSafetensors(bytes, `${label}/${shard}`).tensors) all.set(name, tensor);
    }
  }

  const tensors: NamedTensors = new Map();
  const missing: string[] = [];
  for (const [name, shape] of paramShapes(config)) {
    const tensor = all.get(name);
    if (tensor === undefined) {
      missing.push(name);
      continue;
    }
    if (tensor.shape.length !== shape.length || tensor.shape.some((d, i) => d !== shape[i])) {
      throw new Error(`${label}: tensor ${name} has shape [${tensor.shape}], config.json implies [${shape}]`);
    }
    tensors.set(name, tensor);
  }
  if (missing.length > 0) throw new Error(`${label}: ${missing.length} parameter(s) missing from the weights: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
  const ignored = [...all.keys()].filter((name) => !tensors.has(name));
  // Layer tensors the config has no place for (a layer past num_hidden_layers, a bias it does not
  // declare) mean config.json does not describe these weights: running without them is a different model.
  const unplaced = ignored.filter((name) => name.startsWith('model.layers.') && !name.includes('rotary_emb'));
  if (unplaced.length > 0) {
    throw new Error(
      `${label}: the weights hold ${unplaced.length} layer tensor(s) that config.json has no place for (${unplaced.slice(0, 3).join(', ')}${unplaced.length > 3 ? ', …' : ''}); ` +
        `config.json says ${config.num_hidden_layers} layers${config.attention_bias ? '' : ' without attention biases'} — does it belong to these weights?`,
    );
  }
  return { config, tensors, ignored };
}

/** Returns the files of a model folder (config.json and an F32 model.safetensors) for a config and its tensors. */
export function serializeModelFolder(config: ModelConfig, tensors: NamedTensors): Map<string, Uint8Array> {
  return new Map([
    ['config.json', new TextEncoder().encode(JSON.stringify(modelConfigToJson(config), null, 2) + '\n')],
    ['model.safetensors', serializeSafetensors(tensors, { format: 'pt' })],
  ]);
}
