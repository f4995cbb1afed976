/**
 * Arithmetic with a calculator tool: the smallest tool-use environment.
 *
 * Task: "Use the calculator to work out: 4821 * 37 - 2906". The model may call the `calculator`
 * tool (`{ expression: string }`, OpenAI `tool_calls`, or `<tool_call>{...}</tool_call>` in text for
 * models without native tool calling); the tool evaluates with the safe exact parser of
 * ./expression.ts, and a bad expression or a division by zero comes back to the model as error
 * text. The episode ends when the model replies without a tool call; the answer goes in
 * `<answer>...</answer>`. `difficulty` 1–5 sets the number of operations and the operand size;
 * every answer is a whole number.
 *
 * Scoring: `correctAnswerReward` 1 (number normalised as in arithmetic); `toolUseReward` 0.2 when
 * the tool was called at least once; `toolErrorsMetric` (weight 0) counts failed tool calls.
 * Passing = correct. Also exports `calculatorExpertPolicy`, which calls the tool and then answers.
 */
import { ToolEnv, XMLParser, Rubric, defineTool, type Environment, type Message, type RewardContext, type ScriptedPolicy, type ScriptedReply, type Task, type ToolState, readArgs } from '../index.ts';
import { ExpressionError, evaluateExpression, formatRational, makeRational, parseNumberAnswer, rationalEquals } from './expression.ts';
import { EVAL_SEED_OFFSET, generateTasks, type Rng } from './random.ts';

// ---------------------------------------------------------------- dataset

/** Arguments of the calculator environment. */
export interface CalculatorArgs {
  /** Training tasks (default 1000). */
  numTasks?: number;
  /** Held-out tasks (default 100). */
  numEvalTasks?: number;
  seed?: number;
  /** Seed of the evaluation set (default seed + 1000003). */
  evalSeed?: number;
  /** 1–5: operations in the expression, and operand size (default 2). */
  difficulty?: number;
  /** Model turns allowed, tool calls included (default 4). */
  maxTurns?: number;
}

const QUESTION_PREFIX = 'Use the calculator to work out: ';
const PRECEDENCE: Record<string, number> = { '+': 1, '-': 1, '*': 2, '/': 2 };

/** A left-to-right chain of `difficulty` operations on whole numbers, parenthesised where needed; divisions are exact. */
function makeTask(rng: Rng, difficulty: number): Task {
  const maxOperand = difficulty <= 2 ? 999 : 9999;
  let value = rng.int(10, maxOperand);
  let text = String(value);
  let precedence = 3;
  for (let i = 0; i < difficulty; i++) {
    const divisors = value === 0 ? [] : [2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13].filter((d) => value % d === 0);
    const op = rng.pick(divisors.length > 0 ? ['+', '-', '*', '/'] : ['+', '-', '*']);
    const operand = op === '/' ? rng.pick(divisors) : op === '*' ? rng.int(2, 99) : rng.int(10, maxOperand);
    value = op === '+' ? value + operand : op === '-' ? value - operand : op === '*' ? value * operand : value / operand;
    text = `${PRECEDENCE[op]! > precedence ? `(${text})` : text} ${op} ${operand}`;
    precedence = PRECEDENCE[op]!;
  }
  return { question: `${QUESTION_PREFIX}${text}`, answer: String(value), info: { expression: text }, task: 'calculator' };
}

// ---------------------------------------------------------------- tool and parser

const SYSTEM_PROMPT = 'You have a calculator tool. Call it to do the arithmetic, then give the final result as a number inside <answer>...</answer> tags.';

/** The calculator tool: evaluates `+ - * /` and parentheses exactly; throws (the error goes to the model) on a bad expression. */
export const calculatorTool = defineTool<{ expression?: unknown }, ToolState>({
  name: 'calculator',
  description: 'Evaluates an arithmetic expression with + - * / and parentheses, exactly. Example: {"expression": "(12 + 3) * 4"}',
  parameters: {
    type: 'object',
    properties: { expression: { type: 'string', description: 'The expression to evaluate, e.g. "(12 + 3) * 4".' } },
    required: ['expression'],
  },
  run({ expression }) {
    if (typeof expression !== 'string') throw new ExpressionError(`"expression" must be a string, got ${JSON.stringify(expression)}`);
    return formatRational(evaluateExpression(expression).value);
  },
});

// ---------------------------------------------------------------- rewards

/** 1 when the final answer is the right number ("1,200" = "1200.0" = "1200"). */
export function correctAnswerReward({ completion, answer, parser }: RewardContext<ToolState>): number {
  const parsed = parser.parseAnswer(completion);
  const value = parsed === undefined ? undefined : parseNumberAnswer(parsed);
  return value !== undefined && answer !== undefined && rationalEquals(value, makeRational(BigInt(answer))) ? 1 : 0;
}
const CORRECT_WEIGHT = 1;

/** 1 when the model called the tool at least once. */
export function toolUseReward({ state }: RewardContext<ToolState>): number {
  return state.toolCalls > 0 ? 1 : 0;
}
const TOOL_USE_WEIGHT = 0.2;

/** Tool calls that failed: bad expressions, bad arguments, unknown tools (a metric). */
export function toolErrorsMetric({ state }: RewardContext<ToolState>): number {
  return state.toolErrors;
}

// ---------------------------------------------------------------- environment

/** Builds the calculator tool environment at a difficulty from 1 to 5. */
export default function loadEnvironment(args: CalculatorArgs = {}): Environment<ToolState> {
  const read = readArgs('calculator', args);
  const numTasks = read.wholeNumber('numTasks', { default: 1000, min: 0 });
  const numEvalTasks = read.wholeNumber('numEvalTasks', { default: 100, min: 0 });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  const difficulty = read.wholeNumber('difficulty', { default: 2, min: 1, max: 5 });
  const maxTurns = read.wholeNumber('maxTurns', { default: 4, min: 1 });
  const make = (rng: Rng) => makeTask(rng, difficulty);
  const dataset = generateTasks({ count: numTasks, seed, make });
  return new ToolEnv<ToolState>({
    name: 'calculator',
    dataset,
    evalDataset: generateTasks({ count: numEvalTasks, seed: evalSeed, make, exclude: dataset }),
    systemPrompt: SYSTEM_PROMPT,
    parser: new XMLParser(['answer']),
    tools: [calculatorTool],
    rubric: new Rubric<ToolState>().addReward(correctAnswerReward, CORRECT_WEIGHT).addReward(toolUseReward, TOOL_USE_WEIGHT).addMetric(toolErrorsMetric, 'lowerIsBetter'),
    maxTurns,
    passThreshold: CORRECT_WEIGHT,
  });
}

// ---------------------------------------------------------------- expert

/**
 * A scripted expert: first calls the calculator on the question's expression, then answers with
 * the tool's result. `toolCallStyle: 'text'` writes the call as `<tool_call>{...}</tool_call>` text
 * (for models without native tool calling); the default is native `tool_calls`.
 */
export function calculatorExpertPolicy(options: { toolCallStyle?: 'native' | 'text' } = {}): ScriptedPolicy {
  return (messages: Message[]): ScriptedReply => {
    const last = messages.at(-1);
    if (last?.role === 'tool') return `<answer>${last.content}</answer>`;
    const question = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
    const expression = question.startsWith(QUESTION_PREFIX) ? question.slice(QUESTION_PREFIX.length) : question;
    const call = { name: calculatorTool.name, arguments: { expression } };
    if (options.toolCallStyle === 'text') return `<tool_call>${JSON.stringify(call)}</tool_call>`;
    return { content: '', tool_calls: [{ id: 'call_0', type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] };
  };
}
