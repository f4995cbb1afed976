/**
 * `npx tsx bench/lesson7.ts`: lesson 7 headless — nano-tools on the Parcelo tasks planted backwards
 * (src/ui/features/lessons/sources/parcel-desk.ts, as the tab's editor shows it), measured on the 12
 * held-out tasks before the warm-up, after it (SFT on demonstrations written from the planted paths
 * of the 20 training tasks and the 240 practice tasks) and after GRPO, by `tabrl train FILE --lesson`
 * itself (the real binary, the lesson's preset; --quick for its quick row; --model DIR or a shipped
 * model's name for another policy than the preset's nano-tools; --steps N for N GRPO steps instead of
 * the preset's 10). Prints a table (reward,
 * pass rate, tool use and each reward per measurement, the first planted call's partial credit
 * included; per GRPO step the reward and the share of flat groups, which carry no learning signal)
 * and one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { toLessonFacingSource } from '../src/ui/features/lessons/lesson-facing-source.ts';
import { PARCEL_LESSON_MODEL } from '../src/rl/lesson.ts';

const { values } = parseArgs({
  options: { backend: { type: 'string', default: 'cpu' }, seed: { type: 'string', default: '0' }, quick: { type: 'boolean' }, 'time-limit': { type: 'string', default: '30' }, model: { type: 'string' }, steps: { type: 'string' } },
});

const dir = mkdtempSync(join(tmpdir(), 'tabrl-lesson7-'));
const file = join(dir, 'parcel-desk.ts');
writeFileSync(file, toLessonFacingSource(readFileSync(new URL('../src/ui/features/lessons/sources/parcel-desk.ts', import.meta.url), 'utf8')));
const out = join(dir, 'run');
// A loaded machine may hold environment code past the default 5 s; the limit guards against loops, not speed.
const args = ['train', file, values.quick ? '--quick' : '--lesson', '--backend', values.backend, '--seed', values.seed, '--time-limit', values['time-limit'], '--out', out, ...(values.model ? ['--model', values.model] : []), ...(values.steps ? ['--steps', values.steps] : [])];
const started = performance.now();
const run = spawnSync(process.execPath, [new URL('../bin/tabrl.mjs', import.meta.url).pathname, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
const seconds = (performance.now() - started) / 1000;
if (run.status !== 0) throw new Error(`tabrl ${args.join(' ')} exited with ${run.status}`);

interface Summary {
  reward: { mean: number };
  passRate: number;
  scores: Record<string, number>;
  numTasks: number;
}
const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
  evaluations: { label: string; summary: Summary }[];
  grpo: { step: number; reward: { mean: number }; zeroStdFraction: number; passRate: number }[];
  demonstrationsKept: number;
};
const evaluations = report.evaluations.map(({ label, summary }) => ({
  label,
  tasks: summary.numTasks,
  reward: summary.reward.mean,
  passRate: summary.passRate,
  usedTools: summary.scores.usedToolsMetric ?? 0,
  exactMatch: summary.scores.exactMatchReward ?? 0,
  reachedState: summary.scores.reachedStateReward ?? 0,
  firstCall: summary.scores.firstCallReward ?? 0,
}));
const grpo = report.grpo.map((step) => ({ step: step.step + 1, reward: step.reward.mean, passRate: step.passRate, flatGroups: step.zeroStdFraction }));

const fixed = (value: number) => value.toFixed(3);
console.log(`lesson 7 · ${values.model ?? PARCEL_LESSON_MODEL} · ${values.backend} · seed ${values.seed}${values.quick ? ' · quick' : ''} · ${report.demonstrationsKept} demonstrations kept · ${seconds.toFixed(0)} s`);
console.log('| measurement | tasks | reward | pass rate | usedToolsMetric | firstCallReward | exactMatchReward | reachedStateReward |');
console.log('|---|---|---|---|---|---|---|---|');
for (const row of evaluations)
  console.log(`| ${row.label} | ${row.tasks} | ${fixed(row.reward)} | ${fixed(row.passRate)} | ${fixed(row.usedTools)} | ${fixed(row.firstCall)} | ${fixed(row.exactMatch)} | ${fixed(row.reachedState)} |`);
console.log('| GRPO step | reward | pass rate | flat groups |');
console.log('|---|---|---|---|');
for (const row of grpo) console.log(`| ${row.step} | ${fixed(row.reward)} | ${fixed(row.passRate)} | ${fixed(row.flatGroups)} |`);
console.log(JSON.stringify({ bench: 'lesson7', model: values.model ?? PARCEL_LESSON_MODEL, backend: values.backend, seed: Number(values.seed), quick: values.quick === true, demonstrationsKept: report.demonstrationsKept, seconds, evaluations, grpo }));
