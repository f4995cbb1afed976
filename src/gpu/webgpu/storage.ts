/**
 * Storage buffers checked against the device's limits before they exist: a buffer past
 * `maxBufferSize` or a tensor past `maxStorageBufferBindingSize` is an error that names the buffer
 * or tensor, the limit and what to lower, instead of a validation error later. It records nothing.
 */
import type { Layout } from '../model/layout.ts';

/** What to lower when a per-batch buffer does not fit: said in the errors of activation buffers. */
export const LOWER_THE_BATCH = 'lower the micro-batch (B, e.g. tabrl train --micro-batch) or the sequence length (T), or turn on activation checkpointing';

/** Returns a size in MiB for a message. */
function megabytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

/**
 * Returns a storage buffer of `count` values of `bytesPerValue` (4: f32, 2: f16), zero-filled, or
 * throws naming the buffer, the limit (maxBufferSize) and `remedy`, what to lower.
 */
export function createStorage(device: GPUDevice, count: number, label: string, bytesPerValue = 4, remedy = 'use a smaller model, LoRA instead of full fine-tuning, or a smaller batch'): GPUBuffer {
  const byteLength = count * bytesPerValue;
  if (byteLength > device.limits.maxBufferSize) {
    throw new Error(`the ${label} buffer needs ${megabytes(byteLength)} but this GPU allows ${megabytes(device.limits.maxBufferSize)} per buffer (maxBufferSize): ${remedy}`);
  }
  return device.createBuffer({
    label,
    size: Math.max(16, Math.ceil(byteLength / 16) * 16),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
}

/** Returns the bytes of the largest slot of a layout (values of bytesPerValue). */
export function largestSlotBytes(layout: Layout, bytesPerValue = 4): number {
  return layout.slots.reduce((largest, slot) => Math.max(largest, slot.size * bytesPerValue), 0);
}

/** Throws unless every slot of the layout (values of bytesPerValue) fits in one storage binding of this device, naming `remedy` when one does not. */
export function checkBindingSizes(device: GPUDevice, layout: Layout, what: string, bytesPerValue = 4, remedy = 'use a smaller model or batch'): void {
  const limit = device.limits.maxStorageBufferBindingSize;
  const largest = layout.slots.reduce((a, b) => (b.size > a.size ? b : a), layout.slots[0]!);
  if (largest.size * bytesPerValue > limit) {
    throw new Error(
      `${what} ${largest.name} [${largest.shape}] needs ${megabytes(largest.size * bytesPerValue)} in one binding but this GPU ` +
        `allows ${megabytes(limit)} (maxStorageBufferBindingSize): ${remedy}`,
    );
  }
}
