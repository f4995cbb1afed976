// global_grad_norm: the first of two stages of the gradient norm: partials[j] = Σ grads[i]² over
// i = j, j + P, j + 2P, ... (P = number of partials, strided so neighbouring threads read
// neighbouring values). grads (n), partials (P). One thread per partial sum; no atomics.
override WG: u32 = 64;

struct Params {
  n: u32,
  P: u32,
}

@group(0) @binding(0) var<storage, read_write> partials: array<f32>; // (P)
@group(0) @binding(1) var<storage, read_write> grads: array<f32>;          // (n)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let j = gid.x + gid.y * groups.x * WG;
  if (j >= params.P) { return; }
  var sum = 0.0;
  for (var i = j; i < params.n; i += params.P) {
    let g = grads[i];
    sum += g * g;
  }
  partials[j] = sum;
}
