// entropy_forward: entropy[n] = −Σ_v p_v log p_v with p = softmax(logits[n, :] / temperature), the
// entropy of the sampling distribution (a GRPO metric). entropy (N), logits (N, V).
// One thread per row, one online pass keeping max, Σ exp and Σ exp·z.
override WG: u32 = 64;

struct Params {
  N: u32,
  V: u32,
  temperature: f32,
}

@group(0) @binding(0) var<storage, read_write> entropy: array<f32>; // (N)
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;        // (N, V)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = gid.x + gid.y * groups.x * WG;
  if (n >= params.N) { return; }
  let row = n * params.V;
  let invTemperature = 1.0 / params.temperature;
  var maxZ = -3.0e38;
  var sumExp = 0.0;
  var sumExpZ = 0.0; // Σ exp(z − maxZ)·(z − maxZ)
  for (var v = 0u; v < params.V; v++) {
    let z = logits[row + v] * invTemperature;
    if (z > maxZ) {
      let rescale = exp(maxZ - z);
      let shift = maxZ - z;
      // old terms e·(z_old − maxZ) become e·rescale·(z_old − maxZ + shift)
      sumExpZ = rescale * (sumExpZ + shift * sumExp);
      sumExp = sumExp * rescale + 1.0;
      maxZ = z;
    } else {
      let e = exp(z - maxZ);
      sumExp += e;
      sumExpZ += e * (z - maxZ);
    }
  }
  // H = lse − E[z] = log Σ − E[z − maxZ]
  entropy[n] = log(sumExp) - sumExpZ / sumExp;
}
