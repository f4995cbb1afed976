// matmul_forward_f16w: matmul_forward with the weight stored as f16 (frozen base weights under LoRA,
// webgpu-backend's frozenWeightsF16; needs shader-f16). Each vec4<f16> is converted to f32 on load:
// products, sums, alpha and bias stay f32.
// out = alpha · inp · weightᵀ + bias (+ out when ACCUMULATE), the nn.Linear layout.
// out (N, OC), inp (N, IC), weight (OC, IC), bias (OC). IC and OC must be multiples of 4 (vec4 loads
// along IC, vec4 stores along OC); N is free. One thread per 4×4 block of out: 4 rows of inp and 4
// rows of weight are read as vec4 along IC, 16 dot products per 4 columns of K, no workgroup memory
// (barriers are slow on software adapters, and register tiling alone gives the reuse).
enable f16;

override WG_X: u32 = 16;
override WG_Y: u32 = 4;
override HAS_BIAS: bool = false;
override ACCUMULATE: bool = false;

struct Params {
  N: u32,
  IC: u32,
  OC: u32,
  alpha: f32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (N, OC/4)
@group(0) @binding(1) var<storage, read_write> inp: array<vec4<f32>>;       // (N, IC/4)
@group(0) @binding(2) var<storage, read_write> weight: array<vec4<f16>>;    // (OC, IC/4) f16
@group(0) @binding(3) var<storage, read_write> bias: array<vec4<f32>>;      // (OC/4), unused unless HAS_BIAS
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let N = params.N;
  let K4 = params.IC / 4u;
  let OC4 = params.OC / 4u;
  let col4 = gid.x; // which 4 output columns
  let row = gid.y * 4u; // first of 4 output rows
  if (row >= N || col4 >= OC4) { return; }
  // rows past N re-read row N-1 so that the loop has no branches; their results are not stored
  let a0 = row * K4;
  let a1 = min(row + 1u, N - 1u) * K4;
  let a2 = min(row + 2u, N - 1u) * K4;
  let a3 = min(row + 3u, N - 1u) * K4;
  let w0 = 4u * col4 * K4;
  let w1 = w0 + K4;
  let w2 = w1 + K4;
  let w3 = w2 + K4;
  var c0 = vec4<f32>(0.0);
  var c1 = vec4<f32>(0.0);
  var c2 = vec4<f32>(0.0);
  var c3 = vec4<f32>(0.0);
  for (var k = 0u; k < K4; k++) {
    let x0 = inp[a0 + k];
    let x1 = inp[a1 + k];
    let x2 = inp[a2 + k];
    let x3 = inp[a3 + k];
    let y0 = vec4<f32>(weight[w0 + k]);
    let y1 = vec4<f32>(weight[w1 + k]);
    let y2 = vec4<f32>(weight[w2 + k]);
    let y3 = vec4<f32>(weight[w3 + k]);
    c0 += vec4<f32>(dot(x0, y0), dot(x0, y1), dot(x0, y2), dot(x0, y3));
    c1 += vec4<f32>(dot(x1, y0), dot(x1, y1), dot(x1, y2), dot(x1, y3));
    c2 += vec4<f32>(dot(x2, y0), dot(x2, y1), dot(x2, y2), dot(x2, y3));
    c3 += vec4<f32>(dot(x3, y0), dot(x3, y1), dot(x3, y2), dot(x3, y3));
  }
  var b = vec4<f32>(0.0);
  if (HAS_BIAS) { b = bias[col4]; }
  let rows = array<vec4<f32>, 4>(c0, c1, c2, c3);
  for (var r = 0u; r < 4u; r++) {
    if (row + r < N) {
      let index = (row + r) * OC4 + col4;
      var value = params.alpha * rows[r] + b;
      if (ACCUMULATE) { value += out[index]; }
      out[index] = value;
    }
  }
}
