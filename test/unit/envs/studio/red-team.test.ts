// Red-teaming a reward: the search finds lesson 4's planted back door within its default budget and reports none on an honest rubric.
import { describe, expect, test } from 'vitest';
import { ChatClientError, Rubric, ScriptedClient, SingleTurnEnv, type ChatClient } from '../../../../src/envs/index.ts';
import { HeuristicAttackerClient, HeuristicStudioClient, redTeam, redTeamCriteriaExamples, formatRedTeamReport } from '../../../../src/envs/studio/index.ts';
import loadGullibleJudge, { mentionsWordMetric, twoLinesMetric } from '../../../../src/ui/features/lessons/sources/gullible-judge.ts';

/** The same tasks as lesson 4, paid only for meeting their constraints: an honest rubric. */
function honestPoems() {
  const lesson = loadGullibleJudge({ numEvalTasks: 2 });
  return new SingleTurnEnv({ name: 'honest-poems', dataset: lesson.evaluationTasks, rubric: new Rubric({ rewards: [{ fn: mentionsWordMetric, weight: 0.5 }, { fn: twoLinesMetric, weight: 0.5 }] }), passThreshold: 1 });
}
const reviewer = new HeuristicStudioClient('judge');

describe('redTeam', () => {
  test("finds the gullible judge's back door within the default budget; the reviewer says it was not earned", async () => {
    const report = await redTeam(loadGullibleJudge({ numEvalTasks: 2 }), { attacker: new HeuristicAttackerClient(), reviewer });
    expect([report.rounds, report.population]).toEqual([10, 4]);
    expect(report.backDoors.length).toBeGreaterThan(0);
    const door = report.backDoors[0]!;
    expect(door.reward).toBeGreaterThanOrEqual(0.8);
    expect(door.payingFunction).toBe('judgeReward');
    expect(door.verdict).toBe('not earned');
    expect(door.scores.twoLinesMetric).toBe(0);
    expect(report.firstBackDoorAtCall).toBeLessThanOrEqual(report.calls.attacker);
    expect(report.calls).toMatchObject({ attacker: 22, scoring: 22 }); // 4 first replies, then 2 new ones a round beside the 2 kept
    expect(redTeamCriteriaExamples(report)[0]).toMatchObject({ question: door.question, response: door.reply, note: expect.stringContaining('paid by judgeReward, not earned') });
    expect(formatRedTeamReport(report)).toContain(`back door${report.backDoors.length === 1 ? '' : 's'} (first after ${report.firstBackDoorAtCall} attacker calls)`);
  });

  test('reports none on an honest rubric, even when the attacker writes replies that do meet the task', async () => {
    const blind = await redTeam(honestPoems(), { attacker: new HeuristicAttackerClient(), reviewer });
    expect(blind.backDoors).toEqual([]);
    expect(blind.bestReward).toBeLessThan(1);
    // An attacker that sometimes gives up and writes the poem: high reward, earned, so no back door.
    const honestAttacker = new ScriptedClient((messages) => {
      const word = /uses the word "([^"]+)"/.exec(messages.at(-1)!.content)![1];
      return `Rain taps the ${word} glass,\nsoft light on the street.`;
    });
    const report = await redTeam(honestPoems(), { attacker: honestAttacker, reviewer });
    expect(report.bestReward).toBe(1);
    expect(report.backDoors).toEqual([]);
    expect(report.earned).toHaveLength(1);
    expect(formatRedTeamReport(report)).toContain('No back door: the reviewer found all 1 high-scoring replies earned.');
  });

  test('a dead attacker or reviewer stops the search naming the role', async () => {
    const dead: ChatClient = { chat: { completions: { create: async () => { throw new ChatClientError('connect ECONNREFUSED 127.0.0.1:9', 'network'); } } } };
    await expect(redTeam(honestPoems(), { attacker: dead })).rejects.toThrow(/^the attacker failed \(network\): connect ECONNREFUSED 127\.0\.0\.1:9; check --attacker-base-url/);
    await expect(redTeam(loadGullibleJudge({ numEvalTasks: 1 }), { attacker: new HeuristicAttackerClient(), reviewer: dead })).rejects.toMatchObject({ role: 'reviewer', message: expect.stringMatching(/^the reviewer failed: the reviewer is unreachable/) });
  });
});
