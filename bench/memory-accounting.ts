/**
 * GPU memory of a training step from buffer accounting, two ways: `trackBufferMemory` wraps a device's
 * createBuffer / destroy and records live and peak bytes of what really gets allocated, and
 * `trainingStepBuffers` lists, from the same layouts the WebGPU backend allocates from
 * (src/gpu/model/layout.ts), the buffers a backend holds during a GRPO update at batch shape (B, T)
 * plus the KV cache the decoder holds for sampling — for a model too large to create on a software
 * adapter (SmolLM2-135M's shapes). bench/gpu-page.ts checks the listing against the tracker on a
 * model it can create. No Node APIs. Not a test.
 */
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { activationLayout, loraLayout, paramLayout, type LoraConfig } from '../src/gpu/model/layout.ts';
import { isF16StorableWeight } from '../src/gpu/webgpu/webgpu-backend.ts';

/** Live and peak bytes of the buffers a device created since tracking began. */
export interface BufferTracker {
  liveBytes(): number;
  peakBytes(): number;
  /** Starts a new peak from the bytes live now. */
  resetPeak(): void;
}

/** Starts counting the bytes of every buffer `device` creates (until destroyed); call before creating the backend. */
export function trackBufferMemory(device: GPUDevice): BufferTracker {
  let live = 0;
  let peak = 0;
  const create = device.createBuffer.bind(device);
  device.createBuffer = (descriptor: GPUBufferDescriptor): GPUBuffer => {
    const buffer = create(descriptor);
    live += buffer.size;
    peak = Math.max(peak, live);
    const destroy = buffer.destroy.bind(buffer);
    let destroyed = false;
    buffer.destroy = (): undefined => {
      if (!destroyed) live -= buffer.size;
      destroyed = true;
      return destroy();
    };
    return buffer;
  };
  return { liveBytes: () => live, peakBytes: () => peak, resetPeak: () => void (peak = live) };
}

/** One line of the listing: what, and its bytes. */
export interface BufferItem {
  what: string;
  bytes: number;
}

/** Options of the listing: LoRA (null = full fine-tuning), f16 frozen weights, the sampling batch the KV cache holds. */
export interface StepShape {
  lora: LoraConfig | null;
  frozenWeightsF16: boolean;
  /** The update's micro-batch. */
  B: number;
  T: number;
  /** Sequences the decoder samples at once and tokens each (prompt + completion) for the KV cache. */
  sampleSequences: number;
  sampleTokens: number;
}

/** Lists the buffers a WebGPU backend and decoder hold during a GRPO step of `config` (alignment: minStorageBufferOffsetAlignment / 4 floats). */
export function trainingStepBuffers(config: ModelConfig, shape: StepShape, alignment = 64): BufferItem[] {
  const { B, T, lora } = shape;
  const N = B * T;
  const full = paramLayout(config, { alignment });
  const items: BufferItem[] = [];
  if (shape.frozenWeightsF16) {
    const f16 = full.slots.filter((slot) => isF16StorableWeight(slot.name)).reduce((sum, slot) => sum + Math.ceil(slot.size / 128) * 128 * 2, 0);
    const f32 = full.slots.filter((slot) => !isF16StorableWeight(slot.name)).reduce((sum, slot) => sum + Math.ceil(slot.size / alignment) * alignment * 4, 0);
    items.push({ what: 'base weights (f16 matrices)', bytes: f16 }, { what: 'base weights (f32 norms)', bytes: f32 });
  } else {
    items.push({ what: 'base weights (f32)', bytes: full.totalSize * 4 });
  }
  const trainable = lora ? loraLayout(config, lora, { alignment }).totalSize : full.totalSize;
  if (lora) items.push({ what: `LoRA adapters (r ${lora.rank})`, bytes: trainable * 4 });
  items.push({ what: 'gradients', bytes: trainable * 4 }, { what: 'AdamW m', bytes: trainable * 4 }, { what: 'AdamW v', bytes: trainable * 4 });
  const activations = activationLayout(config, B, T, lora, { alignment }).totalSize * 4;
  items.push({ what: `activations (B ${B} × T ${T})`, bytes: activations }, { what: 'activation gradients', bytes: activations });
  items.push({ what: 'attention dscores', bytes: B * config.num_attention_heads * T * T * 4 });
  items.push({ what: 'ids, targets, weights, positions, LoRA dhidden', bytes: N * 4 * 4 + N * (lora?.rank ?? 1) * 4 });
  const HS = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  items.push({ what: 'RoPE table', bytes: 8192 * HS * 4 });
  const kv = 2 * config.num_hidden_layers * config.num_key_value_heads * HS * shape.sampleSequences * shape.sampleTokens * 4;
  items.push({ what: `decoder KV cache (${shape.sampleSequences} sequences × ${shape.sampleTokens} tokens)`, bytes: kv });
  items.push({ what: `decoder logits (${shape.sampleSequences} × vocab)`, bytes: shape.sampleSequences * config.vocab_size * 4 });
  return items;
}

/** The listing's total in bytes. */
export function totalBytes(items: readonly BufferItem[]): number {
  return items.reduce((sum, item) => sum + item.bytes, 0);
}
