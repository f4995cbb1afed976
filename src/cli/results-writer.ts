/**
 * Writes an evaluation to disk as it runs: `results.jsonl` gains one line per finished rollout
 * (so an interrupted run keeps what it had) and `metadata.json` is written at the start and
 * rewritten at the end with the summary and how the run ended.
 */
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { toPlainData, type RolloutRecord } from '../envs/index.ts';

/** The results line of one rollout: plain JSON, snake_case like verifiers' outputs. */
export function recordToJson(record: RolloutRecord): Record<string, unknown> {
  const { prompt: _prompt, completion: _completion, ...state } = record.state;
  return {
    task_index: record.taskIndex,
    rollout_index: record.rolloutIndex,
    prompt: record.prompt,
    completion: record.completion,
    answer: record.answer ?? null,
    task: record.task ?? null,
    info: record.info,
    reward: record.reward,
    scores: record.scores,
    passed: record.passed,
    errors: record.errors,
    stop_reason: record.stopReason,
    truncated: record.truncated,
    turns: record.turns.length,
    // Token data of each model turn, when the model ran in this process (local:).
    ...(record.turns.some((turn) => turn.tokens) ? { turn_tokens: record.turns.map((turn) => turn.tokens ?? null) } : {}),
    timings: record.timings,
    state,
  };
}

/** Streams results of one run into a folder. */
export class ResultsWriter {
  readonly resultsPath: string;
  readonly metadataPath: string;
  private readonly stream: WriteStream;
  private lines = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.resultsPath = join(dir, 'results.jsonl');
    this.metadataPath = join(dir, 'metadata.json');
    this.stream = createWriteStream(this.resultsPath, { flags: 'w' });
  }

  /** Appends one rollout. */
  write(record: RolloutRecord): Promise<void> {
    this.lines += 1;
    const line = `${JSON.stringify(toPlainData(recordToJson(record)))}\n`;
    return new Promise((resolve, reject) => this.stream.write(line, (error) => (error ? reject(error) : resolve())));
  }

  /** How many rollouts were written. */
  get count(): number {
    return this.lines;
  }

  /** Writes metadata.json (whole, replacing the previous one). */
  writeMetadata(metadata: Record<string, unknown>): void {
    writeFileSync(this.metadataPath, `${JSON.stringify(metadata, null, 2)}\n`);
  }

  /** Flushes and closes results.jsonl. */
  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
