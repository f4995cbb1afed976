// Task synthesis inside training: a refresh adds only the new tasks the policy passes within the band, and retires the ones it has mastered.
import { describe, expect, test } from 'vitest';
import { environmentRollouts } from '../../../../src/rl/grpo-trainer.ts';
import { completionText, Rubric, ScriptedClient, SingleTurnEnv, type RewardContext } from '../../../../src/envs/index.ts';
import { answersMatch, HeuristicStudioClient, refreshTaskPool } from '../../../../src/envs/studio/index.ts';

// Each sentence hides a year (the heuristic generator's cloze answer); the policy knows some years better than others.
const DOCUMENT = {
  name: 'station.md',
  text: 'The north hut was rebuilt in 1931 after the great storm.\n\nThe radio mast went up in 1948 on the eastern ridge.\n\nThe weather log has been kept daily since 1975 by the wardens.',
};
// Right answers out of 4 attempts: 1931 always (too easy), 1948 twice (learnable), 1975 never (too hard).
const KNOWN: Record<string, number> = { '1931': 4, '1948': 2, '1975': 0, '1066': 4, '1815': 2 };
const YEAR_OF: Record<string, string> = { 'rebuilt in': '1931', 'went up in': '1948', 'kept daily since': '1975', 'Hastings': '1066', 'Waterloo': '1815' };

function knowsSomeYears() {
  const attempts = new Map<string, number>();
  return new ScriptedClient((messages) => {
    const question = messages.at(-1)!.content;
    const year = Object.entries(YEAR_OF).find(([cue]) => question.includes(cue))?.[1] ?? '0';
    const n = attempts.get(question) ?? 0;
    attempts.set(question, n + 1);
    return `Answer: ${n < (KNOWN[year] ?? 0) ? year : 'no idea'}`;
  });
}
const exactMatch = (ctx: RewardContext) => (answersMatch(completionText(ctx.completion), ctx.answer ?? '') ? 1 : 0);

describe('refreshTaskPool', () => {
  test('adds only in-band candidates, retires mastered tasks, and reports the refresh', async () => {
    const env = new SingleTurnEnv({
      name: 'pool',
      dataset: [
        { question: 'In which year was the battle of Hastings?', answer: '1066' },
        { question: 'In which year was the battle of Waterloo?', answer: '1815' },
      ],
      rubric: new Rubric({ funcs: [exactMatch] }),
    });
    const metrics = await refreshTaskPool(env, { documents: [DOCUMENT], generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), policy: knowsSomeYears(), k: 4, keep: [0.2, 0.8] }, 0, 10);
    expect(metrics).toMatchObject({ refresh: 0, step: 10, poolBefore: 2, candidates: 3, added: 1, retired: 1, poolSize: 2, rejected: { tooEasy: 1, tooHard: 1 } });
    expect(metrics.retiredQuestions).toEqual(['In which year was the battle of Hastings?']);
    expect(metrics.addedQuestions).toHaveLength(1);
    expect(metrics.addedQuestions[0]).toContain('went up in');
    expect(metrics.poolPassRates).toEqual([1, 0.5]);
    expect([...metrics.candidatePassRates].sort()).toEqual([0, 0.5, 1]);
    expect(env.dataset.map((task) => task.answer)).toEqual(['1815', '1948']);
    // GRPO's rollout source reads the pool's size at each step, so the next step draws from the refreshed pool.
    const source = environmentRollouts(env, knowsSomeYears());
    env.dataset.push({ question: 'In which year was the battle of Hastings?', answer: '1066' });
    expect(source.numTasks).toBe(3);
    env.dataset.pop();

    // The next refresh wraps around to the same document: nothing new to add, and nothing mastered.
    const again = await refreshTaskPool(env, { documents: [DOCUMENT], generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), policy: knowsSomeYears(), k: 4 }, 1, 20);
    expect(again).toMatchObject({ candidates: 2, added: 0, retired: 0, poolSize: 2 });
  });

  test('never retires the whole pool when nothing joins it', async () => {
    const env = new SingleTurnEnv({ name: 'pool', dataset: [{ question: 'In which year was the battle of Hastings?', answer: '1066' }], rubric: new Rubric({ funcs: [exactMatch] }) });
    const metrics = await refreshTaskPool(env, { documents: [{ name: 'empty.md', text: 'Nothing here has a year.' }], generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), policy: knowsSomeYears(), k: 4 }, 0, 5);
    expect(metrics).toMatchObject({ added: 0, retired: 0, poolSize: 1 });
  });
});
