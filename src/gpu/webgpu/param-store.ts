/**
 * A model's base parameters on the GPU, f32 or f16, in as few storage buffers as a byte cap allows:
 * the tensors in layout order, a new buffer started whenever the next one would pass the cap (a
 * frozen SmolLM2-135M base is 513 MiB in f32, two and a bit of WebGPU's default 256 MiB
 * maxBufferSize). Each tensor lies whole in one buffer, at an offset aligned to
 * minStorageBufferOffsetAlignment. With `rowChunks`, a vocabulary table past the cap or the binding
 * limit is stored as row chunks (row-chunks.ts), each a tensor of its own, bound chunk by chunk.
 * Named tensors in, bindings and named tensors out. It records nothing; the caller decides the cap
 * (one buffer when the parameters train: AdamW runs over one flat buffer).
 */
import type { NamedTensor, NamedTensors } from '../model/backend.ts';
import { buildLayout, type Layout, type TensorSlot } from '../model/layout.ts';
import { decodeF16, encodeF16 } from '../io/half.ts';
import { readTensor, type GPUTensor } from './kernels.ts';
import { splitRowChunks, type RowChunk } from './row-chunks.ts';
import { checkBindingSizes, createStorage } from './storage.ts';

/** One buffer of the store and the layout of the tensors in it (offsets in values of the store's dtype). */
interface ParamGroup {
  layout: Layout;
  buffer: GPUBuffer;
}

/** Options of a ParamStore: bytes per value (4 f32, 2 f16), the cap per buffer, the alignment in bytes, a label for errors. */
export interface ParamStoreOptions {
  bytesPerValue: 2 | 4;
  maxBufferBytes: number;
  alignmentBytes: number;
  label: string;
  /** Store the vocabulary tables past min(maxBufferBytes, maxStorageBufferBindingSize) in row chunks (frozen weights only). */
  rowChunks?: boolean;
}

/** One row chunk of a table as bound: its binding and the table rows it holds. */
export interface RowChunkTensor {
  tensor: GPUTensor;
  firstRow: number;
  rows: number;
}

/** Returns the tensors (name, shape) split, in order, into groups whose aligned layout stays within maxBufferBytes (a tensor larger than the cap gets a group alone). */
export function groupParams(shapes: Array<[string, number[]]>, { bytesPerValue, maxBufferBytes, alignmentBytes }: Omit<ParamStoreOptions, 'label'>): Array<Array<[string, number[]]>> {
  const alignment = alignmentBytes / bytesPerValue;
  const groups: Array<Array<[string, number[]]>> = [];
  let current: Array<[string, number[]]> = [];
  let values = 0;
  for (const [name, shape] of shapes) {
    const size = shape.reduce((a, b) => a * b, 1);
    const start = Math.ceil(values / alignment) * alignment;
    if (current.length > 0 && (start + size) * bytesPerValue > maxBufferBytes) {
      groups.push(current);
      current = [];
      values = 0;
    }
    values = Math.ceil(values / alignment) * alignment + size;
    current.push([name, shape]);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Base parameters in one or more buffers; see the file comment. */
export class ParamStore {
  /** Names and shapes of every tensor; with a single buffer also its offsets (the layout AdamW and the KL reference use). */
  readonly layout: Layout;
  private readonly groups: ParamGroup[];
  private readonly groupOf = new Map<string, ParamGroup>();
  private readonly device: GPUDevice;
  private readonly bytesPerValue: 2 | 4;
  private readonly chunks: Map<string, RowChunk[]>; // tables stored in row chunks, by their own name

  /** Allocates the buffers (zero-filled), checking every stored tensor against the binding limit and every buffer against maxBufferSize first. */
  constructor(device: GPUDevice, shapes: Array<[string, number[]]>, options: ParamStoreOptions) {
    this.device = device;
    this.bytesPerValue = options.bytesPerValue;
    const alignment = options.alignmentBytes / options.bytesPerValue;
    this.layout = buildLayout(shapes, { alignment });
    const chunkBytes = Math.min(options.maxBufferBytes, device.limits.maxStorageBufferBindingSize);
    const split = options.rowChunks === true ? splitRowChunks(shapes, options.bytesPerValue, chunkBytes) : { shapes, chunks: new Map<string, RowChunk[]>() };
    this.chunks = split.chunks;
    if (shapes.length > 0) checkBindingSizes(device, buildLayout(split.shapes, { alignment }), 'parameter', options.bytesPerValue);
    const layouts = groupParams(split.shapes, options).map((group) => buildLayout(group, { alignment }));
    this.groups = [];
    try {
      layouts.forEach((layout, i) => {
        const label = layouts.length > 1 ? `${options.label} ${i + 1}/${layouts.length}` : options.label;
        this.groups.push({ layout, buffer: createStorage(device, layout.totalSize, label, options.bytesPerValue) });
      });
    } catch (error) {
      this.destroy();
      throw error;
    }
    for (const group of this.groups) for (const slot of group.layout.slots) this.groupOf.set(slot.name, group);
  }

  /** Whether the store holds a tensor of this name (whole or in row chunks). */
  has(name: string): boolean {
    return this.groupOf.has(name) || this.chunks.has(name);
  }

  /** The binding of a tensor (dtype 'f16' for an f16 store; its size rounded up to whole 4-byte words), or throws naming it (also when it lies in row chunks). */
  tensor(name: string): GPUTensor {
    if (this.chunks.has(name)) {
      throw new Error(`${name} lies in ${this.chunks.get(name)!.length} row chunks (it is past one binding, maxStorageBufferBindingSize): read it through rowChunks()`);
    }
    const { group, slot } = this.find(name);
    if (this.bytesPerValue === 2) return { buffer: group.buffer, offset: slot.offset * 2, size: Math.ceil(slot.size / 2) * 4, dtype: 'f16' };
    return { buffer: group.buffer, offset: slot.offset * 4, size: slot.size * 4 };
  }

  /** The bindings of a (rows, width) table in row order: its row chunks, or the whole table as one chunk. */
  rowChunks(name: string): RowChunkTensor[] {
    const chunks = this.chunks.get(name);
    if (chunks === undefined) {
      const { slot } = this.find(name);
      return [{ tensor: this.tensor(name), firstRow: 0, rows: slot.shape[0]! }];
    }
    return chunks.map((chunk) => ({ tensor: this.tensor(chunk.name), firstRow: chunk.firstRow, rows: chunk.rows }));
  }

  /** Whether a table of this name lies in more than one row chunk. */
  isRowChunked(name: string): boolean {
    return this.chunks.has(name);
  }

  /** Writes one tensor from f32 values (an f16 store rounds them to nearest, ties to even); the caller has checked the shape. */
  write(name: string, data: Float32Array): void {
    const chunks = this.chunks.get(name);
    if (chunks !== undefined) {
      const width = this.layout.byName.get(name)!.shape[1]!;
      for (const chunk of chunks) this.write(chunk.name, data.subarray(chunk.firstRow * width, (chunk.firstRow + chunk.rows) * width));
      return;
    }
    const { group, slot } = this.find(name);
    if (this.bytesPerValue === 2) {
      const halves = new Uint16Array(Math.ceil(slot.size / 2) * 2); // writeBuffer takes multiples of 4 bytes
      halves.set(encodeF16(data.subarray(0, slot.size)));
      this.device.queue.writeBuffer(group.buffer, slot.offset * 2, halves.buffer, 0, halves.byteLength);
      return;
    }
    this.device.queue.writeBuffer(group.buffer, slot.offset * 4, data.buffer as ArrayBuffer, data.byteOffset, slot.size * 4);
  }

  /** Reads every tensor back as f32 (f16 decoded) into `tensors`; a table in row chunks comes back whole. */
  async readAll(tensors: NamedTensors): Promise<void> {
    const stored: NamedTensors = this.chunks.size > 0 ? new Map() : tensors;
    await this.readStored(stored);
    if (stored === tensors) return;
    for (const [name, tensor] of stored) tensors.set(name, tensor);
    for (const [name, chunks] of this.chunks) {
      const slot = this.layout.byName.get(name)!;
      const data = new Float32Array(slot.size);
      const width = slot.shape[1]!;
      for (const chunk of chunks) {
        data.set(stored.get(chunk.name)!.data, chunk.firstRow * width);
        tensors.delete(chunk.name);
      }
      tensors.set(name, { shape: [...slot.shape], data });
    }
  }

  /** Reads every stored tensor (row chunks under their own names) into `tensors`. */
  private async readStored(tensors: NamedTensors): Promise<void> {
    for (const group of this.groups) {
      const words = Math.ceil((group.layout.totalSize * this.bytesPerValue) / 4);
      const values = await readTensor(this.device, { buffer: group.buffer, offset: 0, size: words * 4 }, words * 4);
      const halves = this.bytesPerValue === 2 ? new Uint16Array(values.buffer, values.byteOffset, group.layout.totalSize) : null;
      for (const slot of group.layout.slots) {
        const data = halves ? decodeF16(halves.subarray(slot.offset, slot.offset + slot.size)) : values.slice(slot.offset, slot.offset + slot.size);
        tensors.set(slot.name, { shape: [...slot.shape], data } satisfies NamedTensor);
      }
    }
  }

  /** The only buffer when the store has one (the trainable parameters), or throws. */
  singleBuffer(): GPUBuffer {
    if (this.groups.length !== 1) throw new Error(`the parameters lie in ${this.groups.length} buffers; training them needs one`);
    return this.groups[0]!.buffer;
  }

  /** The store's buffers, in layout order. */
  buffers(): GPUBuffer[] {
    return this.groups.map((group) => group.buffer);
  }

  /** Total bytes of the buffers. */
  bytes(): number {
    return this.groups.reduce((sum, group) => sum + group.buffer.size, 0);
  }

  /** Frees the buffers. */
  destroy(): void {
    for (const group of this.groups) group.buffer.destroy();
  }

  private find(name: string): { group: ParamGroup; slot: TensorSlot } {
    const group = this.groupOf.get(name);
    const slot = group?.layout.byName.get(name);
    if (group === undefined || slot === undefined) throw new Error(`no parameter named ${name} in this store`);
    return { group, slot };
  }
}
