// copy_columns: dst[n, dstColumn + j] = src[n, srcColumn + j] for j < width: a block of columns
// between two row-major matrices of different widths (a vocabulary chunk's logits into, or out of,
// the (rows, V) logits of the LM head).
// src (N, srcWidth), dst (N, dstWidth). One thread per copied value.
override WG: u32 = 64;

struct Params {
  N: u32,
  width: u32,
  srcWidth: u32,
  srcColumn: u32,
  dstWidth: u32,
  dstColumn: u32,
}

@group(0) @binding(0) var<storage, read_write> dst: array<f32>; // (N, dstWidth)
@group(0) @binding(1) var<storage, read_write> src: array<f32>; // (N, srcWidth)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WG;
  if (i >= params.N * params.width) { return; }
  let n = i / params.width;
  let j = i % params.width;
  dst[n * params.dstWidth + params.dstColumn + j] = src[n * params.srcWidth + params.srcColumn + j];
}
