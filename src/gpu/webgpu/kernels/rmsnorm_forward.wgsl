// rmsnorm_forward: out[n, :] = inp[n, :] · rstd[n] · weight, rstd[n] = 1 / sqrt(mean(inp[n, :]²) + eps).
// out (N, C), rstd (N), inp (N, C), weight (C). One thread per row.
override WG: u32 = 64;

struct Params {
  N: u32,
  C: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;  // (N, C)
@group(0) @binding(1) var<storage, read_write> rstd: array<f32>; // (N)
@group(0) @binding(2) var<storage, read_write> inp: array<f32>;        // (N, C)
@group(0) @binding(3) var<storage, read_write> weight: array<f32>;     // (C)
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = gid.x + gid.y * groups.x * WG;
  if (n >= params.N) { return; }
  let C = params.C;
  let row = n * C;
  var sumSquares = 0.0;
  for (var c = 0u; c < C; c++) {
    let x = inp[row + c];
    sumSquares += x * x;
  }
  let s = inverseSqrt(sumSquares / f32(C) + params.eps);
  for (var c = 0u; c < C; c++) { out[row + c] = inp[row + c] * s * weight[c]; }
  rstd[n] = s;
}
