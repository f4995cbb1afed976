/**
 * The pretraining script's resume state: everything a run needs to continue exactly where it
 * stopped (the f32 weights, AdamW's moments and step count, the step reached, the tokens seen, the
 * smoothed loss and its curve, the time spent), with the settings that fix the run, so a resume
 * with other settings is refused. Written next to nothing else (not into the model folder, which
 * holds f16 weights only) and renamed into place, so an interrupted write leaves the last good one.
 * This file runs no training and makes no data.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { deserialize, serialize } from 'node:v8';
import { errorMessage } from '../../src/common/error-message.ts';
import type { NamedTensors, OptimizerState } from '../../src/gpu/model/backend.ts';

/** One point of the logged loss curve. */
export interface LossPoint {
  step: number;
  loss: number;
  tokens: number;
  seconds: number;
}

/** What a resumed run restores. `settings` are the flags that fix the weights (seed, shape, corpus, batch, schedule, pool, backend). */
export interface PretrainState {
  settings: Record<string, unknown>;
  step: number;
  tokensSeen: number;
  smoothedLoss: number;
  trainingMs: number;
  wallSeconds: number;
  lossCurve: LossPoint[];
  commands: string[];
  parameters: NamedTensors;
  optimizer: OptimizerState;
}

/** Writes `state` to `file` (through a temporary file renamed into place). */
export async function writePretrainState(file: string, state: PretrainState): Promise<void> {
  await writeFile(`${file}.tmp`, serialize(state));
  await rename(`${file}.tmp`, file);
}

/** The step from which a schedule of `maxSteps` steps decays its learning rate (pretrain.ts: the last quarter). */
export function decayStartOf(maxSteps: number): number {
  return Math.floor(0.75 * maxSteps);
}

/**
 * Reads the state in `file` and checks that it was written with the same `settings`; throws saying
 * which setting differs otherwise. One may differ: `maxSteps`, while neither schedule has begun to
 * decay by the saved step (and `decayByTime` is off), since every step taken so far then had the
 * same learning rate under both, so the run continues as one uninterrupted run of the new length.
 */
export async function readPretrainState(file: string, settings: Record<string, unknown>): Promise<PretrainState> {
  let state: PretrainState;
  try {
    state = deserialize(await readFile(file)) as PretrainState;
  } catch (error) {
    throw new Error(`--resume: cannot read the resume state ${file} (${errorMessage(error)}); give the --state file a run wrote, or start without --resume`);
  }
  if (typeof state?.step !== 'number' || !(state.parameters instanceof Map)) throw new Error(`--resume: ${file} is not a pretraining resume state; give the --state file a run wrote`);
  for (const key of new Set([...Object.keys(settings), ...Object.keys(state.settings)])) {
    const was = JSON.stringify(state.settings[key]);
    const now = JSON.stringify(settings[key]);
    if (key === 'maxSteps' && was !== now && rescheduleAllowed(file, state, settings)) continue;
    if (was !== now) throw new Error(`--resume: the run in ${file} was made with ${key} ${was}, this command gives ${now}; resume with the same settings (its pretraining.json lists them)`);
  }
  return state;
}

/** Whether a run saved at `state.step` may go on under another --max-steps (no step taken so far was in either schedule's decay); throws saying why not when steps were, false when the schedules are not comparable. */
function rescheduleAllowed(file: string, state: PretrainState, settings: Record<string, unknown>): boolean {
  const before = state.settings.maxSteps;
  const after = settings.maxSteps;
  if (typeof before !== 'number' || typeof after !== 'number' || state.settings.decayByTime === true || settings.decayByTime === true) return false;
  if (state.step <= Math.min(decayStartOf(before), decayStartOf(after))) return true;
  throw new Error(
    `--resume: the run in ${file} reached step ${state.step}, past where --max-steps ${after} would have begun its decay (step ${decayStartOf(after)}) or its own did (step ${decayStartOf(before)}); resume with --max-steps ${before}`,
  );
}
