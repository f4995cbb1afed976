/**
 * The built-in environments by name, each loaded on demand (a dynamic import, so a page that
 * uses one does not load the others' word lists), with a factory for its scripted expert policy
 * (for SFT warm-up demonstrations). Not a plugin system: user environments are loaded elsewhere.
 */
import type { Environment, ScriptedPolicy, Task } from '../index.ts';
import type { ArithmeticArgs } from './arithmetic.ts';
import type { CalculatorArgs } from './calculator.ts';
import type { CountdownArgs } from './countdown.ts';
import type { JudgedWritingArgs } from './judged-writing.ts';
import type { ReverseTextArgs } from './reverse-text.ts';
import type { WordleArgs } from './wordle.ts';

/** Arguments of each built-in environment's `loadEnvironment`. */
export interface BuiltinEnvironmentArgs {
  wordle: WordleArgs;
  'reverse-text': ReverseTextArgs;
  countdown: CountdownArgs;
  arithmetic: ArithmeticArgs;
  calculator: CalculatorArgs;
  'judged-writing': JudgedWritingArgs;
}

/** The name of a built-in environment. */
export type BuiltinEnvironmentName = keyof BuiltinEnvironmentArgs;

/** One registry entry: what the environment is, how to load it, and its expert policy. */
export interface BuiltinEnvironmentEntry<Args = Record<string, unknown>> {
  /** One line for menus and `--help`. */
  description: string;
  /** Loads the environment module and builds the environment. */
  load(args?: Args): Promise<Environment>;
  /** A scripted expert that plays the environment's tasks well (it may need the tasks, so it takes the environment). */
  expert(env: Environment): Promise<ScriptedPolicy>;
}

/** Every task an environment holds, training and held-out. */
const allTasks = (env: Environment): Task[] => [...env.dataset, ...(env.evalDataset ?? [])];

/** The built-in environments by name. */
export const BUILTIN_ENVIRONMENTS: { readonly [Name in BuiltinEnvironmentName]: BuiltinEnvironmentEntry<BuiltinEnvironmentArgs[Name]> } = {
  wordle: {
    description: 'Wordle: find a 5-letter word in 6 guesses from G/Y/X feedback (multi-turn).',
    load: async (args) => (await import('./wordle.ts')).default(args),
    expert: async (env) => (await import('./wordle.ts')).wordleExpertFor(env),
  },
  'reverse-text': {
    description: 'Reverse a short text character by character; scored by LCS similarity.',
    load: async (args) => (await import('./reverse-text.ts')).default(args),
    expert: async () => (await import('./reverse-text.ts')).reverseTextExpertPolicy,
  },
  countdown: {
    description: 'Countdown: reach a target from given numbers with + - * / and parentheses.',
    load: async (args) => (await import('./countdown.ts')).default(args),
    expert: async (env) => (await import('./countdown.ts')).countdownExpertPolicy(allTasks(env)),
  },
  arithmetic: {
    description: 'Generated arithmetic word problems with whole-number answers, difficulty 1–5.',
    load: async (args) => (await import('./arithmetic.ts')).default(args),
    expert: async (env) => (await import('./arithmetic.ts')).arithmeticExpertPolicy(allTasks(env)),
  },
  calculator: {
    description: 'Arithmetic with a calculator tool (tool calling, multi-turn).',
    load: async (args) => (await import('./calculator.ts')).default(args),
    expert: async () => (await import('./calculator.ts')).calculatorExpertPolicy(),
  },
  'judged-writing': {
    description: 'Write a two-line poem with constraints, graded by a judge model (offline heuristic judge by default).',
    load: async (args) => (await import('./judged-writing.ts')).default(args),
    expert: async () => (await import('./judged-writing.ts')).judgedWritingExpertPolicy,
  },
};

/** The names of the built-in environments. */
export const BUILTIN_ENVIRONMENT_NAMES = Object.keys(BUILTIN_ENVIRONMENTS) as BuiltinEnvironmentName[];

/** Whether `name` is a built-in environment. */
export function isBuiltinEnvironment(name: string): name is BuiltinEnvironmentName {
  return Object.hasOwn(BUILTIN_ENVIRONMENTS, name);
}

/** Loads a built-in environment by name; throws, listing the known names, for an unknown one. */
export async function loadBuiltinEnvironment(name: string, args: Record<string, unknown> = {}): Promise<Environment> {
  if (!isBuiltinEnvironment(name)) {
    throw new Error(`unknown built-in environment "${name}"; known environments: ${BUILTIN_ENVIRONMENT_NAMES.join(', ')}`);
  }
  const entry = BUILTIN_ENVIRONMENTS[name] as BuiltinEnvironmentEntry;
  return entry.load(args);
}

/** The scripted expert policy of a loaded built-in environment. */
export async function loadBuiltinExpert(name: BuiltinEnvironmentName, env: Environment): Promise<ScriptedPolicy> {
  return BUILTIN_ENVIRONMENTS[name].expert(env);
}
