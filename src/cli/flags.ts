/** Parsers of command-line flag values shared by the tabrl commands: each returns the value or throws a usage error (exit 2) that names the flag and what it takes. */
import { errorMessage } from '../common/error-message.ts';
import { CliError } from './cli-error.ts';

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
