/**
 * Writes an evaluation to disk as it runs: `results.jsonl` gains one line per finished rollout
 * (so an interrupted run keeps what it had) and `metadata.json` is written at the start and
 * rewritten at the end with the summary and how the run ended.
 */
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { RolloutRecord } from '../envs/index.ts';
import { recordToJsonLine } from '../envs/results-record.ts';

export { recordToJson } from '../envs/results-record.ts';

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
    const line = recordToJsonLine(record);
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
