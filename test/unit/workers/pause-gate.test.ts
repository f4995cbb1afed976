/** The pause gate a paused job waits on between steps: it holds while paused, lets go on resume, and lets go on abort (Stop while paused). */
import { describe, expect, test } from 'vitest';
import { PauseGate } from '../../../src/workers/engine/pause-gate.ts';

/** Whether `promise` has settled after the microtask queue drains. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => { done = true; });
  await new Promise((resolve) => setTimeout(resolve, 5));
  return done;
}

describe('PauseGate', () => {
  test('an open gate lets a step through at once', async () => {
    expect(await settled(new PauseGate().wait())).toBe(true);
  });

  test('a paused gate holds every waiting step until resume', async () => {
    const gate = new PauseGate();
    gate.pause();
    expect(gate.isPaused).toBe(true);
    const first = gate.wait();
    const second = gate.wait();
    expect(await settled(first)).toBe(false);
    expect(await settled(second)).toBe(false);
    gate.resume();
    expect(gate.isPaused).toBe(false);
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(true);
  });

  test('aborting the job releases a paused step (Stop works while paused) and leaves the gate paused for others', async () => {
    const gate = new PauseGate();
    gate.pause();
    const controller = new AbortController();
    const stopped = gate.wait(controller.signal);
    const other = gate.wait();
    expect(await settled(stopped)).toBe(false);
    controller.abort();
    expect(await settled(stopped)).toBe(true);
    expect(await settled(other)).toBe(false);
    expect(await settled(gate.wait(controller.signal))).toBe(true);
    gate.resume();
    expect(await settled(other)).toBe(true);
  });

  test('pausing again after a resume holds new steps again', async () => {
    const gate = new PauseGate();
    gate.pause();
    gate.resume();
    gate.pause();
    expect(await settled(gate.wait())).toBe(false);
  });
});
