/**
 * IEEE 754 half precision on the CPU: f32 → f16 bits (round to nearest, ties to even, as WGSL's
 * `f16(x)` and PyTorch's `.half()` do) and f16 bits → f32, for uploading and reading back weights
 * stored as f16 (`frozenWeightsF16` in webgpu-backend.ts) and for f16 safetensors. Plain TypeScript, since Node 20 has no
 * Float16Array; it is not a tensor type.
 */

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);
let decodeTable: Float32Array | undefined;

/** Returns the f16 bit pattern nearest to value (ties to even; overflow → ±Infinity, NaN → NaN). */
export function f32ToF16Bits(value: number): number {
  F32[0] = value;
  const bits = F32_BITS[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // subnormal half: value = m · 2^-24 with m = (1.mantissa) · 2^(halfExponent + 9)
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    let m = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (m & 1) === 1)) m++;
    return sign | m;
  }
  let half = sign | (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++; // a carry rounds up into the exponent (or to Infinity)
  return half;
}

/** Returns the f32 value of an f16 bit pattern. */
export function f16BitsToF32(bits: number): number {
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Encodes f32 values as f16 bit patterns. */
export function encodeF16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = f32ToF16Bits(values[i]!);
  return out;
}

/** Decodes f16 bit patterns to f32 values (through a 65,536-entry table built on first use). */
export function decodeF16(bits: Uint16Array): Float32Array {
  if (decodeTable === undefined) {
    decodeTable = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) decodeTable[h] = f16BitsToF32(h);
  }
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = decodeTable[bits[i]!]!;
  return out;
}

/** Returns the values rounded to the nearest f16 (as f32): what a weight stored as f16 holds. */
export function roundToF16(values: Float32Array): Float32Array {
  return decodeF16(encodeF16(values));
}
