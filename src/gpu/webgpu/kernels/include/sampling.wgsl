// sampling.wgsl: the draw of one token from a row of logits, shared by sample_tokens.wgsl and
// decode_steps.wgsl through `// #include "sampling.wgsl"` (resolved when kernels.generated.ts is
// written; see src/gpu/webgpu/wgsl-include.ts). Temperature, top-k and top-p (Hugging Face order:
// temperature, top-k, top-p over the renormalised top-k) or greedy (temperature 0: the largest
// logit, lowest id on a tie); ids ≥ drawable are never drawn. Returns (id as bits,
// log_softmax(logits/T)[id] over the WHOLE row (T = 1 when greedy), entropy of softmax(logits/T) over
// the whole row, kept mass): the definitions of src/gpu/inference/sampler.ts. The draw is an inverse
// CDF over the kept ids in id order at the point = uniform · (kept mass), the uniform coming from the
// caller's seeded generator, so a seed reproduces tokens on one adapter. Truncation finds a threshold
// on the logits' order keys by bisection (32 passes of counts for top-k, 32 of masses for top-p); ids
// at the threshold are kept lowest id first. Thread t of the WG owns the contiguous ids
// [t·chunk, (t + 1)·chunk), so prefix sums over threads follow id order.
// The including kernel declares `override WG: u32` (a power of two) and
// `fn logitAt(i: u32) -> f32` (where its logits are); this file declares the Draw struct, NONE,
// LOWEST and the workgroup arrays of its reductions.

struct Draw {
  row: u32,         // logits row to draw from (sample_tokens; unused by decode_steps)
  temperature: f32, // 0 = greedy
  topK: u32,        // 0 = off
  topP: f32,        // 1 = off
  drawable: u32,    // ids below this may be drawn
  uniform: f32,     // in [0, 1) (sample_tokens; decode_steps takes one per step)
  pad0: u32,
  pad1: u32,
}

const NONE: u32 = 0xffffffffu;
const LOWEST: f32 = -3.0e38;

var<workgroup> chosen: u32;
var<workgroup> sharedF: array<f32, WG>;
var<workgroup> sharedU: array<u32, WG>;
var<workgroup> sharedV: array<vec4<f32>, WG>;

// Returns a key whose unsigned order is the float order of x (negative floats flipped, positive ones above them).
fn orderKey(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// Returns the float whose orderKey is k.
fn fromKey(k: u32) -> f32 {
  return bitcast<f32>(select(~k, k ^ 0x80000000u, (k & 0x80000000u) != 0u));
}

fn reduceSum4(value: vec4<f32>, t: u32) -> vec4<f32> {
  sharedV[t] = value;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (t < stride) { sharedV[t] += sharedV[t + stride]; }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&sharedV[0]);
}

fn reduceMax(value: f32, t: u32) -> f32 {
  sharedF[t] = value;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (t < stride) { sharedF[t] = max(sharedF[t], sharedF[t + stride]); }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&sharedF[0]);
}

// The largest value and, among equal values, the lowest id (id NONE = no value).
fn reduceArgmax(value: f32, id: u32, t: u32) -> u32 {
  sharedF[t] = value;
  sharedU[t] = id;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (t < stride) {
      let otherId = sharedU[t + stride];
      let otherValue = sharedF[t + stride];
      let mine = sharedU[t];
      if (otherId != NONE && (mine == NONE || otherValue > sharedF[t] || (otherValue == sharedF[t] && otherId < mine))) {
        sharedF[t] = otherValue;
        sharedU[t] = otherId;
      }
    }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&sharedU[0]);
}

// Inclusive prefix sums over the threads, left in sharedF.
fn scanSum(value: f32, t: u32) {
  sharedF[t] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset * 2u) {
    var sum = sharedF[t];
    if (t >= offset) { sum += sharedF[t - offset]; }
    workgroupBarrier();
    sharedF[t] = sum;
    workgroupBarrier();
  }
}

// Inclusive prefix counts over the threads, left in sharedU.
fn scanCount(value: u32, t: u32) {
  sharedU[t] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset * 2u) {
    var sum = sharedU[t];
    if (t >= offset) { sum += sharedU[t - offset]; }
    workgroupBarrier();
    sharedU[t] = sum;
    workgroupBarrier();
  }
}

// Draws one token from the V logits logitAt(base ..) with the draw's settings and the uniform u01
// (every thread of the workgroup calls it with the same arguments); returns (id bits, log-prob,
// entropy, kept mass) as the file comment says.
fn sampleRow(base: u32, V: u32, dr: Draw, u01: f32, t: u32) -> vec4<f32> {
  workgroupBarrier(); // every thread is done with the previous draw's `chosen`
  if (t == 0u) { chosen = NONE; }
  let greedy = dr.temperature == 0.0;
  let invT = select(1.0 / dr.temperature, 1.0, greedy);
  let drawable = min(dr.drawable, V);
  let chunk = (V + WG - 1u) / WG;
  let lo = min(t * chunk, V);
  let hi = min(lo + chunk, V);

  var localMax = LOWEST;
  var bestValue = LOWEST;
  var bestId = NONE;
  for (var v = lo; v < hi; v++) {
    let x = logitAt(base + v);
    localMax = max(localMax, x * invT);
    if (v < drawable && (bestId == NONE || x > bestValue)) {
      bestValue = x;
      bestId = v;
    }
  }
  let zMax = reduceMax(localMax, t);
  var argmaxId = 0u;
  if (greedy) { argmaxId = reduceArgmax(bestValue, bestId, t); }

  var localSum = 0.0;
  var localSumZ = 0.0;
  var localDrawable = 0.0;
  for (var v = lo; v < hi; v++) {
    let y = logitAt(base + v) * invT - zMax;
    let w = exp(y);
    localSum += w;
    localSumZ += w * y;
    if (v < drawable) { localDrawable += w; }
  }
  let sums = reduceSum4(vec4<f32>(localSum, localSumZ, localDrawable, 0.0), t);
  let total = sums.x;
  let totalZ = sums.y;
  let drawableMass = sums.z;
  let logTotal = log(total);
  let entropy = logTotal - totalZ / total;
  let logZ = zMax + logTotal;

  if (greedy) {
    return vec4<f32>(bitcast<f32>(argmaxId), logitAt(base + argmaxId) - logZ, entropy, 1.0);
  }

  let useK = dr.topK > 0u && dr.topK < drawable;
  let useP = dr.topP < 1.0;
  var tau = 0u;
  var keepEq = NONE;
  var keptMass = drawableMass;
  if (useK) {
    var found = 0u;
    var exact = false;
    for (var shift = 32u; shift > 0u; shift -= 2u) {
      let c1 = found | (1u << (shift - 2u));
      let c2 = found | (2u << (shift - 2u));
      let c3 = found | (3u << (shift - 2u));
      var counts = vec4<f32>(0.0);
      for (var v = lo; v < min(hi, drawable); v++) {
        let key = orderKey(logitAt(base + v));
        counts += vec4<f32>(select(0.0, 1.0, key >= c1), select(0.0, 1.0, key >= c2), select(0.0, 1.0, key >= c3), 0.0);
      }
      let totals = reduceSum4(counts, t);
      let k = f32(dr.topK);
      var foundCount = 0.0;
      if (totals.z >= k) { found = c3; foundCount = totals.z; } else if (totals.y >= k) { found = c2; foundCount = totals.y; } else if (totals.x >= k) { found = c1; foundCount = totals.x; }
      if (foundCount == k) {
        exact = true;
        break;
      }
    }
    if (exact) { found = found - 1u; }
    var above = 0u;
    var aboveMass = 0.0;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logitAt(base + v);
      if (orderKey(x) > found) {
        above++;
        aboveMass += exp(x * invT - zMax);
      }
    }
    let aboveTotals = reduceSum4(vec4<f32>(f32(above), aboveMass, 0.0, 0.0), t);
    let aboveCount = u32(aboveTotals.x);
    tau = found;
    keepEq = dr.topK - aboveCount;
    keptMass = aboveTotals.y + f32(keepEq) * exp(fromKey(found) * invT - zMax);
  }
  if (useP) {
    let goal = dr.topP * keptMass;
    var found = 0u;
    for (var shift = 32u; shift > 0u; shift -= 2u) {
      let c1 = found | (1u << (shift - 2u));
      let c2 = found | (2u << (shift - 2u));
      let c3 = found | (3u << (shift - 2u));
      var masses = vec4<f32>(0.0);
      for (var v = lo; v < min(hi, drawable); v++) {
        let x = logitAt(base + v);
        let key = orderKey(x);
        if (key >= c1) {
          let w = exp(x * invT - zMax);
          masses += vec4<f32>(w, select(0.0, w, key >= c2), select(0.0, w, key >= c3), 0.0);
        }
      }
      let totals = reduceSum4(masses, t);
      let reaches = vec3<bool>(totals.x >= goal, totals.y >= goal, totals.z >= goal) | (vec3<bool>(useK) & (vec3<u32>(c1, c2, c3) <= vec3<u32>(tau)));
      if (reaches.z) { found = c3; } else if (reaches.y) { found = c2; } else if (reaches.x) { found = c1; }
    }
    var above = 0.0;
    var equal = 0u;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logitAt(base + v);
      let key = orderKey(x);
      if (key > found) { above += exp(x * invT - zMax); }
      if (key == found) { equal++; }
    }
    let totals = reduceSum4(vec4<f32>(above, f32(equal), 0.0, 0.0), t);
    let massAbove = totals.x;
    var equalCount = u32(totals.y);
    if (useK && found == tau) { equalCount = min(equalCount, keepEq); }
    let atThreshold = exp(fromKey(found) * invT - zMax);
    let needed = ceil((goal - massAbove) / atThreshold);
    tau = found;
    keepEq = u32(clamp(needed, 1.0, f32(max(equalCount, 1u))));
  }
  let truncated = useK || useP;

  var equalHere = 0u;
  if (truncated) {
    for (var v = lo; v < min(hi, drawable); v++) {
      if (orderKey(logitAt(base + v)) == tau) { equalHere++; }
    }
  }
  var rankStart = 0u;
  if (truncated) {
    scanCount(equalHere, t);
    rankStart = sharedU[t] - equalHere;
  }
  // Untruncated, every drawable id is kept: the chunk's mass is localDrawable (the same terms summed
  // in the same order), so the pass over the logits is only needed with top-k or top-p.
  var chunkMass = localDrawable;
  var lastKept = select(NONE, min(hi, drawable) - 1u, lo < min(hi, drawable));
  if (truncated) {
    var rank = rankStart;
    chunkMass = 0.0;
    lastKept = NONE;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logitAt(base + v);
      let key = orderKey(x);
      var kept = key > tau;
      if (key == tau) {
        kept = rank < keepEq;
        rank++;
      }
      if (kept) {
        chunkMass += exp(x * invT - zMax);
        lastKept = v;
      }
    }
  }
  scanSum(chunkMass, t);
  let after = sharedF[t];
  var before = 0.0;
  if (t > 0u) { before = sharedF[t - 1u]; }
  let keptTotal = workgroupUniformLoad(&sharedF[WG - 1u]);
  let pickAt = u01 * keptTotal;
  if (chunkMass > 0.0 && pickAt >= before && pickAt < after) {
    var cumulative = before;
    var pick = lastKept;
    var rank = rankStart;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logitAt(base + v);
      let key = orderKey(x);
      var kept = !truncated || key > tau;
      if (truncated && key == tau) {
        kept = rank < keepEq;
        rank++;
      }
      if (kept) {
        cumulative += exp(x * invT - zMax);
        if (pickAt < cumulative) {
          pick = v;
          break;
        }
      }
    }
    chosen = pick;
  }
  let fallback = reduceArgmax(f32(select(0u, lastKept, lastKept != NONE)), lastKept, t);
  let picked = workgroupUniformLoad(&chosen);
  let id = select(picked, fallback, picked == NONE);
  return vec4<f32>(bitcast<f32>(id), logitAt(base + id) * invT - logZ, entropy, keptTotal);
}
