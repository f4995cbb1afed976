// scale_in_place: x[i] *= factor, for gradient-accumulation averaging and manual clipping.
// x (n). One thread per element.
override WG: u32 = 64;

struct Params {
  n: u32,
  factor: f32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>; // (n)
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.n) { return; }
  x[i] *= params.factor;
}
