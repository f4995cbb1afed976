/**
 * How a long command's output folder says where its run stands, and how a failed write says which
 * file: `recordRunStatus` writes the status file whole ("running" first, then "completed",
 * "interrupted" or "failed", never left "running" by a failure it sees), and `writingFile` turns a
 * failed write (a full disk, a read-only folder) into an `OutputWriteError` naming the file, which
 * Node's own errors (`ENOSPC: no space left on device, write`) do not.
 *
 * It decides nothing about resuming: each command says how its runs continue.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { errorMessage } from '../common/error-message.ts';

/** Where a run stands. */
export type RunStatus = 'running' | 'completed' | 'interrupted' | 'failed';

/** A write to a run's output folder failed; the message names the file and Node's reason (ENOSPC, EACCES, ...). */
export class OutputWriteError extends Error {
  override readonly name = 'OutputWriteError';

  /** Built by writingFile. */
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`could not write ${path}: ${errorMessage(cause)}`, { cause });
  }
}

/** Runs `write`, which writes `path`, and turns its failure into an OutputWriteError that names `path`. */
export function writingFile<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof OutputWriteError) throw error;
    throw new OutputWriteError(path, error);
  }
}

/**
 * Writes `{ status, ...fields }` as JSON to `path` through a temporary file. A status that cannot be
 * written (the disk that failed the run is full) is said on stderr and not thrown, so it never hides
 * the failure it was recording.
 */
export function recordRunStatus(path: string, status: RunStatus, fields: Record<string, unknown> = {}): void {
  try {
    writeFileSync(`${path}.tmp`, `${JSON.stringify({ status, ...fields }, null, 2)}\n`);
    renameSync(`${path}.tmp`, path);
  } catch (error) {
    console.error(`warning: could not record the run's status "${status}" in ${path}: ${errorMessage(error)}`);
  }
}

/**
 * Makes the report at `path` say its command failed with `reason`: a report that already says
 * "failed" or "interrupted" is left as it is, one that says "running" or "completed" keeps its
 * figures with the status changed, and where none could be read one is written from `fallback`.
 */
export function recordFailureInReport(path: string, fallback: Record<string, unknown>, reason: string): void {
  let previous: Record<string, unknown> | undefined;
  try {
    previous = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    previous = undefined;
  }
  if (previous?.status === 'failed' || previous?.status === 'interrupted') return;
  const { status: _status, ...figures } = previous ?? fallback;
  recordRunStatus(path, 'failed', { ...figures, stopped_early: reason });
}
