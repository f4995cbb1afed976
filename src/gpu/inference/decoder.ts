/**
 * The decoding contract: sequences that live in a KV cache, fed by a batched prefill (any number
 * of new tokens per sequence) and by decode steps (one token per live sequence), forked to sample
 * a group of G completions from one prompt that was prefilled once, and extended when a follow-up
 * turn appends tokens to a finished sequence. The CPU decoder (cpu-decoder.ts) implements it from
 * the reference ops; a WebGPU decoder implements the same interface over the engine's buffers.
 */

import type { SamplingParams } from './sampler.ts';

/** A handle on one sequence in a decoder's KV cache. */
export type SequenceId = number;

/** A model that decodes with a KV cache; see the file comment. Logits are f32, (B, V) row-major in the order of `seqs`. */
export interface Decoder {
  /** Size of a logits row (the model's vocab_size). */
  readonly vocabSize: number;
  /** Creates an empty sequence (length 0). */
  newSequence(): SequenceId;
  /** Returns count new sequences whose caches are copies of parent's (parent stays as it is). */
  fork(parent: SequenceId, count: number): SequenceId[];
  /** Returns the number of tokens in a sequence's cache (the position of its next token). */
  sequenceLength(seq: SequenceId): number;
  /** Returns the tokens in a sequence's cache, in order. */
  sequenceTokens(seq: SequenceId): number[];
  /**
   * Appends tokens[i] (at least one) to seqs[i] for every i, as one batch, and returns the logits
   * (B, V) of each sequence's last appended token: the prefill of a new prompt, or the extension
   * of an existing sequence by a follow-up turn.
   */
  prefill(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Promise<Float32Array>;
  /** Appends one token to each sequence (one decode step) and returns the logits (B, V) of those tokens. */
  decode(seqs: readonly SequenceId[], tokens: ArrayLike<number>): Promise<Float32Array>;
  /**
   * Optional, for decoders that sample on their device: prefill, then one token per draw from the
   * logits of the call's sequence `draw.row`; only the draws come back, not the (B, V) logits.
   */
  prefillAndSample?(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>, draws: readonly DeviceDraw[]): Promise<DeviceDrawn>;
  /** Optional: decode, then draw as prefillAndSample does. */
  decodeAndSample?(seqs: readonly SequenceId[], tokens: ArrayLike<number>, draws: readonly DeviceDraw[]): Promise<DeviceDrawn>;
  /**
   * Optional, for decoders that run several decode steps per device call: feeds tokens[i] to seqs[i],
   * then up to `steps` times draws the next token on the device (plans[i]: its params and one uniform
   * per step) and feeds it back, a sequence stopping once it draws one of its stop ids or has made
   * plans[i].maxDraws draws. Returns each sequence's draws in order; a sequence that made n draws
   * has n new tokens in its cache (the fed token and all its draws but the last), as n calls of
   * decodeAndSample would leave it.
   */
  decodeSteps?(seqs: readonly SequenceId[], tokens: ArrayLike<number>, plans: readonly DeviceDecodePlan[], steps: number): Promise<DeviceDrawn[]>;
  /** Optional: drops the tokens of a sequence past `length` (a sequence decoded further than its sample kept). */
  truncate?(seq: SequenceId, length: number): void;
  /** Frees a sequence's cache; the handle may not be used afterwards. */
  release(seq: SequenceId): void;
  /** Returns the number of live sequences and the tokens their caches hold. */
  usage(): { sequences: number; tokens: number };
  /** Frees every sequence and the decoder's memory; it may not be used afterwards. */
  dispose(): void;
}

/** One token to draw on a decoder's device: from the logits row of the call's sequence `row`, with `uniform` in [0, 1) from the sample's seeded generator. */
export interface DeviceDraw {
  row: number;
  params: SamplingParams;
  uniform: number;
}

/** One sequence's part of a multi-step decode (`decodeSteps`): its sampling params, one uniform in [0, 1) per step (from its seeded generator; ignored when greedy), the ids that end it, and the most draws it may make. */
export interface DeviceDecodePlan {
  params: SamplingParams;
  uniforms: ArrayLike<number>;
  stopIds: readonly number[];
  maxDraws: number;
}

/** Tokens drawn on a device, one per draw: ids, log_softmax(logits / T)[id] over the whole row, and the row's entropy at T (T = 1 when greedy). */
export interface DeviceDrawn {
  ids: Int32Array;
  logprobs: Float32Array;
  entropies: Float32Array;
}
