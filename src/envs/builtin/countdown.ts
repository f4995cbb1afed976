/**
 * Countdown (the numbers game, as in TinyZero): reach a target from given numbers.
 *
 * Task: "Numbers: 3 7 25 / Target: 46"; the model answers with an expression in
 * `<answer>...</answer>` using `+ - * /` and parentheses, each given number at most once (not all
 * need be used). The expression is read by the safe parser of ./expression.ts (no eval) and
 * evaluated exactly: fractions may appear along the way, the result must equal the target
 * exactly. A trailing "= 46" is ignored. Every task is solvable: it is built by combining all the
 * numbers into a random expression and taking its value (kept in `info.solution`).
 *
 * Scoring: `correctReward` 1 (right value, allowed numbers only); format 0.2;
 * `allowedNumbersMetric` (weight 0) = the expression parses and uses only the given numbers.
 * Passing = correct. `difficulty` = how many numbers (2–6, default 3). Also exports
 * `countdownExpertPolicy`, which answers with the construction expression.
 */
import { SingleTurnEnv, XMLParser, Rubric, type Environment, type RewardContext, type ScriptedPolicy, type Task, readArgs } from '../index.ts';
import { evaluateExpression, makeRational, rationalEquals, type EvaluatedExpression, type Rational } from './expression.ts';
import { EVAL_SEED_OFFSET, generateTasks, type Rng } from './random.ts';

// ---------------------------------------------------------------- dataset

/** Arguments of the countdown environment. */
export interface CountdownArgs {
  /** Training tasks (default 1000). */
  numTasks?: number;
  /** Held-out tasks (default 100). */
  numEvalTasks?: number;
  seed?: number;
  /** Seed of the evaluation set (default seed + 1000003). */
  evalSeed?: number;
  /** How many numbers are given, 2–6 (default 3). */
  difficulty?: number;
  /** Largest given number (default 20). */
  maxNumber?: number;
  /** Largest target (default 999). */
  maxTarget?: number;
}

/** What a countdown task carries in `info`. */
export interface CountdownInfo extends Record<string, unknown> {
  numbers: number[];
  target: number;
  /** An expression that reaches the target, from the construction. */
  solution: string;
}

interface Built {
  text: string;
  value: number;
  /** 3 for a number, 2 for * and /, 1 for + and -. */
  precedence: number;
}

const PRECEDENCE: Record<string, number> = { '+': 1, '-': 1, '*': 2, '/': 2 };

/** Joins two sub-expressions with the fewest parentheses that keep the meaning. */
function combine(left: Built, op: string, right: Built, value: number): Built {
  const precedence = PRECEDENCE[op]!;
  const leftText = left.precedence < precedence ? `(${left.text})` : left.text;
  const rightNeedsParens = right.precedence < precedence || (right.precedence === precedence && (op === '-' || op === '/'));
  return { text: `${leftText} ${op} ${rightNeedsParens ? `(${right.text})` : right.text}`, value, precedence };
}

/** Combines all the numbers at random into one expression whose every step is a positive whole number. */
function buildExpression(rng: Rng, numbers: readonly number[], maxTarget: number): Built {
  const parts: Built[] = numbers.map((value) => ({ text: String(value), value, precedence: 3 }));
  while (parts.length > 1) {
    const [left, right] = rng.shuffle(parts).slice(0, 2) as [Built, Built];
    parts.splice(parts.indexOf(left), 1);
    parts.splice(parts.indexOf(right), 1);
    const ops: [string, number][] = [['+', left.value + right.value]];
    if (left.value > right.value) ops.push(['-', left.value - right.value]);
    if (left.value * right.value <= maxTarget && left.value > 1 && right.value > 1) ops.push(['*', left.value * right.value]);
    if (right.value > 1 && left.value % right.value === 0) ops.push(['/', left.value / right.value]);
    const [op, value] = rng.pick(ops);
    parts.push(combine(left, op, right, value));
  }
  return parts[0]!;
}

function makeTask(rng: Rng, count: number, maxNumber: number, maxTarget: number): Task {
  for (let attempt = 0; ; attempt++) {
    const numbers = Array.from({ length: count }, () => rng.int(1, maxNumber));
    const built = buildExpression(rng, numbers, maxTarget);
    const trivial = numbers.includes(built.value);
    if ((built.value <= maxTarget && !trivial) || attempt >= 50) {
      const info: CountdownInfo = { numbers, target: built.value, solution: built.text };
      return { question: `Numbers: ${numbers.join(' ')}\nTarget: ${built.value}`, answer: String(built.value), info, task: 'countdown' };
    }
  }
}

// ---------------------------------------------------------------- parser

const SYSTEM_PROMPT =
  'Combine some of the numbers with + - * / and parentheses to make the target, using each number at most once. ' +
  'Fractions may appear along the way; the result must equal the target exactly. ' +
  'Answer with the expression alone inside <answer>...</answer> tags, like <answer>(3 + 5) * 2</answer>.';

/** The model's expression evaluated, or undefined when there is none or it does not parse. */
function evaluateAnswer(ctx: RewardContext): EvaluatedExpression | undefined {
  const parsed = ctx.parser.parseAnswer(ctx.completion);
  if (parsed === undefined) return undefined;
  try {
    return evaluateExpression(parsed.split('=')[0]!);
  } catch {
    return undefined;
  }
}

/** Whether `used` takes each number at most as often as it is given. */
export function usesOnlyAllowedNumbers(used: readonly Rational[], given: readonly number[]): boolean {
  const left = given.map((value) => makeRational(value));
  for (const number of used) {
    const index = left.findIndex((candidate) => rationalEquals(candidate, number));
    if (index === -1) return false;
    left.splice(index, 1);
  }
  return true;
}

// ---------------------------------------------------------------- rewards

/** 1 when the expression reaches the target exactly using only the given numbers. */
export function correctReward(ctx: RewardContext): number {
  const { numbers, target } = ctx.info as CountdownInfo;
  const result = evaluateAnswer(ctx);
  if (!result) return 0;
  return rationalEquals(result.value, makeRational(target)) && usesOnlyAllowedNumbers(result.numbers, numbers) ? 1 : 0;
}
const CORRECT_WEIGHT = 1;
const FORMAT_WEIGHT = 0.2;

/** 1 when the expression parses and uses only the given numbers, each at most once (a metric). */
export function allowedNumbersMetric(ctx: RewardContext): number {
  const result = evaluateAnswer(ctx);
  return result && usesOnlyAllowedNumbers(result.numbers, (ctx.info as CountdownInfo).numbers) ? 1 : 0;
}

// ---------------------------------------------------------------- environment

/** Builds the countdown environment; `difficulty` is the number of given numbers. */
export default function loadEnvironment(args: CountdownArgs = {}): Environment {
  const read = readArgs('countdown', args);
  const numTasks = read.wholeNumber('numTasks', { default: 1000, min: 0 });
  const numEvalTasks = read.wholeNumber('numEvalTasks', { default: 100, min: 0 });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  const difficulty = read.wholeNumber('difficulty', { default: 3, min: 2, max: 6, note: 'how many numbers are given' });
  const maxNumber = read.wholeNumber('maxNumber', { default: 20, min: 2 });
  const maxTarget = read.wholeNumber('maxTarget', { default: 999, min: 1 });
  const make = (rng: Rng) => makeTask(rng, difficulty, maxNumber, maxTarget);
  const dataset = generateTasks({ count: numTasks, seed, make });
  const parser = new XMLParser(['answer']);
  return new SingleTurnEnv({
    name: 'countdown',
    dataset,
    evalDataset: generateTasks({ count: numEvalTasks, seed: evalSeed, make, exclude: dataset }),
    systemPrompt: SYSTEM_PROMPT,
    parser,
    rubric: new Rubric().addReward(correctReward, CORRECT_WEIGHT).addReward(parser.formatReward(), FORMAT_WEIGHT).addMetric(allowedNumbersMetric, 'check'),
    passThreshold: CORRECT_WEIGHT,
  });
}

// ---------------------------------------------------------------- expert

/** A scripted expert for the given tasks: answers each question with its construction expression. */
export function countdownExpertPolicy(tasks: readonly Task[]): ScriptedPolicy {
  const solutions = new Map(tasks.map((task) => [task.question, (task.info as CountdownInfo | undefined)?.solution]));
  return (messages) => {
    const question = messages.filter((message) => message.role === 'user').at(-1)?.content;
    const solution = question === undefined ? undefined : solutions.get(question);
    if (solution === undefined) throw new Error('countdownExpertPolicy: this question is not one of its tasks');
    return `<answer>${solution}</answer>`;
  };
}
