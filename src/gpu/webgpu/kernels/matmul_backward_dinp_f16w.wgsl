// matmul_backward_dinp_f16w: matmul_backward_dinp with the weight stored as f16 (frozen base weights
// under LoRA; needs shader-f16), converted to f32 on load; products and sums stay f32.
// dinp = alpha · dout · weight (+ dinp when ACCUMULATE), the input gradient of
// matmul_forward. dinp (N, IC), dout (N, OC), weight (OC, IC); IC and OC multiples of 4, N free.
// One thread per 4 rows × 4 columns of dinp: per 4 steps of OC it reads 4 vec4 of dout (along OC)
// and 4 vec4 of weight (along IC) and does 16 vec4 multiply-adds; no workgroup memory.
enable f16;

override WG_X: u32 = 16;
override WG_Y: u32 = 4;
override ACCUMULATE: bool = true;

struct Params {
  N: u32,
  IC: u32,
  OC: u32,
  alpha: f32,
}

@group(0) @binding(0) var<storage, read_write> dinp: array<vec4<f32>>; // (N, IC/4)
@group(0) @binding(1) var<storage, read_write> dout: array<vec4<f32>>;       // (N, OC/4)
@group(0) @binding(2) var<storage, read_write> weight: array<vec4<f16>>;     // (OC, IC/4) f16
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let N = params.N;
  let IC4 = params.IC / 4u;
  let K4 = params.OC / 4u;
  let col4 = gid.x;
  let row = gid.y * 4u;
  if (row >= N || col4 >= IC4) { return; }
  let a0 = row * K4;
  let a1 = min(row + 1u, N - 1u) * K4;
  let a2 = min(row + 2u, N - 1u) * K4;
  let a3 = min(row + 3u, N - 1u) * K4;
  var c0 = vec4<f32>(0.0);
  var c1 = vec4<f32>(0.0);
  var c2 = vec4<f32>(0.0);
  var c3 = vec4<f32>(0.0);
  for (var k = 0u; k < K4; k++) {
    let x0 = dout[a0 + k];
    let x1 = dout[a1 + k];
    let x2 = dout[a2 + k];
    let x3 = dout[a3 + k];
    let w = 4u * k * IC4 + col4;
    let y0 = vec4<f32>(weight[w]);
    let y1 = vec4<f32>(weight[w + IC4]);
    let y2 = vec4<f32>(weight[w + 2u * IC4]);
    let y3 = vec4<f32>(weight[w + 3u * IC4]);
    c0 += x0.x * y0 + x0.y * y1 + x0.z * y2 + x0.w * y3;
    c1 += x1.x * y0 + x1.y * y1 + x1.z * y2 + x1.w * y3;
    c2 += x2.x * y0 + x2.y * y1 + x2.z * y2 + x2.w * y3;
    c3 += x3.x * y0 + x3.y * y1 + x3.z * y2 + x3.w * y3;
  }
  let rows = array<vec4<f32>, 4>(c0, c1, c2, c3);
  for (var r = 0u; r < 4u; r++) {
    if (row + r < N) {
      let index = (row + r) * IC4 + col4;
      var value = params.alpha * rows[r];
      if (ACCUMULATE) { value += dinp[index]; }
      dinp[index] = value;
    }
  }
}
