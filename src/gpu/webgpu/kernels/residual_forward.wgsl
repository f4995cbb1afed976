// residual_forward: out = a + b, elementwise. out, a, b (N). One thread per element.
override WG: u32 = 64;

struct Params {
  N: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>; // (N)
@group(0) @binding(1) var<storage, read_write> a: array<f32>;         // (N)
@group(0) @binding(2) var<storage, read_write> b: array<f32>;         // (N)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N) { return; }
  out[i] = a[i] + b[i];
}
