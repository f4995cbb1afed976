/**
 * The decision logic of the WebGPU decoder's 'auto' path trial (src/gpu/webgpu/decode-path-trial.ts),
 * on made-up timings and a made-up clock: nothing here is timed.
 */
import { describe, expect, test } from 'vitest';
import { pathTrialVerdict, runPathTrial, type DecodePath, type PathTrialOptions } from '../../../src/gpu/webgpu/decode-path-trial.ts';

/** A trial over scripted timings: each path's list is consumed in order; the clock advances by each timing. */
async function scripted(timings: Record<DecodePath, number[]>, options?: PathTrialOptions, warmUpMs = 0) {
  let clock = 0;
  const calls: DecodePath[] = [];
  const next = { fused: 0, layered: 0 };
  const time = async (path: DecodePath): Promise<number> => {
    calls.push(path);
    const ms = timings[path][next[path]++];
    if (ms === undefined) throw new Error(`the trial timed ${path} more often than scripted`);
    clock += ms;
    return ms;
  };
  const result = await runPathTrial(time, async () => void (clock += warmUpMs), options, () => clock);
  return { result, calls };
}

describe('pathTrialVerdict', () => {
  test('the lower best time wins, fused on a tie, and the lead is clear only past the margin', () => {
    expect(pathTrialVerdict({ fused: [30, 10], layered: [12, 20] }, 1.25)).toEqual({ path: 'fused', clear: false });
    expect(pathTrialVerdict({ fused: [30, 10], layered: [13, 20] }, 1.25)).toEqual({ path: 'fused', clear: true });
    expect(pathTrialVerdict({ fused: [9], layered: [4] }, 2)).toEqual({ path: 'layered', clear: true });
    expect(pathTrialVerdict({ fused: [5], layered: [5] }, 1.25)).toEqual({ path: 'fused', clear: false });
  });
});

describe('runPathTrial', () => {
  const options: PathTrialOptions = { minRounds: 2, maxRounds: 6, margin: 1.25, budgetMs: 1e9 };

  test('one slow run of the faster path (a burst of load) does not decide: the best of each path does', async () => {
    // The case seen under load: fused's first timing was twice layered's, its later ones half of it.
    const { result } = await scripted({ fused: [180, 76, 80, 75, 77, 79], layered: [90, 172, 170, 175, 171, 174] }, options);
    expect(result.path).toBe('fused');
    expect(result.rounds).toBe(6); // 75 against layered's lucky 90 is no clear lead, so every round runs
  });

  test('a clear lead ends the trial after minRounds; the rounds alternate which path goes first', async () => {
    const { result, calls } = await scripted({ fused: [10, 10, 10], layered: [40, 40, 40] }, options);
    expect(result).toMatchObject({ path: 'fused', rounds: 2, times: { fused: [10, 10], layered: [40, 40] } });
    expect(calls).toEqual(['fused', 'layered', 'layered', 'fused']);
  });

  test('a close call runs more rounds, up to maxRounds, and then takes the lower best time', async () => {
    const { result } = await scripted({ fused: [100, 98, 101, 99, 102, 97], layered: [99, 100, 96, 103, 100, 101] }, options);
    expect(result.rounds).toBe(6);
    expect(result.path).toBe('layered'); // 96 < 97
  });

  test('a close call stops once the timed rounds spent the budget (the warm-up not counted), after minRounds', async () => {
    const { result } = await scripted({ fused: [100, 100, 100, 100], layered: [101, 101, 101, 101] }, { ...options, budgetMs: 500 }, 5000);
    // rounds end at 201, 402 (< 500, go on), 603: stop; the whole trial took 5000 + 603.
    expect(result.rounds).toBe(3);
    expect(result.elapsedMs).toBe(5603);
    expect(result.path).toBe('fused');
  });

  test('one round that alone spent the budget ends the trial when its lead is clear, and not when it is close', async () => {
    const slowModel = { ...options, budgetMs: 1500 };
    const clear = await scripted({ fused: [5500], layered: [3200] }, slowModel);
    expect(clear.result).toMatchObject({ path: 'layered', rounds: 1 });
    const close = await scripted({ fused: [3300, 3100], layered: [3200, 3250] }, slowModel);
    expect(close.result).toMatchObject({ path: 'fused', rounds: 2 });
  });

  test('bad round counts are refused with a message', async () => {
    await expect(scripted({ fused: [], layered: [] }, { ...options, minRounds: 3, maxRounds: 2 })).rejects.toThrow(/minRounds/);
  });
});
