// logprobs_backward_in_place: one chunk of rows of the LM head's loss, Liger's fused-linear-cross-
// entropy step: reads each logits row, writes its log-prob of the target and the entropy of
// softmax(logits/T), then overwrites the row with its gradient
//   dlogits[n, v] = dlogprobs[n] · (onehot(targets[n])[v] − softmax(logits[n, :]/T)[v]) / T,
// so a chunk of (N, V) logits needs no second (N, V) buffer for their gradient. A row whose
// dlogprobs is 0 becomes zeros.
// logits (N, V) in, dlogits out (in place); logprobs, entropy, dlogprobs, targets (N).
// One thread per row: an online pass for the log-sum-exp and Σ p·z, then one pass writing the row.
override WG: u32 = 64;

struct Params {
  N: u32,
  V: u32,
  temperature: f32,
}

@group(0) @binding(0) var<storage, read_write> logits: array<f32>;    // (N, V), becomes dlogits
@group(0) @binding(1) var<storage, read_write> logprobs: array<f32>;  // (N)
@group(0) @binding(2) var<storage, read_write> entropy: array<f32>;   // (N)
@group(0) @binding(3) var<storage, read_write> dlogprobs: array<f32>; // (N)
@group(0) @binding(4) var<storage, read_write> targets: array<i32>;   // (N)
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = gid.x + gid.y * groups.x * WG;
  if (n >= params.N) { return; }
  let row = n * params.V;
  let invTemperature = 1.0 / params.temperature;
  // online: sumExp = Σ exp(z − maxZ), sumExpZ = Σ exp(z − maxZ)·z
  var maxZ = -3.0e38;
  var sumExp = 0.0;
  var sumExpZ = 0.0;
  for (var v = 0u; v < params.V; v++) {
    let z = logits[row + v] * invTemperature;
    if (z > maxZ) {
      let rescale = exp(maxZ - z);
      sumExp = sumExp * rescale + 1.0;
      sumExpZ = sumExpZ * rescale + z;
      maxZ = z;
    } else {
      let e = exp(z - maxZ);
      sumExp += e;
      sumExpZ += e * z;
    }
  }
  let lse = maxZ + log(sumExp);
  let targetIndex = u32(targets[n]);
  logprobs[n] = logits[row + targetIndex] * invTemperature - lse;
  entropy[n] = lse - sumExpZ / sumExp;
  let scale = dlogprobs[n] * invTemperature;
  if (scale == 0.0) {
    for (var v = 0u; v < params.V; v++) { logits[row + v] = 0.0; }
    return;
  }
  for (var v = 0u; v < params.V; v++) {
    let p = exp(logits[row + v] * invTemperature - lse);
    logits[row + v] = scale * (select(0.0, 1.0, v == targetIndex) - p);
  }
}
