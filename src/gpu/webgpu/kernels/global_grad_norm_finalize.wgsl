// global_grad_norm_finalize: the second stage of the gradient norm: result[0] = the clip factor
// min(1, maxNorm / (norm + 1e-6)) of torch.nn.utils.clip_grad_norm_ (1 when maxNorm ≤ 0), which
// adamw_update binds as its grad scale, and result[1] = norm = sqrt(Σ partials).
// result (2), partials (P). A single thread.
struct Params {
  P: u32,
  maxNorm: f32,
}

@group(0) @binding(0) var<storage, read_write> result: array<f32>; // (2) clip factor, norm
@group(0) @binding(1) var<storage, read_write> partials: array<f32>;     // (P)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(1)
fn main() {
  var sum = 0.0;
  for (var j = 0u; j < params.P; j++) { sum += partials[j]; }
  let norm = sqrt(sum);
  result[0] = select(min(1.0, params.maxNorm / (norm + 1e-6)), 1.0, params.maxNorm <= 0.0);
  result[1] = norm;
}
