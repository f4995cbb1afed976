/**
 * The optional GRPO charts of the training view's "More charts" picker: each a key (remembered in
 * the store), a title and how its lines come from the step metrics. Runs stored before a metric
 * existed have gaps (null) there.
 */
import type { GrpoStepMetrics } from '../../../workers/engine-bridge.ts';
import type { ChartSeries } from '../../kit/MetricChart.tsx';
import { chartColor } from '../../kit/chart-palette.ts';

/** One optional chart. */
export interface GrpoChart {
  key: string;
  title: string;
  /** What the chart tells, shown as its tooltip in the picker. */
  help: string;
  yRange?: [number, number];
  series(grpo: readonly GrpoStepMetrics[]): ChartSeries[];
}

/** A metric that may be missing in older runs: its value per step, or null. */
const values = (grpo: readonly GrpoStepMetrics[], pick: (m: GrpoStepMetrics) => number | undefined): (number | null)[] =>
  grpo.map((m) => {
    const value = pick(m);
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  });

const line = (label: string, color: string, grpo: readonly GrpoStepMetrics[], pick: (m: GrpoStepMetrics) => number | undefined): ChartSeries => ({ label, color, values: values(grpo, pick) });

/** Every optional chart, in the picker's order. */
export const GRPO_CHARTS: readonly GrpoChart[] = [
  { key: 'kl', title: 'KL to reference', help: 'How far the policy moved from the reference (0 without KL β).', series: (g) => [line('KL', chartColor(4), g, (m) => m.kl)] },
  {
    key: 'entropy',
    title: 'Entropy (nats / token)',
    help: 'How unsure the sampler is; a collapse to 0 means the model stopped exploring.',
    series: (g) => [line('entropy', chartColor(3), g, (m) => m.entropy)],
  },
  { key: 'gradNorm', title: 'Gradient norm', help: 'Size of the update before clipping.', series: (g) => [line('grad norm', chartColor(5), g, (m) => m.gradNorm)] },
  { key: 'tokensPerSecond', title: 'Sampled tokens / s', help: 'Sampling speed.', series: (g) => [line('tokens/s', chartColor(0), g, (m) => m.tokensPerSecond)] },
  {
    key: 'clipFraction',
    title: 'Clip fraction (low / high)',
    help: 'Share of tokens whose ratio left the clip range, below and above: high values mean updates too large for the clip.',
    yRange: [0, 1],
    series: (g) => [line('low', chartColor(1), g, (m) => m.clipFractionLow), line('high', chartColor(2), g, (m) => m.clipFractionHigh)],
  },
  {
    key: 'completionLength',
    title: 'Completion length (tokens)',
    help: 'Sampled tokens per rollout, mean and max.',
    series: (g) => [line('mean', chartColor(0), g, (m) => m.completionLength?.mean), line('max', chartColor(3), g, (m) => m.completionLength?.max)],
  },
  {
    key: 'truncatedFraction',
    title: 'Truncated fraction',
    help: 'Share of rollouts cut by the token limit.',
    yRange: [0, 1],
    series: (g) => [line('truncated', chartColor(1), g, (m) => m.truncatedFraction)],
  },
  {
    key: 'zeroStdFraction',
    title: 'Zero-std groups',
    help: 'Share of groups whose rewards were all equal (no learning signal); dynamic sampling replaces them.',
    yRange: [0, 1],
    series: (g) => [line('zero std', chartColor(4), g, (m) => m.zeroStdFraction)],
  },
  {
    key: 'staleness',
    title: 'Staleness (weight versions)',
    help: 'How many updates old the trained rollouts were (max async).',
    series: (g) => [line('staleness', chartColor(5), g, (m) => m.staleness)],
  },
  {
    key: 'echoLoss',
    title: 'ECHO loss (env tokens NLL)',
    help: "How well the model predicts the environment's replies (multi-turn; 0 without them).",
    series: (g) => [line('echo NLL', chartColor(2), g, (m) => m.echoLoss)],
  },
  { key: 'advantage', title: 'Advantage |A| (mean)', help: "Mean absolute advantage: the learning signal's strength.", series: (g) => [line('|A|', chartColor(0), g, (m) => m.advantage?.meanAbs)] },
  { key: 'learningRate', title: 'Learning rate', help: 'The scheduled learning rate.', series: (g) => [line('lr', chartColor(3), g, (m) => m.learningRate)] },
];

/** The picked charts in the table's order (unknown keys ignored). */
export function pickedCharts(picks: readonly string[]): GrpoChart[] {
  return GRPO_CHARTS.filter((chart) => picks.includes(chart.key));
}
