// rope_kv_cache_write: rope_forward of the new rows' keys fused with kv_cache_write (one dispatch
// instead of two per decoder layer): key pair (k[i], k[i + HS/2]) of head kvh of row n is rotated by
// positions[n]·theta^(-2i/HS) exactly as rope_forward does (same table, same f32 arithmetic) and
// stored with the row's values at page pageTable[rowSeq[n], position / PAGE], row position % PAGE.
// keys, values (pages, PAGE, KVH, HS), k (unrotated), v (N, KVH, HS), positions, rowSeq (N),
// pageTable (rows, MP), table (tableRows, HS/2) cos, sin. One thread per (n, kvh, i < HS/2).
override WG: u32 = 64;

struct Params {
  N: u32,
  KVH: u32,
  HS: u32,
  PAGE: u32,
  MP: u32,
  theta: f32,
  tableRows: u32,
}

@group(0) @binding(0) var<storage, read_write> keys: array<f32>;      // (pages, PAGE, KVH, HS)
@group(0) @binding(1) var<storage, read_write> values: array<f32>;    // (pages, PAGE, KVH, HS)
@group(0) @binding(2) var<storage, read_write> k: array<f32>;         // (N, KVH, HS), before rope
@group(0) @binding(3) var<storage, read_write> v: array<f32>;         // (N, KVH, HS)
@group(0) @binding(4) var<storage, read_write> positions: array<i32>; // (N)
@group(0) @binding(5) var<storage, read_write> rowSeq: array<i32>;    // (N)
@group(0) @binding(6) var<storage, read_write> pageTable: array<i32>; // (rows, MP)
@group(0) @binding(7) var<storage, read_write> table: array<vec2<f32>>; // (tableRows, HS/2) cos, sin
@group(0) @binding(8) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG;
  let half = params.HS / 2u;
  if (index >= params.N * params.KVH * half) { return; }
  let i = index % half;
  let head = index / half; // n * KVH + kvh
  let n = head / params.KVH;
  let kvh = head % params.KVH;
  let position = u32(positions[n]);
  var rotation: vec2<f32>;
  if (position < params.tableRows) {
    rotation = table[position * half + i];
  } else {
    let angle = f32(position) * pow(params.theta, -2.0 * f32(i) / f32(params.HS));
    rotation = vec2<f32>(cos(angle), sin(angle));
  }
  let cosine = rotation.x;
  let sine = rotation.y;
  let source = head * params.HS;
  let KVD = params.KVH * params.HS;
  let page = u32(pageTable[u32(rowSeq[n]) * params.MP + position / params.PAGE]);
  let destination = (page * params.PAGE + position % params.PAGE) * KVD + kvh * params.HS;
  let x1 = k[source + i];
  let x2 = k[source + i + half];
  keys[destination + i] = x1 * cosine - x2 * sine;
  keys[destination + i + half] = x2 * cosine + x1 * sine;
  values[destination + i] = v[source + i];
  values[destination + i + half] = v[source + i + half];
}
