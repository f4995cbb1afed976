/**
 * Checked reading of an environment's arguments (every built-in reads its own with it; an
 * environment file may too, as `import { readArgs } from 'tabrl'`). The arguments come from JSON a
 * person typed (`--env-args`, the playground's arguments field), so a value may be of any type: each
 * reader returns the default for a missing argument, the value when it is allowed, and otherwise
 * throws an Error that names the environment, the argument, the value received and what is
 * allowed, e.g. `wordle: numTasks must be a whole number from 0 to 2015, got "x"`.
 *
 *   const read = readArgs('countdown', args);
 *   const difficulty = read.wholeNumber('difficulty', { default: 3, min: 2, max: 6 });
 */

/** Limits of a numeric argument, and its default. */
export interface NumberLimits {
  /** The value of a missing argument (`undefined`; `null` is a wrong value). */
  default: number;
  /** The smallest allowed value, inclusive. */
  min?: number;
  /** The largest allowed value, inclusive. */
  max?: number;
  /** What the limits mean, shown after the range, e.g. "how many numbers are given". */
  note?: string;
}

/** The checked readers of one environment's arguments; `Name` is an argument the environment takes. */
export interface ArgReader<Name extends string> {
  /** An integer within the limits (e.g. a count or a seed). */
  wholeNumber(name: Name, limits: NumberLimits): number;
  /** A finite number within the limits. */
  number(name: Name, limits: NumberLimits): number;
  /** `true` or `false` (not "yes", not 1). */
  boolean(name: Name, options: { default: boolean }): boolean;
  /** A string. */
  string(name: Name, options: { default: string }): string;
  /** One of the listed strings. */
  oneOf<Choice extends string>(name: Name, choices: readonly Choice[], options: { default: Choice }): Choice;
  /** Throws the environment's error for a rule no single reader states (e.g. minLength ≤ maxLength). */
  fail(message: string): never;
}

/** Readers of `args` (an environment's `loadEnvironment` argument object) whose errors start with `environment`. */
export function readArgs<Args extends object>(environment: string, args: Args): ArgReader<keyof Args & string> {
  const fail = (message: string): never => {
    throw new Error(`${environment}: ${message}`);
  };
  const valueOf = (name: string): unknown => (args as Record<string, unknown>)[name];
  const refuse = (name: string, allowed: string, value: unknown): never => fail(`${name} must be ${allowed}, got ${describeValue(value)}`);
  const readNumber = (name: string, limits: NumberLimits, whole: boolean): number => {
    const value = valueOf(name);
    if (value === undefined) return limits.default;
    const fits =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!whole || Number.isInteger(value)) &&
      (limits.min === undefined || value >= limits.min) &&
      (limits.max === undefined || value <= limits.max);
    if (!fits) refuse(name, describeLimits(whole ? 'a whole number' : 'a number', limits), value);
    return value as number;
  };
  return {
    wholeNumber: (name, limits) => readNumber(name, limits, true),
    number: (name, limits) => readNumber(name, limits, false),
    boolean(name, options) {
      const value = valueOf(name);
      if (value === undefined) return options.default;
      if (typeof value !== 'boolean') refuse(name, 'true or false', value);
      return value as boolean;
    },
    string(name, options) {
      const value = valueOf(name);
      if (value === undefined) return options.default;
      if (typeof value !== 'string') refuse(name, 'a string', value);
      return value as string;
    },
    oneOf(name, choices, options) {
      const value = valueOf(name);
      if (value === undefined) return options.default;
      if (!choices.includes(value as never)) refuse(name, listChoices(choices), value);
      return value as (typeof choices)[number];
    },
    fail,
  };
}

/** "a whole number from 0 to 2015", "a whole number ≥ 1", "a number" (with the note in parentheses). */
function describeLimits(kind: string, { min, max, note }: NumberLimits): string {
  const range = min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` ≥ ${min}` : max !== undefined ? ` ≤ ${max}` : '';
  return `${kind}${range}${note ? ` (${note})` : ''}`;
}

/** "a, b or c". */
function listChoices(choices: readonly string[]): string {
  return choices.length <= 1 ? choices.join('') : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
}

/** A received value as a person would write it in JSON (NaN and Infinity as themselves), cut short when long. */
function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || value === undefined) return String(value);
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
