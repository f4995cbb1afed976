/**
 * Files of the studio commands (`synth`, `tasks from-traces`, `calibrate`, `audit`): an output
 * folder that is never overwritten unasked, JSONL files written line by line as results arrive (so
 * an interrupted or failed command keeps what it made), and whole files written through a
 * temporary file. Also number parsing with one-line errors shared by those commands.
 */
import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './cli-error.ts';
import { errorMessage } from '../common/error-message.ts';

/** Makes `dir`, refusing one that holds any of `files` unless `overwrite` (then those files are removed). */
export function prepareStudioFolder(dir: string, files: readonly string[], overwrite: boolean): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new CliError(`--out ${dir} is a file, not a folder`, 2);
    const found = files.filter((name) => existsSync(join(dir, name)));
    if (found.length > 0 && !overwrite) throw new CliError(`--out ${dir} already holds ${found.join(', ')}; pass --overwrite to replace them, or choose another folder`, 2);
    for (const name of found) rmSync(join(dir, name), { recursive: true, force: true });
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`cannot create --out ${dir}: ${errorMessage(error)}`, 2);
  }
}

/** Writes a whole file through a temporary file, so a crash never leaves half of it. */
export function writeWhole(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** Appends to a JSONL file (created empty by `start`), one call per finished item. */
export class JsonlAppender {
  count = 0;

  constructor(readonly path: string) {
    writeFileSync(path, '');
  }

  /** Appends `line` (which ends with a newline). */
  append(line: string): void {
    appendFileSync(this.path, line);
    this.count += 1;
  }
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
