// embedding_forward: out[n, c] = wte[ids[n], c], the token embedding lookup.
// out (N, C), ids (N), wte (rows, C): the table's rows [firstRow, firstRow + rows). One thread per output element.
override WG: u32 = 64;

struct Params {
  N: u32,
  C: u32,
  firstRow: u32, // the table binding holds rows [firstRow, firstRow + rows) (a row chunk of a larger table)
  rows: u32,     // tokens outside them are left as they are: another chunk's dispatch writes them
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>; // (N, C)
@group(0) @binding(1) var<storage, read_write> ids: array<i32>;       // (N)
@group(0) @binding(2) var<storage, read_write> wte: array<f32>;       // (V, C)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N * params.C) { return; }
  let n = i / params.C;
  let c = i % params.C;
  let row = u32(ids[n]) - params.firstRow; // wraps past rows for ids below firstRow
  if (row >= params.rows) { return; }
  out[i] = wte[row * params.C + c];
}
