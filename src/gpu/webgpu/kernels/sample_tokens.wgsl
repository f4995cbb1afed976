// sample_tokens: draws one token per draw d from the logits row draws[d].row with temperature, top-k
// and top-p (Hugging Face order: temperature, top-k, top-p over the renormalised top-k) or greedily
// (temperature 0: the largest logit, lowest id on a tie); ids ≥ drawable are never drawn. Writes
// out[d] = (id as bits, log_softmax(logits/T)[id] over the WHOLE row (T = 1 when greedy), entropy of
// softmax(logits/T) over the whole row, kept mass): the definitions of src/gpu/inference/sampler.ts.
// The draw is an inverse CDF over the kept ids in id order at the point = uniform · (kept mass), the
// uniform coming from the caller's seeded generator, so a seed reproduces tokens on one adapter.
// Truncation finds a threshold on the logits' order keys by bisection (32 passes of counts for
// top-k, 32 of masses for top-p); ids at the threshold are kept lowest id first.
// out (D) vec4, logits (rows, V), draws (D) Draw. One workgroup of WG threads per draw; thread t owns
// the contiguous ids [t·chunk, (t + 1)·chunk), so prefix sums over threads follow id order.
override WG: u32 = 256; // a power of two

struct Params {
  D: u32,
  V: u32,
}

struct Draw {
  row: u32,         // logits row to draw from
  temperature: f32, // 0 = greedy
  topK: u32,        // 0 = off
  topP: f32,        // 1 = off
  drawable: u32,    // ids below this may be drawn
  uniform: f32,     // in [0, 1)
  pad0: u32,
  pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (D)
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;    // (rows, V)
@group(0) @binding(2) var<storage, read_write> draws: array<Draw>;    // (D)
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> draw: Draw;
var<workgroup> chosen: u32;
var<workgroup> sharedF: array<f32, WG>;
var<workgroup> sharedU: array<u32, WG>;
var<workgroup> sharedV: array<vec4<f32>, WG>;

const NONE: u32 = 0xffffffffu;
const LOWEST: f32 = -3.0e38;

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

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let d = wid.x + wid.y * groups.x;
  if (d >= params.D) { return; }
  if (t == 0u) {
    draw = draws[d];
    chosen = NONE;
  }
  let dr = workgroupUniformLoad(&draw);
  let V = params.V;
  let base = dr.row * V;
  let greedy = dr.temperature == 0.0;
  let invT = select(1.0 / dr.temperature, 1.0, greedy);
  let drawable = min(dr.drawable, V);
  let chunk = (V + WG - 1u) / WG;
  let lo = min(t * chunk, V);
  let hi = min(lo + chunk, V);

  // 1. The max of z = logit/T over the row, and the best drawable logit (greedy).
  var localMax = LOWEST;
  var bestValue = LOWEST;
  var bestId = NONE;
  for (var v = lo; v < hi; v++) {
    let x = logits[base + v];
    localMax = max(localMax, x * invT);
    if (v < drawable && (bestId == NONE || x > bestValue)) {
      bestValue = x;
      bestId = v;
    }
  }
  let zMax = reduceMax(localMax, t);
  var argmaxId = 0u;
  if (greedy) { argmaxId = reduceArgmax(bestValue, bestId, t); }

  // 2. Σ w, Σ w·(z − zMax) over the row (w = exp(z − zMax)), and Σ w over the drawable ids.
  var localSum = 0.0;
  var localSumZ = 0.0;
  var localDrawable = 0.0;
  for (var v = lo; v < hi; v++) {
    let y = logits[base + v] * invT - zMax;
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
    if (t == 0u) { out[d] = vec4<f32>(bitcast<f32>(argmaxId), logits[base + argmaxId] - logZ, entropy, 1.0); }
    return;
  }

  // 3. Truncation: keep ids with key > tau, and the first keepEq ids (in id order) with key == tau.
  let useK = dr.topK > 0u && dr.topK < drawable;
  let useP = dr.topP < 1.0;
  var tau = 0u;
  var keepEq = NONE;
  var keptMass = drawableMass;
  if (useK) {
    // The largest key with at least topK drawable ids at or above it (the k-th largest logit's),
    // two bits per pass (three candidates counted at once); stops early once exactly topK ids are at
    // or above it, keeping then every id with key ≥ found (tau = found − 1, no ties to break).
    var found = 0u;
    var exact = false;
    for (var shift = 32u; shift > 0u; shift -= 2u) {
      let c1 = found | (1u << (shift - 2u));
      let c2 = found | (2u << (shift - 2u));
      let c3 = found | (3u << (shift - 2u));
      var counts = vec4<f32>(0.0);
      for (var v = lo; v < min(hi, drawable); v++) {
        let key = orderKey(logits[base + v]);
        counts += vec4<f32>(select(0.0, 1.0, key >= c1), select(0.0, 1.0, key >= c2), select(0.0, 1.0, key >= c3), 0.0);
      }
      let total = reduceSum4(counts, t);
      let k = f32(dr.topK);
      var foundCount = 0.0;
      if (total.z >= k) { found = c3; foundCount = total.z; } else if (total.y >= k) { found = c2; foundCount = total.y; } else if (total.x >= k) { found = c1; foundCount = total.x; }
      if (foundCount == k) {
        exact = true;
        break;
      }
    }
    if (exact) { found = found - 1u; }
    var above = 0u;
    var aboveMass = 0.0;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logits[base + v];
      if (orderKey(x) > found) {
        above++;
        aboveMass += exp(x * invT - zMax);
      }
    }
    let aboveTotals = reduceSum4(vec4<f32>(f32(above), aboveMass, 0.0, 0.0), t);
    let aboveCount = u32(aboveTotals.x);
    let massAbove = aboveTotals.y;
    tau = found;
    keepEq = dr.topK - aboveCount;
    keptMass = massAbove + f32(keepEq) * exp(fromKey(found) * invT - zMax);
  }
  if (useP) {
    // The largest key whose kept mass at or above it reaches topP of the (top-k) mass, two bits per pass.
    let goal = dr.topP * keptMass;
    var found = 0u;
    for (var shift = 32u; shift > 0u; shift -= 2u) {
      let c1 = found | (1u << (shift - 2u));
      let c2 = found | (2u << (shift - 2u));
      let c3 = found | (3u << (shift - 2u));
      var masses = vec4<f32>(0.0);
      for (var v = lo; v < min(hi, drawable); v++) {
        let x = logits[base + v];
        let key = orderKey(x);
        if (key >= c1) {
          let w = exp(x * invT - zMax);
          masses += vec4<f32>(w, select(0.0, w, key >= c2), select(0.0, w, key >= c3), 0.0);
        }
      }
      let total = reduceSum4(masses, t);
      let reaches = vec3<bool>(total.x >= goal, total.y >= goal, total.z >= goal) | (vec3<bool>(useK) & (vec3<u32>(c1, c2, c3) <= vec3<u32>(tau)));
      if (reaches.z) { found = c3; } else if (reaches.y) { found = c2; } else if (reaches.x) { found = c1; }
    }
    var above = 0.0;
    var equal = 0u;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logits[base + v];
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

  // 4. The draw: inverse CDF over the kept ids in id order.
  var equalHere = 0u;
  if (truncated) {
    for (var v = lo; v < min(hi, drawable); v++) {
      if (orderKey(logits[base + v]) == tau) { equalHere++; }
    }
  }
  var rankStart = 0u; // ids with key == tau before this thread's chunk
  if (truncated) {
    scanCount(equalHere, t);
    rankStart = sharedU[t] - equalHere;
  }
  var rank = rankStart;
  var chunkMass = 0.0;
  var lastKept = NONE;
  for (var v = lo; v < min(hi, drawable); v++) {
    let x = logits[base + v];
    let key = orderKey(x);
    var kept = !truncated || key > tau;
    if (truncated && key == tau) {
      kept = rank < keepEq;
      rank++;
    }
    if (kept) {
      chunkMass += exp(x * invT - zMax);
      lastKept = v;
    }
  }
  scanSum(chunkMass, t);
  let after = sharedF[t];
  var before = 0.0;
  if (t > 0u) { before = sharedF[t - 1u]; }
  let keptTotal = workgroupUniformLoad(&sharedF[WG - 1u]);
  let pickAt = dr.uniform * keptTotal;
  if (chunkMass > 0.0 && pickAt >= before && pickAt < after) {
    var cumulative = before;
    var pick = lastKept;
    rank = rankStart;
    for (var v = lo; v < min(hi, drawable); v++) {
      let x = logits[base + v];
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
  // Rounding can leave the point at or past the last prefix sum: then the last kept id.
  let fallback = reduceArgmax(f32(select(0u, lastKept, lastKept != NONE)), lastKept, t);
  let picked = workgroupUniformLoad(&chosen);
  if (t == 0u) {
    let id = select(picked, fallback, picked == NONE);
    out[d] = vec4<f32>(bitcast<f32>(id), logits[base + id] * invT - logZ, entropy, keptTotal);
  }
}
