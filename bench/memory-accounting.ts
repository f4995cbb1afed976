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
import { buildLayout, loraLayout, paramLayout, paramShapes, type LoraConfig } from '../src/gpu/model/layout.ts';
import { activationLayouts, chooseCheckpointing, type BufferLimits } from '../src/gpu/webgpu/activations.ts';
import { lmHeadChunkRows } from '../src/gpu/webgpu/lm-head.ts';
import { groupParams } from '../src/gpu/webgpu/param-store.ts';
import { isF16StorableWeight } from '../src/gpu/webgpu/webgpu-backend.ts';

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

/** The device limits the backend's choices read (WebGPU's defaults: 256 MiB and 128 MiB). */
export const DEFAULT_LIMITS: BufferLimits = { maxBufferSize: 256 * 2 ** 20, maxStorageBufferBindingSize: 128 * 2 ** 20 };

/** Returns a storage buffer's allocated bytes for `count` values of `bytesPerValue` (createStorage rounds up to 16). */
function storageBytes(count: number, bytesPerValue = 4): number {
  return Math.max(16, Math.ceil((count * bytesPerValue) / 16) * 16);
}

/** The listing item of parameters split as ParamStore splits them. */
function paramItem(what: string, shapes: Array<[string, number[]]>, bytesPerValue: 2 | 4, maxBufferBytes: number, alignment: number): BufferItem {
  const sizes = groupParams(shapes, { bytesPerValue, maxBufferBytes, alignmentBytes: alignment * 4 }).map((group) => storageBytes(buildLayout(group, { alignment: (alignment * 4) / bytesPerValue }).totalSize, bytesPerValue));
  return { what: `${what}${sizes.length > 1 ? `, ${sizes.length} buffers` : ''}`, bytes: sizes.reduce((a, b) => a + b, 0), buffers: sizes.length, largestBufferBytes: Math.max(...sizes) };
}

/**
 * Lists the buffers a WebGPU backend and decoder hold during a GRPO step of `config` on a device
 * with these limits (alignment: minStorageBufferOffsetAlignment / 4 floats), as the backend allocates
 * them: frozen weights split within maxBufferSize, activations checkpointed under 'auto', the LM head's
 * logits one chunk at a time. Plan uniforms and matmul scratch are not listed (the tracked peak has them).
 */
export function trainingStepBuffers(config: ModelConfig, shape: StepShape, alignment = 64, limits: BufferLimits = DEFAULT_LIMITS): BufferItem[] {
  const { B, T, lora } = shape;
  const N = B * T;
  const shapes = paramShapes(config);
  const cap = lora === null ? Infinity : limits.maxBufferSize;
  const items: BufferItem[] = [];
  if (shape.frozenWeightsF16) {
    items.push(paramItem('base weights (f16 matrices)', shapes.filter(([name]) => isF16StorableWeight(name)), 2, cap, alignment));
    items.push(paramItem('base weights (f32 norms, biases)', shapes.filter(([name]) => !isF16StorableWeight(name)), 4, cap, alignment));
  } else {
    items.push(paramItem('base weights (f32)', shapes, 4, cap, alignment));
  }
  const trainable = lora ? loraLayout(config, lora, { alignment }).totalSize : paramLayout(config, { alignment }).totalSize;
  if (lora) items.push({ what: `LoRA adapters (r ${lora.rank})`, bytes: storageBytes(trainable) });
  items.push({ what: 'gradients', bytes: storageBytes(trainable) }, { what: 'AdamW m', bytes: storageBytes(trainable) }, { what: 'AdamW v', bytes: storageBytes(trainable) });
  const checkpointing = chooseCheckpointing('auto', config, B, T, lora, limits, alignment);
  const layouts = activationLayouts(config, B, T, lora, checkpointing, alignment);
  const mode = checkpointing ? 'checkpointed: each layer\'s output' : 'every layer\'s intermediates';
  items.push({ what: `activations (B ${B} × T ${T}, ${mode})`, bytes: storageBytes(layouts.layout.totalSize) });
  items.push({ what: checkpointing ? 'activation gradients (two residual gradients in turn)' : 'activation gradients', bytes: storageBytes(layouts.gradientLayout.totalSize) });
  if (layouts.layerLayout) {
    const group = `${layouts.groupSequences} of ${B} sequences at a time`;
    items.push({ what: `one layer's recomputed activations (${group})`, bytes: storageBytes(layouts.layerLayout.totalSize) }, { what: "one layer's activation gradients", bytes: storageBytes(layouts.layerLayout.totalSize) });
  }
  const rows = lmHeadChunkRows(N, config.vocab_size, alignment);
  items.push({ what: `LM head logits chunk (${rows} tokens × vocab; no (N, V) logits)`, bytes: storageBytes(rows * config.vocab_size) });
  items.push({ what: 'attention dscores', bytes: layouts.groupSequences * config.num_attention_heads * T * T * 4 });
  items.push({ what: 'ids, targets, weights, positions, entropy, LoRA dhidden', bytes: N * 4 * 5 + N * (lora?.rank ?? 1) * 4 });
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
