/**
 * Where `tabrl train` keeps a run on disk: folders written atomically (a complete copy is always
 * there), the file checkpoint store the training session saves into (src/rl/training-session.ts's
 * CheckpointStore: weights, optimizer state, position and the run's record in checkpoint/), and the
 * search for the newest complete checkpoint that --resume continues from. No training happens here.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { CHECKPOINT_FORMAT, serializeCheckpoint } from '../rl/checkpoint.ts';
import type { CheckpointStore } from '../rl/training-session.ts';
import { CliError } from './cli-error.ts';
import { writingFile } from './run-status.ts';

/** The marker file written last into a checkpoint folder: without it, its files may be half there. */
const CHECKPOINT_COMPLETE = 'COMPLETE';

/** The session's checkpoint store on disk: each save writes `dir` atomically, with `runRecord()` as state.json's `run` (the settings and history --resume needs). */
export function fileCheckpointStore(dir: string, backend: ModelBackend, runRecord: () => object): CheckpointStore {
  return {
    async save({ rolloutsAhead, ...position }) {
      // Full fine-tuning with KL keeps its frozen reference; with LoRA the reference is the base.
      const reference = backend.lora === null ? await backend.getReference() : null;
      const files = serializeCheckpoint({
        state: { format: CHECKPOINT_FORMAT, ...position, run: runRecord() as Record<string, unknown> },
        weights: await backend.getParameters(),
        optimizer: await backend.getOptimizerState(),
        ...(rolloutsAhead ? { rolloutsAhead } : {}),
        ...(reference ? { reference } : {}),
      });
      writingFile(dir, () => writeFolderAtomically(dir, files, { markComplete: true }));
    },
  };
}

/**
 * Writes the files into DIR.tmp (flushed to disk, then marked COMPLETE), moves the old DIR aside to
 * DIR.old, renames DIR.tmp to DIR and only then deletes DIR.old: at every moment one complete copy
 * is on disk, and --resume finds it (findCheckpoint).
 */
export function writeFolderAtomically(dir: string, files: Map<string, Uint8Array>, options: { markComplete?: boolean } = {}): void {
  const temporary = `${dir}.tmp`;
  const old = `${dir}.old`;
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  for (const [name, bytes] of [...files, ...(options.markComplete ? [[CHECKPOINT_COMPLETE, new Uint8Array()] as const] : [])]) {
    const path = join(temporary, name);
    writeFileSync(path, bytes);
    const fd = openSync(path, 'r');
    fsyncSync(fd);
    closeSync(fd);
  }
  if (existsSync(dir)) {
    rmSync(old, { recursive: true, force: true });
    renameSync(dir, old);
  }
  renameSync(temporary, dir);
  rmSync(old, { recursive: true, force: true });
}

/**
 * The newest complete checkpoint of a run: checkpoint.tmp when its writing finished (the swap was
 * cut short), else checkpoint, else checkpoint.old (the swap was cut short between its renames). A
 * folder counts only with its COMPLETE marker, written last: without it, its files may be half there.
 */
export function findCheckpoint(outDir: string): string {
  const candidates = [`${join(outDir, 'checkpoint')}.tmp`, join(outDir, 'checkpoint'), `${join(outDir, 'checkpoint')}.old`];
  const complete = candidates.find((dir) => existsSync(join(dir, 'state.json')) && existsSync(join(dir, CHECKPOINT_COMPLETE)));
  const unmarked = candidates.find((dir) => existsSync(join(dir, 'state.json')));
  if (!complete && unmarked) {
    throw new CliError(
      `--resume ${outDir}: ${unmarked} has no ${CHECKPOINT_COMPLETE} marker, so its writing may not have finished and it is not used; start the run again with --out ${outDir} --overwrite`,
      2,
    );
  }
  if (!complete) {
    // A run interrupted before its first checkpoint leaves a report but no checkpoint: --out alone would refuse the folder.
    const again = existsSync(join(outDir, 'report.json')) ? `start the run again with --out ${outDir} --overwrite` : 'start a new run with --out';
    throw new CliError(`--resume ${outDir}: no checkpoint there (expected ${join(outDir, 'checkpoint', 'state.json')}); ${again}`, 2);
  }
  return complete;
}
