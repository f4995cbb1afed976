/**
 * The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
 * length, a JSON header {name: {dtype, shape, data_offsets}, __metadata__}, then raw little-endian
 * data. Parses F32, F16, BF16 (exact conversions to f32) and F64 (rounded) tensors; writes F32 or F16.
 * Every error names the file and what is wrong with it. Integer tensors are deliberately unsupported.
 */
import type { NamedTensor, NamedTensors } from '../model/backend.ts';
import { errorMessage } from '../../common/error-message.ts';
import { f16BitsToF32, f32ToF16Bits } from './half.ts';

/** Floating-point dtypes this parser reads, with their size in bytes. */
const SAFETENSORS_DTYPE_BYTES: Readonly<Record<string, number>> = { F32: 4, F16: 2, BF16: 2, F64: 8 };

/** A parsed safetensors file: tensors as f32, each tensor's stored dtype, and the free-form metadata. */
export interface SafetensorsContents {
  tensors: NamedTensors;
  dtypes: Map<string, string>;
  metadata: Record<string, string>;
}

/** Returns the f32 value of a bfloat16 bit pattern (the top half of an f32, so exact). */
export function bf16BitsToF32(bits: number): number {
  const scratch = new DataView(new ArrayBuffer(4));
  scratch.setUint32(0, (bits & 0xffff) << 16, true);
  return scratch.getFloat32(0, true);
}

/** Parses a safetensors file into f32 tensors; fileName only labels the errors. */
export function parseSafetensors(bytes: Uint8Array, fileName = 'model.safetensors'): SafetensorsContents {
  const fail = (what: string): never => {
    throw new Error(`${fileName}: ${what}`);
  };
  if (bytes.length < 8) fail(`truncated: ${bytes.length} bytes, too short for the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLow = view.getUint32(0, true);
  const headerHigh = view.getUint32(4, true);
  const headerLength = headerHigh * 2 ** 32 + headerLow;
  if (headerLength > bytes.length - 8) {
    fail(`truncated or not a safetensors file: the header claims ${headerLength} bytes but only ${bytes.length - 8} follow`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  } catch (error) {
    fail(`corrupt header: not valid JSON (${errorMessage(error)})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) fail('corrupt header: not a JSON object');
  const dataStart = 8 + headerLength;
  const dataLength = bytes.length - dataStart;
  const tensors: NamedTensors = new Map();
  const dtypes = new Map<string, string>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = (entry ?? {}) as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets: offsets } = (entry ?? {}) as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof dtype !== 'string') fail(`tensor ${name}: missing dtype`);
    const itemBytes = SAFETENSORS_DTYPE_BYTES[dtype as string];
    if (itemBytes === undefined) fail(`tensor ${name}: dtype ${dtype} is not supported (${Object.keys(SAFETENSORS_DTYPE_BYTES).join(', ')})`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) fail(`tensor ${name}: shape ${JSON.stringify(shape)} is not a list of sizes`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isInteger(o) && o >= 0)) {
      fail(`tensor ${name}: data_offsets ${JSON.stringify(offsets)} is not [begin, end]`);
    }
    const [begin, end] = offsets as [number, number];
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    if (end - begin !== count * itemBytes!) {
      fail(`tensor ${name}: data_offsets [${begin}, ${end}] hold ${end - begin} bytes, but ${dtype} [${shape}] needs ${count * itemBytes!}`);
    }
    if (end > dataLength) fail(`truncated: tensor ${name} ends at data byte ${end}, but the file holds only ${dataLength} data bytes`);
    const data = new Float32Array(count);
    const base = dataStart + begin;
    if (dtype === 'F32') {
      data.set(new Float32Array(bytes.slice(base, base + count * 4).buffer));
    } else if (dtype === 'F64') {
      for (let i = 0; i < count; i++) data[i] = view.getFloat64(base + i * 8, true);
    } else {
      const convert = dtype === 'F16' ? f16BitsToF32 : bf16BitsToF32;
      for (let i = 0; i < count; i++) data[i] = convert(view.getUint16(base + i * 2, true));
    }
    tensors.set(name, { shape: [...(shape as number[])], data });
    dtypes.set(name, dtype as string);
  }
  return { tensors, dtypes, metadata };
}

/** Serialises tensors as an F32 (or, with dtype 'F16', float16) safetensors file (header padded with spaces to 8 bytes, as the reference writer does). */
export function serializeSafetensors(tensors: NamedTensors, metadata: Record<string, string> = {}, dtype: 'F32' | 'F16' = 'F32'): Uint8Array {
  const itemBytes = dtype === 'F16' ? 2 : 4;
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  const entries: Array<[number, NamedTensor]> = [];
  for (const [name, tensor] of tensors) {
    const count = tensor.shape.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) throw new Error(`tensor ${name}: shape [${tensor.shape}] does not match its ${tensor.data.length} values`);
    header[name] = { dtype, shape: tensor.shape, data_offsets: [offset, offset + count * itemBytes] };
    entries.push([offset, tensor]);
    offset += count * itemBytes;
  }
  let headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(headerBytes.length / 8) * 8;
  if (padded !== headerBytes.length) headerBytes = new TextEncoder().encode(JSON.stringify(header) + ' '.repeat(padded - headerBytes.length));
  const bytes = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, headerBytes.length, true);
  view.setUint32(4, 0, true);
  bytes.set(headerBytes, 8);
  const dataStart = 8 + headerBytes.length;
  for (const [start, tensor] of entries) {
    if (dtype === 'F16') for (let i = 0; i < tensor.data.length; i++) view.setUint16(dataStart + start + i * 2, f32ToF16Bits(tensor.data[i]!), true);
    else for (let i = 0; i < tensor.data.length; i++) view.setFloat32(dataStart + start + i * 4, tensor.data[i]!, true);
  }
  return bytes;
}
