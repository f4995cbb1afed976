/**
 * Training checkpoints as files: the weights (all parameters, or only the LoRA adapters), AdamW's
 * state, and a JSON record of where the run stands (phase, next step, settings, metrics so far).
 * The same files go to a folder in Node and to browser storage, and a run resumes from them with
 * nothing lost. Reading checks every file and says which one is missing or broken.
 *
 *   weights.safetensors     trainable parameters by Hugging Face (or PEFT) name
 *   optimizer.safetensors   "m.<name>" and "v.<name>" per trainable parameter; metadata: step
 *   state.json              { format, phase, nextStep, ... } — the caller's run record
 */
import { parseSafetensors, serializeSafetensors } from '../gpu/io/safetensors.ts';
import type { NamedTensors, OptimizerState } from '../gpu/model/backend.ts';

/** Version of the checkpoint layout; bumped when the files change meaning. */
export const CHECKPOINT_FORMAT = 1;

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
}

/** The files of a checkpoint, by name. */
export function serializeCheckpoint(checkpoint: Checkpoint): Map<string, Uint8Array> {
  const moments: NamedTensors = new Map();
  for (const [name, tensor] of checkpoint.optimizer.m) moments.set(`m.${name}`, tensor);
  for (const [name, tensor] of checkpoint.optimizer.v) moments.set(`v.${name}`, tensor);
  return new Map([
    ['weights.safetensors', serializeSafetensors(checkpoint.weights, { format: 'pt' })],
    ['optimizer.safetensors', serializeSafetensors(moments, { step: String(checkpoint.optimizer.step) })],
    ['state.json', new TextEncoder().encode(`${JSON.stringify(checkpoint.state, null, 2)}\n`)],
  ]);
}

/** Reads a checkpoint's files; throws naming the file that is missing or corrupt. */
export async function parseCheckpoint(readFile: (name: string) => Promise<Uint8Array>, label = 'checkpoint'): Promise<Checkpoint> {
  const read = async (name: string): Promise<Uint8Array> => {
    try {
      return await readFile(name);
    } catch (error) {
      throw new Error(`${label}: cannot read ${name} (${(error as Error).message}); the checkpoint is incomplete — resume from an earlier one or start over`);
    }
  };
  let state: CheckpointState;
  try {
    state = JSON.parse(new TextDecoder().decode(await read('state.json'))) as CheckpointState;
  } catch (error) {
    if ((error as Error).message.startsWith(label)) throw error;
    throw new Error(`${label}/state.json is not valid JSON (${(error as Error).message})`);
  }
  if (state.format !== CHECKPOINT_FORMAT) throw new Error(`${label}/state.json: checkpoint format ${String(state.format)}, this TabRL reads format ${CHECKPOINT_FORMAT}`);
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
  return { state, weights, optimizer: { step, m, v } };
}
