// swiglu_backward_vec4: swiglu_backward 4 elements per thread, read and written as vec4 (for N a
// multiple of 4; on SwiftShader a vec4 load costs about what two scalar ones do). dgate += dout · up ·
// σ(g)(1 + g(1 − σ(g))), dup += dout · silu(g), the gradient of swiglu_forward.
// dgate, dup, dout, gate, up (N/4 vec4). One thread per 4 elements.
override WG: u32 = 64;

struct Params {
  N4: u32,
}

@group(0) @binding(0) var<storage, read_write> dgate: array<vec4<f32>>; // (N/4)
@group(0) @binding(1) var<storage, read_write> dup: array<vec4<f32>>;   // (N/4)
@group(0) @binding(2) var<storage, read_write> dout: array<vec4<f32>>;  // (N/4)
@group(0) @binding(3) var<storage, read_write> gate: array<vec4<f32>>;  // (N/4)
@group(0) @binding(4) var<storage, read_write> up: array<vec4<f32>>;    // (N/4)
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N4) { return; }
  let g = gate[i];
  let d = dout[i];
  let sigmoid = 1.0 / (1.0 + exp(-g));
  dgate[i] += d * up[i] * sigmoid * (1.0 + g * (1.0 - sigmoid));
  dup[i] += d * g * sigmoid;
}
