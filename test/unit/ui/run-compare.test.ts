/** The Runs view's data shaping: one row per run, and compared runs' curves on one step axis. */
import { describe, expect, test } from 'vitest';
import { CHART_COLORS } from '../../../src/ui/kit/chart-palette.ts';
import { compareSeries, runLabel, runModel, runRow } from '../../../src/ui/features/runs/run-compare.ts';
import { DEFAULT_TRAINING_SETTINGS, type TrainingRun } from '../../../src/ui/features/training/training-slice.ts';
import type { GrpoStepMetrics } from '../../../src/workers/engine-bridge.ts';

function grpoStep(step: number, reward: number, passRate: number): GrpoStepMetrics {
  return { step, reward: { mean: reward, std: 0.1 }, passRate, rewards: {}, loss: 0, kl: 0, entropy: 1, gradNorm: 1, tokensPerSecond: 10 } as unknown as GrpoStepMetrics;
}

function run(id: string, steps: [number, number, number][], extra: Partial<TrainingRun> = {}): TrainingRun {
  return {
    id,
    environment: 'reverse-text',
    args: {},
    settings: DEFAULT_TRAINING_SETTINGS,
    seed: 0,
    createdAt: Date.UTC(2026, 0, 2, 10, 30),
    updatedAt: 0,
    sft: [],
    grpo: steps.map(([step, reward, pass]) => grpoStep(step, reward, pass)),
    evaluations: [],
    checkpointStep: null,
    ...extra,
  };
}

describe('run rows', () => {
  test('final reward and pass rate are the last GRPO step\'s; the last evaluation is kept', () => {
    const row = runRow(run('a', [[0, 0.1, 0], [1, 0.4, 0.25]], {
      sft: [{ step: 0, loss: 2 }, { step: 1, loss: 1 }] as TrainingRun['sft'],
      evaluations: [{ at: 1, sftSteps: 2, grpoSteps: 2, summary: { reward: { mean: 0.7, std: 0 }, passRate: 0.5 } as TrainingRun['evaluations'][number]['summary'] }],
    }));
    expect(row).toMatchObject({ id: 'a', environment: 'reverse-text', model: 'tiny', sftSteps: 2, grpoSteps: 2, finalReward: 0.4, finalPassRate: 0.25, lastEvaluation: { reward: 0.7, passRate: 0.5 } });
  });

  test('a run without GRPO steps has no final reward', () => {
    expect(runRow(run('b', []))).toMatchObject({ grpoSteps: 0, finalReward: null, finalPassRate: null, lastEvaluation: null });
  });

  test('a run that names its model shows it', () => {
    expect(runModel({ ...run('c', []), model: 'smollm2-135m-instruct' } as TrainingRun)).toBe('smollm2-135m-instruct');
    expect(runLabel({ ...run('c', []), model: 'smollm2-135m-instruct' } as TrainingRun)).toMatch(/^reverse-text · smollm2-135m-instruct · \d\d:\d\d$/);
  });
});

describe('compare series', () => {
  test('curves share the union of steps, with null where a run has no such step', () => {
    const first = run('a', [[0, 0.1, 0], [1, 0.2, 0.5], [2, 0.3, 1]]);
    const second = run('b', [[0, 0.5, 0.25], [1, 0.6, 0.75]], { environment: 'countdown' });
    const reward = compareSeries([first, second], 'reward');
    expect(reward.steps).toEqual([0, 1, 2]);
    expect(reward.series.map((series) => series.values)).toEqual([[0.1, 0.2, 0.3], [0.5, 0.6, null]]);
    expect(reward.series.map((series) => series.color)).toEqual([CHART_COLORS[0], CHART_COLORS[1]]);
    expect(reward.series[1]!.label).toMatch(/^countdown · tiny/);
    const passRate = compareSeries([first, second], 'passRate');
    expect(passRate.series.map((series) => series.values)).toEqual([[0, 0.5, 1], [0.25, 0.75, null]]);
  });

  test('continued runs (steps past 0) and gaps line up by step number', () => {
    const late = run('a', [[5, 0.5, 0], [6, 0.6, 0]]);
    const early = run('b', [[0, 0, 0]]);
    const { steps, series } = compareSeries([late, early], 'reward');
    expect(steps).toEqual([0, 5, 6]);
    expect(series[0]!.values).toEqual([null, 0.5, 0.6]);
    expect(series[1]!.values).toEqual([0, null, null]);
  });

  test('runs with the same label are told apart', () => {
    const { series } = compareSeries([run('a', [[0, 1, 1]]), run('b', [[0, 1, 1]])], 'reward');
    expect(series[0]!.label).not.toBe(series[1]!.label);
    expect(series[1]!.label).toMatch(/#2$/);
  });
});
