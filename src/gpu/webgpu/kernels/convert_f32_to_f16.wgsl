// convert_f32_to_f16: out = inp rounded to f16, for activations stored as half (webgpu-backend's
// activationsF16: a checkpointed layer's output, written after its forward and read back by
// convert_f16_to_f32). Rounding is done on the bits, as the CPU reference f32ToF16Bits
// (src/gpu/io/half.ts) does: to nearest, ties to even, subnormal halves kept, past ±65504 → ±Infinity,
// NaN stays NaN. WGSL's own f32 → f16 conversions (f16(x), pack2x16float) may round either way and
// leave out-of-range values indeterminate, so they are not used; no shader-f16 is needed.
// out (n) f16 as (n/2) u32 words (element 2i in the low half of word i), inp (n) f32; n a multiple of 4.
// One thread per 4 values.

struct Params {
  n4: u32, // n / 4
}

@group(0) @binding(0) var<storage, read_write> out: array<vec2<u32>>; // (n/4) pairs of words = (n) f16
@group(0) @binding(1) var<storage, read_write> inp: array<vec4<f32>>; // (n/4)
@group(0) @binding(2) var<uniform> params: Params;

// Returns the f16 bit pattern nearest to x (in the low 16 bits).
fn toHalf(x: f32) -> u32 {
  let bits = bitcast<u32>(x);
  let sign = (bits >> 16u) & 0x8000u;
  let exponent = i32((bits >> 23u) & 0xffu);
  let mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) { return sign | 0x7c00u | select(0u, 0x200u, mantissa != 0u); } // Infinity, NaN
  let halfExponent = exponent - 112; // - 127 + 15
  if (halfExponent >= 0x1f) { return sign | 0x7c00u; } // past the largest half: Infinity
  if (halfExponent <= 0) {
    // subnormal half: m · 2^-24 with m = (1.mantissa) · 2^(halfExponent + 9), rounded to nearest even
    if (halfExponent < -10) { return sign; }
    let full = mantissa | 0x800000u;
    let shift = u32(14 - halfExponent);
    var m = full >> shift;
    let rest = full & ((1u << shift) - 1u);
    let halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (m & 1u) == 1u)) { m += 1u; }
    return sign | m;
  }
  var half = sign | (u32(halfExponent) << 10u) | (mantissa >> 13u);
  let rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) == 1u)) { half += 1u; } // a carry rounds into the exponent (or to Infinity)
  return half;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 64u;
  if (i >= params.n4) { return; }
  let x = inp[i];
  out[i] = vec2<u32>(toHalf(x.x) | (toHalf(x.y) << 16u), toHalf(x.z) | (toHalf(x.w) << 16u));
}
