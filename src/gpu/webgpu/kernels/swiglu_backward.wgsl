// swiglu_backward: dgate += dout · up · σ(g)(1 + g(1 − σ(g))), dup += dout · silu(g), the gradient
// of swiglu_forward. dgate, dup, dout, gate, up (N). One thread per element.
override WG: u32 = 64;

struct Params {
  N: u32,
}

@group(0) @binding(0) var<storage, read_write> dgate: array<f32>; // (N)
@group(0) @binding(1) var<storage, read_write> dup: array<f32>;   // (N)
@group(0) @binding(2) var<storage, read_write> dout: array<f32>;        // (N)
@group(0) @binding(3) var<storage, read_write> gate: array<f32>;        // (N)
@group(0) @binding(4) var<storage, read_write> up: array<f32>;          // (N)
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N) { return; }
  let g = gate[i];
  let sigmoid = 1.0 / (1.0 + exp(-g));
  dgate[i] += dout[i] * up[i] * sigmoid * (1.0 + g * (1.0 - sigmoid));
  dup[i] += dout[i] * g * sigmoid;
}
