// embedding_backward: dwte[ids[n], c] += dout[n, c] for every token n (a scatter-add).
// dwte (V, C), dout (N, C), ids (N). One thread per channel c walks the tokens in order, so two
// tokens with the same id never race and no float atomics are needed; the sum order is fixed.
override WG: u32 = 64;

struct Params {
  N: u32,
  C: u32,
}

@group(0) @binding(0) var<storage, read_write> dwte: array<f32>; // (V, C)
@group(0) @binding(1) var<storage, read_write> dout: array<f32>;       // (N, C)
@group(0) @binding(2) var<storage, read_write> ids: array<i32>;        // (N)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let c = gid.x + gid.y * groups.x * WG;
  if (c >= params.C) { return; }
  for (var n = 0u; n < params.N; n++) {
    let index = u32(ids[n]) * params.C + c;
    dwte[index] += dout[n * params.C + c];
  }
}
