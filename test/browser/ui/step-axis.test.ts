/**
 * The training charts' step axis in real uPlot (Chromium): a chart of a single GRPO step spans half a
 * step either side of it (its only tick is that step), not uPlot's 0–100 padding of a lone value; several steps span first to last.
 */
import uPlot from 'uplot';
import { afterEach, describe, expect, test } from 'vitest';
import { STEP_SCALE } from '../../../src/ui/kit/step-axis.ts';

const charts: uPlot[] = [];
afterEach(() => {
  for (const chart of charts.splice(0)) chart.destroy();
});

/** A chart like MetricChart's (330 × 150, one reward line) over `steps`; returns its x scale's span. */
async function stepSpan(steps: number[], rewards: number[]): Promise<[number | undefined, number | undefined]> {
  const host = document.createElement('div');
  document.body.append(host);
  const chart = new uPlot({ width: 330, height: 150, series: [{ label: 'step' }, { label: 'reward', stroke: '#36c' }], legend: { show: false }, scales: { x: STEP_SCALE } }, [steps, rewards], host);
  charts.push(chart);
  // uPlot sets its scales in a microtask after construction.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return [chart.scales.x!.min, chart.scales.x!.max];
}

describe('step axis', async () => {
  test('one GRPO step (step 0) spans −½ to ½; a lone later step is centred too', async () => {
    expect(await stepSpan([0], [0.25])).toEqual([-0.5, 0.5]);
    expect(await stepSpan([7], [0.5])).toEqual([6.5, 7.5]);
  });

  test('several steps span the first to the last step', async () => {
    expect(await stepSpan([0, 1, 2, 3], [0.1, 0.2, 0.4, 0.3])).toEqual([0, 3]);
    expect(await stepSpan([40, 41], [0.5, 0.6])).toEqual([40, 41]);
  });
});
