// matmul_forward_workgroup: out = alpha · inp · weightᵀ + bias (+ out when ACCUMULATE), the nn.Linear layout,
// tiled through workgroup memory for real GPUs. out (N, OC), inp (N, IC), weight (OC, IC), bias (OC); IC and
// OC multiples of 4, N free. A 16×16 workgroup computes a 64×64 block of out, each thread a 4×4 block; per
// 16 steps of IC the workgroup stages 64 rows of inp and 64 rows of weight (16 values each, one vec4 load per
// thread and operand) in workgroup memory, then every thread reads its 4 + 4 rows from there. Past the end of
// a dimension the staged values are zero. On software adapters the barriers cost more than the reuse saves
// (use matmul_forward_tile8x16 there).
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

const TILE = 64u; // rows of inp and of weight per workgroup
const KV = 4u;    // vec4 steps of IC per stage (16 values)

var<workgroup> tileA: array<vec4<f32>, 256>; // (TILE rows of inp, KV vec4)
var<workgroup> tileB: array<vec4<f32>, 256>; // (TILE rows of weight, KV vec4)

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let N = params.N;
  let K4 = params.IC / 4u;
  let OC = params.OC;
  let OC4 = OC / 4u;
  let rowBase = wid.y * TILE;
  let colBase = wid.x * TILE;
  // the element this thread stages: row li / 4 of the tile, vec4 li % 4 of the stage
  let loadRow = li / KV;
  let loadK = li % KV;
  var acc: array<vec4<f32>, 4>;
  acc[0] = vec4<f32>(0.0);
  acc[1] = vec4<f32>(0.0);
  acc[2] = vec4<f32>(0.0);
  acc[3] = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < K4; k0 += KV) {
    let k = k0 + loadK;
    let aRow = rowBase + loadRow;
    let bRow = colBase + loadRow;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    if (aRow < N && k < K4) { a = inp[aRow * K4 + k]; }
    if (bRow < OC && k < K4) { b = weight[bRow * K4 + k]; }
    tileA[li] = a;
    tileB[li] = b;
    workgroupBarrier();
    for (var kk = 0u; kk < KV; kk++) {
      let y0 = tileB[(4u * lid.x) * KV + kk];
      let y1 = tileB[(4u * lid.x + 1u) * KV + kk];
      let y2 = tileB[(4u * lid.x + 2u) * KV + kk];
      let y3 = tileB[(4u * lid.x + 3u) * KV + kk];
      for (var r = 0u; r < 4u; r++) {
        let x = tileA[(4u * lid.y + r) * KV + kk];
        acc[r] += vec4<f32>(dot(x, y0), dot(x, y1), dot(x, y2), dot(x, y3));
      }
    }
    workgroupBarrier();
  }
  let col4 = wid.x * (TILE / 4u) + lid.x;
  if (col4 >= OC4) { return; }
  var b = vec4<f32>(0.0);
  if (HAS_BIAS) { b = bias[col4]; }
  for (var r = 0u; r < 4u; r++) {
    let row = rowBase + 4u * lid.y + r;
    if (row < N) {
      let index = row * OC4 + col4;
      var value = params.alpha * acc[r] + b;
      if (ACCUMULATE) { value += out[index]; }
      out[index] = value;
    }
  }
}
