/**
 * Pretrains `nano`, TabRL's small byte-level Llama shipped under public/models/nano, on the CPU
 * backend of TabRL's own engine (no GPU, nothing downloaded). Deterministic given --seed: the data,
 * the init and the batch order all come from it (wall-clock time decides only how many steps run
 * when --minutes is the limit; the step count of the shipped checkpoint is in its pretraining.json).
 *
 * Data, all generated here (see `makeCorpus`):
 *   - word lists: lines of 12 words drawn from the compact Wordle's 300-word list, which is also
 *     the game's dictionary (held-out answers included: they are words, and may be guessed);
 *   - compact Wordle games played by the deliberately imperfect teacher, on training answers only
 *     (no held-out answer is ever a game's answer here); with `--game-answers demonstration`, on
 *     the 100 demonstration answers only, so that no practice answer (lesson 6's RL games) is one;
 *   - "fits" lists: a board line from one of those games (so from a game's answer) and up to 8
 *     dictionary words that agree with it, the skill a consistent guess needs;
 *   - compact reverse-text tasks (4–8 characters) solved by its expert.
 * Every sequence is a chat transcript in the byte tokenizer's format; transcripts are packed end to
 * end into rows of --row-length tokens, and the loss covers every token (a language model of the
 * whole transcript), not only the assistant's.
 *
 * Run (what made the shipped checkpoint; see public/models/nano/pretraining.json for the log):
 *   nice -n 10 npx tsx scripts/nano/pretrain.ts --max-steps 1000 --minutes 65 --out public/models/nano > pretrain.log 2>&1 &
 * The checkpoint whose games avoid the practice answers (measured in BENCHMARKS.md, not shipped):
 *   nice -n 10 npx tsx scripts/nano/pretrain.ts --max-steps 1000 --minutes 52 --game-answers demonstration --out /tmp/nano3/pt
 * The learning rate warms up over 30 steps, stays at --lr, and decays linearly to a tenth of it
 * over the last quarter of --max-steps (so --max-steps, not the clock, fixes the schedule).
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../src/envs/builtin/index.ts';
import { COMPACT_ANSWER_POOL, fitsBoard, parseBoard } from '../../src/envs/builtin/wordle-compact.ts';
import { createRng } from '../../src/envs/builtin/random.ts';
import { evaluate, ScriptedClient, type Message } from '../../src/envs/index.ts';
import { ByteTokenizer } from '../../src/gpu/io/byte-tokenizer.ts';
import { NANO_CONFIG } from '../../src/gpu/inference/presets.ts';
import { createCpuBackend } from '../../src/gpu/model/cpu-backend.ts';
import { writeNanoFolder } from './nano-folder.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '0' },
    minutes: { type: 'string', default: '40' },
    'max-steps': { type: 'string', default: '1000' },
    'batch-size': { type: 'string', default: '12' },
    'row-length': { type: 'string', default: '128' },
    lr: { type: 'string', default: '3e-3' },
    games: { type: 'string', default: '4000' },
    'word-lists': { type: 'string', default: '2000' },
    fits: { type: 'string', default: '3000' },
    reverse: { type: 'string', default: '800' },
    'game-answers': { type: 'string', default: 'training' },
    out: { type: 'string', default: 'public/models/nano' },
    'save-every': { type: 'string', default: '25' },
  },
});
const seed = Number(values.seed);
const deadline = Date.now() + Number(values.minutes) * 60_000;
const maxSteps = Number(values['max-steps']);
const batchSize = Number(values['batch-size']);
const rowLength = Number(values['row-length']);
const peakLr = Number(values.lr);
const out = values.out!;
// Which pool words the teacher's games are played on: `training` (all 200 non-held-out words: the
// shipped checkpoint) or `demonstration` (only the 100 demonstration words, so the 100 practice
// words that lesson 6's GRPO plays are never an answer the model was shown).
const gameAnswers = values['game-answers'];
if (gameAnswers !== 'training' && gameAnswers !== 'demonstration') throw new Error(`--game-answers must be training or demonstration, got ${gameAnswers}`);
const tokenizer = new ByteTokenizer();

/** The pretraining corpus: transcripts in the byte chat format, in a seeded order. */
async function makeCorpus(): Promise<{ texts: string[]; counts: Record<string, number> }> {
  const rng = createRng(seed);
  const texts: string[] = [];
  const counts = { wordLists: 0, wordleGames: 0, fitsLists: 0, reverseText: 0, teacherWinRate: 0 };
  // Word lists: the game's 300-word dictionary, each word about equally often.
  for (let i = 0; i < Number(values['word-lists']); i++) {
    const words = Array.from({ length: 12 }, () => rng.pick(COMPACT_ANSWER_POOL.all));
    texts.push(tokenizer.renderChat([{ role: 'user', content: 'words' }, { role: 'assistant', content: words.join(' ') }]));
    counts.wordLists++;
  }
  // Compact Wordle games by the imperfect teacher, on training answers only.
  const wordle = await loadBuiltinEnvironment('wordle', { compact: true, numTasks: Number(values.games), seed, answers: gameAnswers });
  const teacher = new ScriptedClient(await loadBuiltinExpert('wordle', wordle));
  const notShown = new Set([...COMPACT_ANSWER_POOL.heldOut, ...(gameAnswers === 'demonstration' ? COMPACT_ANSWER_POOL.practice : [])]);
  const games = await evaluate(wordle, teacher, { tasks: wordle.dataset, concurrency: 32 });
  counts.teacherWinRate = games.summary.passRate;
  const boards: string[] = []; // the boards after a first guess, of those games only
  for (const record of games.records) {
    if (notShown.has(String(record.answer))) throw new Error(`pretraining would see an answer it must not (${String(record.answer)})`);
    const messages = [...record.prompt, ...record.completion] as Message[];
    texts.push(tokenizer.renderChat(messages));
    counts.wordleGames++;
    for (const message of messages.slice(1)) if (message.role === 'user' && parseBoard(message.content) !== undefined) boards.push(message.content.replace(/^.*; /, ''));
  }
  // "fits" lists: a board and dictionary words that agree with all of it, in a seeded order.
  for (let i = 0; i < Number(values.fits) && boards.length > 0; i++) {
    const board = rng.pick(boards);
    const fitting = rng.shuffle(COMPACT_ANSWER_POOL.all.filter((word) => fitsBoard(word, parseBoard(board)!))).slice(0, 8);
    texts.push(tokenizer.renderChat([{ role: 'user', content: `fits ${board}` }, { role: 'assistant', content: fitting.join(' ') }]));
    counts.fitsLists++;
  }
  // Compact reverse-text.
  const reverse = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 8, numTasks: Number(values.reverse), seed: seed + 7 });
  const reverser = new ScriptedClient(await loadBuiltinExpert('reverse-text', reverse));
  for (const record of (await evaluate(reverse, reverser, { tasks: reverse.dataset, concurrency: 32 })).records) {
    texts.push(tokenizer.renderChat([...record.prompt, ...record.completion] as Message[]));
    counts.reverseText++;
  }
  return { texts: rng.shuffle(texts), counts };
}

const started = Date.now();
const { texts, counts } = await makeCorpus();
const sequences = texts.map((text) => tokenizer.encode(text));
const corpusTokens = sequences.reduce((sum, s) => sum + s.length, 0);
console.error(`corpus: ${JSON.stringify(counts)}, ${corpusTokens} tokens, longest ${Math.max(...sequences.map((s) => s.length))}`);

const backend = await createCpuBackend(NANO_CONFIG, { seed });
const order = createRng(seed + 1);
let tokensSeen = 0;
let step = 0;
let smoothed = NaN;
const log: { step: number; loss: number; tokens: number; seconds: number }[] = [];

async function save(): Promise<void> {
  const seconds = (Date.now() - started) / 1000;
  await writeNanoFolder(out, await backend.getParameters(), {
    seed,
    steps: step,
    batchSize,
    rowLength,
    peakLr,
    tokensSeen,
    corpus: { ...counts, tokens: corpusTokens },
    wallSeconds: Math.round(seconds),
    machine: `${cpus()[0]?.model ?? 'cpu'} (${cpus().length} logical cores, shared), Node ${process.version}, TabRL CPU backend`,
    finalLoss: smoothed,
    command: `npx tsx scripts/nano/pretrain.ts ${process.argv.slice(2).join(' ')}`,
    lossCurve: log,
  });
}

const warmupSteps = 30;
while (step < maxSteps && Date.now() < deadline) {
  // Packed rows: random transcripts laid end to end (each starts with <|bos|>), cut at T tokens.
  const T = rowLength;
  const ids = new Int32Array(batchSize * T);
  const targets = new Int32Array(batchSize * T);
  const weights = new Float32Array(batchSize * T).fill(1);
  const trained = batchSize * T;
  for (let b = 0; b < batchSize; b++) {
    const row: number[] = [];
    while (row.length < T + 1) row.push(...order.pick(sequences));
    for (let t = 0; t < T; t++) {
      ids[b * T + t] = row[t]!;
      targets[b * T + t] = row[t + 1]!;
    }
  }
  for (let i = 0; i < weights.length; i++) weights[i] = -weights[i]! / trained; // backward maximises Σ w·logp: mean NLL descent
  await backend.zeroGrad();
  const objective = await backend.backward(ids, targets, weights, batchSize, T, 1);
  // Linear warm-up, constant, then a linear decay to peakLr/10 over the last quarter of maxSteps.
  const decayStart = Math.floor(0.75 * maxSteps);
  const decay = step < decayStart ? 1 : 1 - (0.9 * (step - decayStart)) / Math.max(1, maxSteps - decayStart);
  const lr = peakLr * Math.min(1, (step + 1) / warmupSteps) * decay;
  await backend.step({ lr, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 });
  const loss = objective; // Σ w·logp with w = −1/N: the mean NLL
  smoothed = Number.isNaN(smoothed) ? loss : 0.95 * smoothed + 0.05 * loss;
  tokensSeen += trained;
  step++;
  if (step % 5 === 0) {
    const seconds = (Date.now() - started) / 1000;
    log.push({ step, loss: Number(smoothed.toFixed(4)), tokens: tokensSeen, seconds: Math.round(seconds) });
    console.error(`step ${step} loss ${smoothed.toFixed(3)} tokens ${tokensSeen} ${seconds.toFixed(0)}s`);
  }
  if (step % Number(values['save-every']) === 0) await save();
}
await save();
console.error(`done: ${step} steps, ${tokensSeen} tokens, loss ${smoothed.toFixed(3)}, ${((Date.now() - started) / 1000).toFixed(0)}s → ${join(out, 'model.safetensors')}`);
