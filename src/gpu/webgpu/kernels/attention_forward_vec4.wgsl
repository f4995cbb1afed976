// attention_forward_vec4: attention_forward for head sizes that are multiples of 4, reading q, k and v
// as vec4 (on SwiftShader a vec4 load costs about what two scalar loads do, and the scalar kernel did
// two loads per multiply-add). Causal grouped-query attention, out = softmax(q·kᵀ/√HS)·v per head,
// where query head h reads key/value head h / (NH/KVH); the probabilities are saved in att (zero above
// the diagonal). out, q (B, T, NH, HS), k, v (B, T, KVH, HS), att (B, NH, T, T); HS a multiple of 4.
// One thread per (b, h, query t).
override WG: u32 = 64;

struct Params {
  B: u32,
  T: u32,
  NH: u32,
  KVH: u32,
  HS: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (B, T, NH, HS/4)
@group(0) @binding(1) var<storage, read_write> att: array<f32>;       // (B, NH, T, T)
@group(0) @binding(2) var<storage, read_write> q: array<vec4<f32>>;   // (B, T, NH, HS/4)
@group(0) @binding(3) var<storage, read_write> k: array<vec4<f32>>;   // (B, T, KVH, HS/4)
@group(0) @binding(4) var<storage, read_write> v: array<vec4<f32>>;   // (B, T, KVH, HS/4)
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG; // (b * NH + h) * T + t
  let T = params.T;
  let NH = params.NH;
  let KVH = params.KVH;
  let HS4 = params.HS / 4u;
  if (index >= params.B * NH * T) { return; }
  let t = index % T;
  let h = (index / T) % NH;
  let b = index / (T * NH);
  let kvh = h / (NH / KVH);
  let scale = inverseSqrt(f32(params.HS));
  let qBase = ((b * T + t) * NH + h) * HS4;
  let kvBase = b * T * KVH * HS4 + kvh * HS4; // row t2 at kvBase + t2 * KVH * HS4
  let kvStride = KVH * HS4;
  let attRow = index * T;
  // scores and their max, for a stable softmax
  var maxScore = -3.0e38;
  for (var t2 = 0u; t2 <= t; t2++) {
    let kBase = kvBase + t2 * kvStride;
    var dots = vec4<f32>(0.0);
    for (var i = 0u; i < HS4; i++) { dots += q[qBase + i] * k[kBase + i]; }
    let score = (dots.x + dots.y + dots.z + dots.w) * scale;
    att[attRow + t2] = score;
    maxScore = max(maxScore, score);
  }
  var sumExp = 0.0;
  for (var t2 = 0u; t2 <= t; t2++) {
    let e = exp(att[attRow + t2] - maxScore);
    att[attRow + t2] = e;
    sumExp += e;
  }
  let inverseSum = 1.0 / sumExp;
  for (var t2 = 0u; t2 < T; t2++) {
    if (t2 <= t) { att[attRow + t2] *= inverseSum; } else { att[attRow + t2] = 0.0; }
  }
  // weighted sum of the values, 4 columns at a time
  for (var i = 0u; i < HS4; i++) {
    var sum = vec4<f32>(0.0);
    for (var t2 = 0u; t2 <= t; t2++) { sum += att[attRow + t2] * v[kvBase + t2 * kvStride + i]; }
    out[qBase + i] = sum;
  }
}
