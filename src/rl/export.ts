/**
 * Exports of a trained model in the formats other tools read: a LoRA adapter as PEFT writes it
 * (`adapter_model.safetensors` + `adapter_config.json`, loadable with `PeftModel.from_pretrained`),
 * the adapter merged into the base weights as a Hugging Face model folder, and rollouts as JSONL.
 */
import { serializeSafetensors } from '../gpu/io/safetensors.ts';
import { serializeModelFolder } from '../gpu/io/model-folder.ts';
import type { NamedTensors } from '../gpu/model/backend.ts';
import type { ModelConfig } from '../gpu/model/config.ts';
import { LORA_TARGET_MODULES, linearModuleName, loraLayout, loraParamName, type LoraConfig } from '../gpu/model/layout.ts';

/** The PEFT adapter files of the LoRA tensors in `parameters` (which may also hold the base weights). */
export function exportPeftAdapter(parameters: NamedTensors, config: ModelConfig, lora: LoraConfig, baseModel: string): Map<string, Uint8Array> {
  const adapter: NamedTensors = new Map();
  for (const slot of loraLayout(config, lora).slots) {
    const tensor = parameters.get(slot.name);
    if (!tensor) throw new Error(`exportPeftAdapter: the parameters have no ${slot.name}; was the model trained with this LoRA config?`);
    adapter.set(slot.name, tensor);
  }
  const adapterConfig = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: lora.rank,
    lora_alpha: lora.alpha,
    lora_dropout: 0,
    bias: 'none',
    target_modules: [...lora.targetModules],
    fan_in_fan_out: false,
    inference_mode: true,
  };
  return new Map([
    ['adapter_model.safetensors', serializeSafetensors(adapter, { format: 'pt' })],
    ['adapter_config.json', new TextEncoder().encode(`${JSON.stringify(adapterConfig, null, 2)}\n`)],
  ]);
}

/** The base weights with each adapter folded in: W + (alpha/r)·B·A, under Hugging Face names only. */
function mergeLora(parameters: NamedTensors, config: ModelConfig, lora: LoraConfig): NamedTensors {
  const merged: NamedTensors = new Map();
  for (const [name, tensor] of parameters) if (!name.startsWith('base_model.')) merged.set(name, { shape: [...tensor.shape], data: tensor.data.slice() });
  const scale = lora.alpha / lora.rank;
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    for (const module of LORA_TARGET_MODULES) {
      if (!lora.targetModules.includes(module)) continue;
      const weightName = `${linearModuleName(layer, module)}.weight`;
      const weight = merged.get(weightName); // (OC, IC)
      const A = parameters.get(loraParamName(layer, module, 'A')); // (r, IC)
      const B = parameters.get(loraParamName(layer, module, 'B')); // (OC, r)
      if (!weight || !A || !B) throw new Error(`mergeLora: missing ${!weight ? weightName : loraParamName(layer, module, !A ? 'A' : 'B')}`);
      const [OC, IC] = weight.shape as [number, number];
      const r = lora.rank;
      for (let o = 0; o < OC; o++) {
        for (let i = 0; i < IC; i++) {
          let sum = 0;
          for (let k = 0; k < r; k++) sum += B.data[o * r + k]! * A.data[k * IC + i]!;
          weight.data[o * IC + i]! += scale * sum;
        }
      }
    }
  }
  return merged;
}

/** A Hugging Face folder (config.json + model.safetensors) of the merged model. */
export function exportMergedModel(parameters: NamedTensors, config: ModelConfig, lora: LoraConfig | null): Map<string, Uint8Array> {
  return serializeModelFolder(config, lora ? mergeLora(parameters, config, lora) : parameters);
}
