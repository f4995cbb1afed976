// A judge that fails during GRPO stops the run: its rollouts would otherwise train on rewards of 0.
import { describe, expect, test } from 'vitest';
import { JudgeError, Rubric, SingleTurnEnv } from '../../../src/envs/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { environmentRollouts, GrpoTrainer, TrainingError } from '../../../src/rl/grpo-trainer.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy } from '../../support/letter-task.ts';

describe('GRPO with a failing judge', () => {
  test('an unreachable judge (a fatal reward error) stops the run with its message; a judge without a verdict does not', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const policy = new LetterPolicy(backend);
    const unreachable = new SingleTurnEnv({ name: 'judged', dataset: [{ question: 'ab' }], rubric: new Rubric({ rewards: [{ name: 'judgeReward', fn: () => { throw new JudgeError('the judge is unreachable (network): connection refused', 'unreachable'); } }] }) });
    const run = new GrpoTrainer(environmentRollouts(unreachable, policy), backend, policy, { steps: 2, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run();
    await expect(run).rejects.toThrow(TrainingError);
    await expect(new GrpoTrainer(environmentRollouts(unreachable, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run()).rejects.toThrow('step 0: judgeReward threw: the judge is unreachable (network): connection refused; scored 0; the run stops');

    const noVerdict = new SingleTurnEnv({ name: 'judged', dataset: [{ question: 'ab' }], rubric: new Rubric({ rewards: [{ name: 'judgeReward', fn: () => { throw new JudgeError('no verdict', 'no-verdict'); } }] }) });
    const metrics = await new GrpoTrainer(environmentRollouts(noVerdict, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run();
    expect(metrics[0]!.rolloutsWithErrors).toBe(2);
  });
});
