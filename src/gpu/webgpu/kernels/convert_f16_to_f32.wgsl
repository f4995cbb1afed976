// convert_f16_to_f32: out = inp, f16 values (stored by convert_f32_to_f16) widened to f32 exactly,
// decoded from the bits as the CPU reference f16BitsToF32 (src/gpu/io/half.ts) does: subnormals,
// ±Infinity and NaN included (WGSL's unpack2x16float leaves non-finite values to the implementation).
// No shader-f16 is needed.
// out (n) f32, inp (n) f16 as (n/2) u32 words (element 2i in the low half of word i); n a multiple of 4.
// One thread per 4 values.

struct Params {
  n4: u32, // n / 4
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (n/4)
@group(0) @binding(1) var<storage, read_write> inp: array<vec2<u32>>; // (n/4) pairs of words = (n) f16
@group(0) @binding(2) var<uniform> params: Params;

// Returns the f32 value of the f16 bit pattern in the low 16 bits of h.
fn fromHalf(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let exponent = (h >> 10u) & 0x1fu;
  let mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) { return bitcast<f32>(sign | 0x7f800000u | (mantissa << 13u)); } // Infinity, NaN
  if (exponent == 0u) { return bitcast<f32>(sign | bitcast<u32>(f32(mantissa) * 5.9604644775390625e-8)); } // zero or subnormal: m · 2^-24
  return bitcast<f32>(sign | ((exponent + 112u) << 23u) | (mantissa << 13u));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 64u;
  if (i >= params.n4) { return; }
  let words = inp[i];
  out[i] = vec4<f32>(fromHalf(words.x & 0xffffu), fromHalf(words.x >> 16u), fromHalf(words.y & 0xffffu), fromHalf(words.y >> 16u));
}
