// A panel of judges: aggregation and agreement figures, exact on a known pattern, and the panel lent to a judge rubric as one judge.
import { describe, expect, test } from 'vitest';
import { ChatClientError, evaluate, JudgeRubric, ScriptedClient, SingleTurnEnv, type ChatClient } from '../../../../src/envs/index.ts';
import { aggregatePanelScores, formatPanelReport, JudgePanelClient, panelAgreement, panelRolloutVotes, splitRollouts } from '../../../../src/envs/studio/index.ts';

// Three judges on four items: all yes, 2 yes 1 no, all no, 1 yes 2 no.
const PATTERN = [
  [1, 1, 1],
  [1, 0.8, 0],
  [0, 0.2, 0],
  [0.9, 0, 0.1],
];

describe('panel agreement', () => {
  test('pairwise agreement and Fleiss kappa are exact on a known pattern', () => {
    const agreement = panelAgreement(PATTERN);
    // Agreeing pairs per item: 3/3, 1/3, 3/3, 1/3 → mean 2/3; yes share 6/12 → chance 1/2 → kappa (2/3 − 1/2)/(1/2) = 1/3.
    expect(agreement.perItem).toEqual([1, 1 / 3, 1, 1 / 3]);
    expect(agreement.pairwise).toBeCloseTo(2 / 3, 12);
    expect(agreement.fleissKappa).toBeCloseTo(1 / 3, 12);
    expect(agreement.split).toEqual([1, 3]);
    expect(agreement.items).toBe(4);
  });

  test('a judge without a score does not vote; all-same votes leave kappa undefined; perfect disagreement is below 0', () => {
    expect(panelAgreement([[1, null, 1], [0, 0, null]])).toMatchObject({ items: 2, pairwise: 1, fleissKappa: 1, split: [] });
    expect(panelAgreement([[1, 1], [1, 1]])).toMatchObject({ pairwise: 1, fleissKappa: null });
    expect(panelAgreement([[1, 0], [0, 1]])).toMatchObject({ pairwise: 0, fleissKappa: -1, split: [0, 1] });
    expect(panelAgreement([[1, null]])).toMatchObject({ items: 0, pairwise: null, fleissKappa: null, perItem: [null] });
  });

  test('aggregation: mean, majority (more than half) and unanimity', () => {
    expect(PATTERN.map((scores) => aggregatePanelScores(scores, 'mean'))).toEqual([1, 0.6, 0.2 / 3, 1 / 3]);
    expect(PATTERN.map((scores) => aggregatePanelScores(scores, 'majority'))).toEqual([1, 1, 0, 0]);
    expect(PATTERN.map((scores) => aggregatePanelScores(scores, 'unanimous'))).toEqual([1, 0, 0, 0]);
    expect(aggregatePanelScores([1, 0], 'majority')).toBe(0);
  });
});

describe('a judge panel lent to an environment', () => {
  /** A judge that answers each task's question with the vote the pattern gives it. */
  const judgeFromPattern = (column: number): ChatClient => new ScriptedClient((messages) => {
    const task = Number(/Question:\ntask (\d)/.exec(messages.at(-1)!.content)![1]);
    return `Reasoning first.\nVerdict: ${PATTERN[task]![column]! >= 0.5 ? 'yes' : 'no'}`;
  });
  const env = (judgeClient: ChatClient) => new SingleTurnEnv({ name: 'panel', dataset: [0, 1, 2, 3].map((i) => ({ question: `task ${i}`, answer: 'x' })), rubric: new JudgeRubric({ judgeClient, judgeModel: 'panel' }) });

  test('majority rewards, the agreement figures and the split rollouts after an evaluation', async () => {
    const panel = new JudgePanelClient([0, 1, 2].map((column) => ({ name: `judge-${column + 1}`, client: judgeFromPattern(column) })), 'majority');
    const { records } = await evaluate(env(panel), new ScriptedClient((messages) => `reply to ${messages.at(-1)!.content}`), { numTasks: 4, concurrency: 1 });
    expect(records.map((record) => record.reward)).toEqual([1, 1, 0, 0]);
    const report = panel.report();
    expect(report).toMatchObject({ judges: ['judge-1', 'judge-2', 'judge-3'], aggregation: 'majority', calls: 4, unscored: 0, splitCalls: [1, 3] });
    expect(report.agreement.pairwise).toBeCloseTo(2 / 3, 12);
    expect(report.agreement.fleissKappa).toBeCloseTo(1 / 3, 12);
    const rollouts = records.map((record) => ({ id: `${record.taskIndex}:${record.rolloutIndex}`, question: `task ${record.taskIndex}`, response: record.completion.at(-1)!.content }));
    expect(splitRollouts(panel.calls, report.splitCalls, rollouts)).toEqual(['1:0', '3:0']);
    expect(formatPanelReport(report, ['1:0', '3:0'])).toBe("judge panel: judge-1, judge-2, judge-3 (majority), 4 calls\n  agreement: pairwise 0.667, Fleiss' kappa 0.333 over 4 calls; split on 2\n  split rollouts: 1:0, 3:0");
  });

  test('mean of graded judges; a judge that gives no score does not vote; an unreachable judge is named and stops the run', async () => {
    const panel = new JudgePanelClient([
      { name: 'a', client: new ScriptedClient(() => 'Score: 8') },
      { name: 'b', client: new ScriptedClient(() => 'Score: 6') },
      { name: 'c', client: new ScriptedClient(() => 'I cannot grade this.') },
    ]);
    const { records } = await evaluate(env(panel), new ScriptedClient(() => 'an answer'), { numTasks: 2 });
    expect(records.map((record) => record.reward)).toEqual([0.7, 0.7]);
    expect(panel.calls[0]!.scores).toEqual([0.8, 0.6, null]);
    const dead: ChatClient = { chat: { completions: { create: async () => { throw new ChatClientError('connection refused', 'network'); } } } };
    const failing = new JudgePanelClient([{ name: 'a', client: new ScriptedClient(() => 'Score: 8') }, { name: 'dead', client: dead }]);
    const result = await evaluate(env(failing), new ScriptedClient(() => 'an answer'), { numTasks: 2 });
    expect(result.stoppedEarly).toMatch(/judge dead: connection refused/);
    expect(() => new JudgePanelClient([{ name: 'a', client: dead }])).toThrow('a judge panel needs two or more judges, got 1');
  });
});

describe('panelRolloutVotes', () => {
  test("each rollout gets its call's votes and agreement; a rollout no call judged has none", () => {
    const calls = PATTERN.map((scores, i) => ({ prompt: `Question: task ${i}\nResponse: reply ${i}`, scores, score: null }));
    const rollouts = [0, 1, 2, 3, 4].map((i) => ({ id: `${i}:0`, question: `task ${i}`, response: `reply ${i}` }));
    const votes = panelRolloutVotes(calls, rollouts);
    expect(votes.map((vote) => vote.agreement)).toEqual([1, 1 / 3, 1, 1 / 3, null]);
    expect(votes.map((vote) => vote.split)).toEqual([false, true, false, true, false]);
    expect(votes[1]!.scores).toEqual([1, 0.8, 0]);
    expect(votes[4]).toEqual({ id: '4:0', scores: [], agreement: null, split: false });
    // The same ids splitRollouts reports from the panel's split calls.
    expect(votes.filter((vote) => vote.split).map((vote) => vote.id)).toEqual(splitRollouts(calls, panelAgreement(PATTERN).split, rollouts));
  });
});
