/**
 * The timed trial behind the WebGPU decoder's `decodePath: 'auto'`: which of the fused multi-step
 * kernel and the layered plan decodes a batch faster on this adapter. A single timing is at the
 * mercy of the machine's load (under a load of 4–11 on 2 cores a 2-sample trial once picked the
 * path that ran at half the other's speed), so the trial interleaves the two paths over short
 * rounds, alternating which goes first, keeps each path's best time, and stops as soon as one is
 * ahead by a clear margin (after `minRounds`), when `maxRounds` are done, or when its timed rounds
 * have spent the time budget (after `minRounds`; after one round already when that round alone spent
 * it and one path leads clearly: runs that long average the load out, and a large model on a
 * software adapter takes seconds per run); then the faster best time wins (fused on a tie). No GPU
 * code: the decoder passes the function that times one path, and tests pass made-up timings.
 */

/** The two ways the WebGPU decoder runs decodeSteps: see WebGPUDecoderOptions.decodePath. */
export type DecodePath = 'fused' | 'layered';

/** How long a path trial may run and when it may stop early. */
export interface PathTrialOptions {
  /** Rounds always run (each times both paths once). */
  minRounds: number;
  /** Rounds at most. */
  maxRounds: number;
  /** Stop early once the slower path's best time is at least this factor above the faster path's. */
  margin: number;
  /** Time (ms) of the timed rounds (the warm-up, mostly pipeline compilation, not counted) past which the trial stops; see the file comment. */
  budgetMs: number;
}

/** The defaults: 2 to 6 rounds, stop at a 1.25× lead, at most ~1.5 s of timed rounds. */
const DEFAULT_PATH_TRIAL: PathTrialOptions = { minRounds: 2, maxRounds: 6, margin: 1.25, budgetMs: 1500 };

/** Every timing of a trial, ms per timed run, in the order taken. */
export interface PathTrialTimes {
  fused: number[];
  layered: number[];
}

/** What a trial found: the path, every timing, the rounds run and the whole trial's wall time in ms (warm-up included). */
export interface PathTrialResult {
  path: DecodePath;
  times: PathTrialTimes;
  rounds: number;
  elapsedMs: number;
}

/** The path with the lower best time (fused on a tie), and whether its lead is at least `margin`. */
export function pathTrialVerdict(times: PathTrialTimes, margin: number): { path: DecodePath; clear: boolean } {
  const fused = Math.min(...times.fused);
  const layered = Math.min(...times.layered);
  const path: DecodePath = fused <= layered ? 'fused' : 'layered';
  const [fast, slow] = path === 'fused' ? [fused, layered] : [layered, fused];
  return { path, clear: slow >= margin * fast };
}

/**
 * Runs a trial: `warmUp` once (pipelines and plans; counted in the budget), then rounds of
 * `time(path)` for both paths (fused first in even rounds, layered first in odd ones) until
 * `options` say stop; returns the verdict. `now` is the clock (ms), injectable for tests.
 */
export async function runPathTrial(
  time: (path: DecodePath) => Promise<number>,
  warmUp: () => Promise<void>,
  options: PathTrialOptions = DEFAULT_PATH_TRIAL,
  now: () => number = () => performance.now(),
): Promise<PathTrialResult> {
  if (!(options.minRounds >= 1 && options.maxRounds >= options.minRounds)) throw new Error(`path trial: need 1 ≤ minRounds ≤ maxRounds, got ${options.minRounds} and ${options.maxRounds}`);
  const start = now();
  await warmUp();
  const timedStart = now();
  const times: PathTrialTimes = { fused: [], layered: [] };
  let rounds = 0;
  while (rounds < options.maxRounds) {
    const order: DecodePath[] = rounds % 2 === 0 ? ['fused', 'layered'] : ['layered', 'fused'];
    for (const path of order) times[path].push(await time(path));
    rounds++;
    const clear = pathTrialVerdict(times, options.margin).clear;
    const spent = now() - timedStart >= options.budgetMs;
    if (rounds >= options.minRounds ? clear || spent : clear && spent) break;
  }
  return { path: pathTrialVerdict(times, options.margin).path, times, rounds, elapsedMs: now() - start };
}
