// attention_backward_dq_vec4: attention_backward_dq for head sizes that are multiples of 4, reading
// dout, k, v and dq as vec4 (see attention_forward_vec4). Per query row it forms datt = dout·vᵀ, the
// softmax gradient dscore = att·(datt − Σ att·datt)/√HS (saved in dscores for attention_backward_dkv_vec4),
// and accumulates dq += dscore·k. dq, dout (B, T, NH, HS), k, v (B, T, KVH, HS), att, dscores (B, NH, T, T);
// HS a multiple of 4. One thread per (b, h, query t).
override WG: u32 = 64;

struct Params {
  B: u32,
  T: u32,
  NH: u32,
  KVH: u32,
  HS: u32,
}

@group(0) @binding(0) var<storage, read_write> dq: array<vec4<f32>>;   // (B, T, NH, HS/4)
@group(0) @binding(1) var<storage, read_write> dscores: array<f32>;    // (B, NH, T, T)
@group(0) @binding(2) var<storage, read_write> dout: array<vec4<f32>>; // (B, T, NH, HS/4)
@group(0) @binding(3) var<storage, read_write> k: array<vec4<f32>>;    // (B, T, KVH, HS/4)
@group(0) @binding(4) var<storage, read_write> v: array<vec4<f32>>;    // (B, T, KVH, HS/4)
@group(0) @binding(5) var<storage, read_write> att: array<f32>;        // (B, NH, T, T)
@group(0) @binding(6) var<uniform> params: Params;

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
  // datt[t2] = dout[t]·v[t2], kept in dscores until the softmax gradient replaces it
  var dotAttDatt = 0.0;
  for (var t2 = 0u; t2 <= t; t2++) {
    let vBase = kvBase + t2 * kvStride;
    var dots = vec4<f32>(0.0);
    for (var i = 0u; i < HS4; i++) { dots += dout[qBase + i] * v[vBase + i]; }
    let dot = dots.x + dots.y + dots.z + dots.w;
    dscores[attRow + t2] = dot;
    dotAttDatt += att[attRow + t2] * dot;
  }
  for (var t2 = 0u; t2 < T; t2++) {
    if (t2 <= t) {
      dscores[attRow + t2] = att[attRow + t2] * (dscores[attRow + t2] - dotAttDatt) * scale;
    } else {
      dscores[attRow + t2] = 0.0;
    }
  }
  for (var i = 0u; i < HS4; i++) {
    var sum = vec4<f32>(0.0);
    for (var t2 = 0u; t2 <= t; t2++) { sum += dscores[attRow + t2] * k[kvBase + t2 * kvStride + i]; }
    dq[qBase + i] += sum;
  }
}
