// attention_backward_dkv: the second half of attention's backward, summing over the query heads of
// each key/value head and over the later queries: dk[t2] += Σ_h Σ_{t ≥ t2} dscores[h, t, t2]·q[t, h],
// dv[t2] += Σ_h Σ_{t ≥ t2} att[h, t, t2]·dout[t, h].
// dk, dv, k-shaped (B, T, KVH, HS); dout, q (B, T, NH, HS); att, dscores (B, NH, T, T).
// One thread per element of dk and dv (b, t2, kvh, i), so no two threads write the same value.
override WG: u32 = 64;

struct Params {
  B: u32,
  T: u32,
  NH: u32,
  KVH: u32,
  HS: u32,
}

@group(0) @binding(0) var<storage, read_write> dk: array<f32>;  // (B, T, KVH, HS)
@group(0) @binding(1) var<storage, read_write> dv: array<f32>;  // (B, T, KVH, HS)
@group(0) @binding(2) var<storage, read_write> dout: array<f32>;      // (B, T, NH, HS)
@group(0) @binding(3) var<storage, read_write> q: array<f32>;         // (B, T, NH, HS)
@group(0) @binding(4) var<storage, read_write> att: array<f32>;       // (B, NH, T, T)
@group(0) @binding(5) var<storage, read_write> dscores: array<f32>;   // (B, NH, T, T)
@group(0) @binding(6) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG; // ((b * T + t2) * KVH + kvh) * HS + i
  let T = params.T;
  let NH = params.NH;
  let KVH = params.KVH;
  let HS = params.HS;
  if (index >= params.B * T * KVH * HS) { return; }
  let i = index % HS;
  let kvh = (index / HS) % KVH;
  let t2 = (index / (HS * KVH)) % T;
  let b = index / (HS * KVH * T);
  let groupSize = NH / KVH;
  var dkSum = 0.0;
  var dvSum = 0.0;
  for (var h = kvh * groupSize; h < (kvh + 1u) * groupSize; h++) {
    for (var t = t2; t < T; t++) {
      let a = ((b * NH + h) * T + t) * T + t2;
      let qi = ((b * T + t) * NH + h) * HS + i;
      dkSum += dscores[a] * q[qi];
      dvSum += att[a] * dout[qi];
    }
  }
  dk[index] += dkSum;
  dv[index] += dvSum;
}
