// attention_decode_forward: causal grouped-query attention of N new rows against a paged KV cache. Row n is
// query position positions[n] of the sequence whose page table is pageTable[rowSeq[n], :]; it attends
// to that sequence's cached keys and values at positions 0..positions[n] (kv_cache_write has stored
// the new rows first). Per row the arithmetic is attention_forward's, in the same order: scores
// q·k/√HS, their max, exp and sum, probabilities e·(1/sum), then Σ_t p_t·v_t over t in order.
// out, q (N, NH, HS), keys, values (pages, PAGE, KVH, HS), positions, rowSeq (N), pageTable (rows, MP).
// One thread per (n, h).
override WG: u32 = 64;

struct Params {
  N: u32,
  NH: u32,
  KVH: u32,
  HS: u32,
  PAGE: u32,
  MP: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;       // (N, NH, HS)
@group(0) @binding(1) var<storage, read_write> q: array<f32>;         // (N, NH, HS)
@group(0) @binding(2) var<storage, read_write> keys: array<f32>;      // (pages, PAGE, KVH, HS)
@group(0) @binding(3) var<storage, read_write> values: array<f32>;    // (pages, PAGE, KVH, HS)
@group(0) @binding(4) var<storage, read_write> positions: array<i32>; // (N)
@group(0) @binding(5) var<storage, read_write> rowSeq: array<i32>;    // (N)
@group(0) @binding(6) var<storage, read_write> pageTable: array<i32>; // (rows, MP)
@group(0) @binding(7) var<uniform> params: Params;

// Returns the offset of cache row t (key or value head kvh) of the sequence whose page table starts at tableBase.
fn cacheBase(tableBase: u32, t: u32, kvh: u32) -> u32 {
  let page = u32(pageTable[tableBase + t / params.PAGE]);
  return ((page * params.PAGE + t % params.PAGE) * params.KVH + kvh) * params.HS;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WG; // n * NH + h
  let NH = params.NH;
  let HS = params.HS;
  if (index >= params.N * NH) { return; }
  let n = index / NH;
  let h = index % NH;
  let kvh = h / (NH / params.KVH);
  let scale = inverseSqrt(f32(HS));
  let qBase = index * HS;
  let last = u32(positions[n]);
  let tableBase = u32(rowSeq[n]) * params.MP;
  // scores and their max, for a stable softmax
  var maxScore = -3.0e38;
  for (var t2 = 0u; t2 <= last; t2++) {
    let kBase = cacheBase(tableBase, t2, kvh);
    var score = 0.0;
    for (var i = 0u; i < HS; i++) { score += q[qBase + i] * keys[kBase + i]; }
    maxScore = max(maxScore, score * scale);
  }
  var sumExp = 0.0;
  for (var t2 = 0u; t2 <= last; t2++) {
    let kBase = cacheBase(tableBase, t2, kvh);
    var score = 0.0;
    for (var i = 0u; i < HS; i++) { score += q[qBase + i] * keys[kBase + i]; }
    sumExp += exp(score * scale - maxScore);
  }
  let inverseSum = 1.0 / sumExp;
  // weighted sum of the values, accumulated in out in the order of t2
  for (var i = 0u; i < HS; i++) { out[qBase + i] = 0.0; }
  for (var t2 = 0u; t2 <= last; t2++) {
    let kBase = cacheBase(tableBase, t2, kvh);
    var score = 0.0;
    for (var i = 0u; i < HS; i++) { score += q[qBase + i] * keys[kBase + i]; }
    let p = exp(score * scale - maxScore) * inverseSum;
    for (var i = 0u; i < HS; i++) { out[qBase + i] += p * values[kBase + i]; }
  }
}
