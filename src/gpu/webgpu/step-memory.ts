/**
 * The GPU memory of a training step, accounted without a device, and the micro-batch chosen from
 * it. `batchMemoryPlan` lists the per-batch buffers the WebGPU backend allocates for a (B, T) batch
 * (the backend's batchFor takes its checkpointing and LM-head chunk from it), `modelStateMemory`
 * the buffers that live through training (weights split as ParamStore splits them, vocabulary
 * tables in row chunks included, LoRA adapters,
 * gradients, AdamW moments), and `chooseMicroBatch` the largest B whose step fits the device's
 * buffer and binding limits and a memory budget. Plan uniforms and matmul scratch (a few MiB) are
 * not accounted: the budget's default keeps room for them. Pure: no GPU calls.
 */
import type { ModelConfig } from '../model/config.ts';
import { buildLayout, loraLayout, paramLayout, paramShapes, type LoraConfig } from '../model/layout.ts';
import { activationLayouts, chooseCheckpointing, LAYER_GROUP_BYTES, storesHalfOutputs, type ActivationCheckpointing, type BufferLimits } from './activations.ts';
import { LM_HEAD_CHUNK_BYTES, lmHeadChunkRows, vocabularyScratchValues } from './lm-head.ts';
import { splitRowChunks } from './row-chunks.ts';
import { groupParams } from './param-store.ts';
import { largestSlotBytes } from './storage.ts';

/** One buffer of the accounting: its label, allocated bytes, and the largest binding it is used through. */
export interface AccountedBuffer {
  label: string;
  bytes: number;
  bindingBytes: number;
}

/** The settings the accounting reads: LoRA (null: full fine-tuning), checkpointing, the device's limits and offset alignment (floats). */
export interface StepMemorySettings {
  lora: LoraConfig | null;
  activationCheckpointing: ActivationCheckpointing;
  limits: BufferLimits;
  /** minStorageBufferOffsetAlignment / 4. */
  alignment: number;
  /** Frozen base matrices stored as f16 (LoRA and shader-f16 only). */
  frozenWeightsF16?: boolean;
  /** Checkpointed layer outputs stored as f16 (activations.ts, storesHalfOutputs). */
  activationsF16?: boolean;
  layerGroupBytes?: number;
  lmHeadChunkBytes?: number;
  /** With LoRA, the most bytes of frozen weights per buffer (the backend's maxParamBufferBytes; default: maxBufferSize). */
  maxParamBufferBytes?: number;
}

/** What a (B, T) batch holds beyond the model state: how its activations are kept and every per-batch buffer. */
export interface BatchMemoryPlan {
  B: number;
  T: number;
  checkpointing: boolean;
  /** Whether the kept layer outputs but the last are stored as f16 (activationsF16 on a checkpointed batch of 2 or more layers). */
  halfOutputs: boolean;
  groupSequences: number;
  lmHeadRows: number;
  buffers: AccountedBuffer[];
  bytes: number;
}

/** Returns a storage buffer's allocated bytes for `count` values of `bytesPerValue` (createStorage and createTensor round up to 16). */
export function storageBytes(count: number, bytesPerValue = 4): number {
  return Math.max(16, Math.ceil((count * bytesPerValue) / 16) * 16);
}

/** Returns a buffer of the accounting used whole through one binding. */
function whole(label: string, count: number, bytesPerValue = 4): AccountedBuffer {
  const bytes = storageBytes(count, bytesPerValue);
  return { label, bytes, bindingBytes: count * bytesPerValue };
}

/** The most bytes of one frozen buffer: the device's maxBufferSize or the smaller cap asked for (Infinity when the weights train: one buffer). */
function frozenBufferCap(settings: Pick<StepMemorySettings, 'lora' | 'limits' | 'maxParamBufferBytes'>): number {
  return settings.lora === null ? Infinity : Math.min(settings.limits.maxBufferSize, settings.maxParamBufferBytes ?? Infinity);
}

/** Returns the rows of each row chunk the LM head (or tied embedding) is stored in, as ParamStore cuts it: one entry when it is whole. */
export function lmHeadChunkSizes(config: ModelConfig, settings: Pick<StepMemorySettings, 'lora' | 'limits' | 'maxParamBufferBytes' | 'frozenWeightsF16'>): number[] {
  const name = config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  if (settings.lora === null) return [config.vocab_size];
  const bytesPerValue = settings.frozenWeightsF16 === true ? 2 : 4;
  const maxBytes = Math.min(frozenBufferCap(settings), settings.limits.maxStorageBufferBindingSize);
  const chunks = splitRowChunks([[name, [config.vocab_size, config.hidden_size]]], bytesPerValue, maxBytes).chunks.get(name);
  return chunks === undefined ? [config.vocab_size] : chunks.map((chunk) => chunk.rows);
}

/** The LM head's vocabulary-chunk scratch when it lies in row chunks (none when whole). */
function vocabularyScratch(config: ModelConfig, settings: StepMemorySettings, lmHeadRows: number): AccountedBuffer[] {
  const values = vocabularyScratchValues(lmHeadChunkSizes(config, settings), lmHeadRows);
  return values > 0 ? [whole('LM head vocabulary chunk', values)] : [];
}

/** Lists the per-batch buffers the WebGPU backend allocates for a (B, T) batch, as its batchFor does. */
export function batchMemoryPlan(config: ModelConfig, B: number, T: number, settings: StepMemorySettings): BatchMemoryPlan {
  const { lora, alignment, limits } = settings;
  const N = B * T;
  const checkpointing = chooseCheckpointing(settings.activationCheckpointing, config, B, T, lora, limits, alignment);
  const halfOutputs = storesHalfOutputs(config, checkpointing, settings.activationsF16 === true);
  const layouts = activationLayouts(config, B, T, lora, checkpointing, alignment, settings.layerGroupBytes ?? LAYER_GROUP_BYTES, halfOutputs);
  const lmHeadRows = lmHeadChunkRows(N, config.vocab_size, alignment, settings.lmHeadChunkBytes ?? LM_HEAD_CHUNK_BYTES);
  const buffers: AccountedBuffer[] = [{ label: 'activations', bytes: storageBytes(layouts.layout.totalSize), bindingBytes: largestSlotBytes(layouts.layout) }];
  if (layouts.halfLayout !== null) buffers.push({ label: 'layer outputs (f16)', bytes: storageBytes(layouts.halfLayout.totalSize, 2), bindingBytes: largestSlotBytes(layouts.halfLayout, 2) });
  buffers.push({ label: 'activation gradients', bytes: storageBytes(layouts.gradientLayout.totalSize), bindingBytes: largestSlotBytes(layouts.gradientLayout) });
  if (layouts.layerLayout !== null && layouts.layerGradientLayout !== null) {
    buffers.push(
      { label: "one layer's recomputed activations", bytes: storageBytes(layouts.layerLayout.totalSize), bindingBytes: largestSlotBytes(layouts.layerLayout) },
      { label: "one layer's activation gradients", bytes: storageBytes(layouts.layerGradientLayout.totalSize), bindingBytes: largestSlotBytes(layouts.layerGradientLayout) },
    );
  }
  buffers.push(
    whole('attention dscores', layouts.groupSequences * config.num_attention_heads * T * T),
    whole('LoRA dhidden', N * (lora?.rank ?? 1)),
    whole('LM head logits chunk', lmHeadRows * config.vocab_size),
    ...vocabularyScratch(config, settings, lmHeadRows),
    ...['ids', 'targets', 'logprob weights', 'positions', 'entropy'].map((label) => whole(label, N)),
  );
  return { B, T, checkpointing, halfOutputs, groupSequences: layouts.groupSequences, lmHeadRows, buffers, bytes: buffers.reduce((sum, buffer) => sum + buffer.bytes, 0) };
}

/** Returns whether a base parameter is stored as f16 under frozenWeightsF16: the matrices the *_f16w kernels read. */
export function isF16StorableWeight(name: string): boolean {
  return /\.(q|k|v|o|gate|up|down)_proj\.weight$/.test(name) || name === 'model.embed_tokens.weight' || name === 'lm_head.weight';
}

/** Lists the buffers that live through training: base weights (split within maxBufferSize under LoRA), LoRA adapters, gradients and AdamW moments. */
export function modelStateMemory(config: ModelConfig, settings: Pick<StepMemorySettings, 'lora' | 'limits' | 'alignment' | 'frozenWeightsF16' | 'maxParamBufferBytes'>): AccountedBuffer[] {
  const { lora, alignment, limits } = settings;
  const shapes = paramShapes(config);
  const cap = frozenBufferCap(settings);
  const half = settings.frozenWeightsF16 === true;
  const buffers: AccountedBuffer[] = [];
  const addParams = (label: string, selected: Array<[string, number[]]>, bytesPerValue: 2 | 4) => {
    // frozen vocabulary tables past a buffer or a binding are stored in row chunks, as ParamStore stores them
    const stored = lora === null ? selected : splitRowChunks(selected, bytesPerValue, Math.min(cap, limits.maxStorageBufferBindingSize)).shapes;
    const groups = groupParams(stored, { bytesPerValue, maxBufferBytes: cap, alignmentBytes: alignment * 4 });
    groups.forEach((group, i) => {
      const layout = buildLayout(group, { alignment: (alignment * 4) / bytesPerValue });
      buffers.push({
        label: groups.length > 1 ? `${label} ${i + 1}/${groups.length}` : label,
        bytes: storageBytes(layout.totalSize, bytesPerValue),
        bindingBytes: largestSlotBytes(layout, bytesPerValue),
      });
    });
  };
  if (half) {
    addParams(
      'base weights (f16 matrices)',
      shapes.filter(([name]) => isF16StorableWeight(name)),
      2,
    );
    addParams(
      'base weights (f32)',
      shapes.filter(([name]) => !isF16StorableWeight(name)),
      4,
    );
  } else {
    addParams('base weights', shapes, 4);
  }
  const trainable = lora ? loraLayout(config, lora, { alignment }) : paramLayout(config, { alignment });
  const trained = { bytes: storageBytes(trainable.totalSize), bindingBytes: trainable.totalSize * 4 };
  if (lora) buffers.push({ label: `LoRA adapters (r ${lora.rank})`, ...trained });
  buffers.push({ label: 'gradients', ...trained }, { label: 'AdamW m', ...trained }, { label: 'AdamW v', ...trained });
  return buffers;
}

/** Returns the first of these buffers past a limit, said as what to read in an error, or null when every one fits. */
export function bufferPastLimits(buffers: readonly AccountedBuffer[], limits: BufferLimits): string | null {
  const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  for (const buffer of buffers) {
    if (buffer.bytes > limits.maxBufferSize) return `the ${buffer.label} buffer needs ${MiB(buffer.bytes)}, past this GPU's ${MiB(limits.maxBufferSize)} per buffer (maxBufferSize)`;
    if (buffer.bindingBytes > limits.maxStorageBufferBindingSize)
      return `a tensor of the ${buffer.label} needs ${MiB(buffer.bindingBytes)} in one binding, past this GPU's ${MiB(limits.maxStorageBufferBindingSize)} (maxStorageBufferBindingSize)`;
  }
  return null;
}

/**
 * The default memory budget: four of the adapter's largest buffers, within [1 GiB, 4 GiB]. WebGPU
 * does not say how much memory a GPU has; 1 GiB under WebGPU's default limits (256 MiB per
 * buffer) is what any laptop can spare, and 4 GiB caps it where an adapter allows large buffers.
 */
export function defaultMemoryBudget(limits: BufferLimits): number {
  return Math.min(4 * 2 ** 30, Math.max(2 ** 30, 4 * limits.maxBufferSize));
}

/** How an error of chooseMicroBatch names the settings a person can change: the CLI's flags, or the tab's own settings. */
export interface MemorySettingNames {
  /** The memory budget, as "raise {memoryBudget}" reads. */
  memoryBudget: string;
  /** The longest answer sampled, as "shorten the sequences ({maxTokens})" reads. */
  maxTokens: string;
}

/** The names `tabrl train` gives them (its flags): chooseMicroBatch's default. */
export const CLI_SETTING_NAMES: MemorySettingNames = { memoryBudget: '--memory-budget', maxTokens: '--max-tokens' };

/** The micro-batch chosen for sequences of T tokens, with what it accounts and why. */
export interface MicroBatchChoice {
  B: number;
  T: number;
  budgetBytes: number;
  stateBytes: number;
  plan: BatchMemoryPlan;
  /** Accounted bytes of the step: model state + the batch's buffers. */
  stepBytes: number;
  /** Why B and not B + 1: the limit B + 1 passes, or that B is the most asked for. */
  reason: string;
}

/** Returns the accounted step of a B × T batch: its plan and, when it does not fit, why (null: it fits). */
function accountStep(config: ModelConfig, B: number, T: number, settings: StepMemorySettings, stateBytes: number, budgetBytes: number): { plan: BatchMemoryPlan; pastLimit: string | null } {
  const plan = batchMemoryPlan(config, B, T, settings);
  const past = bufferPastLimits(plan.buffers, settings.limits);
  if (past !== null) return { plan, pastLimit: past };
  const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  const step = stateBytes + plan.bytes;
  if (step > budgetBytes) return { plan, pastLimit: `the step needs ${MiB(step)} (model state ${MiB(stateBytes)} + batch ${MiB(plan.bytes)}), past the memory budget of ${MiB(budgetBytes)}` };
  return { plan, pastLimit: null };
}

/**
 * Returns the largest micro-batch B ≤ maxMicroBatch whose step at T tokens fits every buffer and
 * binding limit and the memory budget (model state + the batch's buffers), or, with `forced`, that B
 * checked. Throws, naming the limit and the setting to change (by `settingNames`, default the CLI's
 * flags), when the model state alone does not fit, when not even B = 1 fits, or when a forced B does
 * not (forcing is the CLI's --micro-batch).
 */
export function chooseMicroBatch(
  config: ModelConfig,
  T: number,
  settings: StepMemorySettings & { budgetBytes: number; maxMicroBatch: number; forced?: number; settingNames?: MemorySettingNames },
): MicroBatchChoice {
  const { budgetBytes, maxMicroBatch, forced } = settings;
  const names = settings.settingNames ?? CLI_SETTING_NAMES;
  if (!(Number.isInteger(T) && T > 0)) throw new Error(`T must be a positive integer, got ${T}`);
  if (!(Number.isInteger(maxMicroBatch) && maxMicroBatch > 0)) throw new Error(`the most sequences per micro-batch must be a positive integer, got ${maxMicroBatch}`);
  const state = modelStateMemory(config, settings);
  const statePast = bufferPastLimits(state, settings.limits);
  const smaller = settings.lora === null ? 'use LoRA (its frozen weights split across buffers), a smaller model' : 'use a smaller model';
  if (statePast !== null) throw new Error(`this model cannot train on this GPU: ${statePast}; ${smaller}, or an adapter that allows more`);
  const stateBytes = state.reduce((sum, buffer) => sum + buffer.bytes, 0);
  const choice = (plan: BatchMemoryPlan, reason: string): MicroBatchChoice => ({ B: plan.B, T, budgetBytes, stateBytes, plan, stepBytes: stateBytes + plan.bytes, reason });
  if (forced !== undefined) {
    const { plan, pastLimit } = accountStep(config, forced, T, settings, stateBytes, budgetBytes);
    const checkpointingHint = plan.checkpointing ? '' : ', or turn on --activation-checkpointing';
    if (pastLimit !== null)
      throw new Error(`--micro-batch ${forced} cannot fit at T ${T}: ${pastLimit}; lower --micro-batch (or leave it out to choose one) or raise ${names.memoryBudget}${checkpointingHint}`);
    return choice(plan, `--micro-batch ${forced} forced`);
  }
  const first = accountStep(config, 1, T, settings, stateBytes, budgetBytes);
  if (first.pastLimit !== null)
    throw new Error(`not even one sequence of ${T} tokens fits: ${first.pastLimit}; raise ${names.memoryBudget}, shorten the sequences (${names.maxTokens}) or use a smaller model`);
  // The step's bytes grow with B, but checkpointing 'auto' can switch on past a B and make B + 1 smaller: scan upward.
  let best = first.plan;
  let stop = `${maxMicroBatch} is the most asked for`;
  for (let B = 2; B <= maxMicroBatch; B++) {
    const { plan, pastLimit } = accountStep(config, B, T, settings, stateBytes, budgetBytes);
    if (pastLimit !== null) {
      stop = `at ${B}: ${pastLimit}`;
      break;
    }
    best = plan;
  }
  return choice(best, stop);
}
