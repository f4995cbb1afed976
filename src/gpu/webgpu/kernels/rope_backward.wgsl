// rope_backward: dinp += the inverse rotation of dout, the gradient of rope_forward (same angles).
// dinp, dout (B, T, NH, HS), positions (B*T), table (tableRows, HS/2) of cos and sin as in rope_forward.
// One thread per rotated pair (b, t, h, i < HS/2).
override WG: u32 = 64;

struct Params {
  BT: u32,
  NH: u32,
  HS: u32,
  theta: f32,
  tableRows: u32,
}

@group(0) @binding(0) var<storage, read_write> dinp: array<f32>; // (B, T, NH, HS)
@group(0) @binding(1) var<storage, read_write> dout: array<f32>;       // (B, T, NH, HS)
@group(0) @binding(2) var<storage, read_write> positions: array<i32>;  // (B*T)
@group(0) @binding(3) var<storage, read_write> table: array<vec2<f32>>; // (tableRows, HS/2) cos, sin
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG;
  let half = params.HS / 2u;
  if (index >= params.BT * params.NH * half) { return; }
  let i = index % half;
  let head = index / half;
  let bt = head / params.NH;
  let position = u32(positions[bt]);
  var rotation: vec2<f32>;
  if (position < params.tableRows) {
    rotation = table[position * half + i];
  } else {
    let angle = f32(position) * pow(params.theta, -2.0 * f32(i) / f32(params.HS));
    rotation = vec2<f32>(cos(angle), sin(angle));
  }
  let cosine = rotation.x;
  let sine = rotation.y;
  let base = head * params.HS;
  let g1 = dout[base + i];
  let g2 = dout[base + i + half];
  dinp[base + i] += g1 * cosine + g2 * sine;
  dinp[base + i + half] += g2 * cosine - g1 * sine;
}
