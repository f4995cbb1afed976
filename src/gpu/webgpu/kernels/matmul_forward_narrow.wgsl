// matmul_forward_narrow: matmul_forward for a few rows (decode steps: N = the batch of sequences,
// often 1). out = alpha · inp · weightᵀ + bias (+ out when ACCUMULATE), the nn.Linear layout.
// out (N, OC), inp (N, IC), weight (OC, IC), bias (OC); IC and OC multiples of 4. One thread per
// (row, 4 output columns): the grid's y is the row, so no thread computes a row that does not
// exist (the 4×4-tiled matmul_forward computes 4 rows per thread, 3 of them wasted at N = 1).
override WG_X: u32 = 64;
override HAS_BIAS: bool = false;
override ACCUMULATE: bool = false;

struct Params {
  N: u32,
  IC: u32,
  OC: u32,
  alpha: f32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;    // (N, OC/4)
@group(0) @binding(1) var<storage, read_write> inp: array<vec4<f32>>;    // (N, IC/4)
@group(0) @binding(2) var<storage, read_write> weight: array<vec4<f32>>; // (OC, IC/4)
@group(0) @binding(3) var<storage, read_write> bias: array<vec4<f32>>;   // (OC/4), unused unless HAS_BIAS
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG_X)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let K4 = params.IC / 4u;
  let OC4 = params.OC / 4u;
  let col4 = gid.x; // which 4 output columns
  let row = gid.y;
  if (row >= params.N || col4 >= OC4) { return; }
  let a = row * K4;
  let w0 = 4u * col4 * K4;
  let w1 = w0 + K4;
  let w2 = w1 + K4;
  let w3 = w2 + K4;
  var c = vec4<f32>(0.0);
  for (var k = 0u; k < K4; k++) {
    let x = inp[a + k];
    c += vec4<f32>(dot(x, weight[w0 + k]), dot(x, weight[w1 + k]), dot(x, weight[w2 + k]), dot(x, weight[w3 + k]));
  }
  let index = row * OC4 + col4;
  var value = params.alpha * c;
  if (HAS_BIAS) { value += bias[col4]; }
  if (ACCUMULATE) { value += out[index]; }
  out[index] = value;
}
