// rmsnorm_backward_dweight: dweight[c] += Σ_n dout[n, c] · inp[n, c] · rstd[n], the weight gradient
// of rmsnorm_forward. dweight (C), dout, inp (N, C), rstd (N). One thread per channel (no atomics).
override WG: u32 = 64;

struct Params {
  N: u32,
  C: u32,
}

@group(0) @binding(0) var<storage, read_write> dweight: array<f32>; // (C)
@group(0) @binding(1) var<storage, read_write> dout: array<f32>;          // (N, C)
@group(0) @binding(2) var<storage, read_write> inp: array<f32>;           // (N, C)
@group(0) @binding(3) var<storage, read_write> rstd: array<f32>;          // (N)
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let c = gid.x + gid.y * groups.x * WG;
  if (c >= params.C) { return; }
  var sum = 0.0;
  for (var n = 0u; n < params.N; n++) {
    let i = n * params.C + c;
    sum += dout[i] * inp[i] * rstd[n];
  }
  dweight[c] += sum;
}
