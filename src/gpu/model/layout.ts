/**
 * Pure layout tables: where each named tensor lives inside one flat f32
 * buffer per role. paramLayout gives the model's parameters under their Hugging Face names,
 * loraLayout the LoRA adapters under PEFT's names, activationLayout the forward activations of a
 * (B, T) batch. The same table gives subarray views on the CPU and buffer bindings on the GPU;
 * offsets are padded to `alignment` floats (minStorageBufferOffsetAlignment / 4 on a GPU).
 * This file allocates nothing.
 */
import type { ModelConfig } from './config.ts';

/** One tensor's place in a flat buffer: offset and size in floats, shape row-major. */
export interface TensorSlot {
  name: string;
  shape: number[];
  offset: number;
  size: number;
}

/** A layout table: the slots in buffer order, an index by name, and the buffer's total size in floats. */
export interface Layout {
  slots: TensorSlot[];
  byName: Map<string, TensorSlot>;
  totalSize: number;
}

/** Layout options: offsets are multiples of alignment floats (default 1, no padding). */
export interface LayoutOptions {
  alignment?: number;
}

/** The linear layers LoRA may adapt, by their Hugging Face module names. */
export const LORA_TARGET_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;

/** One of LORA_TARGET_MODULES. */
export type LoraTargetModule = (typeof LORA_TARGET_MODULES)[number];

/** LoRA settings: rank r, alpha (scale alpha/r) and the linear modules it adapts in every layer. */
export interface LoraConfig {
  rank: number;
  alpha: number;
  targetModules: LoraTargetModule[];
}

/** Returns the Hugging Face module prefix of a linear layer: model.layers.{layer}.self_attn.q_proj and so on. */
export function linearModuleName(layer: number, module: LoraTargetModule): string {
  const block = module === 'gate_proj' || module === 'up_proj' || module === 'down_proj' ? 'mlp' : 'self_attn';
  return `model.layers.${layer}.${block}.${module}`;
}

/** Returns the (IC, OC) of a linear module, weight shape (OC, IC). */
export function linearSizes(config: ModelConfig, module: LoraTargetModule): { IC: number; OC: number } {
  const C = config.hidden_size;
  const I = config.intermediate_size;
  const QD = config.num_attention_heads * config.head_dim;
  const KVD = config.num_key_value_heads * config.head_dim;
  switch (module) {
    case 'q_proj':
      return { IC: C, OC: QD };
    case 'k_proj':
      return { IC: C, OC: KVD };
    case 'v_proj':
      return { IC: C, OC: KVD };
    case 'o_proj':
      return { IC: QD, OC: C };
    case 'gate_proj':
      return { IC: C, OC: I };
    case 'up_proj':
      return { IC: C, OC: I };
    case 'down_proj':
      return { IC: I, OC: C };
  }
}

/** Packs (name, shape) pairs in order into a layout with aligned offsets. */
export function buildLayout(tensors: Array<[string, number[]]>, { alignment = 1 }: LayoutOptions = {}): Layout {
  if (!Number.isInteger(alignment) || alignment < 1) throw new Error(`layout alignment must be a positive integer, got ${alignment}`);
  const slots: TensorSlot[] = [];
  const byName = new Map<string, TensorSlot>();
  let offset = 0;
  for (const [name, shape] of tensors) {
    offset = Math.ceil(offset / alignment) * alignment;
    const size = shape.reduce((a, b) => a * b, 1);
    const slot = { name, shape, offset, size };
    slots.push(slot);
    byName.set(name, slot);
    offset += size;
  }
  return { slots, byName, totalSize: Math.ceil(offset / alignment) * alignment };
}

/** Returns the model's parameters in buffer order, Hugging Face names and shapes (lm_head only when untied). */
export function paramShapes(config: ModelConfig): Array<[string, number[]]> {
  const { vocab_size: V, hidden_size: C, head_dim: HS } = config;
  const tensors: Array<[string, number[]]> = [['model.embed_tokens.weight', [V, C]]];
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const prefix = `model.layers.${l}`;
    const linear = (module: LoraTargetModule, bias: boolean): void => {
      const { IC, OC } = linearSizes(config, module);
      tensors.push([`${linearModuleName(l, module)}.weight`, [OC, IC]]);
      if (bias) tensors.push([`${linearModuleName(l, module)}.bias`, [OC]]);
    };
    tensors.push([`${prefix}.input_layernorm.weight`, [C]]);
    linear('q_proj', config.attention_bias);
    linear('k_proj', config.attention_bias);
    linear('v_proj', config.attention_bias);
    linear('o_proj', config.attention_output_bias);
    if (config.qk_norm) {
      tensors.push([`${prefix}.self_attn.q_norm.weight`, [HS]]);
      tensors.push([`${prefix}.self_attn.k_norm.weight`, [HS]]);
    }
    tensors.push([`${prefix}.post_attention_layernorm.weight`, [C]]);
    linear('gate_proj', false);
    linear('up_proj', false);
    linear('down_proj', false);
  }
  tensors.push(['model.norm.weight', [C]]);
  if (!config.tie_word_embeddings) tensors.push(['lm_head.weight', [V, C]]);
  return tensors;
}

/** Returns the layout of all model parameters in one flat buffer, under Hugging Face names. */
export function paramLayout(config: ModelConfig, options: LayoutOptions = {}): Layout {
  return buildLayout(paramShapes(config), options);
}

/** Returns the PEFT name of a LoRA matrix: base_model.model.model.layers.{l}.self_attn.q_proj.lora_A.weight. */
export function loraParamName(layer: number, module: LoraTargetModule, matrix: 'A' | 'B'): string {
  return `base_model.model.${linearModuleName(layer, module)}.lora_${matrix}.weight`;
}

/** Returns the layout of the LoRA adapters (A (r, IC), B (OC, r) per adapted linear) in one flat buffer. */
export function loraLayout(config: ModelConfig, lora: LoraConfig, options: LayoutOptions = {}): Layout {
  const tensors: Array<[string, number[]]> = [];
  for (let l = 0; l < config.num_hidden_layers; l++) {
    for (const module of LORA_TARGET_MODULES) {
      if (!lora.targetModules.includes(module)) continue;
      const { IC, OC } = linearSizes(config, module);
      tensors.push([loraParamName(l, module, 'A'), [lora.rank, IC]]);
      tensors.push([loraParamName(l, module, 'B'), [OC, lora.rank]]);
    }
  }
  return buildLayout(tensors, options);
}

/** Options of activationLayout: alignment, and whether the (N, V) logits get a slot (default true; the WebGPU backend computes them in chunks and leaves them out). */
export interface ActivationLayoutOptions extends LayoutOptions {
  logits?: boolean;
}

/** Returns one layer's forward intermediates of a (B, T) batch, in buffer order, by their name within the layer (`ln1`, `att`, …, `residual3`). */
export function layerActivationShapes(config: ModelConfig, B: number, T: number, lora: LoraConfig | null = null): Array<[string, number[]]> {
  const N = B * T;
  const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS } = config;
  const QD = NH * HS;
  const KVD = KVH * HS;
  const tensors: Array<[string, number[]]> = [];
  const add = (name: string, shape: number[]): void => void tensors.push([name, shape]);
  add('ln1', [N, C]);
  add('ln1_rstd', [N]);
  add('q', [N, QD]);
  add('k', [N, KVD]);
  add('v', [N, KVD]);
  if (config.qk_norm) {
    add('q_normed', [N, QD]);
    add('q_rstd', [N * NH]);
    add('k_normed', [N, KVD]);
    add('k_rstd', [N * KVH]);
  }
  add('q_rope', [N, QD]);
  add('k_rope', [N, KVD]);
  add('att', [B, NH, T, T]);
  add('atty', [N, QD]);
  add('attproj', [N, C]);
  add('residual2', [N, C]);
  add('ln2', [N, C]);
  add('ln2_rstd', [N]);
  add('gate', [N, I]);
  add('up', [N, I]);
  add('swiglu', [N, I]);
  add('mlp_out', [N, C]);
  add('residual3', [N, C]);
  if (lora !== null) {
    for (const module of LORA_TARGET_MODULES) if (lora.targetModules.includes(module)) add(`${module}.lora_hidden`, [N, lora.rank]);
  }
  return tensors;
}

/**
 * Returns the layout of the forward activations of a (B, T) batch: per layer `layers.{l}.{name}`,
 * plus `encoded`, `lnf`, `lnf_rstd`, `logits` (unless `logits: false`) and `logprobs`. The CPU
 * backend keeps a second buffer of the same layout for their gradients.
 */
export function activationLayout(config: ModelConfig, B: number, T: number, lora: LoraConfig | null = null, options: ActivationLayoutOptions = {}): Layout {
  const N = B * T;
  const { vocab_size: V, hidden_size: C } = config;
  const tensors: Array<[string, number[]]> = [['encoded', [N, C]]];
  const layer = layerActivationShapes(config, B, T, lora);
  for (let l = 0; l < config.num_hidden_layers; l++) for (const [name, shape] of layer) tensors.push([`layers.${l}.${name}`, shape]);
  tensors.push(['lnf', [N, C]], ['lnf_rstd', [N]]);
  if (options.logits ?? true) tensors.push(['logits', [N, V]]);
  tensors.push(['logprobs', [N]]);
  return buildLayout(tensors, options);
}

/**
 * The two layouts of activation checkpointing (one buffer each): `kept` holds what lives through the
 * step (`encoded`, each layer's output `layers.{l}.residual3`, `lnf`, `lnf_rstd`, `logprobs`; no
 * logits), `layer` one layer's other intermediates under their names within the layer, recomputed
 * per layer in backward.
 */
export function checkpointedActivationLayouts(config: ModelConfig, B: number, T: number, lora: LoraConfig | null = null, options: LayoutOptions = {}): { kept: Layout; layer: Layout } {
  const N = B * T;
  const C = config.hidden_size;
  const kept: Array<[string, number[]]> = [['encoded', [N, C]]];
  for (let l = 0; l < config.num_hidden_layers; l++) kept.push([`layers.${l}.residual3`, [N, C]]);
  kept.push(['lnf', [N, C]], ['lnf_rstd', [N]], ['logprobs', [N]]);
  const layer = layerActivationShapes(config, B, T, lora).filter(([name]) => name !== 'residual3');
  return { kept: buildLayout(kept, options), layer: buildLayout(layer, options) };
}

/** Returns the subarray of buffer that holds the named slot, or throws naming the missing tensor. */
export function tensorView(buffer: Float32Array, layout: Layout, name: string): Float32Array {
  const slot = layout.byName.get(name);
  if (slot === undefined) throw new Error(`no tensor named ${name} in this layout`);
  return buffer.subarray(slot.offset, slot.offset + slot.size);
}

/** Copies named tensors into their slots of a flat buffer; every slot must be given once with its shape (`what` names the tensors in errors). */
export function writeNamedTensors(buffer: Float32Array, layout: Layout, tensors: ReadonlyMap<string, { shape: number[]; data: Float32Array }>, what: string): void {
  for (const slot of layout.slots) {
    const tensor = tensors.get(slot.name);
    if (tensor === undefined) throw new Error(`${what}: missing ${slot.name}`);
    if (tensor.shape.length !== slot.shape.length || tensor.shape.some((d, i) => d !== slot.shape[i]) || tensor.data.length !== slot.size) {
      throw new Error(`${what} ${slot.name}: shape [${tensor.shape}], expected [${slot.shape}]`);
    }
    buffer.set(tensor.data, slot.offset);
  }
  const unknown = [...tensors.keys()].find((name) => !layout.byName.has(name));
  if (unknown !== undefined) throw new Error(`${what}: unknown tensor ${unknown}`);
}
