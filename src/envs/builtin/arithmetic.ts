/**
 * Arithmetic word problems with exact whole-number answers, generated from templates.
 *
 * Task: "Maya has 3 boxes of 12 pencils. Maya gives away 5 pencils. How many pencils does Maya
 * have now?" `difficulty` 1–5 sets the number of steps (1–5 after the opening sentence) and the
 * size of the numbers (up to 10, 20, 50, 100, 1000). Every intermediate count is a whole number
 * ≥ 0, so the answer is exact. The model answers with a number in `<answer>...</answer>`.
 *
 * Scoring: `correctAnswerReward` 1 when the number equals the answer after normalisation ("1,200",
 * "1200.0", "$1200" and "1200" are the same); format 0.2. Passing = correct. Also exports
 * `arithmeticExpertPolicy`, which answers the generated tasks correctly.
 */
import { SingleTurnEnv, XMLParser, Rubric, type Environment, type RewardContext, type ScriptedPolicy, type Task, readArgs } from '../index.ts';
import { makeRational, parseNumberAnswer, rationalEquals } from './expression.ts';
import { EVAL_SEED_OFFSET, generateTasks, type Rng } from './random.ts';

// ---------------------------------------------------------------- dataset

const NAMES = ['Maya', 'Leo', 'Ana', 'Sam', 'Ravi', 'Mia', 'Omar', 'Lena', 'Kai', 'Zoe', 'Ben', 'Ivy'];
const ITEMS = ['pencils', 'apples', 'stickers', 'marbles', 'cards', 'coins', 'books', 'shells', 'cookies', 'stamps'];
/** Largest operand at each difficulty 1–5. */
const MAX_OPERAND = [10, 20, 50, 100, 1000];

/** Arguments of the arithmetic environment. */
export interface ArithmeticArgs {
  /** Training tasks (default 1000). */
  numTasks?: number;
  /** Held-out tasks (default 100). */
  numEvalTasks?: number;
  seed?: number;
  /** Seed of the evaluation set (default seed + 1000003). */
  evalSeed?: number;
  /** 1–5: steps after the opening sentence, and the size of the numbers (default 2). */
  difficulty?: number;
}

/** A step of the story: its sentence and the new count, or undefined when it does not fit the count. */
type Step = (rng: Rng, count: number, max: number, name: string, item: string) => { text: string; count: number } | undefined;

const STEPS: { minDifficulty: number; step: Step }[] = [
  {
    minDifficulty: 1,
    step: (rng, count, max, name, item) => {
      const k = rng.int(1, max);
      return { text: `${name} buys ${k} more ${item}.`, count: count + k };
    },
  },
  {
    minDifficulty: 1,
    step: (rng, count, _max, name, item) => {
      if (count < 1) return undefined;
      const k = rng.int(1, count);
      return { text: `${name} gives away ${k} ${item}.`, count: count - k };
    },
  },
  {
    minDifficulty: 2,
    step: (rng, count, max, name, item) => {
      const packs = rng.int(2, Math.min(9, max));
      const each = rng.int(2, max);
      return { text: `${name} buys ${packs} packs of ${each} ${item}.`, count: count + packs * each };
    },
  },
  {
    minDifficulty: 3,
    step: (rng, count, _max, name) => {
      const [factor, word] = rng.pick([
        [2, 'doubles'],
        [3, 'triples'],
      ] as const);
      return { text: `A friend ${word} ${name}'s pile.`, count: count * factor };
    },
  },
  {
    minDifficulty: 3,
    step: (rng, count, _max, name, item) => {
      const shares = [2, 3, 4, 5].filter((k) => count > 0 && count % k === 0);
      if (shares.length === 0) return undefined;
      const k = rng.pick(shares);
      return { text: `${name} splits the ${item} into ${k} equal groups and keeps one group.`, count: count / k };
    },
  },
];

function makeTask(rng: Rng, difficulty: number): Task {
  const max = MAX_OPERAND[difficulty - 1]!;
  const name = rng.pick(NAMES);
  const item = rng.pick(ITEMS);
  const sentences: string[] = [];
  let count: number;
  if (difficulty >= 2 && rng.next() < 0.5) {
    const boxes = rng.int(2, Math.min(9, max));
    const each = rng.int(2, max);
    count = boxes * each;
    sentences.push(`${name} has ${boxes} boxes of ${each} ${item}.`);
  } else {
    count = rng.int(1, max);
    sentences.push(`${name} has ${count} ${item}.`);
  }
  const available = STEPS.filter((entry) => entry.minDifficulty <= difficulty);
  while (sentences.length < difficulty + 1) {
    const outcome = rng.pick(available).step(rng, count, max, name, item);
    if (!outcome) continue;
    sentences.push(outcome.text);
    count = outcome.count;
  }
  sentences.push(`How many ${item} does ${name} have now?`);
  return { question: sentences.join(' '), answer: String(count), task: 'arithmetic', info: { difficulty } };
}

// ---------------------------------------------------------------- parser

const SYSTEM_PROMPT = 'Solve the problem. Give the final answer as a number inside <answer>...</answer> tags.';

// ---------------------------------------------------------------- rewards

/** 1 when the parsed answer is the right number, however it is written ("1,200" = "1200.0" = "1200"). */
export function correctAnswerReward({ completion, answer, parser }: RewardContext): number {
  const parsed = parser.parseAnswer(completion);
  const value = parsed === undefined ? undefined : parseNumberAnswer(parsed);
  return value !== undefined && answer !== undefined && rationalEquals(value, makeRational(BigInt(answer))) ? 1 : 0;
}
const CORRECT_WEIGHT = 1;
const FORMAT_WEIGHT = 0.2;

// ---------------------------------------------------------------- environment

/** Builds the arithmetic word-problem environment at a difficulty from 1 to 5. */
export default function loadEnvironment(args: ArithmeticArgs = {}): Environment {
  const read = readArgs('arithmetic', args);
  const numTasks = read.wholeNumber('numTasks', { default: 1000, min: 0 });
  const numEvalTasks = read.wholeNumber('numEvalTasks', { default: 100, min: 0 });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  const difficulty = read.wholeNumber('difficulty', { default: 2, min: 1, max: 5 });
  const make = (rng: Rng) => makeTask(rng, difficulty);
  const dataset = generateTasks({ count: numTasks, seed, make });
  const parser = new XMLParser(['answer']);
  return new SingleTurnEnv({
    name: 'arithmetic',
    dataset,
    evalDataset: generateTasks({ count: numEvalTasks, seed: evalSeed, make, exclude: dataset }),
    systemPrompt: SYSTEM_PROMPT,
    parser,
    rubric: new Rubric().addReward(correctAnswerReward, CORRECT_WEIGHT).addReward(parser.formatReward(), FORMAT_WEIGHT),
    passThreshold: CORRECT_WEIGHT,
  });
}

// ---------------------------------------------------------------- expert

/** A scripted expert for the given tasks: answers each question with its known answer. */
export function arithmeticExpertPolicy(tasks: readonly Task[]): ScriptedPolicy {
  const answers = new Map(tasks.map((task) => [task.question, task.answer]));
  return (messages) => {
    const question = messages.filter((message) => message.role === 'user').at(-1)?.content;
    const answer = question === undefined ? undefined : answers.get(question);
    if (answer === undefined) throw new Error('arithmeticExpertPolicy: this question is not one of its tasks');
    return `<answer>${answer}</answer>`;
  };
}
