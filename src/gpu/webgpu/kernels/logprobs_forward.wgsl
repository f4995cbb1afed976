// logprobs_forward: logprobs[n] = log_softmax(logits[n, :] / temperature)[targets[n]], the
// log-probability of each target token under the sampling distribution.
// logprobs (N), logits (N, V), targets (N). One thread per row, one online pass for the log-sum-exp.
override WG: u32 = 64;

struct Params {
  N: u32,
  V: u32,
  temperature: f32,
}

@group(0) @binding(0) var<storage, read_write> logprobs: array<f32>; // (N)
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;         // (N, V)
@group(0) @binding(2) var<storage, read_write> targets: array<i32>;        // (N)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = gid.x + gid.y * groups.x * WG;
  if (n >= params.N) { return; }
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
  logprobs[n] = logits[row + u32(targets[n])] * invTemperature - (maxZ + log(sumExp));
}
