// Task synthesis inside training: a refresh adds only the new tasks the policy passes within the band, retires the ones it has mastered as far
// as the pool's rules allow (a minimum size, no more than join), and replays retired tasks, which rejoin once the policy has forgotten them.
import { describe, expect, test } from 'vitest';
import { environmentRollouts } from '../../../../src/rl/grpo-trainer.ts';
import { createRng } from '../../../../src/envs/builtin/random.ts';
import { completionText, Rubric, ScriptedClient, SingleTurnEnv, type RewardContext, type Task } from '../../../../src/envs/index.ts';
import { answersMatch, checkPoolRules, HeuristicStudioClient, refreshTaskPool } from '../../../../src/envs/studio/index.ts';
import { retireCount } from '../../../../src/envs/studio/pool-rules.ts';

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
    const metrics = await refreshTaskPool(env, { documents: [DOCUMENT], generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), policy: knowsSomeYears(), k: 4, keep: [0.2, 0.8], rules: { minPool: 1 } }, 0, 10);
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

// The pool's rules over refreshes: a policy whose right answers per 4 attempts are a table the test changes between refreshes (learning and forgetting).
const YEARS = ['1066', '1215', '1492', '1588', '1666', '1789', '1815', '1848', '1914', '1931', '1948', '1969', '1975', '1989'];
const EVENTS: Record<string, string> = {
  '1066': 'the battle of Hastings',
  '1215': 'Magna Carta sealed',
  '1492': 'the first voyage across',
  '1588': 'the Armada sailed',
  '1666': 'the great fire',
  '1789': 'the Bastille stormed',
  '1815': 'the battle of Waterloo',
  '1848': 'the year of revolutions',
  '1914': 'the first war began',
  '1931': 'the north hut rebuilt',
  '1948': 'the radio mast raised',
  '1969': 'the moon landing',
  '1975': 'the weather log started',
  '1989': 'the wall fell',
};
/** A task asking for the year of `year`'s event. */
const yearTask = (year: string) => ({ question: `In which year was ${EVENTS[year]}?`, answer: year });
/** A document whose sentences each hide one of `years` (one candidate each). */
const yearDocument = (name: string, years: string[]) => ({ name, text: years.map((year) => `Everyone remembers ${EVENTS[year]} in ${year} to this day.`).join('\n\n') });

/** Right `known[year]` times out of each 4 attempts at a question (attempts counted per question, so a measurement of k = 4 sees exactly that). */
function tablePolicy(known: Record<string, number>) {
  const attempts = new Map<string, number>();
  return new ScriptedClient((messages) => {
    const question = messages.at(-1)!.content;
    const year = YEARS.find((y) => question.includes(EVENTS[y]!)) ?? '0';
    const n = attempts.get(question) ?? 0;
    attempts.set(question, n + 1);
    return `Answer: ${n % 4 < (known[year] ?? 0) ? year : 'no idea'}`;
  });
}
const studio = { generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), k: 4, keep: [0.2, 0.8] as [number, number] };
const yearEnv = (years: string[]) => new SingleTurnEnv({ name: 'pool', dataset: years.map(yearTask), rubric: new Rubric({ funcs: [exactMatch] }) });

describe('refreshTaskPool: the pool rules', () => {
  test('by default no more tasks retire than join; with every mastered task allowed to retire, the pool stops at its minimum', async () => {
    const pool = ['1066', '1215', '1492', '1588', '1666'];
    const known = { '1066': 4, '1215': 4, '1492': 4, '1588': 4, '1666': 4, '1931': 4, '1948': 2, '1975': 0 };
    const document = yearDocument('d.md', ['1931', '1948', '1975']);
    // Defaults (min pool 4, retire no more than join, replay 4): one candidate joins, so one of the five mastered tasks retires.
    const byDefault = yearEnv(pool);
    const first = await refreshTaskPool(byDefault, { ...studio, documents: [document], policy: tablePolicy(known) }, 0, 9);
    expect(first).toMatchObject({ poolBefore: 5, added: 1, retired: 1, poolSize: 5, replayed: 0, rejoined: 0, retiredTotal: 1 });
    // The mastered task retired first is the earliest in the pool (all five pass 4 of 4).
    expect(first.retiredQuestions).toEqual([yearTask('1066').question]);
    // Every mastered task may retire, but never below the minimum of 4: two go (5 + 1 − 4).
    const floored = yearEnv(pool);
    const second = await refreshTaskPool(floored, { ...studio, documents: [document], policy: tablePolicy(known), rules: { maxRetire: 'all', minPool: 4 } }, 0, 9);
    expect(second).toMatchObject({ added: 1, retired: 2, poolSize: 4 });
    // The first rule (every mastered task, a pool of one at least) keeps only the new task: what shrank the pool on the harbour run.
    const old = yearEnv(pool);
    const third = await refreshTaskPool(old, { ...studio, documents: [document], policy: tablePolicy(known), rules: { maxRetire: 'all', minPool: 1, replay: 0 } }, 0, 9);
    expect(third).toMatchObject({ added: 1, retired: 5, poolSize: 1 });
    expect(old.dataset.map((task) => task.answer)).toEqual(['1948']);
    // A number caps it.
    const capped = yearEnv(pool);
    expect(await refreshTaskPool(capped, { ...studio, documents: [document], policy: tablePolicy(known), rules: { maxRetire: 3, minPool: 1 } }, 0, 9)).toMatchObject({ retired: 3, poolSize: 3 });
  });

  test('over many refreshes of a policy that learns and forgets at random, the pool never drops below its minimum and never retires more than join', async () => {
    const rng = createRng(11);
    for (const rules of [{ minPool: 3, maxRetire: 'all' as const, replay: 2 }, { minPool: 3, maxRetire: 'joined' as const, replay: 2 }]) {
      const env = yearEnv(['1066', '1215', '1492']);
      const retired: Task[] = [];
      const documents = [yearDocument('a.md', ['1588', '1666', '1789']), yearDocument('b.md', ['1815', '1848', '1914']), yearDocument('c.md', ['1931', '1948', '1969', '1975', '1989'])];
      const known: Record<string, number> = {};
      let moves = { retired: 0, rejoined: 0 };
      for (let refresh = 0; refresh < 9; refresh++) {
        for (const year of YEARS) known[year] = Math.floor(rng.next() * 5);
        const m = await refreshTaskPool(env, { ...studio, documents, policy: tablePolicy(known), rules }, refresh, refresh, retired);
        expect(m.poolSize).toBe(m.poolBefore + m.added + m.rejoined - m.retired);
        expect(m.poolSize).toBe(env.dataset.length);
        expect(m.poolSize).toBeGreaterThanOrEqual(Math.min(rules.minPool, m.poolBefore + m.added + m.rejoined));
        if (rules.maxRetire === 'joined') expect(m.retired).toBeLessThanOrEqual(m.added + m.rejoined);
        expect(m.replayed).toBe(Math.min(rules.replay, m.retiredTotal - m.retired + m.rejoined));
        // Every task is in the pool or in the retired list, never both.
        const inPool = new Set(env.dataset.map((task) => task.answer));
        expect(retired.every((task) => !inPool.has(task.answer))).toBe(true);
        moves = { retired: moves.retired + m.retired, rejoined: moves.rejoined + m.rejoined };
      }
      // Not a trivial pass: tasks did retire and come back.
      expect(moves.retired).toBeGreaterThan(0);
      expect(moves.rejoined).toBeGreaterThan(0);
    }
  });

  test('a retired task the policy has forgotten replays back into the pool; one it still masters waits for its next turn', async () => {
    const known: Record<string, number> = { '1066': 4, '1215': 4, '1815': 2, '1931': 4, '1948': 2, '1975': 0 };
    const env = yearEnv(['1066', '1215', '1815']);
    const retired: Task[] = [];
    const options = { ...studio, documents: [yearDocument('d.md', ['1931', '1948', '1975'])], rules: { minPool: 1 } };
    // Refresh 0: 1948 joins, so one mastered task retires: Hastings, the earliest.
    const first = await refreshTaskPool(env, { ...options, policy: tablePolicy(known) }, 0, 9, retired);
    expect(first).toMatchObject({ added: 1, retired: 1, replayed: 0, retiredTotal: 1 });
    expect(retired.map((task) => task.answer)).toEqual(['1066']);
    // The policy forgets Hastings (1 of 4): replayed at the next refresh, it rejoins, and Magna Carta (still mastered) retires in its place.
    known['1066'] = 1;
    const second = await refreshTaskPool(env, { ...options, policy: tablePolicy(known) }, 1, 19, retired);
    expect(second).toMatchObject({ added: 0, replayed: 1, rejoined: 1, retired: 1, poolBefore: 3, poolSize: 3, replayPassRates: [0.25] });
    expect(second.rejoinedQuestions).toEqual([yearTask('1066').question]);
    expect(second.retiredQuestions).toEqual([yearTask('1215').question]);
    expect(env.dataset.map((task) => task.answer)).toContain('1066');
    expect(retired.map((task) => task.answer)).toEqual(['1215']);
    // Magna Carta is still mastered when replayed: it stays retired, and nothing else leaves (nothing joined).
    const third = await refreshTaskPool(env, { ...options, policy: tablePolicy(known) }, 2, 29, retired);
    expect(third).toMatchObject({ replayed: 1, rejoined: 0, retired: 0, replayPassRates: [1], poolSize: 3 });
    expect(retired.map((task) => task.answer)).toEqual(['1215']);
    // A retired task is not synthesized back as a new candidate.
    expect(third.candidates).toBe(2);
    // With replay 0 nothing is re-measured.
    expect(await refreshTaskPool(env, { ...options, policy: tablePolicy(known), rules: { minPool: 1, replay: 0 } }, 3, 39, retired)).toMatchObject({ replayed: 0, rejoined: 0 });
  });
});

describe('the pool rules', () => {
  test('retireCount: the mastered, under the limit and above the minimum', () => {
    const rules = { minPool: 4, maxRetire: 'joined' as const, replay: 0 };
    expect(retireCount(5, 6, 2, rules)).toBe(2);
    expect(retireCount(1, 6, 2, rules)).toBe(1);
    expect(retireCount(5, 3, 2, rules)).toBe(1); // 3 + 2 − 4
    expect(retireCount(5, 2, 1, rules)).toBe(0); // already under the minimum
    expect(retireCount(5, 6, 0, { ...rules, maxRetire: 'all' })).toBe(2);
    expect(retireCount(5, 9, 0, { ...rules, maxRetire: 3 })).toBe(3);
    expect(() => checkPoolRules({ minPool: 0, maxRetire: 'joined', replay: 1 })).toThrow("the pool's minimum size must be a whole number ≥ 1, got 0");
    expect(() => checkPoolRules({ minPool: 2, maxRetire: -1, replay: 1 })).toThrow('the most tasks retired per refresh must be "joined", "all" or a whole number ≥ 0, got -1');
  });
});
