// kv_cache_write: stores the new rows' keys and values in a paged KV cache. Row n belongs to the
// sequence whose page table is pageTable[rowSeq[n], :] and sits at token position positions[n]:
// it goes to page pageTable[rowSeq[n], position / PAGE], row position % PAGE of that page.
// keys, values (pages, PAGE, KVD), k, v (N, KVD), positions, rowSeq (N), pageTable (rows, MP).
// One thread per (n, j < KVD).
override WG: u32 = 64;

struct Params {
  N: u32,
  KVD: u32,
  PAGE: u32,
  MP: u32,
}

@group(0) @binding(0) var<storage, read_write> keys: array<f32>;      // (pages, PAGE, KVD)
@group(0) @binding(1) var<storage, read_write> values: array<f32>;    // (pages, PAGE, KVD)
@group(0) @binding(2) var<storage, read_write> k: array<f32>;         // (N, KVD)
@group(0) @binding(3) var<storage, read_write> v: array<f32>;         // (N, KVD)
@group(0) @binding(4) var<storage, read_write> positions: array<i32>; // (N)
@group(0) @binding(5) var<storage, read_write> rowSeq: array<i32>;    // (N)
@group(0) @binding(6) var<storage, read_write> pageTable: array<i32>; // (rows, MP)
@group(0) @binding(7) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG;
  if (index >= params.N * params.KVD) { return; }
  let n = index / params.KVD;
  let j = index % params.KVD;
  let position = u32(positions[n]);
  let page = u32(pageTable[u32(rowSeq[n]) * params.MP + position / params.PAGE]);
  let destination = (page * params.PAGE + position % params.PAGE) * params.KVD + j;
  keys[destination] = k[index];
  values[destination] = v[index];
}
