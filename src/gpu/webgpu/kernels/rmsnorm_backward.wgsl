// rmsnorm_backward: dinp[n, c] += dout·w·s − x·s³·(Σ_c dout·w·x)/C, the input gradient of
// rmsnorm_forward (s = rstd[n]). dinp, dout, inp (N, C), weight (C), rstd (N). One thread per row;
// the weight gradient is rmsnorm_backward_dweight.
override WG: u32 = 64;

struct Params {
  N: u32,
  C: u32,
}

@group(0) @binding(0) var<storage, read_write> dinp: array<f32>; // (N, C)
@group(0) @binding(1) var<storage, read_write> dout: array<f32>;       // (N, C)
@group(0) @binding(2) var<storage, read_write> inp: array<f32>;        // (N, C)
@group(0) @binding(3) var<storage, read_write> weight: array<f32>;     // (C)
@group(0) @binding(4) var<storage, read_write> rstd: array<f32>;       // (N)
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = gid.x + gid.y * groups.x * WG;
  if (n >= params.N) { return; }
  let C = params.C;
  let row = n * C;
  let s = rstd[n];
  var dotDoutWeightInp = 0.0;
  for (var c = 0u; c < C; c++) { dotDoutWeightInp += dout[row + c] * weight[c] * inp[row + c]; }
  let correction = s * s * s * dotDoutWeightInp / f32(C);
  for (var c = 0u; c < C; c++) {
    dinp[row + c] += dout[row + c] * weight[c] * s - inp[row + c] * correction;
  }
}
