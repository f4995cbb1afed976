// residual_backward: da += dout and db += dout, the gradient of residual_forward.
// da, db, dout (N). One thread per element.
override WG: u32 = 64;

struct Params {
  N: u32,
}

@group(0) @binding(0) var<storage, read_write> da: array<f32>; // (N)
@group(0) @binding(1) var<storage, read_write> db: array<f32>; // (N)
@group(0) @binding(2) var<storage, read_write> dout: array<f32>;     // (N)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N) { return; }
  da[i] += dout[i];
  db[i] += dout[i];
}
