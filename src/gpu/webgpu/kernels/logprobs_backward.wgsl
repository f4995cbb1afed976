// logprobs_backward: dlogits[n, v] += dlogprobs[n] · (onehot(targets[n])[v] − softmax(logits[n, :]/T)[v]) / T,
// the gradient of logprobs_forward at temperature T. dlogits, logits (N, V), dlogprobs, targets (N).
// One thread per row: an online pass for the log-sum-exp, then one pass writing the row.
override WG: u32 = 64;

struct Params {
  N: u32,
  V: u32,
  temperature: f32,
}

@group(0) @binding(0) var<storage, read_write> dlogits: array<f32>; // (N, V)
@group(0) @binding(1) var<storage, read_write> dlogprobs: array<f32>;     // (N)
@group(0) @binding(2) var<storage, read_write> logits: array<f32>;        // (N, V)
@group(0) @binding(3) var<storage, read_write> targets: array<i32>;       // (N)
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = gid.x + gid.y * groups.x * WG;
  if (n >= params.N) { return; }
  let g = dlogprobs[n];
  if (g == 0.0) { return; }
  let row = n * params.V;
  let invTemperature = 1.0 / params.temperature;
  var maxZ = -3.0e38;
  var sumExp = 0.0;
  for (var v = 0u; v < params.V; v++) {
    let z = logits[row + v] * invTemperature;
    if (z > maxZ) {
      sumExp = sumExp * exp(maxZ - z) + 1.0;
      maxZ = z;
    } else {
      sumExp += exp(z - maxZ);
    }
  }
  let lse = maxZ + log(sumExp);
  let targetIndex = u32(targets[n]);
  let scale = g * invTemperature;
  for (var v = 0u; v < params.V; v++) {
    let p = exp(logits[row + v] * invTemperature - lse);
    dlogits[row + v] += scale * (select(0.0, 1.0, v == targetIndex) - p);
  }
}
