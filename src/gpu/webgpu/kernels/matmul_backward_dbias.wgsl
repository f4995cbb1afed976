// matmul_backward_dbias: dbias[o] += Σ_n dout[n, o], the bias gradient of matmul_forward.
// dbias (OC), dout (N, OC). One thread per output channel, summing down its column (no atomics).
override WG: u32 = 64;

struct Params {
  N: u32,
  OC: u32,
}

@group(0) @binding(0) var<storage, read_write> dbias: array<f32>; // (OC)
@group(0) @binding(1) var<storage, read_write> dout: array<f32>;        // (N, OC)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let o = gid.x + gid.y * groups.x * WG;
  if (o >= params.OC) { return; }
  var sum = 0.0;
  for (var n = 0u; n < params.N; n++) { sum += dout[n * params.OC + o]; }
  dbias[o] += sum;
}
