/**
 * Whether a model's weights fit a WebGPU device before anything is downloaded: the WebGPU backend
 * keeps all parameters of one role in one buffer (maxBufferSize) and binds each tensor whole
 * (maxStorageBufferBindingSize). This mirrors the backend's allocation (the f32 parameters, or the
 * frozen matrices as f16 under LoRA with shader-f16); it does not count activations or the KV cache.
 */
import type { ModelConfig } from '../model/config.ts';
import { paramShapes } from '../model/layout.ts';
import { isF16StorableWeight } from '../webgpu/webgpu-backend.ts';
import { formatBytes } from '../../common/format-bytes.ts';

/** The device limits the check reads (a GPUSupportedLimits has them). */
export interface ModelFitLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
}

/** Returns null when the model's parameters fit the limits, or a sentence saying which limit it exceeds and by how much. */
export function modelFitProblem(config: ModelConfig, limits: ModelFitLimits, { f16 }: { f16: boolean }): string | null {
  let f32Bytes = 0;
  let halfBytes = 0;
  let largest = { name: '', bytes: 0 };
  for (const [name, shape] of paramShapes(config)) {
    const half = f16 && isF16StorableWeight(name);
    const bytes = shape.reduce((a, b) => a * b, 1) * (half ? 2 : 4);
    if (half) halfBytes += bytes;
    else f32Bytes += bytes;
    if (bytes > largest.bytes) largest = { name, bytes };
  }
  const storage = f16 ? 'as f16' : 'in f32 (this GPU has no shader-f16)';
  if (largest.bytes > limits.maxStorageBufferBindingSize) {
    return `its largest tensor (${largest.name}, ${formatBytes(largest.bytes)} ${storage}) exceeds this GPU's maxStorageBufferBindingSize of ${formatBytes(limits.maxStorageBufferBindingSize)}`;
  }
  const biggest = Math.max(f32Bytes, halfBytes);
  if (biggest > limits.maxBufferSize) {
    return `its weights need a ${formatBytes(biggest)} buffer ${storage}, over this GPU's maxBufferSize of ${formatBytes(limits.maxBufferSize)}`;
  }
  return null;
}
