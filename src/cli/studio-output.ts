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
import { writingFile } from './run-status.ts';

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

/** Writes a whole file through a temporary file, so a crash never leaves half of it; a failed write names `path` (OutputWriteError). */
export function writeWhole(path: string, text: string): void {
  writingFile(path, () => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  });
}

/** Appends to a JSONL file (created empty by the constructor), one call per finished item; a failed write names the file (OutputWriteError). */
export class JsonlAppender {
  count = 0;

  constructor(readonly path: string) {
    writingFile(path, () => writeFileSync(path, ''));
  }

  /** Appends `line` (which ends with a newline). */
  append(line: string): void {
    writingFile(this.path, () => appendFileSync(this.path, line));
    this.count += 1;
  }
}
