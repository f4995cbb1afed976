/**
 * The one closeness helper of the engine tests and seeded random inputs.
 * Free of Node APIs so that browser tests can import it too; it throws a plain Error, which any
 * test runner reports as a failure.
 */
import { seededUniform } from '../../src/gpu/model/init.ts';

/** The engine's own deterministic uniform generator in [0, 1) (mulberry32), for seeded test inputs. */
export { seededUniform };

/** Tolerances of expectClose: element i passes when |actual − expected| ≤ atol + rtol·|expected|. */
export interface CloseOptions {
  atol?: number;
  rtol?: number;
  label?: string;
}

/** Throws unless actual and expected have the same length and agree elementwise within atol + rtol·|expected| (NaN never agrees). */
export function expectClose(
  actual: ArrayLike<number> | number,
  expected: ArrayLike<number> | number,
  { atol = 1e-5, rtol = 1e-5, label = 'values' }: CloseOptions = {},
): void {
  const a = typeof actual === 'number' ? [actual] : actual;
  const e = typeof expected === 'number' ? [expected] : expected;
  if (a.length !== e.length) throw new Error(`${label}: length ${a.length} ≠ expected length ${e.length}`);
  let maxAbsDiff = 0;
  let maxAbsDiffIndex = -1;
  let badCount = 0;
  const badIndices: number[] = [];
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = e[i]!;
    const diff = Math.abs(x - y);
    const ok = x === y || diff <= atol + rtol * Math.abs(y); // a NaN diff fails unless both are the same infinity
    const comparableDiff = ok ? (Number.isNaN(diff) ? 0 : diff) : Number.isNaN(diff) ? Infinity : diff;
    if (comparableDiff > maxAbsDiff) {
      maxAbsDiff = comparableDiff;
      maxAbsDiffIndex = i;
    }
    if (!ok) {
      badCount++;
      if (badIndices.length < 5) badIndices.push(i);
    }
  }
  if (badCount === 0) return;
  const pairs = badIndices.map((i) => `[${i}] ${a[i]} vs ${e[i]}`).join(', ');
  throw new Error(
    `${label}: ${badCount} of ${a.length} differ beyond atol=${atol} rtol=${rtol}; ` +
      `max |diff| ${maxAbsDiff} at index ${maxAbsDiffIndex}; first bad index ${badIndices[0]}; ` +
      `actual vs expected: ${pairs}`,
  );
}


/** Returns n seeded uniform values in [−scale, scale). */
export function randomArray(n: number, seed: number, scale = 1): Float32Array {
  const uniform = seededUniform(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (2 * uniform() - 1) * scale;
  return out;
}

/** Returns n seeded integers in [0, max). */
export function randomInts(n: number, seed: number, max: number): Int32Array {
  const uniform = seededUniform(seed);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(uniform() * max);
  return out;
}
