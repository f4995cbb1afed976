/**
 * The compact Wordle for small byte-level models (`wordle` with `{ compact: true }`), the game of
 * lesson 6. No system prompt and no tags: the model's whole reply is its guess, and each
 * environment message is one short board line that already sums up all the feedback so far:
 *
 *   s?a?e +rt -bcdl
 *
 * the green letters in place (`?` where unknown), `+` the letters known to be in the word but not
 * yet placed (repeated when the word has two), `-` the letters known not to be in it. The opening
 * board is `????? + -`. Secret words come from a restricted pool: the first `poolSize` words
 * (default 300) of a fixed shuffle of the Wordle answer list, of which the first 100 are held out as
 * evaluation answers (they may still be guessed, and appear in word lists and as other games'
 * guesses, but are never a training game's answer) and the rest split in half: practice answers
 * (the RL games' answers, never a demonstration's) and demonstration answers (the pretraining and
 * warm-up games' answers); 100 and 100 in the default pool. The held-out words are the same for
 * every pool size. The evaluation games are by default fresh games whose answers are drawn from the
 * whole pool (the game as played: the answer list is known, an answer may recur), each by its own
 * seed, none a training game's; `evalSplit: 'held-out'` evaluates on the held-out answers instead
 * (the generalisation split: answers no training game has).
 * The game's dictionary is that same pool: a guess outside it is "not a word". A small model can
 * learn 300 words (it cannot learn the 12972 of the full Wordle list from the few hundred thousand
 * tokens a CPU gives it), so validity is something it can master, and every valid guess is a
 * possible answer. A larger pool (thousands of words, for a bigger model pretrained on a GPU) makes
 * the never-an-answer held-out words a small share of the dictionary, so that memorising which
 * words are training answers gains little and reading the board is what wins (docs/nano.md).
 *
 * Rewards: win 1; fewer turns 0.5·(7 − guesses)/6 when won; valid words 0.2 × the share of moves
 * that were valid guesses; consistency 0.3 × the informed guesses (the second valid guess on: the
 * first answers an empty board, so it cannot be inconsistent) that agreed with every fact on the
 * board they answered, as a share of the informed guesses made when won (1 for a first-guess win),
 * and of all five informed turns a game has when lost. A lost game's turns that were never played
 * (a forfeit by two invalid moves in a row, or the turn limit reached through invalid moves) count
 * as inconsistent, so no forfeit pays more than playing on: every valid guess added to a lost game
 * raises its valid-word share and never lowers its consistency. (Dividing by the guesses made, as
 * before, let two valid guesses, one of them consistent, then two invalid moves score 0.40, above
 * six guesses with three of five consistent, 0.38; GRPO found that.) A win scores at least 1; a
 * loss at most 0.5, so passing = winning.
 *
 * With `turnRewards: true` the rubric also scores every move (turn rewards, for GRPO's per-turn
 * credit): 0.2 for a valid guess and 0.3 for one that fits every fact on its board (the opening
 * guess fits an empty board), so a move that reads the board is credited where it was made rather
 * than only through the game's outcome.
 *
 * Also exports `compactWordleTeacher`, a deliberately imperfect solver for warm-up demonstrations
 * and pretraining (the built-in expert builds it over the game's own pool, see `compactPoolOf`): it
 * guesses a random pool word that fits the board, but now and then (30% of
 * moves) one that fits only the greens, so RL has room to do better than imitation.
 */
import {
  MultiTurnEnv,
  Rubric,
  type MultiTurnEnvOptions,
  Parser,
  type Environment,
  type Message,
  type RewardContext,
  type ScriptedPolicy,
  type State,
  type Task,
  type Trajectory,
  readArgs,
} from '../index.ts';
import { WORDLE_ANSWERS } from './data/wordle-words.ts';
import { EVAL_SEED_OFFSET, createRng } from './random.ts';
import { scoreGuess } from './wordle-rules.ts';

/** Letters in a word. */
const WORD_LENGTH = 5;
/** Valid guesses in a game. */
export const COMPACT_MAX_GUESSES = 6;
/** Invalid moves in a row that end the game. */
const MAX_CONSECUTIVE_INVALID = 2;

/** The default size of the compact game's answer pool (the first words of a fixed shuffle of the Wordle answers). */
export const COMPACT_POOL_SIZE = 300;
/** Pool words held out as evaluation answers (the first of the pool, the same for every pool size). */
export const COMPACT_HELD_OUT = 100;
/** The smallest pool: the held-out words and at least 10 practice and 10 demonstration answers. */
export const COMPACT_MIN_POOL_SIZE = 120;
/** The largest pool: every Wordle answer. */
export const COMPACT_MAX_POOL_SIZE = WORDLE_ANSWERS.length;
const POOL_SEED = 20260515;

/** The fixed shuffle the pools are prefixes of, made once on first use. */
let shuffledAnswers: readonly string[] | undefined;

/** Pool words kept as RL-only ("practice") answers in the default 300-word pool (half of the non-held-out words). */
export const COMPACT_PRACTICE = 100;

/**
 * A compact game's answer pool, split three ways: `heldOut` (evaluation answers only), `practice`
 * (answers of the RL games only) and `demonstration` (answers of pretraining and warm-up games);
 * `training` is practice + demonstration. A model that memorised the answers it was shown gains
 * nothing from that memory on a practice word, so RL on practice words rewards reading the board,
 * the skill a held-out word needs. `dictionary` is the pool as a set: the game's valid guesses.
 */
export interface CompactAnswerPool {
  readonly all: readonly string[];
  readonly heldOut: readonly string[];
  readonly practice: readonly string[];
  readonly demonstration: readonly string[];
  readonly training: readonly string[];
  readonly dictionary: ReadonlySet<string>;
}

const pools = new Map<number, CompactAnswerPool>();

/** Throws unless `poolSize` is a whole number of words from COMPACT_MIN_POOL_SIZE to COMPACT_MAX_POOL_SIZE. */
export function checkCompactPoolSize(poolSize: unknown): number {
  if (typeof poolSize !== 'number' || !Number.isInteger(poolSize) || poolSize < COMPACT_MIN_POOL_SIZE || poolSize > COMPACT_MAX_POOL_SIZE) {
    throw new Error(
      `wordle (compact): poolSize must be a whole number from ${COMPACT_MIN_POOL_SIZE} (the ${COMPACT_HELD_OUT} held-out words and at least 10 practice and 10 demonstration answers) ` +
        `to ${COMPACT_MAX_POOL_SIZE} (every Wordle answer), got ${JSON.stringify(poolSize)}`,
    );
  }
  return poolSize;
}

/**
 * The answer pool of `poolSize` words (cached): the first `poolSize` words of a fixed shuffle of
 * the Wordle answers, so the 100 held-out words (the first 100) are the same for every size; the
 * rest split in half, practice first (the odd word goes to practice). 300 gives 100/100/100.
 */
export function compactAnswerPool(poolSize: number = COMPACT_POOL_SIZE): CompactAnswerPool {
  const cached = pools.get(poolSize);
  if (cached !== undefined) return cached;
  checkCompactPoolSize(poolSize);
  shuffledAnswers ??= createRng(POOL_SEED).shuffle(WORDLE_ANSWERS);
  const all = shuffledAnswers.slice(0, poolSize);
  const practiceEnd = COMPACT_HELD_OUT + Math.ceil((poolSize - COMPACT_HELD_OUT) / 2);
  const pool: CompactAnswerPool = {
    all,
    heldOut: all.slice(0, COMPACT_HELD_OUT),
    practice: all.slice(COMPACT_HELD_OUT, practiceEnd),
    demonstration: all.slice(practiceEnd),
    training: all.slice(COMPACT_HELD_OUT),
    dictionary: new Set(all),
  };
  pools.set(poolSize, pool);
  return pool;
}

/** The default (300-word) pool: 100 held-out, 100 practice and 100 demonstration answers. */
export const COMPACT_ANSWER_POOL: CompactAnswerPool = compactAnswerPool(COMPACT_POOL_SIZE);

/** The default game's dictionary: a guess is valid only if it is one of the 300-word pool's words. */
export const COMPACT_DICTIONARY: ReadonlySet<string> = COMPACT_ANSWER_POOL.dictionary;

// ---------------------------------------------------------------- the board

/** What the feedback so far says: greens by position, letters in the word with their known counts, letters not in it. */
export interface BoardFacts {
  greens: (string | null)[]; // (5) the letter known at each position
  minCounts: Map<string, number>; // letter → how many copies the word has at least
  excluded: Set<string>; // letters the word does not contain
}

/** The facts of a list of guesses and their G/Y/X marks (repeated letters: a letter's count is its G+Y marks in one guess). */
export function boardFacts(guesses: readonly string[], marks: readonly string[]): BoardFacts {
  const greens: (string | null)[] = Array.from({ length: WORD_LENGTH }, () => null);
  const minCounts = new Map<string, number>();
  const marked = new Set<string>();
  guesses.forEach((guess, g) => {
    const counts = new Map<string, number>();
    for (let i = 0; i < WORD_LENGTH; i++) {
      const letter = guess[i]!;
      const mark = marks[g]![i];
      if (mark === 'G') greens[i] = letter;
      if (mark === 'G' || mark === 'Y') counts.set(letter, (counts.get(letter) ?? 0) + 1);
      else marked.add(letter);
    }
    for (const [letter, count] of counts) minCounts.set(letter, Math.max(minCounts.get(letter) ?? 0, count));
  });
  const excluded = new Set([...marked].filter((letter) => !minCounts.has(letter)));
  return { greens, minCounts, excluded };
}

/** The board line: greens in place, `+` unplaced known letters, `-` excluded letters (each in alphabetical order). */
export function renderBoard(facts: BoardFacts): string {
  const pattern = facts.greens.map((letter) => letter ?? '?').join('');
  const unplaced: string[] = [];
  for (const [letter, count] of facts.minCounts) {
    const placed = facts.greens.filter((green) => green === letter).length;
    for (let k = placed; k < count; k++) unplaced.push(letter);
  }
  return `${pattern} +${unplaced.sort().join('')} -${[...facts.excluded].sort().join('')}`;
}

/** Whether a word agrees with every fact on the board: its greens, its known letters (with counts) and its excluded letters. */
export function fitsBoard(word: string, facts: BoardFacts): boolean {
  for (let i = 0; i < WORD_LENGTH; i++) {
    const green = facts.greens[i];
    if (green !== null && green !== undefined && word[i] !== green) return false;
    if (facts.excluded.has(word[i]!)) return false;
  }
  for (const [letter, count] of facts.minCounts) {
    let have = 0;
    for (const c of word) if (c === letter) have++;
    if (have < count) return false;
  }
  return true;
}

/** Reads a board line back into its facts (for the teacher, which sees only the transcript); undefined when the text is not a board. */
export function parseBoard(text: string): BoardFacts | undefined {
  const match = /([a-z?]{5}) \+([a-z]*) -([a-z]*)\s*$/.exec(text);
  if (match === null) return undefined;
  const greens = [...match[1]!].map((c) => (c === '?' ? null : c));
  const minCounts = new Map<string, number>();
  for (const letter of [...greens.filter((g): g is string => g !== null), ...match[2]!]) minCounts.set(letter, (minCounts.get(letter) ?? 0) + 1);
  return { greens, minCounts, excluded: new Set(match[3]!) };
}

// ---------------------------------------------------------------- the game

/** What one move was: a valid guess that fits every fact on its board, a valid guess that does not, or not a valid guess. */
export type CompactMove = 'fits' | 'misfit' | 'invalid';

/** State of one compact game. */
export interface CompactWordleState extends State {
  secret: string;
  /** Every model move in order, as judged on the board it answered (one per model turn). */
  moves: CompactMove[];
  /** Valid guesses so far, lower case. */
  guesses: string[];
  /** The G/Y/X marks of each valid guess. */
  marks: string[];
  /** Informed valid guesses (the second on) that fitted the board they answered. */
  consistentGuesses: number;
  invalidGuesses: number;
  consecutiveInvalid: number;
  won: boolean;
  gameOver: boolean;
}

/** Why a reply is not a valid guess, or undefined when it is one. */
function invalidReason(guess: string, state: CompactWordleState, dictionary: ReadonlySet<string>): string | undefined {
  if (!/^[a-z]{5}$/.test(guess)) return 'not five letters';
  if (state.guesses.includes(guess)) return 'already guessed';
  if (!dictionary.has(guess)) return 'not a word';
  return undefined;
}

class CompactWordleEnv extends MultiTurnEnv<CompactWordleState> {
  /** The game's answer pool: its answers' splits and its dictionary. */
  readonly pool: CompactAnswerPool;

  constructor(options: MultiTurnEnvOptions<CompactWordleState>, pool: CompactAnswerPool) {
    super(options);
    this.pool = pool;
  }

  override setupState(state: State): CompactWordleState {
    if (typeof state.answer !== 'string' || state.answer.length !== WORD_LENGTH) throw new Error(`wordle: the task's answer must be a ${WORD_LENGTH}-letter word`);
    return { ...state, secret: state.answer.toLowerCase(), moves: [], guesses: [], marks: [], consistentGuesses: 0, invalidGuesses: 0, consecutiveInvalid: 0, won: false, gameOver: false };
  }

  override envResponse(messages: Message[], state: CompactWordleState): Message[] {
    const guess = (messages.at(-1)?.content ?? '').trim().toLowerCase();
    const before = boardFacts(state.guesses, state.marks);
    const reason = invalidReason(guess, state, this.pool.dictionary);
    if (reason !== undefined) {
      state.moves.push('invalid');
      state.invalidGuesses += 1;
      state.consecutiveInvalid += 1;
      if (state.consecutiveInvalid >= MAX_CONSECUTIVE_INVALID) {
        state.gameOver = true;
        return [{ role: 'user', content: `${reason}; lost: ${state.secret}` }];
      }
      return [{ role: 'user', content: `${reason}; ${renderBoard(before)}` }];
    }
    state.consecutiveInvalid = 0;
    const fits = fitsBoard(guess, before);
    state.moves.push(fits ? 'fits' : 'misfit');
    if (state.guesses.length > 0 && fits) state.consistentGuesses += 1;
    state.guesses.push(guess);
    state.marks.push(scoreGuess(guess, state.secret));
    if (guess === state.secret) {
      state.won = true;
      state.gameOver = true;
      return [{ role: 'user', content: `won in ${state.guesses.length}` }];
    }
    if (state.guesses.length >= COMPACT_MAX_GUESSES) {
      state.gameOver = true;
      return [{ role: 'user', content: `lost: ${state.secret}` }];
    }
    return [{ role: 'user', content: renderBoard(boardFacts(state.guesses, state.marks)) }];
  }

  override isCompleted(_messages: Message[], state: CompactWordleState): boolean {
    return state.gameOver;
  }

  /** A game passes when it is won, whatever the reward weights (`rewardWeights` may set the win's to 0), and every reward that counts scored it. */
  override isPassed(trajectory: Trajectory): boolean {
    return (trajectory.state as Partial<CompactWordleState>).won === true && this.isFullyScored(trajectory);
  }
}

// ---------------------------------------------------------------- rewards

/** 1 when the secret word was guessed. */
export function compactWinReward({ state }: RewardContext<CompactWordleState>): number {
  return state.won ? 1 : 0;
}

/** (7 − guesses)/6 when won: 1 for a first-guess win, 1/6 for a sixth-guess win; 0 when lost. */
export function fewerTurnsReward({ state }: RewardContext<CompactWordleState>): number {
  return state.won ? (COMPACT_MAX_GUESSES + 1 - state.guesses.length) / COMPACT_MAX_GUESSES : 0;
}

/** The share of moves that were valid guesses (0 with no move). */
export function validWordsReward({ state }: RewardContext<CompactWordleState>): number {
  const moves = state.guesses.length + state.invalidGuesses;
  return moves === 0 ? 0 : state.guesses.length / moves;
}

/**
 * Informed guesses (valid guesses after the first) that fitted every fact on the board they
 * answered: a won game's share of the informed guesses it made (1 for a first-guess win); a lost
 * game's share of all COMPACT_MAX_GUESSES − 1 informed turns, so turns lost to invalid moves count
 * as inconsistent and giving up never pays more than playing on.
 */
export function consistencyReward({ state }: RewardContext<CompactWordleState>): number {
  if (!state.won) return state.consistentGuesses / (COMPACT_MAX_GUESSES - 1);
  const informed = state.guesses.length - 1;
  return informed <= 0 ? 1 : state.consistentGuesses / informed;
}

/** The share of informed guesses made that fitted their board, win or lose (a metric, weight 0; 0 with no informed guess): how well the model reads the board when it does guess. */
export function consistentGuessesMetric({ state }: RewardContext<CompactWordleState>): number {
  const informed = state.guesses.length - 1;
  return informed <= 0 ? 0 : state.consistentGuesses / informed;
}

/** Valid guesses made (a metric, weight 0): turns per game, and per win when won. */
export function guessesMetric({ state }: RewardContext<CompactWordleState>): number {
  return state.guesses.length;
}

/** Invalid moves in the game (a metric, weight 0). */
export function compactInvalidGuessesMetric({ state }: RewardContext<CompactWordleState>): number {
  return state.invalidGuesses;
}

/** The compact game's reward weights, by reward function name. */
export const COMPACT_REWARD_WEIGHTS = { win: 1, fewerTurns: 0.5, validWords: 0.2, consistency: 0.3 } as const;

/** Per model turn: 1 for a valid guess, 0 for a move that was not one (a turn reward). */
export function validMoveTurnReward({ state, completion }: RewardContext<CompactWordleState>): number[] {
  return movesOfTurns(state, completion).map((move) => (move === 'fits' || move === 'misfit' ? 1 : 0));
}

/** Per model turn: 1 for a valid guess that fits every fact on the board it answered (an opening guess always does), else 0 (a turn reward). */
export function fitsBoardTurnReward({ state, completion }: RewardContext<CompactWordleState>): number[] {
  return movesOfTurns(state, completion).map((move) => (move === 'fits' ? 1 : 0));
}

/** The compact game's turn reward weights, by turn reward function name (with `turnRewards: true`). */
export const COMPACT_TURN_REWARD_WEIGHTS = { validMove: 0.2, fitsBoard: 0.3 } as const;

/** The move of each model turn; a turn the game never judged (the rollout stopped before its reply) counts as invalid. */
function movesOfTurns(state: CompactWordleState, completion: readonly Message[]): CompactMove[] {
  const turns = completion.filter((message) => message.role === 'assistant').length;
  return Array.from({ length: turns }, (_, turn) => state.moves[turn] ?? 'invalid');
}

// ---------------------------------------------------------------- environment

/** Arguments of the compact game (a subset of WordleArgs). */
export interface CompactWordleArgs {
  numTasks?: number;
  numEvalTasks?: number;
  seed?: number;
  evalSeed?: number;
  maxTurns?: number;
  /**
   * Which pool words the training games' answers come from. `practice` (the default): RL games on
   * practice answers, warm-up demonstrations on demonstration answers, so no answer the model was
   * shown played is one it is rewarded for finding. `demonstration`: every training game on
   * demonstration answers (pretraining). `training`: both sets for both (the first checkpoints' game).
   * `practice-and-demonstration`: RL games on both sets, warm-up demonstrations on demonstration
   * answers only, so RL keeps playing the answers the demonstrations taught while it learns the
   * practice ones, and a control that only imitates sees no practice answer.
   */
  answers?: CompactTrainingAnswers;
  /**
   * The evaluation games. `fresh` (the default): `numEvalTasks` games (default 100, at most 10000)
   * whose answers are drawn from the whole answer pool, game i by its own seed `evalSeed + i`, never a
   * training game's seed (an answer may recur, and may be one training games have: the game as
   * played). `held-out`: one game per held-out answer (at most 100), answers no training game has:
   * the generalisation split.
   */
  evalSplit?: CompactEvalSplit;
  /** Score every move too (valid, fits the board): turn rewards for GRPO's per-turn credit (default false). */
  turnRewards?: boolean;
  /**
   * Words in the answer pool, which is also the dictionary (default 300, from 120 to every Wordle
   * answer, 2315): the first `poolSize` words of a fixed shuffle, so the 100 held-out answers are
   * the same for every size; the other words split in half into practice and demonstration answers.
   */
  poolSize?: number;
  /**
   * Other weights for some of the rewards, by the names of COMPACT_REWARD_WEIGHTS and
   * COMPACT_TURN_REWARD_WEIGHTS (e.g. `{ "win": 0, "fewerTurns": 0 }` to pay only for how moves are
   * played). A game passes when it is won, whatever the weights.
   */
  rewardWeights?: Partial<Record<CompactRewardName, number>>;
}

/** The names of the compact game's rewards and turn rewards, for `rewardWeights`. */
export type CompactRewardName = keyof typeof COMPACT_REWARD_WEIGHTS | keyof typeof COMPACT_TURN_REWARD_WEIGHTS;

/** The compact game's weights with `overrides` applied; refuses an unknown name or a weight that is not a finite number. */
function compactWeights(overrides: unknown): Record<CompactRewardName, number> {
  const weights: Record<CompactRewardName, number> = { ...COMPACT_REWARD_WEIGHTS, ...COMPACT_TURN_REWARD_WEIGHTS };
  if (overrides === undefined) return weights;
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides))
    throw new Error(`wordle (compact): rewardWeights must be an object of weights by name, got ${JSON.stringify(overrides)}`);
  for (const [name, weight] of Object.entries(overrides)) {
    if (!(name in weights)) throw new Error(`wordle (compact): rewardWeights has no reward "${name}"; the names are ${Object.keys(weights).join(', ')}`);
    if (typeof weight !== 'number' || !Number.isFinite(weight)) throw new Error(`wordle (compact): the weight of ${name} must be a finite number, got ${JSON.stringify(weight)}`);
    weights[name as CompactRewardName] = weight;
  }
  return weights;
}

/** The answer sets a compact game's training tasks may draw from, as `answers` names them. */
const COMPACT_TRAINING_ANSWERS = ['training', 'practice', 'demonstration', 'practice-and-demonstration'] as const;

/** The names of the answer sets a compact game's training tasks may draw from. */
export type CompactTrainingAnswers = (typeof COMPACT_TRAINING_ANSWERS)[number];

/** The compact game's evaluation splits, as `evalSplit` names them. */
export const COMPACT_EVAL_SPLITS = ['fresh', 'held-out'] as const;

/**
 * A compact game's evaluation split: `fresh` (the default), fresh games whose answers are drawn from
 * the whole answer pool, an answer may recur, as in the game as played; `held-out`, one game per
 * held-out answer, answers no training game has (the generalisation split).
 */
export type CompactEvalSplit = (typeof COMPACT_EVAL_SPLITS)[number];

/** The most games the fresh evaluation split makes. */
export const COMPACT_MAX_FRESH_EVAL_TASKS = 10_000;

/** Training games: cycling through shuffled copies of `words` (more games than words repeat them), game i numbered `seed + i` in `info.gameSeed`. */
function compactTasks(words: readonly string[], count: number, seed: number): Task[] {
  const start = renderBoard(boardFacts([], []));
  const rng = createRng(seed);
  const answers: string[] = [];
  while (answers.length < count) answers.push(...rng.shuffle(words).slice(0, count - answers.length));
  return answers.map((answer, i) => ({ question: start, answer, task: 'wordle', info: { gameSeed: seed + i } }));
}

/** Fresh evaluation games: game i has seed `evalSeed + i` (in `info.gameSeed`), which alone draws its answer from `words` (answers may recur). */
function freshTasks(words: readonly string[], count: number, evalSeed: number): Task[] {
  const start = renderBoard(boardFacts([], []));
  return Array.from({ length: count }, (_, i) => ({ question: start, answer: createRng(evalSeed + i).pick(words), task: 'wordle', info: { gameSeed: evalSeed + i } }));
}

/** Builds the compact Wordle: board lines, bare-word replies, an answer pool (300 words by default) with 100 held-out answers and the rest split into practice (RL) and demonstration answers; evaluation on fresh games from the whole pool (or, with `evalSplit: 'held-out'`, on the held-out answers). */
export function loadCompactWordle(args: CompactWordleArgs = {}): Environment<CompactWordleState> {
  const read = readArgs('wordle (compact)', args);
  const pool = compactAnswerPool(args.poolSize === undefined ? COMPACT_POOL_SIZE : args.poolSize); // checks the size (null included)
  const turnRewards = read.boolean('turnRewards', { default: false });
  const weights = compactWeights(args.rewardWeights);
  const numTasks = read.wholeNumber('numTasks', { default: 1000, min: 0, note: 'answers repeat when there are more games than answers' });
  const evalSplit = read.oneOf('evalSplit', COMPACT_EVAL_SPLITS, { default: 'fresh' });
  const numEvalTasks =
    evalSplit === 'held-out'
      ? read.wholeNumber('numEvalTasks', { default: COMPACT_HELD_OUT, min: 0, max: COMPACT_HELD_OUT, note: 'the held-out split has one game per held-out word' })
      : read.wholeNumber('numEvalTasks', { default: COMPACT_HELD_OUT, min: 0, max: COMPACT_MAX_FRESH_EVAL_TASKS });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  // Training games are numbered seed … seed + numTasks − 1; fresh evaluation games evalSeed onwards: never the same game.
  if (evalSplit === 'fresh' && evalSeed < seed + numTasks && seed < evalSeed + numEvalTasks) {
    read.fail(
      `the evaluation games' seeds (${evalSeed} to ${evalSeed + numEvalTasks - 1}) overlap the training games' (${seed} to ${seed + numTasks - 1}); choose an evalSeed outside them (the default, seed + ${EVAL_SEED_OFFSET}, is)`,
    );
  }
  const maxTurns = read.wholeNumber('maxTurns', { default: 8, min: 1 });
  const answers = read.oneOf('answers', COMPACT_TRAINING_ANSWERS, { default: 'practice' });
  const rubric = new Rubric<CompactWordleState>()
    .addReward(compactWinReward, weights.win)
    .addReward(fewerTurnsReward, weights.fewerTurns)
    .addReward(validWordsReward, weights.validWords)
    .addReward(consistencyReward, weights.consistency)
    .addMetric(guessesMetric, 'info')
    .addMetric(consistentGuessesMetric, 'higherIsBetter')
    .addMetric(compactInvalidGuessesMetric, 'lowerIsBetter');
  if (turnRewards) rubric.addTurnReward(validMoveTurnReward, weights.validMove).addTurnReward(fitsBoardTurnReward, weights.fitsBoard);
  return new CompactWordleEnv(
    {
      name: 'wordle',
      dataset: compactTasks(pool[answers === 'practice-and-demonstration' ? 'training' : answers], numTasks, seed),
      // Games that include practice answers set their demonstrations apart; otherwise the warm-up plays `dataset` itself.
      ...(answers === 'practice' || answers === 'practice-and-demonstration' ? { demonstrationDataset: compactTasks(pool.demonstration, numTasks, seed) } : {}),
      evalDataset:
        evalSplit === 'fresh'
          ? freshTasks(pool.all, numEvalTasks, evalSeed)
          : createRng(evalSeed)
              .shuffle(pool.heldOut)
              .slice(0, numEvalTasks)
              .map((answer) => ({ question: renderBoard(boardFacts([], [])), answer, task: 'wordle' })),
      parser: new Parser(),
      rubric,
      maxTurns,
      passThreshold: COMPACT_REWARD_WEIGHTS.win,
    },
    pool,
  );
}

/** The answer pool of a compact Wordle environment, or undefined when `env` is not one. */
export function compactPoolOf(env: Environment): CompactAnswerPool | undefined {
  return env instanceof CompactWordleEnv ? env.pool : undefined;
}

// ---------------------------------------------------------------- teacher

/** A 32-bit FNV-1a hash of a text, to seed the teacher's choice from the transcript (deterministic demonstrations). */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/** Whether a transcript is a compact Wordle game (its last user message is a board line). */
export function isCompactWordleTranscript(messages: readonly Message[]): boolean {
  const last = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
  return parseBoard(last) !== undefined;
}

/** The share of the teacher's moves that fit only the board's greens. */
export const COMPACT_TEACHER_MISTAKE_RATE = 0.3;

/**
 * What seeds the teacher's choices: `transcript` (the default), the transcript alone, so an answer
 * always gets the same game (every game opens on the same board); `game`, the request's `seed` and
 * the transcript, so each game (evaluate gives rollout i of task j its own seed when its sampling
 * arguments have one) is played differently and the same seed replays the same game.
 */
export type CompactTeacherSeed = 'transcript' | 'game';

/** The teacher's seeding choices, as `--teacher` of the pretraining script names them. */
export const COMPACT_TEACHER_SEEDS: readonly CompactTeacherSeed[] = ['transcript', 'game'];

/**
 * A deliberately imperfect compact-Wordle solver: a random word of `pool` (the game's pool, default
 * the 300-word one; not yet guessed) that fits the board, except with probability `mistakeRate` one
 * that fits only the greens. Its randomness is seeded by the transcript, so the same game always
 * gets the same move; with `seedBy: 'game'` also by the request's seed, which such a teacher
 * requires (a request without one is refused), so the same answer gets different games.
 */
export function compactWordleTeacher(mistakeRate = COMPACT_TEACHER_MISTAKE_RATE, pool: CompactAnswerPool = COMPACT_ANSWER_POOL, seedBy: CompactTeacherSeed = 'transcript'): ScriptedPolicy {
  const words = pool.all;
  return (messages, request) => {
    const last = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
    const facts = parseBoard(last) ?? boardFacts([], []);
    const guessed = new Set(messages.filter((message) => message.role === 'assistant').map((message) => message.content.trim()));
    const transcript = messages.map((message) => message.content).join('|');
    if (seedBy === 'game' && request.seed === undefined) {
      throw new Error('compactWordleTeacher: a teacher seeded by the game needs a seed in each request; pass samplingArgs with a seed to evaluate (each rollout then gets its own)');
    }
    const rng = createRng(hashText(seedBy === 'game' ? `${request.seed}#${transcript}` : transcript));
    const fresh = words.filter((word) => !guessed.has(word));
    const greensOnly: BoardFacts = { greens: facts.greens, minCounts: new Map(), excluded: new Set() };
    const careless = rng.next() < mistakeRate;
    const fitting = fresh.filter((word) => fitsBoard(word, careless ? greensOnly : facts));
    return rng.pick(fitting.length > 0 ? fitting : fresh.length > 0 ? fresh : words);
  };
}
