// matmul_splitk_reduce: out[i] += Σ_s partials[s, i] for s = 0..splits-1 in order, the second pass of the
// split-K weight gradient (matmul_backward_dweight_tile8x16 with SPLIT_K). out (n), partials (splits, n),
// n = OC·IC/4 vec4; one thread per vec4 of out. Deterministic: each thread adds its slices in order.
override WG_X: u32 = 64;

struct Params {
  n: u32,
  splits: u32,
  stride: u32, // threads per row of the grid (the grid may fold into y past the per-dimension limit)
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;      // (n)
@group(0) @binding(1) var<storage, read_write> partials: array<vec4<f32>>; // (splits, n)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG_X)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.y * params.stride + gid.x;
  if (i >= params.n) { return; }
  var sum = vec4<f32>(0.0);
  for (var s = 0u; s < params.splits; s++) {
    sum += partials[s * params.n + i];
  }
  out[i] += sum;
}
