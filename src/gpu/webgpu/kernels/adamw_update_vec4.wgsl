// adamw_update_vec4: adamw_update 4 parameters per thread, read and written as vec4 (for n a multiple
// of 4; see swiglu_backward_vec4). One AdamW step (decoupled weight decay, bias correction) as
// torch.optim.AdamW, with the gradient first multiplied by gradScale[0] (the clip factor of
// global_grad_norm, or 1). parameters, grads, m, v (n/4 vec4), gradScale (≥ 1). One thread per 4 parameters.
override WG: u32 = 64;

struct Params {
  n4: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  weightDecay: f32,
  biasCorrection1: f32,     // 1 − beta1^step
  biasCorrection2Sqrt: f32, // sqrt(1 − beta2^step)
}

@group(0) @binding(0) var<storage, read_write> parameters: array<vec4<f32>>; // (n/4)
@group(0) @binding(1) var<storage, read_write> m: array<vec4<f32>>;          // (n/4)
@group(0) @binding(2) var<storage, read_write> v: array<vec4<f32>>;          // (n/4)
@group(0) @binding(3) var<storage, read_write> grads: array<vec4<f32>>;      // (n/4)
@group(0) @binding(4) var<storage, read_write> gradScale: array<f32>;        // [0] = factor
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.n4) { return; }
  let g = grads[i] * gradScale[0];
  let mi = params.beta1 * m[i] + (1.0 - params.beta1) * g;
  let vi = params.beta2 * v[i] + (1.0 - params.beta2) * g * g;
  m[i] = mi;
  v[i] = vi;
  let decayed = parameters[i] * (1.0 - params.lr * params.weightDecay);
  let stepSize = params.lr / params.biasCorrection1;
  parameters[i] = decayed - stepSize * mi / (sqrt(vi) / params.biasCorrection2Sqrt + params.eps);
}
