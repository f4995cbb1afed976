/**
 * Pretrains `nano`, TabRL's small byte-level Llama shipped under public/models/nano, on the fast CPU
 * backend of TabRL's own engine (no GPU, nothing downloaded; `--backend cpu-reference` for the
 * plain-TypeScript reference, which made the shipped checkpoint), or with `--backend webgpu` on its
 * WebGPU backend through Dawn (a real GPU where the machine has one; the software adapter otherwise).
 * Deterministic on the CPU given --seed: the data, the init and the batch order all come from it
 * (wall-clock time decides only how many steps run when --minutes is the limit; the step count of
 * the shipped checkpoint is in its pretraining.json).
 *
 * Data, all generated here (see `makeCorpus`), over the compact Wordle's answer pool of
 * --pool-size words (default 300; see wordle-compact.ts):
 *   - word lists: lines of 12 words drawn from the pool, which is also the game's dictionary
 *     (held-out answers included: they are words, and may be guessed);
 *   - compact Wordle games played by the deliberately imperfect teacher, on training answers only
 *     (no held-out answer is ever a game's answer here); with `--game-answers demonstration`, on
 *     the demonstration answers only, so that no practice answer (lesson 6's RL games) is one;
 *     `--teacher transcript` (the default, what made the shipped nano) seeds the teacher by the
 *     transcript alone, so each answer gets one game played over and over; `--teacher game` by
 *     each game's seed too, so an answer's games differ (8000 games: 7935 distinct);
 *   - "fits" lists: a board line from one of those games (so from a game's answer) and up to 8
 *     dictionary words that agree with it, the skill a consistent guess needs;
 *   - compact reverse-text tasks (4–8 characters) solved by its expert.
 * --word-lists, --games, --fits and --reverse set the counts; unset, they are the shipped nano's
 * (2000, 4000, 3000, 800) for the 300-word pool and scale with any other pool (pretrain-settings.ts).
 * --copies N adds N tool-use chats that carry a value from the question or a tool result into a call
 * or the reply (tool-copy-corpus.ts; default 0, as for nano and nano-2m; nano-tools is made with them, docs/nano.md), of the kinds --copy-kinds
 * lists (echo, argument, write, chain, fields, read-write; default the first four). --init DIR starts from a
 * model folder's weights and shape instead of a seeded init (continued pretraining; the record keeps
 * the folder's own pretraining.json, less its loss curve, under init.record); --init-std S
 * draws the seeded init with standard deviation S instead of 0.02.
 * --layers, --hidden, --intermediate, --heads and --kv-heads change the shape (default NANO_CONFIG),
 * for a bigger nano; --batch-size (rows per step) and --row-length (tokens per row) the batch.
 * --require-gpu refuses a software WebGPU adapter (SwiftShader, lavapipe) with --backend webgpu.
 * Every sequence is a chat transcript in the byte tokenizer's format; transcripts are packed end to
 * end into rows of --row-length tokens, and the loss covers every token (a language model of the
 * whole transcript), not only the assistant's.
 *
 * Run (what made the shipped checkpoint; see public/models/nano/pretraining.json for the log):
 *   nice -n 10 npx tsx scripts/nano/pretrain.ts --max-steps 1000 --minutes 65 --out public/models/nano > pretrain.log 2>&1 &
 * The checkpoint whose games avoid the practice answers (measured in BENCHMARKS.md, not shipped):
 *   nice -n 10 npx tsx scripts/nano/pretrain.ts --max-steps 1000 --minutes 52 --game-answers demonstration --out nano-demonstration > pretrain.log 2>&1 &
 * A bigger nano on a 2315-word pool, on a GPU: see docs/nano.md, "A bigger game for a GPU".
 * The learning rate warms up over 30 steps, stays at --lr, and decays linearly to a tenth of it
 * over the last quarter of --max-steps (so --max-steps, not the clock, fixes the schedule). With
 * --decay-by-time the decay also follows the clock: it runs over the last quarter of the training
 * time --minutes leaves after the corpus is made (whichever of steps and time is further along),
 * so a run bounded by time on a machine of unknown speed still ends at the low learning rate.
 * --state FILE writes, at every checkpoint, what a run needs to continue exactly (f32 weights,
 * AdamW's state, the step, the loss curve; pretrain-state.ts), and --resume continues from it: the
 * same command with --resume (and any --minutes) picks up at the saved step, with the same batches
 * and schedule, so the weights are those of one uninterrupted run; its --max-steps may differ while
 * the saved step is before both schedules' decay (the weights are then those of one uninterrupted
 * run of the new length: a long run sized again once its speed is known). --until-step N stops at step N
 * (the schedule still follows --max-steps), to run a long pretraining in parts. --threads N runs the
 * fast CPU backend's kernels on N threads (default: every core; the weights do not depend on it).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseBackendName } from '../../src/cli/open-model.ts';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../src/envs/builtin/index.ts';
import {
  COMPACT_TEACHER_MISTAKE_RATE,
  COMPACT_TEACHER_SEEDS,
  type CompactTeacherSeed,
  checkCompactPoolSize,
  compactAnswerPool,
  compactWordleTeacher,
  fitsBoard,
  parseBoard,
} from '../../src/envs/builtin/wordle-compact.ts';
import { createRng } from '../../src/envs/builtin/random.ts';
import { evaluate, ScriptedClient, type Message } from '../../src/envs/index.ts';
import { ByteTokenizer } from '../../src/gpu/io/byte-tokenizer.ts';
import { writeNanoFolder } from './nano-folder.ts';
import { DEFAULT_TOOL_COPY_KINDS, TOOL_COPY_KINDS, toolCopyChat, type ToolCopyKind } from './tool-copy-corpus.ts';
import { loadModelFolder } from '../../src/gpu/io/model-folder.ts';
import { readFile } from 'node:fs/promises';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import { decayStartOf, readPretrainState, writePretrainState, type LossPoint } from './pretrain-state.ts';
import { corpusSizes, modelShape, positiveInteger } from './pretrain-settings.ts';
import { openTrainingBackend } from './training-backend.ts';
import { defaultThreadCount } from '../../src/gpu/fast-cpu/node-kernel-threads.ts';

/** The standard deviation of the backends' seeded init (Hugging Face's initializer_range). */
const HF_INITIALIZER_RANGE = 0.02;

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '0' },
    minutes: { type: 'string', default: '40' },
    'max-steps': { type: 'string', default: '1000' },
    'batch-size': { type: 'string', default: '12' },
    'row-length': { type: 'string', default: '128' },
    lr: { type: 'string', default: '3e-3' },
    games: { type: 'string' },
    'word-lists': { type: 'string' },
    fits: { type: 'string' },
    reverse: { type: 'string' },
    copies: { type: 'string', default: '0' },
    'copy-kinds': { type: 'string' },
    init: { type: 'string' },
    'init-std': { type: 'string' },
    'game-answers': { type: 'string', default: 'training' },
    teacher: { type: 'string', default: 'transcript' },
    'pool-size': { type: 'string', default: '300' },
    backend: { type: 'string', default: 'cpu' },
    layers: { type: 'string' },
    hidden: { type: 'string' },
    intermediate: { type: 'string' },
    heads: { type: 'string' },
    'kv-heads': { type: 'string' },
    out: { type: 'string', default: 'public/models/nano' },
    'save-every': { type: 'string', default: '25' },
    'log-every': { type: 'string', default: '5' },
    'decay-by-time': { type: 'boolean' },
    'require-gpu': { type: 'boolean' },
    state: { type: 'string' },
    resume: { type: 'boolean' },
    'until-step': { type: 'string' },
    threads: { type: 'string' },
  },
});
const seed = Number(values.seed);
const deadline = Date.now() + Number(values.minutes) * 60_000;
const maxSteps = Number(values['max-steps']);
const batchSize = Number(values['batch-size']);
const rowLength = Number(values['row-length']);
const peakLr = Number(values.lr);
const out = values.out!;
const poolSize = checkCompactPoolSize(Number(values['pool-size']));
const pool = compactAnswerPool(poolSize);
const sizes = corpusSizes(poolSize, values);
// --init DIR continues from a model folder's weights (its shape; the shape flags are not given then).
const initial = values.init === undefined ? undefined : await loadModelFolder((name) => readFile(join(values.init!, name)), values.init);
if (initial && (values.layers ?? values.hidden ?? values.intermediate ?? values.heads ?? values['kv-heads']) !== undefined) throw new Error('--init takes the shape of its folder: leave out --layers, --hidden, --intermediate, --heads and --kv-heads');
const config = initial?.config ?? modelShape(values);
// The folder's own record (its loss curve left out), so that a model made in stages records every stage's command.
const initRecord = values.init === undefined ? undefined : await readInitRecord(values.init);
// --init-std S: the seeded init with standard deviation S instead of Hugging Face's 0.02 (a tiny model's attention starts nearly uniform at 0.02).
const initStd = values['init-std'] === undefined ? undefined : Number(values['init-std']);
if (initStd !== undefined && !(initStd > 0)) throw new Error(`--init-std must be a positive number, got ${JSON.stringify(values['init-std'])}`);
if (initStd !== undefined && initial) throw new Error('--init-std sets a fresh init; --init starts from a folder instead: give one of them');
// --copy-kinds echo,argument,...: which kinds of tool-copy chat the --copies are (default: the first four, nano-tools' corpus).
const copyKinds = (values['copy-kinds']?.split(',') ?? DEFAULT_TOOL_COPY_KINDS) as ToolCopyKind[];
for (const kind of copyKinds) if (!(kind in TOOL_COPY_KINDS)) throw new Error(`--copy-kinds takes ${Object.keys(TOOL_COPY_KINDS).join(', ')}, got ${JSON.stringify(kind)}`);
const copies = Number(values.copies);
if (!Number.isInteger(copies) || copies < 0) throw new Error(`--copies must be a whole number, got ${JSON.stringify(values.copies)}`);
const backendName = parseBackendName(values.backend);
const logEvery = positiveInteger('log-every', values['log-every'], 5);
const untilStep = Math.min(maxSteps, positiveInteger('until-step', values['until-step'], maxSteps));
const stateFile = values.state;
if (values.resume && stateFile === undefined) throw new Error('--resume needs --state FILE (the resume state a run wrote with --state)');
// Which pool words the teacher's games are played on: `training` (every non-held-out word: the
// shipped checkpoint) or `demonstration` (only the demonstration words, so the practice words that
// lesson 6's GRPO plays are never an answer the model was shown).
const gameAnswers = values['game-answers'];
if (gameAnswers !== 'training' && gameAnswers !== 'demonstration') throw new Error(`--game-answers must be training or demonstration, got ${gameAnswers}`);
// What seeds the teacher's moves: `transcript` (one fixed game per answer: what made the shipped
// nano) or `game` (each game its own seed, so an answer's games differ: what made nano-2m).
const teacherSeed = values.teacher as CompactTeacherSeed;
if (!COMPACT_TEACHER_SEEDS.includes(teacherSeed)) throw new Error(`--teacher must be ${COMPACT_TEACHER_SEEDS.join(' or ')}, got ${values.teacher}`);
const tokenizer = new ByteTokenizer();

/** The pretraining corpus: transcripts in the byte chat format, in a seeded order. */
async function makeCorpus(): Promise<{ texts: string[]; counts: Record<string, number> }> {
  const rng = createRng(seed);
  const texts: string[] = [];
  const counts = { wordLists: 0, wordleGames: 0, distinctGames: 0, fitsLists: 0, reverseText: 0, toolCopies: 0, teacherWinRate: 0 };
  // Word lists: the game's dictionary (its pool), each word about equally often.
  for (let i = 0; i < sizes.wordLists; i++) {
    const words = Array.from({ length: 12 }, () => rng.pick(pool.all));
    texts.push(tokenizer.renderChat([{ role: 'user', content: 'words' }, { role: 'assistant', content: words.join(' ') }]));
    counts.wordLists++;
  }
  // Compact Wordle games by the imperfect teacher, on training answers only.
  // The teacher guesses from the game's own pool; with `--teacher game`, game i is seeded by seed + i.
  const boards: string[] = []; // the boards after a first guess, of those games only
  if (sizes.games > 0) {
    const wordle = await loadBuiltinEnvironment('wordle', { compact: true, numTasks: sizes.games, seed, answers: gameAnswers, poolSize });
    const teacher = new ScriptedClient(compactWordleTeacher(COMPACT_TEACHER_MISTAKE_RATE, pool, teacherSeed));
    const notShown = new Set([...pool.heldOut, ...(gameAnswers === 'demonstration' ? pool.practice : [])]);
    const games = await evaluate(wordle, teacher, { tasks: wordle.dataset, concurrency: 32, samplingArgs: { seed } });
    counts.distinctGames = new Set(games.records.map((record) => JSON.stringify(record.completion))).size;
    counts.teacherWinRate = games.summary.passRate;
    for (const record of games.records) {
      if (notShown.has(String(record.answer))) throw new Error(`pretraining would see an answer it must not (${String(record.answer)})`);
      const messages = [...record.prompt, ...record.completion] as Message[];
      texts.push(tokenizer.renderChat(messages));
      counts.wordleGames++;
      for (const message of messages.slice(1)) if (message.role === 'user' && parseBoard(message.content) !== undefined) boards.push(message.content.replace(/^.*; /, ''));
    }
  }
  // "fits" lists: a board and dictionary words that agree with all of it, in a seeded order.
  for (let i = 0; i < sizes.fits && boards.length > 0; i++) {
    const board = rng.pick(boards);
    const fitting = rng.shuffle(pool.all.filter((word) => fitsBoard(word, parseBoard(board)!))).slice(0, 8);
    texts.push(tokenizer.renderChat([{ role: 'user', content: `fits ${board}` }, { role: 'assistant', content: fitting.join(' ') }]));
    counts.fitsLists++;
  }
  // Compact reverse-text.
  if (sizes.reverse > 0) {
    const reverse = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 8, numTasks: sizes.reverse, seed: seed + 7 });
    const reverser = new ScriptedClient(await loadBuiltinExpert('reverse-text', reverse));
    for (const record of (await evaluate(reverse, reverser, { tasks: reverse.dataset, concurrency: 32 })).records) {
      texts.push(tokenizer.renderChat([...record.prompt, ...record.completion] as Message[]));
      counts.reverseText++;
    }
  }
  // Tool-use chats that carry a value from where it is read to where it is used (tool-copy-corpus.ts).
  const copyRng = createRng(seed + 11);
  for (let i = 0; i < copies; i++) {
    const { messages, tools } = toolCopyChat(copyRng, copyKinds);
    texts.push(tokenizer.renderChat(messages, { tools }));
    counts.toolCopies++;
  }
  return { texts: rng.shuffle(texts), counts };
}

/** The pretraining.json of an --init folder without its loss curve, or undefined where the folder has none (a model not made here). */
async function readInitRecord(folder: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(join(folder, 'pretraining.json'), 'utf8');
  } catch {
    return undefined;
  }
  const { lossCurve: _lossCurve, ...record } = JSON.parse(text) as Record<string, unknown>;
  return record;
}

/** The seeded init (normal(0, 0.02) for every matrix, norms 1) with its matrices scaled to standard deviation `std`. */
function rescaledInit(parameters: NamedTensors, std: number): NamedTensors {
  const scale = std / HF_INITIALIZER_RANGE;
  for (const [name, tensor] of parameters) if (!name.endsWith('norm.weight')) tensor.data.forEach((value, i) => (tensor.data[i] = value * scale));
  return parameters;
}

const started = Date.now();
// The backend first: a machine without the adapter asked for fails before the corpus is made.
const threads = positiveInteger('threads', values.threads, defaultThreadCount());
const { backend, machine } = await openTrainingBackend(config, seed, backendName, values['require-gpu'] === true, threads);
if (initial) await backend.setParameters(initial.tensors);
if (initStd !== undefined) await backend.setParameters(rescaledInit(await backend.getParameters(), initStd));
const { texts, counts } = await makeCorpus();
const sequences = texts.map((text) => tokenizer.encode(text));
const corpusTokens = sequences.reduce((sum, s) => sum + s.length, 0);
console.error(`corpus: ${JSON.stringify(counts)}, ${corpusTokens} tokens, longest ${Math.max(...sequences.map((s) => s.length))}`);

console.error(`model: ${config.num_hidden_layers} layers, hidden ${config.hidden_size}, MLP ${config.intermediate_size}, ${config.num_attention_heads} heads over ${config.num_key_value_heads} KV heads · pool ${poolSize} words · ${machine}`);
const order = createRng(seed + 1);
let tokensSeen = 0;
let step = 0;
let smoothed = NaN;
let trainingMs = 0; // time in the steps themselves (batch, backward, optimizer), not data generation or saving
let priorWallSeconds = 0; // wall time of the runs this one resumes
let log: LossPoint[] = [];
const command = `npx tsx scripts/nano/pretrain.ts ${process.argv.slice(2).join(' ')}`;
let commands = [command];
// What fixes the weights: a resume with any of these changed would not continue the same run.
const settings = { seed, ...(initStd !== undefined ? { initStd } : {}), backend: backendName, poolSize, gameAnswers, teacherSeed, config, corpus: copies > 0 ? { ...sizes, copies, copyKinds } : sizes, ...(values.init !== undefined ? { init: values.init } : {}), batchSize, rowLength, peakLr, maxSteps, decayByTime: values['decay-by-time'] === true };

/** The next packed batch: random transcripts laid end to end (each starts with <|bos|>), cut into rows of T tokens; ids (B, T) and their next tokens (B, T). */
function nextBatch(): { ids: Int32Array; targets: Int32Array } {
  const T = rowLength;
  const ids = new Int32Array(batchSize * T);
  const targets = new Int32Array(batchSize * T);
  for (let b = 0; b < batchSize; b++) {
    const row: number[] = [];
    while (row.length < T + 1) row.push(...order.pick(sequences));
    for (let t = 0; t < T; t++) {
      ids[b * T + t] = row[t]!;
      targets[b * T + t] = row[t + 1]!;
    }
  }
  return { ids, targets };
}

if (values.resume) {
  const state = await readPretrainState(stateFile!, settings);
  await backend.setParameters(state.parameters);
  await backend.setOptimizerState(state.optimizer);
  ({ step, tokensSeen, trainingMs } = state);
  smoothed = state.smoothedLoss;
  priorWallSeconds = state.wallSeconds;
  log = state.lossCurve;
  commands = [...state.commands, command];
  for (let i = 0; i < step; i++) nextBatch(); // the batch order of the steps already taken
  console.error(`resumed from ${stateFile} at step ${step} (loss ${smoothed.toFixed(3)}, ${tokensSeen} tokens, ${priorWallSeconds} s so far)`);
}

async function save(): Promise<void> {
  const wallSeconds = priorWallSeconds + Math.round((Date.now() - started) / 1000);
  const parameters = await backend.getParameters();
  await writeNanoFolder(out, config, parameters, {
    seed,
    backend: backendName,
    poolSize,
    gameAnswers,
    teacher: teacherSeed,
    ...(values.init !== undefined ? { init: { folder: values.init, ...(initRecord ? { record: initRecord } : {}) } } : {}),
    ...(initStd !== undefined ? { initStd } : {}),
    ...(copies > 0 ? { copyKinds } : {}),
    shape: { layers: config.num_hidden_layers, hidden: config.hidden_size, intermediate: config.intermediate_size, heads: config.num_attention_heads, kvHeads: config.num_key_value_heads, headDim: config.head_dim },
    steps: step,
    maxSteps,
    batchSize,
    rowLength,
    peakLr,
    decayByTime: values['decay-by-time'] === true,
    tokensSeen,
    corpus: { ...counts, tokens: corpusTokens },
    wallSeconds,
    machine,
    secondsPerStep: step === 0 ? null : Number((trainingMs / 1000 / step).toFixed(3)),
    finalLoss: smoothed,
    command: commands[0],
    ...(commands.length > 1 ? { resumedWith: commands.slice(1) } : {}),
    lossCurve: log,
  });
  if (stateFile !== undefined) {
    await writePretrainState(stateFile, { settings, step, tokensSeen, smoothedLoss: smoothed, trainingMs, wallSeconds, lossCurve: log, commands, parameters, optimizer: await backend.getOptimizerState() });
  }
}

const warmupSteps = 30;
const trainingStarted = Date.now();
while (step < untilStep && Date.now() < deadline) {
  const stepStarted = Date.now();
  const T = rowLength;
  const { ids, targets } = nextBatch();
  const weights = new Float32Array(batchSize * T).fill(1);
  const trained = batchSize * T;
  for (let i = 0; i < weights.length; i++) weights[i] = -weights[i]! / trained; // backward maximises Σ w·logp: mean NLL descent
  await backend.zeroGrad();
  const objective = await backend.backward(ids, targets, weights, batchSize, T, 1);
  // Linear warm-up, constant, then a linear decay to peakLr/10 over the last quarter of maxSteps.
  const decayStart = decayStartOf(maxSteps);
  let decay = step < decayStart ? 1 : 1 - (0.9 * (step - decayStart)) / Math.max(1, maxSteps - decayStart);
  if (values['decay-by-time']) {
    const timeDone = (Date.now() - trainingStarted) / Math.max(1, deadline - trainingStarted); // share of the training time spent
    decay = Math.min(decay, timeDone < 0.75 ? 1 : 1 - (0.9 * (timeDone - 0.75)) / 0.25);
  }
  const lr = peakLr * Math.min(1, (step + 1) / warmupSteps) * decay;
  await backend.step({ lr, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 });
  const loss = objective; // Σ w·logp with w = −1/N: the mean NLL
  smoothed = Number.isNaN(smoothed) ? loss : 0.95 * smoothed + 0.05 * loss;
  tokensSeen += trained;
  step++;
  trainingMs += Date.now() - stepStarted;
  if (step % logEvery === 0) {
    const seconds = priorWallSeconds + (Date.now() - started) / 1000;
    log.push({ step, loss: Number(smoothed.toFixed(4)), tokens: tokensSeen, seconds: Math.round(seconds) });
    console.error(`step ${step} loss ${smoothed.toFixed(3)} tokens ${tokensSeen} ${seconds.toFixed(0)}s (${(trainingMs / step).toFixed(0)} ms/step)`);
  }
  if (step % Number(values['save-every']) === 0) await save();
}
await save();
backend.dispose();
console.error(`done: ${step} steps, ${tokensSeen} tokens, loss ${smoothed.toFixed(3)}, ${((Date.now() - started) / 1000).toFixed(0)}s → ${join(out, 'model.safetensors')}`);
