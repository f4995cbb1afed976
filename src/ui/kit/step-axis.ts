/**
 * The step axis of the training charts (uPlot's x scale): it spans the steps drawn, first to last.
 * uPlot pads a single value on its own (0 becomes 0–100) before it asks the scale's range, so the
 * range is read from the steps themselves: a lone step sits in the middle of [step − ½, step + ½], so
 * the axis (whole-step ticks) labels just that step, never a negative one.
 */
import type uPlot from 'uplot';

/** The x range for `steps` (ascending): first to last, half a step either side of a lone step, [0, 1] with none. */
export function stepAxisRange(steps: ArrayLike<number>): [number, number] {
  if (steps.length === 0) return [0, 1];
  const first = steps[0]!;
  const last = steps[steps.length - 1]!;
  return first === last ? [first - 0.5, last + 0.5] : [first, last];
}

/** uPlot's options for the step scale: plain numbers, ranged by `stepAxisRange` over the chart's steps. */
export const STEP_SCALE: uPlot.Scale = { time: false, range: (chart) => stepAxisRange(chart.data[0]) };
