/**
 * Writes an evaluation to disk as it runs: `results.jsonl` gains one line per finished rollout
 * (so an interrupted run keeps what it had) and `metadata.json` is written at the start and
 * rewritten at the end with the summary and how the run ended. It also guards the folder (an
 * earlier run's results are never replaced unasked) and reads an interrupted run back for --resume.
 */
import { accessSync, constants, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync, type WriteStream } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RolloutRecord, RolloutError, StopReason } from '../envs/index.ts';
import { recordToJsonLine } from '../envs/results-record.ts';
import { CliError } from './cli-error.ts';
import { errorMessage } from '../common/error-message.ts';

export { recordToJson } from '../envs/results-record.ts';

/** Streams results of one run into a folder. */
export class ResultsWriter {
  readonly resultsPath: string;
  readonly metadataPath: string;
  private readonly stream: WriteStream;
  private lines = 0;
  private streamError: Error | undefined;

  private readonly stateColumns: readonly string[];

  /** Opens `dir`/results.jsonl, emptied or (with `append`, for --resume) kept and added to; `stateColumns` are copied to each line's top level. */
  constructor(
    readonly dir: string,
    options: { append?: boolean; stateColumns?: readonly string[] } = {},
  ) {
    this.stateColumns = options.stateColumns ?? [];
    mkdirSync(dir, { recursive: true });
    this.resultsPath = join(dir, 'results.jsonl');
    this.metadataPath = join(dir, 'metadata.json');
    this.stream = createWriteStream(this.resultsPath, { flags: options.append ? 'a' : 'w' });
    this.stream.on('error', (error) => {
      this.streamError ??= error;
    });
  }

  /** Appends one rollout; rejects when the line cannot be written. */
  write(record: RolloutRecord): Promise<void> {
    if (this.streamError) return Promise.reject(this.streamError);
    const line = recordToJsonLine(record, { stateColumns: this.stateColumns });
    return new Promise((resolve, reject) =>
      this.stream.write(line, (error) => {
        if (error) return reject(error);
        this.lines += 1;
        resolve();
      }),
    );
  }

  /** How many rollouts this writer wrote. */
  get count(): number {
    return this.lines;
  }

  /**
   * Writes metadata.json whole, through a temporary file, so a crash never leaves half of it. On a
   * full disk (no room for the temporary file) it rewrites the file in place, in the blocks it already
   * has; failing that, the error names the file.
   */
  writeMetadata(metadata: Record<string, unknown>): void {
    const text = `${JSON.stringify(metadata, null, 2)}\n`;
    const temporary = `${this.metadataPath}.tmp`;
    try {
      writeFileSync(temporary, text);
      renameSync(temporary, this.metadataPath);
    } catch (error) {
      try {
        writeFileSync(this.metadataPath, text, { flag: existsSync(this.metadataPath) ? 'r+' : 'w' });
        truncateSync(this.metadataPath, Buffer.byteLength(text));
      } catch {
        throw new Error(`could not write ${this.metadataPath} (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`);
      }
    }
  }

  /** Flushes and closes results.jsonl. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.stream.destroyed) return resolve();
      this.stream.end(resolve);
    });
  }
}

/**
 * Makes sure `dir` can take a new run's results: it is a folder (made if missing) that this user
 * can write, and it holds no earlier run's results unless `overwrite`. Throws a CliError saying what to do.
 */
export function prepareOutputFolder(dir: string, options: { overwrite: boolean; resumeHint?: string; what?: string }): void {
  const held = ['results.jsonl', 'metadata.json', 'metrics.jsonl', 'report.json', 'checkpoint'];
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new CliError(`--out ${dir} is a file, not a folder; give a folder for the results`, 2);
    const found = held.filter((name) => existsSync(join(dir, name)));
    if (found.length > 0 && !options.overwrite) {
      throw new CliError(
        `--out ${dir} already holds ${options.what ?? 'a run'} (${found.join(', ')}); ${options.resumeHint ? `continue it with ${options.resumeHint}, ` : ''}pass --overwrite to replace it, or choose another folder`,
        2,
      );
    }
  }
  try {
    makeFolder(dir);
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new CliError(`cannot write to --out ${dir} (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}); choose a folder you can write to`, 2);
  }
}

/**
 * Makes `dir` one missing folder at a time. Node's recursive mkdir spins forever on some paths that
 * cannot be made (`/proc/x` on Linux); a plain mkdir fails at once and says why.
 */
function makeFolder(dir: string): void {
  const missing: string[] = [];
  let path = resolve(dir);
  while (!existsSync(path)) {
    missing.unshift(path);
    const parent = dirname(path);
    if (parent === path) break;
    path = parent;
  }
  for (const folder of missing) mkdirSync(folder);
}

/** A run's metadata.json as an object; a CliError when it is missing or broken. */
export function readMetadata(dir: string): Record<string, unknown> {
  const path = join(dir, 'metadata.json');
  if (!existsSync(path)) throw new CliError(`--resume ${dir}: no evaluation there (expected ${path})`, 2);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError(`--resume ${dir}: ${path} is not valid JSON (${errorMessage(error)}); this folder cannot be resumed`, 2);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError(`--resume ${dir}: ${path} is not a JSON object; this folder cannot be resumed`, 2);
  return value as Record<string, unknown>;
}

/** The finished rollouts of an interrupted run, and how many bytes of an unfinished last line were cut off the file. */
export interface FinishedResults {
  records: RolloutRecord[];
  droppedTail: number;
}

/**
 * Reads results.jsonl for --resume: every complete line becomes a record (for the summary and to
 * skip its rollout); an unfinished last line (a crash mid-write) is cut off the file so appending
 * starts on a line of its own. Any other broken line is an error: the file is not ours to guess at.
 */
export function readFinishedResults(path: string): FinishedResults {
  if (!existsSync(path)) return { records: [], droppedTail: 0 };
  const text = readFileSync(path, 'utf8');
  const end = text.lastIndexOf('\n') + 1;
  const droppedTail = Buffer.byteLength(text.slice(end));
  if (droppedTail > 0) truncateSync(path, Buffer.byteLength(text.slice(0, end)));
  const records: RolloutRecord[] = [];
  const seen = new Set<string>();
  text
    .slice(0, end)
    .split('\n')
    .forEach((line, index) => {
      if (line.trim() === '') return;
      let value: Record<string, unknown>;
      try {
        value = JSON.parse(line) as Record<string, unknown>;
      } catch (error) {
        throw new CliError(`${path}:${index + 1} is not valid JSON (${errorMessage(error)}); fix or remove that line, then resume again`, 2);
      }
      const record = recordFromJson(value);
      if (!record) throw new CliError(`${path}:${index + 1} is not a rollout line (it needs task_index, rollout_index, reward); fix or remove that line, then resume again`, 2);
      const key = `${record.taskIndex}:${record.rolloutIndex}`;
      if (!seen.has(key)) records.push(record);
      seen.add(key);
    });
  return { records, droppedTail };
}

/** A results line back as a record, with what the summary needs (turns keep only their count and token data). */
function recordFromJson(line: Record<string, unknown>): RolloutRecord | undefined {
  const { task_index: taskIndex, rollout_index: rolloutIndex, reward } = line;
  if (!Number.isInteger(taskIndex) || !Number.isInteger(rolloutIndex) || typeof reward !== 'number') return undefined;
  const turnTokens = Array.isArray(line.turn_tokens) ? line.turn_tokens : [];
  const state = (typeof line.state === 'object' && line.state !== null ? line.state : {}) as Record<string, unknown>;
  const prompt = Array.isArray(line.prompt) ? line.prompt : [];
  const completion = Array.isArray(line.completion) ? line.completion : [];
  const info = (typeof line.info === 'object' && line.info !== null ? line.info : {}) as Record<string, unknown>;
  return {
    taskIndex: taskIndex as number,
    rolloutIndex: rolloutIndex as number,
    prompt,
    completion,
    ...(typeof line.answer === 'string' ? { answer: line.answer } : {}),
    ...(typeof line.task === 'string' ? { task: line.task } : {}),
    info,
    state: { info, turn: 0, ...state, prompt, completion },
    reward,
    scores: (typeof line.scores === 'object' && line.scores !== null ? line.scores : {}) as Record<string, number>,
    passed: line.passed === true,
    errors: (Array.isArray(line.errors) ? line.errors : []) as RolloutError[],
    stopReason: (typeof line.stop_reason === 'string' ? line.stop_reason : 'completed') as StopReason,
    truncated: line.truncated === true,
    turns: Array.from({ length: typeof line.turns === 'number' ? line.turns : 0 }, (_, i) => ({ finishReason: 'stop' as const, latencyMs: 0, ...(turnTokens[i] ? { tokens: turnTokens[i] } : {}) })),
    timings: (typeof line.timings === 'object' && line.timings !== null ? line.timings : { generationMs: 0, scoringMs: 0, totalMs: 0 }) as RolloutRecord['timings'],
  };
}
