// matmul_backward_dweight: dweight += alpha · doutᵀ · inp, the weight gradient of matmul_forward.
// dweight (OC, IC), dout (N, OC), inp (N, IC); IC and OC multiples of 4, N free. One thread per
// 4 rows × 4 columns of dweight: for each of the N tokens it reads one vec4 of dout (along OC) and
// one vec4 of inp (along IC) and adds their outer product; no workgroup memory.
override WG_X: u32 = 16;
override WG_Y: u32 = 4;

struct Params {
  N: u32,
  IC: u32,
  OC: u32,
  alpha: f32,
}

@group(0) @binding(0) var<storage, read_write> dweight: array<vec4<f32>>; // (OC, IC/4)
@group(0) @binding(1) var<storage, read_write> dout: array<vec4<f32>>;          // (N, OC/4)
@group(0) @binding(2) var<storage, read_write> inp: array<vec4<f32>>;           // (N, IC/4)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let IC4 = params.IC / 4u;
  let OC4 = params.OC / 4u;
  let col4 = gid.x; // 4 columns of IC
  let row4 = gid.y; // 4 rows of OC
  if (row4 >= OC4 || col4 >= IC4) { return; }
  var c0 = vec4<f32>(0.0);
  var c1 = vec4<f32>(0.0);
  var c2 = vec4<f32>(0.0);
  var c3 = vec4<f32>(0.0);
  for (var n = 0u; n < params.N; n++) {
    let g = dout[n * OC4 + row4];
    let x = inp[n * IC4 + col4];
    c0 += g.x * x;
    c1 += g.y * x;
    c2 += g.z * x;
    c3 += g.w * x;
  }
  let base = 4u * row4 * IC4 + col4;
  dweight[base] += params.alpha * c0;
  dweight[base + IC4] += params.alpha * c1;
  dweight[base + 2u * IC4] += params.alpha * c2;
  dweight[base + 3u * IC4] += params.alpha * c3;
}
