/**
 * mulberry32, a small seeded generator shared by the scripts that write the repository's made-up
 * data (scripts/make-harbour-docs.mjs, scripts/make-parcel-traces.mjs), so their files are the same
 * on every run.
 */

/** A function returning the next number in [0, 1) of the sequence that `seed` starts. */
export function seededRandom(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
