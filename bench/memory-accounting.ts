/**
 * GPU memory of a training step from buffer accounting, two ways: `trackBufferMemory` wraps a device's
 * createBuffer / destroy and records live and peak bytes of what really gets allocated, and
 * `trainingStepBuffers` lists the buffers a backend holds during a GRPO update at batch shape (B, T)
 * — from the accounting the WebGPU backend allocates and chooses its micro-batch from
 * (src/gpu/webgpu/step-memory.ts: `modelStateMemory`, `batchMemoryPlan`) — plus the RoPE table and
 * what the decoder holds for sampling, for a model too large to create on a software adapter
 * (SmolLM2-135M's shapes). bench/gpu-page.ts checks the listing against the tracker on a
 * model it can create. No Node APIs. Not a test.
 */
import type { ModelConfig } from '../src/gpu/model/config.ts';
import type { LoraConfig } from '../src/gpu/model/layout.ts';
import type { ActivationCheckpointing, BufferLimits } from '../src/gpu/webgpu/activations.ts';
import { batchMemoryPlan, modelStateMemory, type AccountedBuffer, type BatchMemoryPlan, type StepMemorySettings } from '../src/gpu/webgpu/step-memory.ts';

/** Live and peak bytes of the buffers a device created since tracking began. */
export interface BufferTracker {
  liveBytes(): number;
  peakBytes(): number;
  /** Starts a new peak from the bytes live now (and a new largest buffer). */
  resetPeak(): void;
  /** The largest single buffer created since tracking began or the last resetPeak. */
  largestBytes(): number;
}

/** Starts counting the bytes of every buffer `device` creates (until destroyed); call before creating the backend. */
export function trackBufferMemory(device: GPUDevice): BufferTracker {
  let live = 0;
  let peak = 0;
  let largest = 0;
  const create = device.createBuffer.bind(device);
  device.createBuffer = (descriptor: GPUBufferDescriptor): GPUBuffer => {
    const buffer = create(descriptor);
    live += buffer.size;
    peak = Math.max(peak, live);
    largest = Math.max(largest, buffer.size);
    const destroy = buffer.destroy.bind(buffer);
    let destroyed = false;
    buffer.destroy = (): undefined => {
      if (!destroyed) live -= buffer.size;
      destroyed = true;
      return destroy();
    };
    return buffer;
  };
  return {
    liveBytes: () => live,
    peakBytes: () => peak,
    largestBytes: () => largest,
    resetPeak: () => {
      peak = live;
      largest = 0;
    },
  };
}

/** One line of the listing: what, its bytes, and how many buffers they lie in (default 1) with the largest one's bytes. */
export interface BufferItem {
  what: string;
  bytes: number;
  buffers?: number;
  largestBufferBytes?: number;
}

/** Options of the listing: LoRA (null = full fine-tuning), f16 frozen weights and activations, the sampling batch the KV cache holds. */
export interface StepShape {
  lora: LoraConfig | null;
  frozenWeightsF16: boolean;
  /** Checkpointed layer outputs stored as f16 (the backend's activationsF16; default false). */
  activationsF16?: boolean;
  /** Activation checkpointing as the backend is told (default 'auto'). */
  activationCheckpointing?: ActivationCheckpointing;
  /** The update's micro-batch. */
  B: number;
  T: number;
  /** Sequences the decoder samples at once and tokens each (prompt + completion) for the KV cache. */
  sampleSequences: number;
  sampleTokens: number;
}

/** The device limits the backend's choices read (WebGPU's defaults: 256 MiB and 128 MiB). */
export const DEFAULT_LIMITS: BufferLimits = { maxBufferSize: 256 * 2 ** 20, maxStorageBufferBindingSize: 128 * 2 ** 20 };

/** The model-state buffers as listing items: a role split over several buffers (`base weights 1/3`, ...) is one item with their count and largest. */
function stateItems(buffers: readonly AccountedBuffer[]): BufferItem[] {
  const items = new Map<string, BufferItem>();
  for (const buffer of buffers) {
    const role = buffer.label.replace(/ \d+\/\d+$/, '');
    const item = items.get(role) ?? { what: role, bytes: 0, buffers: 0, largestBufferBytes: 0 };
    item.bytes += buffer.bytes;
    item.buffers! += 1;
    item.largestBufferBytes = Math.max(item.largestBufferBytes!, buffer.bytes);
    items.set(role, item);
  }
  return [...items.values()].map((item) => (item.buffers! > 1 ? { ...item, what: `${item.what}, ${item.buffers} buffers` } : item));
}

/** The per-batch buffers of one value per token (and LoRA's dhidden), listed together. */
const SMALL_BATCH_BUFFERS = ['ids', 'targets', 'logprob weights', 'positions', 'entropy', 'LoRA dhidden'];

/** A per-batch buffer's label with what the plan chose for it (the shape, checkpointing, the LM head's chunk). */
function batchItemName(label: string, plan: BatchMemoryPlan): string {
  if (label === 'activations') return `activations (B ${plan.B} × T ${plan.T}, ${plan.checkpointing ? (plan.halfOutputs ? "checkpointed: the last layer's output, f32" : "checkpointed: each layer's output") : "every layer's intermediates"})`;
  if (label === 'layer outputs (f16)') return "activations: every other layer's output, f16";
  if (label === 'activation gradients' && plan.checkpointing) return 'activation gradients (two residual gradients in turn)';
  if (label === "one layer's recomputed activations") return `${label} (${plan.groupSequences} of ${plan.B} sequences at a time)`;
  if (label === 'LM head logits chunk') return `LM head logits chunk (${plan.lmHeadRows} tokens × vocab; no (N, V) logits)`;
  return label;
}

/**
 * Lists the buffers a WebGPU backend and decoder hold during a GRPO step of `config` on a device
 * with these limits (alignment: minStorageBufferOffsetAlignment / 4 floats): the model state and the
 * batch's buffers as the backend accounts them (frozen weights split within maxBufferSize,
 * activations checkpointed under 'auto', the LM head's logits one chunk at a time), then the RoPE
 * table and the decoder's KV cache and logits. Plan uniforms and matmul scratch are not listed (the
 * tracked peak has them).
 */
export function trainingStepBuffers(config: ModelConfig, shape: StepShape, alignment = 64, limits: BufferLimits = DEFAULT_LIMITS): BufferItem[] {
  const settings: StepMemorySettings = { lora: shape.lora, activationCheckpointing: shape.activationCheckpointing ?? 'auto', limits, alignment, frozenWeightsF16: shape.frozenWeightsF16, activationsF16: shape.activationsF16 === true };
  const items = stateItems(modelStateMemory(config, settings));
  const plan = batchMemoryPlan(config, shape.B, shape.T, settings);
  // The token-sized buffers (ids, targets, ...) are a few KiB each: one line for all of them.
  const small = plan.buffers.filter((buffer) => SMALL_BATCH_BUFFERS.includes(buffer.label));
  items.push(...plan.buffers.filter((buffer) => !small.includes(buffer)).map((buffer) => ({ what: batchItemName(buffer.label, plan), bytes: buffer.bytes })));
  items.push({ what: small.map((buffer) => buffer.label).join(', '), bytes: small.reduce((sum, buffer) => sum + buffer.bytes, 0), buffers: small.length, largestBufferBytes: Math.max(...small.map((buffer) => buffer.bytes)) });
  const HS = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  items.push({ what: 'RoPE table', bytes: 8192 * HS * 4 });
  const kv = 2 * config.num_hidden_layers * config.num_key_value_heads * HS * shape.sampleSequences * shape.sampleTokens * 4;
  if (kv > 0) items.push({ what: `decoder KV cache (${shape.sampleSequences} sequences × ${shape.sampleTokens} tokens)`, bytes: kv });
  if (shape.sampleSequences > 0) items.push({ what: `decoder logits (${shape.sampleSequences} × vocab)`, bytes: shape.sampleSequences * config.vocab_size * 4 });
  return items;
}

/** The listing's total in bytes. */
export function totalBytes(items: readonly BufferItem[]): number {
  return items.reduce((sum, item) => sum + item.bytes, 0);
}

/** The listing's largest single buffer in bytes. */
export function largestBufferBytes(items: readonly BufferItem[]): number {
  return Math.max(0, ...items.map((item) => item.largestBufferBytes ?? item.bytes));
}
