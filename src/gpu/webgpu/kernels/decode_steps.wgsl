// decode_steps: the fused multi-step decoder ("persistent decoder"). ONE dispatch runs up to `steps`
// decode steps of B sequences, one workgroup per SEQS sequences (1, 2 or 4): per step the whole model on
// each sequence's next token (embedding, per layer rmsnorm, q/k/v (+ bias), optional q/k norm, RoPE,
// the key and value stored in the paged KV cache at the token's position, grouped-query attention
// over the sequence's cache, o_proj + residual, rmsnorm, silu(gate)·up, down_proj + residual; then
// the final norm, the LM head) and then the draw of the next token with sample_tokens.wgsl's code
// (include/sampling.wgsl: temperature, top-k, top-p, greedy; the uniform of step s comes from the
// caller's seeded generator), which is fed to the next step. A sequence stops in the kernel when it draws one of its
// stop ids or has made its allowed number of draws (it then writes nothing more).
// The arithmetic is the layered decoder's (same formulas and RoPE table), only the summation order
// of the reductions differs. Matrix-vector products: the input vectors of the workgroup's sequences
// in workgroup memory (vin), each thread four weight rows at a time read as vec4 (product inputs must
// be multiples of 4) and used for every sequence of the workgroup, so each weight is loaded once per
// SEQS sequences (loads, not arithmetic, decide the speed on a software adapter). The per-sequence
// parts (norms, attention, the draw) run one sequence after the other with all the threads.
// Bindings: weights = the backend's whole f32 parameter buffer (offsets in floats from `ints`);
// keys, values (L, pages, PAGE, KVH, HS) the decoder's cache, bound as vec4 arrays (attention reads
// them 4 floats at a time when HS is a multiple of 4, one float otherwise); scratch (B, stride) per-sequence
// activations; ints (u32): per-layer weight offsets, per-sequence state, page tables, stop ids,
// per-sequence cache row of every position (from the page table, once per call, then one per step);
// ints also hold per-sequence Draw words, then (steps, B) uniforms as f32 bits; out (steps, B) vec4 =
// (id bits, log-prob, entropy, kept mass); table (tableRows, HS/2) RoPE cos, sin.
override WG: u32 = 64; // threads per workgroup, a power of two
override SEQS: u32 = 1u; // sequences per workgroup: 1, 2 or 4
const MAX_SEQS: u32 = 4u;
override QK_NORM: bool = false;
override PAGE: u32 = 16u; // tokens per cache page

struct Params {
  B: u32,
  steps: u32,
  L: u32,
  C: u32,
  I: u32,
  NH: u32,
  KVH: u32,
  HS: u32,
  V: u32,
  MP: u32,
  layerFloats: u32, // floats of one layer's keys (pages · PAGE · KVH · HS)
  eps: f32,
  tableRows: u32,
  embed: u32,      // offset (floats) of the embedding in weights
  finalNorm: u32,  // offset of model.norm.weight
  head: u32,       // offset of the LM head (the embedding when tied)
  stride: u32,     // scratch floats per sequence
  maxLen: u32,     // scores per head (the longest sequence)
  stateBase: u32,  // word offset of the sequence states in ints
  tableBase: u32,  // word offset of the page tables in ints
  rowsBase: u32,   // word offset of the (B, maxLen) cache rows of each position
  drawBase: u32,   // word offset of the draws in ints: (B, 8) Draw words, then (steps, B) uniforms
  oLn: u32,
  oQ: u32,
  oK: u32,
  oV: u32,
  oAtt: u32,
  oMlp: u32,
  oInv: u32,
  oScores: u32,
  oLogits: u32,
}

// One sequence's state in ints (8 words).
struct SeqState {
  position: u32,  // where the next token goes (tokens in the cache)
  token: u32,     // the next token to feed
  done: u32,      // 1 = no more steps
  maxDraws: u32,  // draws allowed in this call
  stopStart: u32, // word offset of its stop ids in ints
  stopCount: u32,
  drawn: u32,     // draws made in this call
  pad: u32,
}

const LAYER_WORDS: u32 = 16u; // per layer: inNorm, q, qb, k, kb, v, vb, qNorm, kNorm, o, ob, postNorm, gate, up, down, pad

@group(0) @binding(0) var<storage, read> weights: array<f32>;
@group(0) @binding(1) var<storage, read> weights4: array<vec4<f32>>; // the same buffer, read 4 floats at a time
@group(0) @binding(2) var<storage, read_write> keys: array<vec4<f32>>;   // the cache, read 4 floats at a time when HS % 4 == 0
@group(0) @binding(3) var<storage, read_write> values: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(5) var<storage, read_write> ints: array<u32>;
@group(0) @binding(6) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(8) var<uniform> params: Params;

// The input vectors of the matrix-vector products (a norm's output, the attention output, the MLP's
// hidden row), one per sequence of the workgroup (slot s at s · VIN4); VIN4 · 4 ≥ the longest input (C, NH·HS, I).
override VIN4: u32 = 1;
var<workgroup> vin: array<vec4<f32>, VIN4 * SEQS>;
var<workgroup> states: array<SeqState, MAX_SEQS>; // slots past SEQS or past B are done
var<workgroup> draws: array<Draw, MAX_SEQS>;

// The draw (sampleRow), the Draw struct, NONE, LOWEST and the workgroup reductions (reduceSum4 is
// also the norms' sum): shared with sample_tokens.wgsl.
// #include "sampling.wgsl"

// Where sampleRow reads the logits: this kernel's scratch.
fn logitAt(i: u32) -> f32 {
  return scratch[i];
}

// ---- the model's pieces on one sequence (scratch offsets are absolute) ----

// scratch[dst .. dst+n) = scratch[src ..]·rstd·weights[w ..], rstd = 1/sqrt(mean(x²) + eps).
fn rmsnorm(dst: u32, src: u32, w: u32, n: u32, t: u32) {
  var sumSquares = 0.0;
  for (var c = t; c < n; c += WG) {
    let x = scratch[src + c];
    sumSquares += x * x;
  }
  let total = reduceSum4(vec4<f32>(sumSquares, 0.0, 0.0, 0.0), t).x;
  let s = inverseSqrt(total / f32(n) + params.eps);
  for (var c = t; c < n; c += WG) { scratch[dst + c] = scratch[src + c] * s * weights[w + c]; }
  storageBarrier();
}

// Where slot s of workgroup w keeps its activations in scratch (the plan pads scratch to whole workgroups).
fn slotBase(w: u32, s: u32) -> u32 {
  return (w * SEQS + s) * params.stride;
}

// vin slot `slot` = scratch[src .. src+n) (n a multiple of 4).
fn loadVin(src: u32, n: u32, slot: u32, t: u32) {
  workgroupBarrier(); // every thread is done reading the previous vector
  for (var i = t; i < n / 4u; i += WG) {
    let at = src + 4u * i;
    vin[slot * VIN4 + i] = vec4<f32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
  }
  workgroupBarrier();
}

// Every slot's vin = its scratch[rel .. rel+n), for the products that read them.
fn loadVins(rel: u32, n: u32, w: u32, t: u32) {
  workgroupBarrier();
  for (var s = 0u; s < SEQS; s++) {
    let src = slotBase(w, s) + rel;
    for (var i = t; i < n / 4u; i += WG) {
      let at = src + 4u * i;
      vin[s * VIN4 + i] = vec4<f32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
    }
  }
  workgroupBarrier();
}

// Four rows o..o+3 of W·vin for every slot (column s = slot s; W (OC, IC) at float offset w, a
// multiple of 4; IC a multiple of 4): rows past OC repeat row OC − 1 (the caller does not store
// them). Each weight vec4 is loaded once for the SEQS slots, and every slot sums in the same order
// whatever SEQS is, so a sequence's draws do not depend on the batch it decodes in.
fn rows4(w: u32, o: u32, IC: u32, OC: u32) -> mat4x4<f32> {
  let n4 = IC / 4u;
  let r0 = w / 4u + o * n4;
  let r1 = w / 4u + min(o + 1u, OC - 1u) * n4;
  let r2 = w / 4u + min(o + 2u, OC - 1u) * n4;
  let r3 = w / 4u + min(o + 3u, OC - 1u) * n4;
  var y0 = vec4<f32>(0.0);
  var y1 = vec4<f32>(0.0);
  var y2 = vec4<f32>(0.0);
  var y3 = vec4<f32>(0.0);
  for (var i = 0u; i < n4; i++) {
    let w0 = weights4[r0 + i];
    let w1 = weights4[r1 + i];
    let w2 = weights4[r2 + i];
    let w3 = weights4[r3 + i];
    let x0 = vin[i];
    y0 += vec4<f32>(dot(x0, w0), dot(x0, w1), dot(x0, w2), dot(x0, w3));
    if (SEQS >= 2u) {
      let x1 = vin[VIN4 + i];
      y1 += vec4<f32>(dot(x1, w0), dot(x1, w1), dot(x1, w2), dot(x1, w3));
    }
    if (SEQS == 4u) {
      let x2 = vin[2u * VIN4 + i];
      y2 += vec4<f32>(dot(x2, w0), dot(x2, w1), dot(x2, w2), dot(x2, w3));
      let x3 = vin[3u * VIN4 + i];
      y3 += vec4<f32>(dot(x3, w0), dot(x3, w1), dot(x3, w2), dot(x3, w3));
    }
  }
  return mat4x4<f32>(y0, y1, y2, y3);
}

// For every slot s of workgroup w: scratch[slotBase + rel + o] (+)= (W·vin_s)[o] + bias[o] for o < OC (bias NONE = none); no barrier.
fn matvec(rel: u32, w: u32, bias: u32, IC: u32, OC: u32, accumulate: bool, wg: u32, t: u32) {
  for (var g = t; 4u * g < OC; g += WG) {
    let o = 4u * g;
    let y = rows4(w, o, IC, OC);
    for (var s = 0u; s < SEQS; s++) {
      let dst = slotBase(wg, s) + rel;
      let ys = y[s];
      for (var k = 0u; k < 4u; k++) {
        if (o + k < OC) {
          var value = ys[k];
          if (bias != NONE) { value += weights[bias + o + k]; }
          if (accumulate) { value += scratch[dst + o + k]; }
          scratch[dst + o + k] = value;
        }
      }
    }
  }
}

// One float of the cache at float index i (the bindings are vec4 arrays).
fn setKey(i: u32, x: f32) { keys[i >> 2u][i & 3u] = x; }
fn setValue(i: u32, x: f32) { values[i >> 2u][i & 3u] = x; }
fn keyAt(i: u32) -> f32 { return keys[i >> 2u][i & 3u]; }
fn valueAt(i: u32) -> f32 { return values[i >> 2u][i & 3u]; }

// The cache index of position p (head kvh) of the sequence whose page table starts at pageRow, in layer l.
fn cacheIndex(l: u32, pageRow: u32, p: u32, kvh: u32) -> u32 {
  let page = ints[pageRow + p / PAGE];
  return l * params.layerFloats + ((page * PAGE + p % PAGE) * params.KVH + kvh) * params.HS;
}

fn rotation(position: u32, i: u32) -> vec2<f32> {
  let half = params.HS / 2u;
  if (position < params.tableRows) { return table[position * half + i]; }
  let angle = f32(position) * pow(bitcast<f32>(ints[0]), -2.0 * f32(i) / f32(params.HS)); // ints[0]: theta bits
  return vec2<f32>(cos(angle), sin(angle));
}

// The attention of one sequence (its residual row at scratch[base ..], its q, k, v computed) at
// position pos in layer l: q/k norm, RoPE, the key and value into the cache, attention into att.
fn attention(l: u32, base: u32, pos: u32, pageRow: u32, rowsAt: u32, t: u32) {
  let NH = params.NH;
  let KVH = params.KVH;
  let HS = params.HS;
  let QD = NH * HS;
  let lw = 16u + l * LAYER_WORDS; // ints[0..16) hold globals
  let qAt = base + params.oQ;
  let kAt = base + params.oK;
  let vAt = base + params.oV;
  let att = base + params.oAtt;
  if (QK_NORM) {
    // per head rmsnorm over HS (q heads then k heads), in place
    let qN = ints[lw + 7u];
    let kN = ints[lw + 8u];
    for (var h = t; h < NH + KVH; h += WG) {
      var at = qAt + h * HS;
      var w = qN;
      if (h >= NH) {
        at = kAt + (h - NH) * HS;
        w = kN;
      }
      var sumSquares = 0.0;
      for (var i = 0u; i < HS; i++) {
        let x = scratch[at + i];
        sumSquares += x * x;
      }
      let s = inverseSqrt(sumSquares / f32(HS) + params.eps);
      for (var i = 0u; i < HS; i++) { scratch[at + i] = scratch[at + i] * s * weights[w + i]; }
    }
    storageBarrier();
  }
  // RoPE of q in place; keys rotated on their way into the cache with the values.
  let half = HS / 2u;
  for (var j = t; j < (NH + KVH) * half; j += WG) {
    let head = j / half;
    let i = j % half;
    let r = rotation(pos, i);
    if (head < NH) {
      let at = qAt + head * HS;
      let x1 = scratch[at + i];
      let x2 = scratch[at + i + half];
      scratch[at + i] = x1 * r.x - x2 * r.y;
      scratch[at + i + half] = x2 * r.x + x1 * r.y;
    } else {
      let kvh = head - NH;
      let at = kAt + kvh * HS;
      let x1 = scratch[at + i];
      let x2 = scratch[at + i + half];
      let dst = cacheIndex(l, pageRow, pos, kvh);
      setKey(dst + i, x1 * r.x - x2 * r.y);
      setKey(dst + i + half, x2 * r.x + x1 * r.y);
      setValue(dst + i, scratch[vAt + kvh * HS + i]);
      setValue(dst + i + half, scratch[vAt + kvh * HS + i + half]);
    }
  }
  storageBarrier();
  // Attention over positions 0..pos: scores per (head, position), softmax per head, weighted values per (head, dim).
  let n = pos + 1u;
  let scale = inverseSqrt(f32(HS));
  let group = NH / KVH;
  let scores = base + params.oScores;
  let layerAt = l * params.layerFloats;
  // With HS a multiple of 4 (every cache row then starts on a vec4) q goes to vin and the cache is
  // read as vec4: a quarter of the loads, which decide the speed on a software adapter.
  let vectorHeads = HS % 4u == 0u;
  let HS4 = HS / 4u;
  if (vectorHeads) { loadVin(qAt, QD, 0u, t); }
  for (var j = t; j < NH * n; j += WG) {
    let h = j / n;
    let p = j % n;
    let kBase = layerAt + ints[rowsAt + p] + (h / group) * HS;
    var score = 0.0;
    if (vectorHeads) {
      let k4 = kBase / 4u;
      let q4 = h * HS4;
      var acc = vec4<f32>(0.0);
      for (var i = 0u; i < HS4; i++) { acc += vin[q4 + i] * keys[k4 + i]; }
      score = acc.x + acc.y + acc.z + acc.w;
    } else {
      let qBase = qAt + h * HS;
      for (var i = 0u; i < HS; i++) { score += scratch[qBase + i] * keyAt(kBase + i); }
    }
    scratch[scores + h * params.maxLen + p] = score * scale;
  }
  storageBarrier();
  for (var h = t; h < NH; h += WG) {
    let row = scores + h * params.maxLen;
    var maxScore = LOWEST;
    for (var p = 0u; p < n; p++) { maxScore = max(maxScore, scratch[row + p]); }
    var sumExp = 0.0;
    for (var p = 0u; p < n; p++) {
      let e = exp(scratch[row + p] - maxScore);
      scratch[row + p] = e;
      sumExp += e;
    }
    scratch[base + params.oInv + h] = 1.0 / sumExp;
  }
  storageBarrier();
  if (vectorHeads) {
    for (var j = t; j < NH * HS4; j += WG) {
      let h = j / HS4;
      let i4 = j % HS4;
      let row = scores + h * params.maxLen;
      let offset = (layerAt + (h / group) * HS) / 4u + i4;
      var acc = vec4<f32>(0.0);
      for (var p = 0u; p < n; p++) { acc += scratch[row + p] * values[ints[rowsAt + p] / 4u + offset]; }
      let y = acc * scratch[base + params.oInv + h];
      let at = att + h * HS + 4u * i4;
      scratch[at] = y.x;
      scratch[at + 1u] = y.y;
      scratch[at + 2u] = y.z;
      scratch[at + 3u] = y.w;
    }
  } else {
    for (var j = t; j < QD; j += WG) {
      let h = j / HS;
      let i = j % HS;
      let kvh = h / group;
      let row = scores + h * params.maxLen;
      var acc = 0.0;
      let offset = layerAt + kvh * HS + i;
      for (var p = 0u; p < n; p++) { acc += scratch[row + p] * valueAt(ints[rowsAt + p] + offset); }
      scratch[att + j] = acc * scratch[base + params.oInv + h];
    }
  }
  storageBarrier();
}

// One transformer layer on the residual rows x of workgroup w's slots (the live ones at their
// positions; a finished slot's row is computed on and never read).
fn layer(l: u32, w: u32, sts: array<SeqState, MAX_SEQS>, t: u32) {
  let C = params.C;
  let QD = params.NH * params.HS;
  let KVD = params.KVH * params.HS;
  let I = params.I;
  let lw = 16u + l * LAYER_WORDS; // ints[0..16) hold globals

  // attention block
  for (var s = 0u; s < SEQS; s++) {
    let base = slotBase(w, s);
    rmsnorm(base + params.oLn, base, ints[lw], C, t);
  }
  loadVins(params.oLn, C, w, t);
  matvec(params.oQ, ints[lw + 1u], ints[lw + 2u], C, QD, false, w, t);
  matvec(params.oK, ints[lw + 3u], ints[lw + 4u], C, KVD, false, w, t);
  matvec(params.oV, ints[lw + 5u], ints[lw + 6u], C, KVD, false, w, t);
  storageBarrier();
  for (var s = 0u; s < SEQS; s++) {
    let st = sts[s];
    if (st.done == 0u) {
      let b = w * SEQS + s;
      attention(l, slotBase(w, s), st.position, params.tableBase + b * params.MP, params.rowsBase + b * params.maxLen, t);
    }
  }
  loadVins(params.oAtt, QD, w, t);
  matvec(0u, ints[lw + 9u], ints[lw + 10u], QD, C, true, w, t); // x += att·Woᵀ
  storageBarrier();

  // MLP block
  for (var s = 0u; s < SEQS; s++) {
    let base = slotBase(w, s);
    rmsnorm(base + params.oLn, base, ints[lw + 11u], C, t);
  }
  let gW = ints[lw + 12u];
  let uW = ints[lw + 13u];
  let dW = ints[lw + 14u];
  loadVins(params.oLn, C, w, t);
  for (var g4 = t; 4u * g4 < I; g4 += WG) {
    let o = 4u * g4;
    let g = rows4(gW, o, C, I);
    let u = rows4(uW, o, C, I);
    for (var s = 0u; s < SEQS; s++) {
      let y = g[s] / (vec4<f32>(1.0) + exp(-g[s])) * u[s];
      let mlp = slotBase(w, s) + params.oMlp;
      for (var k = 0u; k < 4u; k++) {
        if (o + k < I) { scratch[mlp + o + k] = y[k]; }
      }
    }
  }
  storageBarrier();
  loadVins(params.oMlp, I, w, t);
  matvec(0u, dW, NONE, I, C, true, w, t); // x += swiglu·Wdownᵀ
  storageBarrier();
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let w = wid.x;
  if (w * SEQS >= params.B) { return; }
  let C = params.C;
  if (t == 0u) {
    for (var s = 0u; s < MAX_SEQS; s++) {
      let b = w * SEQS + s;
      var dr = Draw(0u, 0.0, 0u, 1.0, 0u, 0.0, 0u, 0u);
      if (s < SEQS && b < params.B) {
        let at = params.drawBase + b * 8u;
        dr = Draw(ints[at], bitcast<f32>(ints[at + 1u]), ints[at + 2u], bitcast<f32>(ints[at + 3u]), ints[at + 4u], 0.0, 0u, 0u);
      }
      draws[s] = dr;
    }
  }
  let drs = workgroupUniformLoad(&draws);
  for (var step = 0u; step < params.steps; step++) {
    if (t == 0u) {
      for (var s = 0u; s < MAX_SEQS; s++) {
        let b = w * SEQS + s;
        var st = SeqState(0u, 0u, 1u, 0u, 0u, 0u, 0u, 0u);
        if (s < SEQS && b < params.B) {
          let at = params.stateBase + b * 8u;
          st = SeqState(ints[at], ints[at + 1u], ints[at + 2u], ints[at + 3u], ints[at + 4u], ints[at + 5u], ints[at + 6u], 0u);
        }
        states[s] = st;
      }
    }
    let sts = workgroupUniformLoad(&states);
    var going = false;
    for (var s = 0u; s < SEQS; s++) { going = going || sts[s].done == 0u; }
    if (!going) { break; }

    // embedding of the fed token; the cache rows (within a layer) of positions 0..pos, all at the
    // first step, then the new one. A finished slot's row is zeroed: its products stay finite.
    for (var s = 0u; s < SEQS; s++) {
      let st = sts[s];
      let b = w * SEQS + s;
      let base = slotBase(w, s);
      if (st.done != 0u) {
        for (var c = t; c < C; c += WG) { scratch[base + c] = 0.0; }
        continue;
      }
      let pos = st.position;
      let pageRow = params.tableBase + b * params.MP;
      let rowsAt = params.rowsBase + b * params.maxLen;
      for (var c = t; c < C; c += WG) { scratch[base + c] = weights[params.embed + st.token * C + c]; }
      for (var p = select(pos, t, step == 0u); p <= pos; p += WG) {
        ints[rowsAt + p] = (ints[pageRow + p / PAGE] * PAGE + p % PAGE) * params.KVH * params.HS;
      }
    }
    storageBarrier();
    for (var l = 0u; l < params.L; l++) { layer(l, w, sts, t); }

    // final norm and LM head
    for (var s = 0u; s < SEQS; s++) {
      let base = slotBase(w, s);
      rmsnorm(base + params.oLn, base, params.finalNorm, C, t);
    }
    loadVins(params.oLn, C, w, t);
    matvec(params.oLogits, params.head, NONE, C, params.V, false, w, t);
    storageBarrier();

    for (var s = 0u; s < SEQS; s++) {
      let st = sts[s];
      if (st.done != 0u) { continue; }
      let b = w * SEQS + s;
      let u01 = bitcast<f32>(ints[params.drawBase + params.B * 8u + step * params.B + b]);
      let result = sampleRow(slotBase(w, s) + params.oLogits, params.V, drs[s], u01, t);
      if (t == 0u) {
        out[step * params.B + b] = result;
        let id = bitcast<u32>(result.x);
        var stop = st.drawn + 1u >= st.maxDraws;
        for (var i = 0u; i < st.stopCount; i++) {
          if (ints[st.stopStart + i] == id) { stop = true; }
        }
        let stateAt = params.stateBase + b * 8u;
        ints[stateAt] = st.position + 1u;
        ints[stateAt + 1u] = id;
        ints[stateAt + 2u] = select(0u, 1u, stop);
        ints[stateAt + 6u] = st.drawn + 1u;
      }
    }
    storageBarrier();
  }
}
