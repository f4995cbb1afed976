/**
 * Reverse a short text, character by character (after verifiers' `reverse_text`).
 *
 * Task: a phrase of `minLength`–`maxLength` characters (short common words, lower case); the model
 * writes it backwards inside `<reversed>...</reversed>`. Short fixed-format prompts suit a tiny
 * byte-level model trained from scratch; real models find it easy but not trivial.
 *
 * Scoring: `lcsReward` (weight 1) = LCS ratio of the parsed answer to the reversed text,
 * 2·LCS/(|a|+|b|), so near misses earn partial credit; format 0.2. Passing = an exact reversal in
 * clean format (reward 1.2; a near miss can reach 1.17).
 * Also exports `reverseTextExpertPolicy`, which reverses the text, for SFT warm-up demonstrations.
 */
import { Parser, SingleTurnEnv, XMLParser, Rubric, type Environment, type RewardContext, type ScriptedPolicy, type Task, readArgs } from '../index.ts';
import { EVAL_SEED_OFFSET, generateTasks, type Rng } from './random.ts';

// ---------------------------------------------------------------- dataset

const WORDS = [
  'a',
  'an',
  'at',
  'be',
  'by',
  'do',
  'go',
  'he',
  'if',
  'in',
  'is',
  'it',
  'me',
  'my',
  'no',
  'of',
  'on',
  'or',
  'so',
  'to',
  'up',
  'we',
  'all',
  'and',
  'big',
  'box',
  'cat',
  'day',
  'dog',
  'egg',
  'fox',
  'fun',
  'hat',
  'hot',
  'ice',
  'jam',
  'key',
  'map',
  'new',
  'old',
  'red',
  'run',
  'sea',
  'sky',
  'sun',
  'tea',
  'top',
  'two',
  'war',
  'yes',
  'zoo',
  'bird',
  'blue',
  'cake',
  'cold',
  'door',
  'fish',
  'gold',
  'green',
  'happy',
  'house',
  'light',
  'lemon',
  'music',
  'night',
  'ocean',
  'paper',
  'quiet',
  'river',
  'stone',
  'table',
  'tiger',
  'water',
  'world',
  'yellow',
  'garden',
  'little',
  'planet',
  'window',
];

const QUESTION_PREFIX = 'Reverse this text: ';

/** Arguments of the reverse-text environment. */
export interface ReverseTextArgs {
  /** Training tasks (default 1000). */
  numTasks?: number;
  /** Held-out tasks (default 100). */
  numEvalTasks?: number;
  seed?: number;
  /** Seed of the evaluation set (default seed + 1000003). */
  evalSeed?: number;
  /** Shortest text in characters (default 5). */
  minLength?: number;
  /** Longest text in characters (default 20). */
  maxLength?: number;
  /**
   * The compact form for tiny models trained from scratch (the default lesson): no system prompt,
   * the question is the bare text, and the whole reply is the answer (no tags, no format reward).
   */
  compact?: boolean;
}

/** A phrase of random words (words of 3+ letters while they fit), of a length within [minLength, maxLength]. */
function makePhrase(rng: Rng, minLength: number, maxLength: number): string {
  const length = rng.int(minLength, maxLength);
  let phrase = '';
  for (;;) {
    const room = phrase === '' ? length : length - phrase.length - 1;
    const fitting = WORDS.filter((word) => word.length <= room);
    if (fitting.length === 0) break;
    const longer = fitting.filter((word) => word.length >= 3);
    const word = rng.pick(longer.length > 0 ? longer : fitting);
    phrase = phrase === '' ? word : `${phrase} ${word}`;
  }
  // Greedy filling stops at length or length - 1 ("a" fits any other gap); pluralise to reach minLength.
  return phrase.length >= minLength ? phrase : `${phrase}s`;
}

function makeTask(rng: Rng, minLength: number, maxLength: number, compact = false): Task {
  const text = makePhrase(rng, minLength, maxLength);
  return { question: compact ? text : `${QUESTION_PREFIX}${text}`, answer: reverseText(text), info: { text }, task: 'reverse-text' };
}

/** The text backwards, by Unicode code point. */
export function reverseText(text: string): string {
  return [...text].reverse().join('');
}

// ---------------------------------------------------------------- parser

const SYSTEM_PROMPT = 'Reverse the text character by character. Answer inside <reversed>...</reversed> tags.';

// ---------------------------------------------------------------- rewards

/** Length of the longest common subsequence of two strings (by code point). */
export function longestCommonSubsequence(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  let previous = new Array<number>(y.length + 1).fill(0);
  for (let i = 1; i <= x.length; i++) {
    const current = new Array<number>(y.length + 1).fill(0);
    for (let j = 1; j <= y.length; j++) {
      current[j] = x[i - 1] === y[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    previous = current;
  }
  return previous[y.length]!;
}

/** LCS similarity in [0, 1]: 2·LCS(a, b) / (|a| + |b|); two empty strings are identical (1). */
export function lcsRatio(a: string, b: string): number {
  const total = [...a].length + [...b].length;
  return total === 0 ? 1 : (2 * longestCommonSubsequence(a, b)) / total;
}

/** How close the parsed answer is to the reversed text (LCS ratio); 0 with no answer. */
export function lcsReward({ completion, answer, parser }: RewardContext): number {
  const parsed = parser.parseAnswer(completion);
  return parsed === undefined || answer === undefined ? 0 : lcsRatio(parsed, answer);
}
const LCS_WEIGHT = 1;
const FORMAT_WEIGHT = 0.2;

// ---------------------------------------------------------------- environment

/** Builds the reverse-text environment. */
export default function loadEnvironment(args: ReverseTextArgs = {}): Environment {
  const read = readArgs('reverse-text', args);
  const numTasks = read.wholeNumber('numTasks', { default: 1000, min: 0 });
  const numEvalTasks = read.wholeNumber('numEvalTasks', { default: 100, min: 0 });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  const minLength = read.wholeNumber('minLength', { default: 5, min: 1, note: 'characters' });
  const maxLength = read.wholeNumber('maxLength', { default: 20, min: 1, note: 'characters' });
  if (maxLength < minLength) read.fail(`need 1 ≤ minLength ≤ maxLength, got ${minLength} and ${maxLength}`);
  const compact = read.boolean('compact', { default: false });
  const make = (rng: Rng) => makeTask(rng, minLength, maxLength, compact);
  const dataset = generateTasks({ count: numTasks, seed, make });
  const evalDataset = generateTasks({ count: numEvalTasks, seed: evalSeed, make, exclude: dataset });
  if (compact) {
    return new SingleTurnEnv({ name: 'reverse-text', dataset, evalDataset, parser: new Parser(), rubric: new Rubric().addReward(lcsReward, LCS_WEIGHT), passThreshold: LCS_WEIGHT });
  }
  const parser = new XMLParser(['reversed']);
  return new SingleTurnEnv({
    name: 'reverse-text',
    dataset,
    evalDataset,
    systemPrompt: SYSTEM_PROMPT,
    parser,
    rubric: new Rubric().addReward(lcsReward, LCS_WEIGHT).addReward(parser.formatReward(), FORMAT_WEIGHT),
    passThreshold: LCS_WEIGHT + FORMAT_WEIGHT,
  });
}

// ---------------------------------------------------------------- expert

/** A scripted expert: reverses the text of the last user message, in tags unless the task is compact (a bare question). */
export const reverseTextExpertPolicy: ScriptedPolicy = (messages) => {
  const question = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
  if (!question.startsWith(QUESTION_PREFIX)) return reverseText(question);
  return `<reversed>${reverseText(question.slice(QUESTION_PREFIX.length))}</reversed>`;
};
