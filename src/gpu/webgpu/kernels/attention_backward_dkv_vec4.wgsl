// attention_backward_dkv_vec4: attention_backward_dkv for head sizes that are multiples of 4, 4 columns
// per thread with q, dout, dk and dv read as vec4 (see attention_forward_vec4). Sums over the query heads
// of each key/value head and over the later queries: dk[t2] += Σ_h Σ_{t ≥ t2} dscores[h, t, t2]·q[t, h],
// dv[t2] += Σ_h Σ_{t ≥ t2} att[h, t, t2]·dout[t, h]. dk, dv (B, T, KVH, HS); dout, q (B, T, NH, HS);
// att, dscores (B, NH, T, T); HS a multiple of 4. One thread per (b, t2, kvh, 4 columns i4), so no two
// threads write the same value.
override WG: u32 = 64;

struct Params {
  B: u32,
  T: u32,
  NH: u32,
  KVH: u32,
  HS: u32,
}

@group(0) @binding(0) var<storage, read_write> dk: array<vec4<f32>>;   // (B, T, KVH, HS/4)
@group(0) @binding(1) var<storage, read_write> dv: array<vec4<f32>>;   // (B, T, KVH, HS/4)
@group(0) @binding(2) var<storage, read_write> dout: array<vec4<f32>>; // (B, T, NH, HS/4)
@group(0) @binding(3) var<storage, read_write> q: array<vec4<f32>>;    // (B, T, NH, HS/4)
@group(0) @binding(4) var<storage, read_write> att: array<f32>;        // (B, NH, T, T)
@group(0) @binding(5) var<storage, read_write> dscores: array<f32>;    // (B, NH, T, T)
@group(0) @binding(6) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG; // ((b * T + t2) * KVH + kvh) * HS4 + i4
  let T = params.T;
  let NH = params.NH;
  let KVH = params.KVH;
  let HS4 = params.HS / 4u;
  if (index >= params.B * T * KVH * HS4) { return; }
  let i4 = index % HS4;
  let kvh = (index / HS4) % KVH;
  let t2 = (index / (HS4 * KVH)) % T;
  let b = index / (HS4 * KVH * T);
  let groupSize = NH / KVH;
  let qStride = NH * HS4; // from query t to t + 1
  var dkSum = vec4<f32>(0.0);
  var dvSum = vec4<f32>(0.0);
  for (var h = kvh * groupSize; h < (kvh + 1u) * groupSize; h++) {
    let attColumn = (b * NH + h) * T * T + t2; // att[b, h, t, t2] at attColumn + t * T
    let qColumn = (b * T * NH + h) * HS4 + i4; // q[b, t, h, i4] at qColumn + t * qStride
    for (var t = t2; t < T; t++) {
      let a = attColumn + t * T;
      let qi = qColumn + t * qStride;
      dkSum += dscores[a] * q[qi];
      dvSum += att[a] * dout[qi];
    }
  }
  dk[index] += dkSum;
  dv[index] += dvSum;
}
