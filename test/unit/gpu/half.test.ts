// IEEE half precision on the CPU: the codec that writes f16 safetensors and uploads f16 weights.
import { expect, test } from 'vitest';
import { decodeF16, f16BitsToF32, f32ToF16Bits, roundToF16 } from '../../../src/gpu/io/half.ts';

test('every finite f16 round-trips through f32', () => {
  for (let bits = 0; bits < 65536; bits++) {
    const value = f16BitsToF32(bits);
    if (Number.isNaN(value)) continue;
    if (f32ToF16Bits(value) !== bits) throw new Error(`f16 bits ${bits} → ${value} → ${f32ToF16Bits(value)}`);
  }
});

test('f32 → f16 rounds to the nearest (ties to even), overflows to infinity and keeps subnormals and NaN', () => {
  expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00); // halfway between 1 and the next f16: ties to even (down)
  expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // halfway, odd below: rounds up
  expect(f32ToF16Bits(65520)).toBe(0x7c00); // rounds past 65504 to Infinity
  expect(f32ToF16Bits(-Infinity)).toBe(0xfc00);
  expect(f32ToF16Bits(2 ** -25)).toBe(0); // a tie between 0 and the smallest subnormal
  expect(f32ToF16Bits(1.5 * 2 ** -25)).toBe(1);
  expect(f32ToF16Bits(2 ** -26)).toBe(0); // below half the smallest subnormal
  expect(Number.isNaN(decodeF16(Uint16Array.of(f32ToF16Bits(NaN)))[0])).toBe(true);
  expect(roundToF16(Float32Array.of(0.1))[0]).toBe(0.0999755859375);
});
