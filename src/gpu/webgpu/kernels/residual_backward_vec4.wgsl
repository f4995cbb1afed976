// residual_backward_vec4: residual_backward 4 elements per thread, read and written as vec4 (for N a
// multiple of 4; see swiglu_backward_vec4): da += dout and db += dout, the gradient of residual_forward.
// da, db, dout (N/4 vec4). One thread per 4 elements.
override WG: u32 = 64;

struct Params {
  N4: u32,
}

@group(0) @binding(0) var<storage, read_write> da: array<vec4<f32>>;   // (N/4)
@group(0) @binding(1) var<storage, read_write> db: array<vec4<f32>>;   // (N/4)
@group(0) @binding(2) var<storage, read_write> dout: array<vec4<f32>>; // (N/4)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N4) { return; }
  let d = dout[i];
  da[i] += d;
  db[i] += d;
}
