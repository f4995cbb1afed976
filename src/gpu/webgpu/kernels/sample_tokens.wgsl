// sample_tokens: draws one token per draw d from the logits row draws[d].row (sampleRow in
// include/sampling.wgsl: temperature, top-k, top-p or greedy; ids ≥ drawable never drawn) and writes
// out[d] = (id as bits, log-prob over the whole row, entropy over the whole row, kept mass).
// out (D) vec4, logits (rows, V), draws (D) Draw. One workgroup of WG threads per draw.
override WG: u32 = 256; // a power of two

struct Params {
  D: u32,
  V: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (D)
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;    // (rows, V)
@group(0) @binding(2) var<storage, read_write> draws: array<Draw>;    // (D)
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> draw: Draw;

// #include "sampling.wgsl"

fn logitAt(i: u32) -> f32 {
  return logits[i];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let d = wid.x + wid.y * groups.x;
  if (d >= params.D) { return; }
  if (t == 0u) { draw = draws[d]; }
  let dr = workgroupUniformLoad(&draw);
  let result = sampleRow(dr.row * params.V, params.V, dr, dr.uniform, t);
  if (t == 0u) { out[d] = result; }
}
