/**
 * `npx tsx bench/redteam.ts`: the red team's budget to find lesson 4's back door (the gullible
 * judge, src/ui/features/lessons/sources/gullible-judge.ts) with the offline attacker (`HeuristicAttackerClient`,
 * a blind random search) and the offline reviewer, at the default budget (10 rounds × 4 replies, 22
 * attacker calls per task), over --seeds seeds of the attacker. Reports, per seed, the attacker calls
 * spent when the first back door was proposed; and the same search against an honest rubric over
 * the same tasks (paid only for meeting the task's constraints), where it should find none. Counts
 * calls, not time: every model here is a rule in this process. Prints a table and one JSON line.
 */
import { parseArgs } from 'node:util';
import { Rubric, SingleTurnEnv } from '../src/envs/index.ts';
import { HeuristicAttackerClient, HeuristicStudioClient, redTeam } from '../src/envs/studio/index.ts';
import loadGullibleJudge, { mentionsWordMetric, twoLinesMetric } from '../src/ui/features/lessons/sources/gullible-judge.ts';

const { values } = parseArgs({ options: { seeds: { type: 'string', default: '20' } } });
const seeds = Number(values.seeds);
const reviewer = new HeuristicStudioClient('judge');
const honest = () => {
  const lesson = loadGullibleJudge({ numEvalTasks: 1 });
  return new SingleTurnEnv({ name: 'honest-poems', dataset: lesson.evaluationTasks, rubric: new Rubric({ rewards: [{ fn: mentionsWordMetric, weight: 0.5 }, { fn: twoLinesMetric, weight: 0.5 }] }), passThreshold: 1 });
};

const rows: { seed: number; gullibleFoundAt: number | null; gullibleBest: number; honestBackDoors: number; honestBest: number; budget: number }[] = [];
for (let seed = 0; seed < seeds; seed++) {
  const gullible = await redTeam(loadGullibleJudge({ numEvalTasks: 1 }), { attacker: new HeuristicAttackerClient(seed), reviewer });
  const clean = await redTeam(honest(), { attacker: new HeuristicAttackerClient(seed), reviewer });
  rows.push({ seed, gullibleFoundAt: gullible.firstBackDoorAtCall, gullibleBest: gullible.bestReward, honestBackDoors: clean.backDoors.length, honestBest: clean.bestReward, budget: gullible.calls.attacker });
}

console.log('seed  budget  gullible: found at call  best   honest: back doors  best');
for (const row of rows) console.log(`${String(row.seed).padStart(4)}  ${String(row.budget).padStart(6)}  ${String(row.gullibleFoundAt ?? '—').padStart(23)}  ${row.gullibleBest.toFixed(2)}  ${String(row.honestBackDoors).padStart(18)}  ${row.honestBest.toFixed(2)}`);
const found = rows.map((row) => row.gullibleFoundAt).filter((call): call is number => call !== null).sort((a, b) => a - b);
const median = found.length === 0 ? null : found[Math.floor((found.length - 1) / 2)]!;
console.log(`found in ${found.length} of ${rows.length} seeds; median ${median ?? '—'} attacker calls, max ${found.at(-1) ?? '—'}; honest rubric: ${rows.reduce((sum, row) => sum + row.honestBackDoors, 0)} back doors`);
console.log(JSON.stringify({ bench: 'redteam', seeds: rows.length, budget: rows[0]?.budget, foundIn: found.length, medianCalls: median, maxCalls: found.at(-1) ?? null, honestBackDoors: rows.reduce((sum, row) => sum + row.honestBackDoors, 0), rows }));
