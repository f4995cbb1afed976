/**
 * Measures lesson 6 on the CPU backend (or with --backend webgpu on TabRL's WebGPU backend through
 * Dawn, sampling with the WebGPU decoder): nano's Wordle win rate on fresh games from the answer list
 * (the game's default evaluation split: the main table) and on the held-out answers (the
 * generalisation row), greedy and sampled, turns per win and invalid-guess rate — before the
 * warm-up, after it, after GRPO, and for a control that spends GRPO's wall time on more warm-up SFT
 * instead (so a gain is RL's, not more SFT). Prints markdown tables and one JSON line (with the
 * GRPO curve), for BENCHMARKS.md.
 *
 *   nice -n 10 npx tsx scripts/nano/wordle-measure.ts [--model nano|FOLDER] [--seed S] [--answers practice|training|demonstration]
 *     [--eval-tasks 100] [--sft-steps N] [--sft-lr X]
 *     [--grpo-steps N] [--tasks-per-step N] [--group-size N] [--grpo-lr X] [--curve-every N] [--quick]
 *     [--only grpo|control] [--control-steps N] [--warm-state FILE] [--minutes M] [--turn-rewards] [--turn-credit return-to-go|turn]
 *     [--reward-weights JSON] [--kl-beta B] [--pool-size N] [--backend cpu|webgpu]
 * --minutes M stops GRPO (and the control) after M minutes of training, measuring curve points left
 * out, so a run bounded in time still ends with its table; the steps actually run are reported.
 * The two arms can run at once: `--only grpo --warm-state F` warms up and writes F; then
 * `--only control --control-steps N --warm-state F` (started once F exists) reads it.
 * --turn-rewards scores every move too (the compact game's turn rewards), so GRPO credits each
 * move on its own (`--turn-credit`: its own and later moves' rewards, the default, or its own only).
 * --reward-weights '{"win":0,"fewerTurns":0}' changes some reward weights by name (the game's
 * `rewardWeights`), for ablations; the win rate is measured from the win score, whatever its weight.
 * --kl-beta B adds GRPO's KL penalty to the weights it starts from (the warmed-up model).
 * --pool-size N plays the compact game with an N-word answer pool (wordle-compact.ts); by default the
 * pool the model was pretrained on (the poolSize in its folder's pretraining.json), else 300. The
 * held-out answers are the same 100 for every pool size, so win rates compare across pools.
 * --seed S seeds training (its games, batches and samples; default the lesson's); the evaluation games
 * stay the same for every seed (evalSeed fixed at the lesson's default), so seeds compare.
 * --answers picks the training games' answers (the game's `answers`; default the lesson's).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { deserialize, serialize } from 'node:v8';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../src/envs/builtin/index.ts';
import { evaluate, ScriptedClient, type EvaluationResult } from '../../src/envs/index.ts';
import { LocalChatClient } from '../../src/gpu/inference/local-chat-client.ts';
import { modelFolderOf, openModel, parseBackendName } from '../../src/cli/open-model.ts';
import { checkCompactPoolSize, COMPACT_HELD_OUT, COMPACT_POOL_SIZE, compactPoolOf, type CompactWordleState } from '../../src/envs/builtin/wordle-compact.ts';
import { EVAL_SEED_OFFSET } from '../../src/envs/builtin/random.ts';
import { WORDLE_LESSON_ENVIRONMENT, WORDLE_LESSON_OPTIONS, WORDLE_LESSON_QUICK_OPTIONS } from '../../src/rl/lesson.ts';
import { runTraining, type TrainingRunOptions } from '../../src/rl/training-run.ts';
import type { NamedTensors, OptimizerState } from '../../src/gpu/model/backend.ts';
import { TURN_CREDITS, type TurnCredit } from '../../src/rl/advantages.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    'eval-tasks': { type: 'string' },
    'sft-steps': { type: 'string' },
    'grpo-steps': { type: 'string' },
    'tasks-per-step': { type: 'string' },
    'group-size': { type: 'string' },
    'sft-lr': { type: 'string' },
    'grpo-lr': { type: 'string' },
    'curve-every': { type: 'string', default: '0' },
    only: { type: 'string' },
    'control-steps': { type: 'string' },
    'warm-state': { type: 'string' },
    model: { type: 'string', default: 'nano' },
    temperature: { type: 'string', default: '1' },
    minutes: { type: 'string' },
    'turn-rewards': { type: 'boolean' },
    'turn-credit': { type: 'string' },
    'reward-weights': { type: 'string' },
    'kl-beta': { type: 'string' },
    'pool-size': { type: 'string' },
    backend: { type: 'string', default: 'cpu' },
    seed: { type: 'string' },
    answers: { type: 'string' },
  },
});
const lessonPresetOptions = values.quick ? WORDLE_LESSON_QUICK_OPTIONS : WORDLE_LESSON_OPTIONS;
const trainingSeed = values.seed !== undefined ? Number(values.seed) : lessonPresetOptions.seed;
const lesson: TrainingRunOptions = { ...lessonPresetOptions, seed: trainingSeed };
const evalTasks = Number(values['eval-tasks'] ?? lesson.evalTasks);
const sftSteps = Number(values['sft-steps'] ?? lesson.warmup!.steps);
const grpoSteps = Number(values['grpo-steps'] ?? lesson.grpo!.steps);
const tasksPerStep = Number(values['tasks-per-step'] ?? lesson.grpo!.tasksPerStep);
const groupSize = Number(values['group-size'] ?? lesson.grpo!.groupSize);
const sftLr = Number(values['sft-lr'] ?? lesson.warmup!.lr);
const grpoLr = Number(values['grpo-lr'] ?? lesson.grpo!.schedule?.lr ?? 5e-4);
const sampledTemperature = Number(values.temperature);
const klBeta = Number(values['kl-beta'] ?? 0);
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)}s`;

/** The pool size a model folder was pretrained on (its pretraining.json's poolSize), or undefined when it does not say. */
function pretrainedPoolSize(model: string): number | undefined {
  const record = model === 'tiny' ? undefined : join(modelFolderOf(model), 'pretraining.json');
  if (record === undefined || !existsSync(record)) return undefined;
  const poolSize = (JSON.parse(readFileSync(record, 'utf8')) as { poolSize?: unknown }).poolSize;
  return typeof poolSize === 'number' ? poolSize : undefined;
}

const poolSize = checkCompactPoolSize(values['pool-size'] !== undefined ? Number(values['pool-size']) : (pretrainedPoolSize(values.model!) ?? COMPACT_POOL_SIZE));
const backendName = parseBackendName(values.backend);
const rewardWeights = values['reward-weights'] !== undefined ? (JSON.parse(values['reward-weights']) as Record<string, number>) : undefined;
const envArgs = {
  ...WORDLE_LESSON_ENVIRONMENT.args,
  poolSize,
  seed: trainingSeed,
  evalSeed: EVAL_SEED_OFFSET, // the same evaluation games for every --seed
  ...(values.answers !== undefined ? { answers: values.answers } : {}),
  ...(values['turn-rewards'] ? { turnRewards: true } : {}),
  ...(rewardWeights ? { rewardWeights } : {}),
};
// The main table: fresh games from the whole answer list (the game's default split); the
// generalisation row: the held-out answers, which no training game has.
const env = await loadBuiltinEnvironment(WORDLE_LESSON_ENVIRONMENT.name, { ...envArgs, evalSplit: 'fresh', numEvalTasks: evalTasks });
const heldOutEnv = await loadBuiltinEnvironment(WORDLE_LESSON_ENVIRONMENT.name, { ...envArgs, evalSplit: 'held-out', numEvalTasks: Math.min(evalTasks, COMPACT_HELD_OUT) });
const turnCredit = values['turn-credit'];
if (turnCredit !== undefined && !(TURN_CREDITS as readonly string[]).includes(turnCredit)) throw new Error(`--turn-credit must be ${TURN_CREDITS.join(' or ')}, got ${turnCredit}`);
const expert = new ScriptedClient(await loadBuiltinExpert('wordle', env));
const pool = compactPoolOf(env)!;
// On WebGPU, measurements and GRPO's rollouts sample with the WebGPU decoder (openModel's createDecoder; the CPU decoder otherwise).
const model = await openModel(values.model!, { backend: backendName, seed: lesson.seed });
console.error(`model ${values.model} on ${model.device} · pool ${poolSize} words`);
const policy = new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, defaultMaxTokens: lesson.maxTokens, ...(model.createDecoder ? { createDecoder: model.createDecoder } : {}) });

/** Win rate, turns per win and invalid-guess rate of one evaluation. */
interface Measurement {
  winRate: number;
  turnsPerWin: number | null;
  invalidRate: number;
  consistentGuesses: number;
  consistency: number;
  reward: number;
  /** Of the valid guesses, the share that are held-out, practice and demonstration words (in the 300-word pool a third each would be no preference; in a bigger one, each part's share of the pool): where the model's guesses lean. */
  guessShares: { heldOut: number; practice: number; demonstration: number };
  /** Games and win rate by the set the game's answer belongs to: where a gain comes from (demonstration answers were shown played, practice answers are GRPO's, held-out ones no training game's). */
  byAnswerSet: Record<AnswerSet, { games: number; winRate: number }>;
}

/** The parts of the answer pool, as the per-set breakdown names them. */
type AnswerSet = 'demonstration' | 'practice' | 'heldOut';
const ANSWER_SETS: readonly AnswerSet[] = ['demonstration', 'practice', 'heldOut'];

/** Games and win rate of `records` by their answer's part of the pool. */
function winsByAnswerSet(records: EvaluationResult['records']): Measurement['byAnswerSet'] {
  const setOf = (answer: string): AnswerSet => (pool.practice.includes(answer) ? 'practice' : pool.demonstration.includes(answer) ? 'demonstration' : 'heldOut');
  const tally = { demonstration: { games: 0, wins: 0 }, practice: { games: 0, wins: 0 }, heldOut: { games: 0, wins: 0 } };
  for (const record of records) {
    const part = tally[setOf(String(record.answer))];
    part.games += 1;
    if (record.scores.compactWinReward === 1) part.wins += 1;
  }
  const rate = ({ games, wins }: { games: number; wins: number }) => ({ games, winRate: games === 0 ? 0 : wins / games });
  return { demonstration: rate(tally.demonstration), practice: rate(tally.practice), heldOut: rate(tally.heldOut) };
}

function summarise(result: EvaluationResult): Measurement {
  const records = result.records;
  const wins = records.filter((record) => record.scores.compactWinReward === 1);
  const moves = records.reduce((sum, record) => sum + (record.scores.guessesMetric ?? 0) + (record.scores.compactInvalidGuessesMetric ?? 0), 0);
  const invalid = records.reduce((sum, record) => sum + (record.scores.compactInvalidGuessesMetric ?? 0), 0);
  return {
    winRate: wins.length / records.length,
    turnsPerWin: wins.length === 0 ? null : wins.reduce((sum, record) => sum + record.scores.guessesMetric!, 0) / wins.length,
    invalidRate: moves === 0 ? 0 : invalid / moves,
    consistentGuesses: result.summary.scores.consistentGuessesMetric ?? 0,
    consistency: result.summary.scores.consistencyReward ?? 0,
    reward: result.summary.reward.mean,
    guessShares: guessShares(records.flatMap((record) => (record.state as CompactWordleState).guesses ?? [])),
    byAnswerSet: winsByAnswerSet(records),
  };
}

/** "held-out 31% · practice 35% · demonstration 34%". */
function describeShares(shares: Measurement['guessShares']): string {
  return `held-out ${(100 * shares.heldOut).toFixed(0)}% · practice ${(100 * shares.practice).toFixed(0)}% · demonstration ${(100 * shares.demonstration).toFixed(0)}%`;
}

/** Of `guesses`, the share in each part of the game's answer pool. */
function guessShares(guesses: readonly string[]): Measurement['guessShares'] {
  const share = (words: ReadonlySet<string>) => (guesses.length === 0 ? 0 : guesses.filter((guess) => words.has(guess)).length / guesses.length);
  const parts = { heldOut: new Set(pool.heldOut), practice: new Set(pool.practice), demonstration: new Set(pool.demonstration) };
  return { heldOut: share(parts.heldOut), practice: share(parts.practice), demonstration: share(parts.demonstration) };
}

/** One stage's measurements: fresh games (greedy, sampled) and the held-out answers (greedy, sampled). */
interface StageRow {
  label: string;
  greedy: Measurement;
  sampled: Measurement;
  heldOutGreedy: Measurement;
  heldOutSampled: Measurement;
}

/** Greedy and sampled measurements of the current weights on `game`'s evaluation games. */
async function measureOn(game: typeof env): Promise<{ greedy: Measurement; sampled: Measurement }> {
  const greedy = summarise(await evaluate(game, policy, { samplingArgs: { temperature: 0, max_tokens: lesson.maxTokens, seed: 1 } }));
  const sampled = summarise(await evaluate(game, policy, { samplingArgs: { temperature: sampledTemperature, max_tokens: lesson.maxTokens, seed: 1 } }));
  return { greedy, sampled };
}

async function measure(label: string): Promise<StageRow> {
  await policy.syncWeights();
  const fresh = await measureOn(env);
  const heldOut = await measureOn(heldOutEnv);
  const bySet = ANSWER_SETS.map((part) => `${part} ${fresh.greedy.byAnswerSet[part].winRate.toFixed(2)}`).join(', ');
  console.error(`[${elapsed()}] ${label}: fresh greedy win ${fresh.greedy.winRate.toFixed(2)} (${bySet}) invalid ${fresh.greedy.invalidRate.toFixed(2)} · sampled win ${fresh.sampled.winRate.toFixed(2)} · held-out greedy ${heldOut.greedy.winRate.toFixed(2)} sampled ${heldOut.sampled.winRate.toFixed(2)} · guesses ${describeShares(fresh.greedy.guessShares)}`);
  return { label, ...fresh, heldOutGreedy: heldOut.greedy, heldOutSampled: heldOut.sampled };
}

// --only grpo: no control; --only control: the warm-up and the control only (with --control-steps),
// so the two arms can run as two processes at once (the CPU backend is deterministic: both warm up
// to the same weights).
const only = values.only;
if (only !== undefined && only !== 'grpo' && only !== 'control') throw new Error(`--only must be grpo or control, got ${only}`);
if (only === 'control' && values['control-steps'] === undefined) throw new Error('--only control needs --control-steps');
const rows: StageRow[] = only === 'control' ? [] : [await measure('before warm-up')];

const warmupOnly: TrainingRunOptions = { ...lesson, evalTasks: 0, checkpointEvery: 0, warmup: { ...lesson.warmup!, steps: sftSteps, lr: sftLr }, grpo: null };
// --warm-state FILE: the warmed-up weights and optimizer state, written by the run that warms up and
// read by one started later with the same settings (the other arm), so the warm-up runs once.
const warmState = values['warm-state'];
let sftMsPerStep = 0;
if (warmState !== undefined && existsSync(warmState)) {
  const saved = deserialize(await readFile(warmState)) as { parameters: NamedTensors; optimizer: OptimizerState; sftMsPerStep: number };
  await model.backend.setParameters(saved.parameters);
  await model.backend.setOptimizerState(saved.optimizer);
  sftMsPerStep = saved.sftMsPerStep;
  console.error(`[${elapsed()}] warm-up: read from ${warmState}`);
} else {
  const warm = await runTraining(env, model, expert, warmupOnly);
  sftMsPerStep = warm.sft.reduce((sum, step) => sum + step.stepMs, 0) / Math.max(1, warm.sft.length);
  console.error(`[${elapsed()}] warm-up: ${sftSteps} steps, ${sftMsPerStep.toFixed(0)} ms/step, last loss ${warm.sft.at(-1)?.loss.toFixed(3)}`);
  if (warmState !== undefined) {
    await writeFile(`${warmState}.tmp`, serialize({ parameters: await model.backend.getParameters(), optimizer: await model.backend.getOptimizerState(), sftMsPerStep }));
    await rename(`${warmState}.tmp`, warmState);
  }
}
if (only !== 'control') rows.push(await measure('after warm-up'));
const afterWarmup = await model.backend.getParameters();
const optimizerAfterWarmup = await model.backend.getOptimizerState();

const grpoOnly: TrainingRunOptions = { ...lesson, evalTasks: 0, checkpointEvery: 0, warmup: null, grpo: { ...lesson.grpo!, steps: grpoSteps, tasksPerStep, groupSize, schedule: { ...lesson.grpo!.schedule, lr: grpoLr }, ...(turnCredit !== undefined ? { turnCredit: turnCredit as TurnCredit } : {}), ...(klBeta > 0 ? { klBeta } : {}) } };
const curve: { step: number; reward: number; passRate: number; freshGreedyWin?: number; freshGreedyWinBySet?: Record<AnswerSet, number>; heldOutGreedyWin?: number; guessShares?: Measurement['guessShares'] }[] = [];
const curveEvery = Number(values['curve-every']);
let curveEvalMs = 0; // time spent measuring the curve, not training: left out of GRPO's time
const trainingMs = values.minutes !== undefined ? Number(values.minutes) * 60_000 : Infinity;
const grpoStop = new AbortController();
const grpoStarted = Date.now();
const rl = only === 'control' ? { grpo: [] } : await runTraining(env, model, null, grpoOnly, {
  signal: grpoStop.signal,
  onGrpoStep: async (m) => {
    const point: (typeof curve)[number] = { step: m.step + 1, reward: Number(m.reward.mean.toFixed(4)), passRate: m.passRate };
    // --curve-every N: the greedy win rates, fresh games and held-out answers, every N steps (the trained weights of this step).
    if (curveEvery > 0 && (m.step + 1) % curveEvery === 0 && m.step + 1 < grpoSteps) {
      const evalStarted = Date.now();
      await policy.syncWeights();
      const greedyArgs = { samplingArgs: { temperature: 0, max_tokens: lesson.maxTokens, seed: 1 } };
      const greedy = summarise(await evaluate(env, policy, greedyArgs));
      point.freshGreedyWin = greedy.winRate;
      point.freshGreedyWinBySet = { demonstration: greedy.byAnswerSet.demonstration.winRate, practice: greedy.byAnswerSet.practice.winRate, heldOut: greedy.byAnswerSet.heldOut.winRate };
      point.heldOutGreedyWin = summarise(await evaluate(heldOutEnv, policy, greedyArgs)).winRate;
      point.guessShares = greedy.guessShares;
      curveEvalMs += Date.now() - evalStarted;
    }
    curve.push(point);
    console.error(`[${elapsed()}] grpo ${m.step + 1}/${grpoSteps} reward ${m.reward.mean.toFixed(3)} win ${m.passRate.toFixed(2)}${point.freshGreedyWin !== undefined ? ` · greedy win fresh ${point.freshGreedyWin.toFixed(2)} (${ANSWER_SETS.map((part) => `${part} ${point.freshGreedyWinBySet![part].toFixed(2)}`).join(', ')}), held-out ${point.heldOutGreedyWin!.toFixed(2)}, guesses ${describeShares(point.guessShares!)}` : ''}`);
    if (Date.now() - grpoStarted - curveEvalMs >= trainingMs) grpoStop.abort();
  },
});
const grpoSeconds = (Date.now() - grpoStarted - curveEvalMs) / 1000;
if (only !== 'control') rows.push(await measure('after GRPO'));

// The control: from the same warmed-up weights and optimizer state, the warm-up goes on (new
// batches of the same demonstrations) for GRPO's wall time instead: it stops once it has trained
// as long as GRPO did (at least one step; the warm-up's step time, which counted the demonstrations'
// making, gave the control less time than GRPO, BENCHMARKS.md "nano-2m"). With --control-steps,
// that many steps instead (a count fixed in advance, for --only control).
const fixedControlSteps = values['control-steps'] !== undefined ? Number(values['control-steps']) : undefined;
const CONTROL_STEP_CAP = 100_000; // a bound the wall-time rule always reaches first
const controlSteps = fixedControlSteps ?? CONTROL_STEP_CAP;
const controlBudgetMs = Math.min(trainingMs, fixedControlSteps === undefined ? grpoSeconds * 1000 : Infinity);
let controlSeconds = 0;
let controlDone = 0; // control steps actually run (fewer than controlSteps when --minutes stops it)
if (only !== 'grpo') {
  await model.backend.setParameters(afterWarmup);
  await model.backend.setOptimizerState(optimizerAfterWarmup);
  const controlStarted = Date.now();
  const controlStop = new AbortController();
  await runTraining(env, model, expert, { ...warmupOnly, warmup: { ...warmupOnly.warmup!, steps: sftSteps + controlSteps }, resumeFrom: { phase: 'sft', nextStep: sftSteps } }, {
    signal: controlStop.signal,
    onSftStep: () => {
      controlDone += 1;
      if (Date.now() - controlStarted >= controlBudgetMs) controlStop.abort();
    },
  });
  controlSeconds = (Date.now() - controlStarted) / 1000;
  rows.push(await measure(`control: warm-up + ${controlDone} more SFT steps`));
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
console.log(`model: ${values.model} · seed ${trainingSeed} · training answers ${String(envArgs.answers)}${values['turn-rewards'] ? ` · turn rewards, credit ${turnCredit ?? 'return-to-go'}` : ''}${rewardWeights ? ` · reward weights ${JSON.stringify(rewardWeights)}` : ''} · ${model.device} · pool ${poolSize} words · ${evalTasks} fresh games from the pool and ${Math.min(evalTasks, COMPACT_HELD_OUT)} held-out answers · sampled at temperature ${sampledTemperature}`);
console.log(`warm-up ${sftSteps} SFT steps (lr ${sftLr}); GRPO ${rl.grpo.length} of ${grpoSteps} steps of ${tasksPerStep} words × ${groupSize} games (lr ${grpoLr}${klBeta > 0 ? `, KL β ${klBeta}` : ''}) (${grpoSeconds.toFixed(0)} s); control ${controlDone}${fixedControlSteps !== undefined ? ` of ${fixedControlSteps}` : ''} extra SFT steps (${controlSeconds.toFixed(0)} s)\n`);
console.log('Fresh games from the answer list:\n');
console.log('| stage | win (greedy) | win (sampled) | turns/win (greedy) | invalid guesses (greedy) | consistent guesses (greedy) | consistency reward (greedy) | reward (greedy) | guesses held-out / practice / demonstration (greedy) |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const { label, greedy, sampled } of rows) {
  console.log(`| ${label} | ${pct(greedy.winRate)} | ${pct(sampled.winRate)} | ${greedy.turnsPerWin?.toFixed(2) ?? '–'} | ${pct(greedy.invalidRate)} | ${pct(greedy.consistentGuesses)} | ${greedy.consistency.toFixed(2)} | ${greedy.reward.toFixed(3)} | ${[greedy.guessShares.heldOut, greedy.guessShares.practice, greedy.guessShares.demonstration].map(pct).join(' / ')} |`);
}
const firstSets = rows[0]?.greedy.byAnswerSet;
const setHeader = (part: AnswerSet) => `${part === 'heldOut' ? 'held-out' : part} answers${firstSets ? ` (${firstSets[part].games} games)` : ''}`;
console.log("\nFresh games by the answer's set, win greedy / sampled (demonstration answers: the pretraining and warm-up games'; practice: GRPO's; held-out: no training game's):\n");
console.log(`| stage | ${ANSWER_SETS.map(setHeader).join(' | ')} |`);
console.log('|---|---|---|---|');
for (const { label, greedy, sampled } of rows) console.log(`| ${label} | ${ANSWER_SETS.map((part) => `${pct(greedy.byAnswerSet[part].winRate)} / ${pct(sampled.byAnswerSet[part].winRate)}`).join(' | ')} |`);
console.log('\nGeneralisation: the held-out answers (never a training game\'s answer):\n');
console.log('| stage | win (greedy) | win (sampled) | turns/win (greedy) | invalid guesses (greedy) |');
console.log('|---|---|---|---|---|');
for (const { label, heldOutGreedy, heldOutSampled } of rows) {
  console.log(`| ${label} | ${pct(heldOutGreedy.winRate)} | ${pct(heldOutSampled.winRate)} | ${heldOutGreedy.turnsPerWin?.toFixed(2) ?? '–'} | ${pct(heldOutGreedy.invalidRate)} |`);
}
console.log(JSON.stringify({ bench: 'wordle-lesson', model: values.model, backend: backendName, seed: trainingSeed, answers: envArgs.answers, poolSize, turnRewards: values['turn-rewards'] === true, turnCredit: values['turn-rewards'] ? (turnCredit ?? 'return-to-go') : null, rewardWeights: rewardWeights ?? null, klBeta, evalTasks, sftSteps, grpoSteps, grpoStepsRun: rl.grpo.length, tasksPerStep, groupSize, sftLr, grpoLr, controlSteps: fixedControlSteps ?? null, controlStepsRun: controlDone, controlSeconds, grpoSeconds, rows, curve, grpoReward: rl.grpo.map((m) => m.reward.mean), seconds: (Date.now() - started) / 1000 }));
model.backend.dispose();
