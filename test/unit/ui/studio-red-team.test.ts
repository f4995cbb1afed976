// The tab's red team scores through a sandbox session: over a session that runs lesson 4 in this process, it finds the same back door as `tabrl redteam` with the same budget.
import { describe, expect, test } from 'vitest';
import { evaluate, type RolloutRecord } from '../../../src/envs/index.ts';
import { HeuristicAttackerClient, HeuristicStudioClient, redTeam, redTeamTarget } from '../../../src/envs/studio/index.ts';
import loadGullibleJudge from '../../../src/ui/features/lessons/sources/gullible-judge.ts';
import { ReplyClient, sandboxRedTeamTarget } from '../../../src/ui/features/studio/sandbox-red-team-target.ts';
import type { EnvironmentInfo, SandboxEvaluateOptions } from '../../../src/workers/sandbox-bridge.ts';

/** A stand-in for a sandbox session: the environment runs here, its policy the given client, records streamed as the sandbox streams them. */
function localSession(policy: ReplyClient) {
  const env = loadGullibleJudge({ numEvalTasks: 2 });
  const info: EnvironmentInfo = { name: env.name, kind: 'SingleTurnEnv', numTasks: env.dataset.length, numEvaluationTasks: env.evaluationTasks.length, rewardNames: env.rubric.rewards.map((reward) => reward.name), rewardWeights: env.rubric.rewards.map((reward) => reward.weight), passThreshold: env.passThreshold };
  const evaluations: number[] = [];
  return {
    evaluations,
    session: {
      info,
      evaluate: async (options: SandboxEvaluateOptions, onRecord?: (record: RolloutRecord, done: number, total: number) => void) => {
        evaluations.push(options.numTasks ?? 0);
        const result = await evaluate(env, policy, { numTasks: options.numTasks, concurrency: 1, onProgress: ({ record, done, total }) => onRecord?.(record, done, total) });
        return { summary: result.summary, wallMs: 0 };
      },
    },
  };
}

describe('the red team in the tab', () => {
  test('finds lesson 4 back door through a session, as the in-process search does', async () => {
    const policy = new ReplyClient();
    const { session, evaluations } = localSession(policy);
    const reviewer = new HeuristicStudioClient('judge');
    const viaSession = await redTeamTarget(sandboxRedTeamTarget(session, policy, 'Lesson 4'), { attacker: new HeuristicAttackerClient(), reviewer, numTasks: 1 });
    const inProcess = await redTeam(loadGullibleJudge({ numEvalTasks: 2 }), { attacker: new HeuristicAttackerClient(), reviewer, numTasks: 1 });
    expect(viaSession.calls).toEqual(inProcess.calls);
    expect(viaSession.backDoors.map((door) => [door.reply, door.reward, door.payingFunction, door.verdict])).toEqual(inProcess.backDoors.map((door) => [door.reply, door.reward, door.payingFunction, door.verdict]));
    expect(viaSession.backDoors.length).toBeGreaterThan(0);
    expect(viaSession.tasks).toEqual(inProcess.tasks);
    expect(viaSession.environment).toBe('Lesson 4');
    // One rollout of an empty reply reads the task's question, then one evaluation of the first task per scored reply.
    expect(evaluations).toHaveLength(1 + viaSession.calls.scoring);
    expect(evaluations.every((numTasks) => numTasks === 1)).toBe(true);
  });
});
