/**
 * The Runs view's data: one row per stored run (environment, model, date, steps, final reward and
 * pass rate) and, for the runs chosen to compare, their GRPO reward and pass-rate curves aligned on
 * one step axis (null where a run has no such step), ready for MetricChart.
 */
import type { TrainingRun } from '../training/training-slice.ts';
import { chartColor } from '../../kit/chart-palette.ts';

/** A compared run's curve: MetricChart's ChartSeries shape (declared here so this module needs no JSX). */
export interface CompareSeries {
  label: string;
  values: (number | null)[];
  color: string;
}

/** One run as the Runs list shows it. */
export interface RunRow {
  id: string;
  environment: string;
  /** The in-tab model the run trained ('tiny' for runs stored before runs named their model). */
  model: string;
  createdAt: number;
  sftSteps: number;
  grpoSteps: number;
  /** Mean reward and pass rate of the last GRPO step (null before any). */
  finalReward: number | null;
  finalPassRate: number | null;
  /** The last evaluation kept with the run (held-out tasks), if any. */
  lastEvaluation: { reward: number; passRate: number } | null;
}

/** The model a run trained: its `model` field where the run has one, else the tiny model. */
export function runModel(run: TrainingRun): string {
  const model = (run as TrainingRun & { model?: unknown }).model;
  return typeof model === 'string' && model !== '' ? model : 'tiny';
}

/** A run's row. */
export function runRow(run: TrainingRun): RunRow {
  const last = run.grpo.at(-1);
  const evaluation = run.evaluations.at(-1);
  return {
    id: run.id,
    environment: run.environment,
    model: runModel(run),
    createdAt: run.createdAt,
    sftSteps: run.sft.length,
    grpoSteps: run.grpo.length,
    finalReward: last ? last.reward.mean : null,
    finalPassRate: last ? last.passRate : null,
    lastEvaluation: evaluation ? { reward: evaluation.summary.reward.mean, passRate: evaluation.summary.passRate } : null,
  };
}

/** A short label of a run for legends: its environment, model and start time. */
export function runLabel(run: TrainingRun): string {
  const time = new Date(run.createdAt);
  const hhmm = `${String(time.getHours()).padStart(2, '0')}:${String(time.getMinutes()).padStart(2, '0')}`;
  return `${run.environment} · ${runModel(run)} · ${hhmm}`;
}

/** The metric of a GRPO step that a compare chart overlays. */
export type CompareMetric = 'reward' | 'passRate';

/** The curves of `runs` for `metric`, on the union of their GRPO steps; labels are made unique with #n. */
export function compareSeries(runs: readonly TrainingRun[], metric: CompareMetric): { steps: number[]; series: CompareSeries[] } {
  const steps = [...new Set(runs.flatMap((run) => run.grpo.map((m) => m.step)))].sort((a, b) => a - b);
  const labels = new Map<string, number>();
  const series = runs.map((run, i): CompareSeries => {
    const byStep = new Map(run.grpo.map((m) => [m.step, metric === 'reward' ? m.reward.mean : m.passRate]));
    const base = runLabel(run);
    const seen = (labels.get(base) ?? 0) + 1;
    labels.set(base, seen);
    return { label: seen === 1 ? base : `${base} #${seen}`, values: steps.map((step) => byStep.get(step) ?? null), color: chartColor(i) };
  });
  return { steps, series };
}
