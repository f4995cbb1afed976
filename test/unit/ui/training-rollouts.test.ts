/**
 * The training run's rollouts kept for the Audit panel: each step's rollouts with their step and
 * per-task index, a run on another environment starting afresh, the oldest dropped past the cap,
 * and an audit over them seeing a trend across steps (reward up while a metric falls).
 */
import { describe, expect, test } from 'vitest';
import { audit } from '../../../src/envs/studio/index.ts';
import { auditScoring, MAX_KEPT, onTrainingRollouts, rememberTrainingRollouts, trainingRollouts } from '../../../src/ui/features/training/training-rollouts.ts';

function rollout(taskIndex: number, completion: string, judgeReward: number, correctMetric: number) {
  return {
    taskIndex,
    prompt: [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: `task ${taskIndex}` }],
    completion: [{ role: 'assistant' as const, content: completion }],
    reward: judgeReward,
    scores: { judgeReward, correctMetric },
  };
}

describe('training rollouts for audits', () => {
  test('kept with their step, ids per task, a fresh list for another environment, and listeners told', () => {
    let told = 0;
    const off = onTrainingRollouts(() => { told += 1; });
    rememberTrainingRollouts('env-a', 0, [rollout(3, 'a', 0.2, 1), rollout(3, 'b', 0.4, 1), rollout(5, 'c', 0.1, 1)]);
    expect(trainingRollouts().environment).toBe('env-a');
    expect(trainingRollouts().rollouts.map((item) => [item.id, item.step, item.question, item.completion])).toEqual([
      ['0:3:0', 0, 'task 3', 'a'], ['0:3:1', 0, 'task 3', 'b'], ['0:5:0', 0, 'task 5', 'c'],
    ]);
    rememberTrainingRollouts('env-b', 7, [rollout(0, 'd', 1, 0)]);
    expect(trainingRollouts().rollouts.map((item) => item.id)).toEqual(['7:0:0']);
    off();
    rememberTrainingRollouts('env-b', 8, [rollout(0, 'e', 1, 0)]);
    expect(told).toBe(2);
  });

  test(`only the last ${MAX_KEPT} are kept`, () => {
    const many = Array.from({ length: MAX_KEPT + 10 }, (_, i) => rollout(i, `x${i}`, 0, 0));
    rememberTrainingRollouts('env-c', 0, many);
    const { rollouts } = trainingRollouts();
    expect(rollouts).toHaveLength(MAX_KEPT);
    expect(rollouts[0]!.completion).toBe('x10');
  });

  test("the run's scoring travels with its rollouts: weights of every function (group ones too) and the declared metric kinds", async () => {
    const scoring = auditScoring({ rewardNames: ['winReward', 'invalidMovesMetric'], rewardWeights: [1, 0], groupRewardNames: ['distinctReward'], groupRewardWeights: [0.2], metricKinds: { invalidMovesMetric: 'lowerIsBetter' } });
    expect(scoring).toEqual({ weights: { winReward: 1, invalidMovesMetric: 0, distinctReward: 0.2 }, metrics: { invalidMovesMetric: 'lowerIsBetter' } });
    rememberTrainingRollouts('env-e', 0, [rollout(0, 'won', 1, 0)], scoring);
    expect(trainingRollouts().scoring).toEqual(scoring);
    // A win with no invalid move is no alarm once the count is known to be lower-is-better.
    const { rollouts } = trainingRollouts();
    expect((await audit([...rollouts], { weights: { judgeReward: 1, correctMetric: 0 } })).findings.map((finding) => finding.detector)).toContain('metric-disagrees');
    expect((await audit([...rollouts], { weights: { judgeReward: 1, correctMetric: 0 }, metrics: { correctMetric: 'lowerIsBetter' } })).findings).toEqual([]);
  });

  test('an audit over them sees the reward rise while the metric falls across steps', async () => {
    for (let step = 0; step < 6; step++) {
      const late = step >= 3;
      rememberTrainingRollouts('env-d', step, [rollout(0, late ? 'gamed answer' : 'answer', late ? 1 : 0.3, late ? 0 : 1), rollout(1, late ? 'gamed again' : 'other', late ? 1 : 0.3, late ? 0 : 1)]);
    }
    const result = await audit([...trainingRollouts().rollouts], { weights: { judgeReward: 1, correctMetric: 0 } });
    expect(result.findings.map((finding) => finding.detector)).toContain('reward-up-metric-down');
  });
});
