/** Parsers of command-line flag values shared by the tabrl commands: each returns the value or throws a usage error (exit 2) that names the flag and what it takes. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorMessage } from '../common/error-message.ts';
import { CliError } from './cli-error.ts';
import { closestName } from '../common/closest-name.ts';

/**
 * node:util's parseArgs with the CLI's usage errors (exit 2, pointing to --help): an unknown option
 * names the known one it most likely meant (or the hint given for it, e.g. a flag another command
 * takes), and an option given twice with different values is refused instead of the last one
 * silently winning (options declared `multiple` may repeat).
 */
export function parseFlags<T extends ParseArgsConfig & { args: string[] }>(config: T, hints: Readonly<Record<string, string>> = {}): ReturnType<typeof parseArgs<T>> {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const unknown = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /Unknown option '([^']+)'/.exec(errorMessage(error))?.[1] : undefined;
    if (unknown === undefined) throw error;
    throw new CliError(`unknown option ${unknown}${unknownOptionAdvice(unknown, config.options ?? {}, hints)}`, 2, true);
  }
  const seen = new Map<string, string | undefined>();
  for (const token of parseArgs({ ...config, strict: false, tokens: true }).tokens ?? []) {
    if (token.kind !== 'option' || config.options?.[token.name]?.multiple) continue;
    if (seen.has(token.name) && seen.get(token.name) !== token.value) {
      throw new CliError(`--${token.name} is given twice, as "${seen.get(token.name)}" and as "${token.value}"; give it once`, 2, true);
    }
    seen.set(token.name, token.value);
  }
  return parsed;
}

/** "; did you mean --x?" for an unknown option, from the caller's hints or the closest known flag ("" when nothing is close). */
function unknownOptionAdvice(unknown: string, options: NonNullable<ParseArgsConfig['options']>, hints: Readonly<Record<string, string>>): string {
  const flag = unknown.split('=')[0]!;
  if (hints[flag] !== undefined) return `; ${hints[flag]}`;
  const guess = closestName(
    flag,
    Object.keys(options).map((name) => `--${name}`),
  );
  return guess === undefined ? '' : `; did you mean ${guess}?`;
}

/** An integer flag ≥ `min`, or `fallback` when absent. */
export function integerFlag(text: string | undefined, flag: string, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) throw new CliError(`${flag} must be an integer ≥ ${min}, got "${text}"`, 2);
  return value;
}

/** A number flag in [min, max], or `fallback` when absent. */
export function numberFlag<T extends number | undefined>(text: string | undefined, flag: string, fallback: T, min: number, max: number): number | T {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) throw new CliError(`${flag} must be a number from ${min} to ${max}, got "${text}"`, 2);
  return value;
}

/** A JSON object flag (e.g. --env-args), or {} when absent. */
export function jsonObjectFlag(text: string | undefined, flag: string): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${flag} is not valid JSON (${errorMessage(error)}): ${text}`, 2);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError(`${flag} must be a JSON object, e.g. '{"numTasks": 50}'`, 2);
  return value as Record<string, unknown>;
}
