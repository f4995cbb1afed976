/**
 * `npx tsx bench/synth-training.ts`: task synthesis during training against a fixed pool, with the
 * real `tabrl` binary on the fast CPU backend. The documents are docs/examples/harbour-codes
 * (scripts/make-harbour-docs.mjs): each sentence names a shed by a two-letter code, and the
 * heuristic generator asks for the code. For each seed it trains the local policy (default nano) on
 * the pool `tabrl synth` makes from start.md, for --steps GRPO steps, with the same flags and seed in
 * each arm of --arms: `fixed` on that fixed pool; `synth` with `--synth-docs more/` refreshing the
 * pool every --refresh-every steps under the pool rules' defaults (a minimum pool, no more retired
 * than join, replay of retired tasks), or the rules given by --min-pool, --max-retire and --replay;
 * `old` the same refresh with the first rule (`--min-pool 1 --max-retire all --replay 0`: every
 * mastered task retired; --lr: GRPO's learning rate, default the table's). It reports the pool pass rate over steps (each GRPO step's pass rate over
 * its rollouts, which are drawn from the pool as it stands), what each refresh did, and, as a
 * measure outside either pool, the pass rate of the untrained policy and of each run's final model
 * on every question the documents give (start.md and more/, sampled at temperature 1). Everything
 * runs offline; times depend on the machine's load. Prints a table and one JSON line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '60' },
    seeds: { type: 'string', default: '1,2,3' },
    'refresh-every': { type: 'string', default: '10' },
    'refresh-k': { type: 'string', default: '8' },
    keep: { type: 'string', default: '0.2-0.8' },
    model: { type: 'string', default: 'nano' },
    'eval-rollouts': { type: 'string', default: '8' },
    lr: { type: 'string' },
    arms: { type: 'string', default: 'fixed,synth,old' },
    'min-pool': { type: 'string' },
    'max-retire': { type: 'string' },
    replay: { type: 'string' },
    'run-timeout': { type: 'string', default: '900' },
    out: { type: 'string' },
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'tabrl.mjs');
const DOCS = join(ROOT, 'docs', 'examples', 'harbour-codes');
const out = values.out ?? mkdtempSync(join(tmpdir(), 'tabrl-synth-training-'));
const steps = Number(values.steps);
const every = Number(values['refresh-every']);
const seeds = values.seeds.split(',').map(Number);
const runTimeoutMs = Number(values['run-timeout']) * 1000;
/** The runs killed after --run-timeout and run again. */
const hung: string[] = [];

/**
 * Runs `tabrl …args`, failing the bench with its stderr when it fails; returns its output. A run that
 * outlives --run-timeout seconds is killed and run once more (the same seed gives the same run):
 * on this machine a fast-CPU-backend process once hung with its main thread and its kernel worker
 * both waiting on the kernels' control block, and a bench should say so rather than wait forever.
 */
function tabrl(args: string[]): string {
  for (let attempt = 1; ; attempt++) {
    try {
      return execFileSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26, timeout: runTimeoutMs, killSignal: 'SIGKILL' });
    } catch (error) {
      const failure = error as { code?: string; stderr?: string };
      if (failure.code === 'ETIMEDOUT' && attempt === 1) {
        hung.push(`${args[0]} ${args[args.indexOf('--out') + 1]}`);
        console.error(`tabrl ${args.join(' ')} ran past ${runTimeoutMs / 1000} s and was killed; running it again`);
        continue;
      }
      throw new Error(`tabrl ${args.join(' ')} failed:\n${failure.stderr ?? String(error)}`);
    }
  }
}
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const synth = (inputs: string[], dir: string) => tabrl(['synth', ...inputs, '--generator-model', 'heuristic', '--solver-model', 'heuristic', '-k', '1', '--out', dir, '--overwrite']);
synth([join(DOCS, 'start.md')], join(out, 'start'));
synth([join(DOCS, 'start.md'), join(DOCS, 'more')], join(out, 'all'));
const everyQuestion = lines(join(out, 'all', 'tasks.jsonl')).filter((task) => task.kept === true).length;

const train = [
  'train',
  join(out, 'start', 'env.ts'),
  '--model',
  values.model,
  '--backend',
  'cpu',
  '--sft-steps',
  '0',
  '--steps',
  String(steps),
  '--tasks-per-step',
  '4',
  '--group',
  '8',
  '--max-tokens',
  '2',
  '--eval-tasks',
  '0',
  ...(values.lr ? ['--lr', values.lr] : []),
];
const refresh = [
  '--synth-docs',
  join(DOCS, 'more'),
  '--generator-model',
  'heuristic',
  '--solver-model',
  'heuristic',
  '--refresh-every',
  String(every),
  '--refresh-k',
  values['refresh-k'],
  '--keep',
  values.keep,
];

type ArmName = 'fixed' | 'synth' | 'old';
const ARM_NAMES: ArmName[] = values.arms.split(',').map((name) => {
  if (name !== 'fixed' && name !== 'synth' && name !== 'old') throw new Error(`--arms takes fixed, synth and old, got "${name}"`);
  return name;
});
const ARM_FLAGS: Record<ArmName, string[]> = {
  fixed: [],
  synth: [
    ...refresh,
    ...(values['min-pool'] ? ['--min-pool', values['min-pool']] : []),
    ...(values['max-retire'] ? ['--max-retire', values['max-retire']] : []),
    ...(values.replay ? ['--replay', values.replay] : []),
  ],
  old: [...refresh, '--min-pool', '1', '--max-retire', 'all', '--replay', '0'],
};
const ARM_LABELS: Record<ArmName, string> = { fixed: 'fixed pool', synth: 'synthesis, pool rules', old: 'synthesis, retire all' };

/** The pass rate on every question of the documents of a model (`nano`, or a run's exported model folder), and its per-question pass rates. */
function passOnEveryQuestion(model: string, label: string): { passRate: number; questionsAtHalf: number } {
  const dir = join(out, `eval-${label}`);
  tabrl([
    'eval',
    join(out, 'all', 'env.ts'),
    '--model',
    `local:${model}`,
    '--max-tokens',
    '2',
    '-n',
    String(everyQuestion),
    '-r',
    values['eval-rollouts'],
    '--temperature',
    '1',
    '--seed',
    '5',
    '--out',
    dir,
    '--overwrite',
  ]);
  const records = lines(join(dir, 'results.jsonl'));
  const byQuestion = new Map<unknown, number[]>();
  for (const record of records) byQuestion.set(record.task_index, [...(byQuestion.get(record.task_index) ?? []), record.reward as number]);
  const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
  return { passRate: mean(records.map((record) => record.reward as number)), questionsAtHalf: [...byQuestion.values()].filter((rewards) => mean(rewards) >= 0.5).length };
}

interface Arm {
  seed: number;
  passRates: number[];
  wallSeconds: number;
  refreshes: Record<string, unknown>[];
  final: { passRate: number; questionsAtHalf: number };
}
const untrained = passOnEveryQuestion(values.model, 'untrained');
const arms: Record<ArmName, Arm[]> = { fixed: [], synth: [], old: [] };
for (const seed of seeds) {
  for (const arm of ARM_NAMES) {
    const dir = join(out, `${arm}-${seed}`);
    const started = performance.now();
    tabrl([...train, '--seed', String(seed), ...ARM_FLAGS[arm], '--out', dir, '--overwrite']);
    const wallSeconds = (performance.now() - started) / 1000;
    const metrics = lines(join(dir, 'metrics.jsonl'));
    arms[arm].push({
      seed,
      passRates: metrics.filter((line) => line.phase === 'grpo').map((line) => line.passRate as number),
      wallSeconds,
      refreshes: metrics.filter((line) => line.phase === 'pool-refresh'),
      final: passOnEveryQuestion(join(dir, 'model'), `${arm}-${seed}`),
    });
  }
}

const mean = (list: number[]) => (list.length === 0 ? 0 : list.reduce((a, b) => a + b, 0) / list.length);
const windowMean = (arm: Arm[], from: number) => mean(arm.flatMap((run) => run.passRates.slice(from, from + every)));
const refreshArms = ARM_NAMES.filter((arm) => arm !== 'fixed');
console.log(`pool pass rate over GRPO steps (mean of the steps' pass rates, over seeds ${seeds.join(', ')}); ${values.model}, ${everyQuestion} questions in the documents`);
console.log(`steps      ${ARM_NAMES.map((arm) => ARM_LABELS[arm].padEnd(24)).join('')}`);
for (let from = 0; from < steps; from += every) {
  console.log(`${String(from + 1).padStart(3)}–${String(Math.min(steps, from + every)).padEnd(3)}    ${ARM_NAMES.map((arm) => windowMean(arms[arm], from).toFixed(3).padEnd(24)).join('')}`);
}
for (const arm of refreshArms) {
  console.log(`${ARM_LABELS[arm]}: each refresh, per seed: pool size before → after (added + rejoined of replayed − retired)`);
  for (let from = 0; from < steps; from += every) {
    const refreshAt = (run: Arm) => run.refreshes.find((line) => line.step === from + every - 1);
    const cells = arms[arm].map((run) => {
      const line = refreshAt(run);
      return line ? `${String(line.poolBefore)} → ${String(line.poolSize)} (+${String(line.added)} +${String(line.rejoined ?? 0)}/${String(line.replayed ?? 0)} −${String(line.retired)})` : '—';
    });
    console.log(`  after step ${String(from + every).padEnd(4)} ${cells.map((cell) => cell.padEnd(26)).join('')}`);
  }
}
console.log(`every question of the documents, pass rate (questions passed half the time or more of ${everyQuestion}):`);
console.log(`  untrained ${values.model}: ${untrained.passRate.toFixed(3)} (${untrained.questionsAtHalf})`);
for (const arm of ARM_NAMES) {
  console.log(
    `  ${ARM_LABELS[arm].padEnd(22)}: ${arms[arm].map((run) => `seed ${run.seed} ${run.final.passRate.toFixed(3)} (${run.final.questionsAtHalf})`).join(', ')}; mean ${mean(arms[arm].map((run) => run.final.passRate)).toFixed(3)}; ${mean(arms[arm].map((run) => run.wallSeconds)).toFixed(0)} s a run`,
  );
}
console.log(`(runs in ${out}${hung.length > 0 ? `; ${hung.length} run${hung.length === 1 ? '' : 's'} hung, killed and run again: ${hung.join(', ')}` : ''})`);
console.log(
  JSON.stringify({
    bench: 'synth-training',
    model: values.model,
    steps,
    lr: values.lr ?? 'default',
    refreshEvery: every,
    refreshK: Number(values['refresh-k']),
    keep: values.keep,
    rules: { minPool: values['min-pool'] ?? 'default', maxRetire: values['max-retire'] ?? 'default', replay: values.replay ?? 'default' },
    seeds,
    questions: everyQuestion,
    hungRuns: hung.length,
    untrained,
    runs: Object.fromEntries(
      ARM_NAMES.map((arm) => [
        arm,
        arms[arm].map((run) => ({
          seed: run.seed,
          passRates: run.passRates,
          final: run.final,
          wallSeconds: Math.round(run.wallSeconds),
          refreshes: run.refreshes.map((line) => ({
            step: line.step,
            poolBefore: line.poolBefore,
            poolSize: line.poolSize,
            candidates: line.candidates,
            added: line.added,
            retired: line.retired,
            replayed: line.replayed,
            rejoined: line.rejoined,
            histogram: line.histogram,
          })),
        })),
      ]),
    ),
  }),
);
