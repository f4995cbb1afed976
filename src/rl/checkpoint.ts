/**
 * Training checkpoints as files: the weights (all parameters, or only the LoRA adapters), AdamW's
 * state, and a JSON record of where the run stands (phase, next step, settings, metrics so far).
 * The same files go to a folder in Node and to browser storage, and a run resumes from them with
 * nothing lost. Reading checks every file and says which one is missing or broken.
 *
 *   weights.safetensors     trainable parameters by Hugging Face (or PEFT) name
 *   optimizer.safetensors   "m.<name>" and "v.<name>" per trainable parameter; metadata: step, and
 *                           extra_files (a JSON list of the optional files below that are present)
 *   state.json              { format, phase, nextStep, ... } — the caller's run record
 *   rollouts.json           optional: GRPO rollouts sampled ahead of the checkpoint (max-async ≥ 1)
 *   reference.safetensors   optional: the frozen KL reference of full fine-tuning
 *
 * The optional files are listed in optimizer.safetensors rather than state.json because callers
 * (the playground) replace state.json with their own run record.
 */
import { parseSafetensors, serializeSafetensors } from '../gpu/io/safetensors.ts';
import type { NamedTensors, OptimizerState } from '../gpu/model/backend.ts';
import type { SavedRolloutBatch } from './grpo-trainer.ts';
import { errorMessage } from '../common/error-message.ts';

/** Version of the checkpoint layout; bumped when the files change meaning (2: optional rollouts ahead and KL reference). */
export const CHECKPOINT_FORMAT = 2;

/** Checkpoint formats this version reads (format 1 has no optional files). */
const READABLE_FORMATS = [1, 2];

/** Where a run stands; anything else the caller wants to keep rides along in `run`. */
export interface CheckpointState {
  format: number;
  phase: 'sft' | 'grpo';
  /** The next step to run in `phase`. */
  nextStep: number;
  /** Caller-defined record of the run (settings, metrics history, ...), JSON-serialisable. */
  run: Record<string, unknown>;
}

/** A checkpoint in memory. */
export interface Checkpoint {
  state: CheckpointState;
  weights: NamedTensors;
  optimizer: OptimizerState;
  /** GRPO rollouts already sampled for the steps from nextStep on (see GrpoTrainer.rolloutsAhead). */
  rolloutsAhead?: SavedRolloutBatch[];
  /** The frozen KL reference of full fine-tuning (backend.getReference()). */
  reference?: NamedTensors;
}

/** The files of a checkpoint, by name. */
export function serializeCheckpoint(checkpoint: Checkpoint): Map<string, Uint8Array> {
  const moments: NamedTensors = new Map();
  for (const [name, tensor] of checkpoint.optimizer.m) moments.set(`m.${name}`, tensor);
  for (const [name, tensor] of checkpoint.optimizer.v) moments.set(`v.${name}`, tensor);
  const extra = new Map<string, Uint8Array>();
  if (checkpoint.rolloutsAhead && checkpoint.rolloutsAhead.length > 0) extra.set('rollouts.json', new TextEncoder().encode(JSON.stringify(checkpoint.rolloutsAhead, keepNonFinite)));
  if (checkpoint.reference) extra.set('reference.safetensors', serializeSafetensors(checkpoint.reference, { format: 'pt' }));
  return new Map([
    ['weights.safetensors', serializeSafetensors(checkpoint.weights, { format: 'pt' })],
    ['optimizer.safetensors', serializeSafetensors(moments, { step: String(checkpoint.optimizer.step), extra_files: JSON.stringify([...extra.keys()]) })],
    ['state.json', new TextEncoder().encode(`${JSON.stringify(checkpoint.state, null, 2)}\n`)],
    ...extra,
  ]);
}

/** Reads a checkpoint's files; throws naming the file that is missing or corrupt. */
export async function parseCheckpoint(readFile: (name: string) => Promise<Uint8Array>, label = 'checkpoint'): Promise<Checkpoint> {
  const read = async (name: string): Promise<Uint8Array> => {
    try {
      return await readFile(name);
    } catch (error) {
      throw new Error(`${label}: cannot read ${name} (${errorMessage(error)}); the checkpoint is incomplete — resume from an earlier one or start over`);
    }
  };
  let state: CheckpointState;
  try {
    state = JSON.parse(new TextDecoder().decode(await read('state.json'))) as CheckpointState;
  } catch (error) {
    if (errorMessage(error).startsWith(label)) throw error;
    throw new Error(`${label}/state.json is not valid JSON (${errorMessage(error)})`);
  }
  if (!READABLE_FORMATS.includes(state.format)) throw new Error(`${label}/state.json: checkpoint format ${String(state.format)}, this TabRL reads formats ${READABLE_FORMATS.join(' and ')}`);
  if ((state.phase !== 'sft' && state.phase !== 'grpo') || !Number.isInteger(state.nextStep) || state.nextStep < 0) {
    throw new Error(`${label}/state.json: expected a phase ("sft" or "grpo") and a non-negative nextStep`);
  }
  const weights = parseSafetensors(await read('weights.safetensors'), `${label}/weights.safetensors`).tensors;
  const optimizerFile = parseSafetensors(await read('optimizer.safetensors'), `${label}/optimizer.safetensors`);
  const step = Number(optimizerFile.metadata.step);
  if (!Number.isInteger(step) || step < 0) throw new Error(`${label}/optimizer.safetensors: metadata "step" is missing or not a count`);
  const m: NamedTensors = new Map();
  const v: NamedTensors = new Map();
  for (const [name, tensor] of optimizerFile.tensors) {
    if (name.startsWith('m.')) m.set(name.slice(2), tensor);
    else if (name.startsWith('v.')) v.set(name.slice(2), tensor);
    else throw new Error(`${label}/optimizer.safetensors: unexpected tensor ${name}`);
  }
  let extraFiles: unknown = [];
  try {
    extraFiles = JSON.parse(optimizerFile.metadata.extra_files ?? '[]');
  } catch {
    // reported below
  }
  if (!Array.isArray(extraFiles)) throw new Error(`${label}/optimizer.safetensors: metadata "extra_files" is not a JSON list of file names`);
  const checkpoint: Checkpoint = { state, weights, optimizer: { step, m, v } };
  if (extraFiles.includes('rollouts.json')) {
    try {
      checkpoint.rolloutsAhead = JSON.parse(new TextDecoder().decode(await read('rollouts.json')), restoreNonFinite) as SavedRolloutBatch[];
    } catch (error) {
      if (errorMessage(error).startsWith(label)) throw error;
      throw new Error(`${label}/rollouts.json is not valid JSON (${errorMessage(error)})`);
    }
    if (!Array.isArray(checkpoint.rolloutsAhead) || checkpoint.rolloutsAhead.some((batch) => !Number.isInteger(batch?.step) || !Array.isArray(batch.trajectories))) {
      throw new Error(`${label}/rollouts.json: expected a list of { step, trajectories, versionsBehind, sampleMs }`);
    }
  }
  if (extraFiles.includes('reference.safetensors')) checkpoint.reference = parseSafetensors(await read('reference.safetensors'), `${label}/reference.safetensors`).tensors;
  return checkpoint;
}

/** JSON.stringify replacer: NaN and ±Infinity (a failed reward, say) become tagged objects, so they come back as numbers. */
function keepNonFinite(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? { $number: String(value) } : value;
}

/** JSON.parse reviver undoing keepNonFinite. */
function restoreNonFinite(_key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$number') return Number((value as { $number: string }).$number);
  }
  return value;
}
