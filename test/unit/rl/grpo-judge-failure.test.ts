// A judge that fails during GRPO stops the run: its rollouts would otherwise train on rewards of 0.
import { describe, expect, test } from 'vitest';
import { ChatClientError, Rubric, SingleTurnEnv, type ChatClient, type GroupRewardFunction } from '../../../src/envs/index.ts';
import { JudgeError } from '../../../src/envs/studio/index.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { environmentRollouts, GrpoTrainer, TrainingError } from '../../../src/rl/grpo-trainer.ts';
import { LETTER_MODEL as CONFIG, LetterPolicy, letterDReward } from '../../support/letter-task.ts';

describe('GRPO with a failing judge', () => {
  test('an unreachable judge (a fatal reward error) stops the run with its message; a judge without a verdict does not', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const policy = new LetterPolicy(backend);
    const unreachable = new SingleTurnEnv({ name: 'judged', dataset: [{ question: 'ab' }], rubric: new Rubric({ rewards: [{ name: 'judgeReward', fn: () => { throw new JudgeError('the judge is unreachable (network): connection refused', 'unreachable'); } }] }) });
    const run = new GrpoTrainer(environmentRollouts(unreachable, policy), backend, policy, { steps: 2, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run();
    await expect(run).rejects.toThrow(TrainingError);
    await expect(new GrpoTrainer(environmentRollouts(unreachable, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run()).rejects.toThrow('step 0: judgeReward threw: the judge is unreachable (network): connection refused; scored 0; the run stops');

    // Beside a reward that works: a judge without a verdict in every rollout, alone, leaves rewards that measure nothing (grpo-broken-rewards.test.ts).
    const noVerdict = new SingleTurnEnv({ name: 'judged', dataset: [{ question: 'ab' }], rubric: new Rubric({ funcs: [letterDReward], rewards: [{ name: 'judgeReward', fn: () => { throw new JudgeError('no verdict', 'no-verdict'); } }] }) });
    const metrics = await new GrpoTrainer(environmentRollouts(noVerdict, policy), backend, policy, { steps: 1, tasksPerStep: 1, groupSize: 2, maxTokens: 2 }).run();
    expect(metrics[0]!.rolloutsWithErrors).toBe(2);
  });

  test('a group reward whose judge refuses or is unreachable stops the run at once, even with dynamic sampling; a group reward without a verdict does not', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 7 });
    const policy = new LetterPolicy(backend);
    let calls = 0;
    const judged = (error: Error) => {
      const judgeGroupReward: GroupRewardFunction = () => {
        calls += 1;
        throw error;
      };
      return new SingleTurnEnv({ name: 'group-judged', dataset: ['ab', 'ba', 'cc', 'ac'].map((question) => ({ question })), rubric: new Rubric({ groupRewards: [{ fn: judgeGroupReward, name: 'judgeGroupReward' }] }) });
    };
    // maxAsync 0: one step sampled at a time, so the judge's calls can be counted.
    const options = { steps: 2, tasksPerStep: 1, groupSize: 2, maxTokens: 2, dynamicSampling: true, maxTasksPerStep: 4, maxAsync: 0 };
    const before = await backend.getParameters();

    const refused = new GrpoTrainer(environmentRollouts(judged(new JudgeError('the judge refused the request (not_found): no model x', 'rejected')), policy), backend, policy, options).run();
    await expect(refused).rejects.toThrow('step 0: judgeGroupReward threw: the judge refused the request (not_found): no model x; scored 0; the run stops rather than train on rewards that were never given');
    // The first group's failure ends the step: no extra groups are drawn to ask the same judge again.
    expect(calls).toBe(1);

    calls = 0;
    const unreachable = new GrpoTrainer(environmentRollouts(judged(new ChatClientError('connect ECONNREFUSED 127.0.0.1:9', 'network')), policy), backend, policy, options).run();
    await expect(unreachable).rejects.toThrow(TrainingError);
    await expect(unreachable).rejects.toThrow('step 0: judgeGroupReward threw: connect ECONNREFUSED 127.0.0.1:9; scored 0; the run stops');
    expect(calls).toBe(1);
    // Nothing was trained on the zeros.
    const after = await backend.getParameters();
    for (const [name, tensor] of before) expect(Array.from(after.get(name)!.data), name).toEqual(Array.from(tensor.data));

    // maxAsync 1: step 1 is sampled while step 0 trains. Its rollouts (sampling seeds seed·7919 + 2, 3) wait
    // until they are aborted; without the abort the failed run would wait for them for ever.
    calls = 0;
    const slowAhead: ChatClient = {
      chat: {
        completions: {
          create: (request) => {
            if (request.seed! % 7919 < 2) return policy.chat.completions.create(request);
            return new Promise((_, reject) => request.signal!.addEventListener('abort', () => reject(new ChatClientError('aborted', 'aborted'))));
          },
        },
      },
    };
    const ahead = new GrpoTrainer(environmentRollouts(judged(new JudgeError('the judge refused the request (auth): bad key', 'rejected')), slowAhead), backend, policy, { ...options, maxAsync: 1 }).run();
    await expect(ahead).rejects.toThrow('step 0: judgeGroupReward threw: the judge refused the request (auth): bad key');
    // The aborted group is not shown to the judge.
    expect(calls).toBe(1);

    // A flat verdict for the first group, none for the second: more groups are drawn and the step trains on
    // (a judge without a verdict in every rollout would stop the run: grpo-broken-rewards.test.ts).
    calls = 0;
    const secondWithout: GroupRewardFunction = (group) => {
      calls += 1;
      if (calls === 2) throw new JudgeError('no verdict', 'no-verdict');
      return group.map(() => 1);
    };
    const oneWithout = new SingleTurnEnv({ name: 'group-judged', dataset: ['ab', 'ba', 'cc', 'ac'].map((question) => ({ question })), rubric: new Rubric({ groupRewards: [{ fn: secondWithout, name: 'judgeGroupReward' }] }) });
    const metrics = await new GrpoTrainer(environmentRollouts(oneWithout, policy), backend, policy, { ...options, steps: 1 }).run();
    expect(metrics[0]!.rolloutsWithErrors).toBeGreaterThanOrEqual(2);
    expect(calls).toBeGreaterThan(1);
  });
});
