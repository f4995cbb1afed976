// matmul_swiglu_forward: the MLP's gate and up products fused with swiglu_forward (one dispatch
// instead of three): out = silu(inp·gateᵀ) · (inp·upᵀ), silu(g) = g / (1 + exp(−g)), with the same
// f32 arithmetic per element as matmul_forward (alpha 1, no bias) followed by swiglu_forward.
// out (N, I), inp (N, C), gate, up (I, C) (the nn.Linear layout); C and I multiples of 4. One
// thread per 4×4 block of out as matmul_forward, or per 1×4 block when ONE_ROW (N = 1, a decode
// step of one sequence: no re-read rows).
override WG_X: u32 = 16;
override WG_Y: u32 = 4;
override ONE_ROW: bool = false;

struct Params {
  N: u32,
  IC: u32,
  OC: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (N, OC/4)
@group(0) @binding(1) var<storage, read_write> inp: array<vec4<f32>>; // (N, IC/4)
@group(0) @binding(2) var<storage, read_write> gate: array<vec4<f32>>; // (OC, IC/4)
@group(0) @binding(3) var<storage, read_write> up: array<vec4<f32>>;   // (OC, IC/4)
@group(0) @binding(4) var<uniform> params: Params;

fn silu_times(g: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
  return g / (vec4<f32>(1.0) + exp(-g)) * u;
}

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let N = params.N;
  let K4 = params.IC / 4u;
  let OC4 = params.OC / 4u;
  let col4 = gid.x; // which 4 output columns
  let row = select(gid.y * 4u, gid.y, ONE_ROW); // first output row of this thread
  if (row >= N || col4 >= OC4) { return; }
  let w0 = 4u * col4 * K4;
  let w1 = w0 + K4;
  let w2 = w1 + K4;
  let w3 = w2 + K4;
  if (ONE_ROW) {
    let a0 = row * K4;
    var g0 = vec4<f32>(0.0);
    var u0 = vec4<f32>(0.0);
    for (var k = 0u; k < K4; k++) {
      let x0 = inp[a0 + k];
      g0 += vec4<f32>(dot(x0, gate[w0 + k]), dot(x0, gate[w1 + k]), dot(x0, gate[w2 + k]), dot(x0, gate[w3 + k]));
      u0 += vec4<f32>(dot(x0, up[w0 + k]), dot(x0, up[w1 + k]), dot(x0, up[w2 + k]), dot(x0, up[w3 + k]));
    }
    out[row * OC4 + col4] = silu_times(g0, u0);
    return;
  }
  // rows past N re-read row N-1 so that the loop has no branches; their results are not stored
  let a0 = row * K4;
  let a1 = min(row + 1u, N - 1u) * K4;
  let a2 = min(row + 2u, N - 1u) * K4;
  let a3 = min(row + 3u, N - 1u) * K4;
  var g0 = vec4<f32>(0.0);
  var g1 = vec4<f32>(0.0);
  var g2 = vec4<f32>(0.0);
  var g3 = vec4<f32>(0.0);
  var u0 = vec4<f32>(0.0);
  var u1 = vec4<f32>(0.0);
  var u2 = vec4<f32>(0.0);
  var u3 = vec4<f32>(0.0);
  for (var k = 0u; k < K4; k++) {
    let x0 = inp[a0 + k];
    let x1 = inp[a1 + k];
    let x2 = inp[a2 + k];
    let x3 = inp[a3 + k];
    let y0 = gate[w0 + k];
    let y1 = gate[w1 + k];
    let y2 = gate[w2 + k];
    let y3 = gate[w3 + k];
    g0 += vec4<f32>(dot(x0, y0), dot(x0, y1), dot(x0, y2), dot(x0, y3));
    g1 += vec4<f32>(dot(x1, y0), dot(x1, y1), dot(x1, y2), dot(x1, y3));
    g2 += vec4<f32>(dot(x2, y0), dot(x2, y1), dot(x2, y2), dot(x2, y3));
    g3 += vec4<f32>(dot(x3, y0), dot(x3, y1), dot(x3, y2), dot(x3, y3));
    let z0 = up[w0 + k];
    let z1 = up[w1 + k];
    let z2 = up[w2 + k];
    let z3 = up[w3 + k];
    u0 += vec4<f32>(dot(x0, z0), dot(x0, z1), dot(x0, z2), dot(x0, z3));
    u1 += vec4<f32>(dot(x1, z0), dot(x1, z1), dot(x1, z2), dot(x1, z3));
    u2 += vec4<f32>(dot(x2, z0), dot(x2, z1), dot(x2, z2), dot(x2, z3));
    u3 += vec4<f32>(dot(x3, z0), dot(x3, z1), dot(x3, z2), dot(x3, z3));
  }
  let gates = array<vec4<f32>, 4>(g0, g1, g2, g3);
  let ups = array<vec4<f32>, 4>(u0, u1, u2, u3);
  for (var r = 0u; r < 4u; r++) {
    if (row + r < N) { out[(row + r) * OC4 + col4] = silu_times(gates[r], ups[r]); }
  }
}
