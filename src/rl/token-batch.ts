/**
 * From sampled turns to a training batch. A rollout's turns are laid end to end as one token
 * sequence: each turn's prompt tokens (the first prompt, then the environment's delta messages)
 * followed by the tokens the model sampled. Only sampled tokens get policy loss; prompt, environment
 * and tool tokens are masked out of it. The environment's own replies (the prompt tokens of every
 * turn after the first) are marked too, for the optional ECHO loss that teaches the model to predict
 * them. Sequences are right-padded into a (B, T) batch of inputs and targets (next-token prediction:
 * position t predicts token t+1), one sequence per row.
 */
import type { TurnTokens } from '../envs/index.ts';

/** One rollout as a token sequence with what the trainer needs per token. */
export interface TrainSequence {
  /** All tokens, in order. */
  tokens: number[];
  /** 1 where the token was sampled by the model (and so is trained on), else 0; same length as tokens. */
  sampled: number[];
  /** Log-probability of each sampled token when it was sampled (0 elsewhere); same length as tokens. */
  samplingLogprobs: number[];
  /** The sequence's advantage (GRPO) or 1 (SFT). */
  advantage: number;
  /** Each token's advantage where turns differ (the outcome advantage plus its turn's, with turn rewards); absent = `advantage` everywhere. Same length as tokens. */
  advantages?: number[];
  /** 1 where the token is part of the environment's reply to an earlier turn (ECHO's targets), else 0; absent = none. */
  environment?: number[];
  /** Entropy of the sampling distribution at each sampled token (0 elsewhere): the sampler's own when it reported it, else the token's surprisal −logp, its Monte Carlo estimate. */
  entropies?: number[];
}

/** A padded batch: B sequences of T positions; position t feeds ids[t] and predicts targets[t]. */
export interface TrainBatch {
  B: number;
  T: number;
  ids: Int32Array; // (B, T)
  targets: Int32Array; // (B, T)
  /** 1 where targets[t] is a sampled token to train on. */
  lossMask: Float32Array; // (B, T)
  /** Sampling log-probability of targets[t] (the "old policy"), 0 where masked. */
  oldLogprobs: Float32Array; // (B, T)
  /** Each position's advantage (its sequence's), 0 where masked. */
  advantages: Float32Array; // (B, T)
  /** Positions with loss. */
  numLossTokens: number;
  /** 1 where targets[t] is an environment reply token (ECHO loss); absent when no sequence marks any. */
  echoMask?: Float32Array; // (B, T)
  /** Sampling entropy at targets[t] where lossMask is 1 (0 elsewhere); absent when no sequence has entropies. */
  entropies?: Float32Array; // (B, T)
}

/**
 * Lays the turns of one rollout end to end; the prompt tokens of turns after the first are marked as
 * the environment's replies. With `turnAdvantages` (one per turn), turn i's sampled tokens get
 * `advantage + turnAdvantages[i]`.
 */
export function buildTrainSequence(turns: readonly TurnTokens[], advantage: number, turnAdvantages?: readonly number[]): TrainSequence {
  if (turns.length === 0) throw new Error('buildTrainSequence: a rollout without token data cannot be trained on (was it sampled by the in-tab model?)');
  if (turnAdvantages && turnAdvantages.length !== turns.length) throw new Error(`buildTrainSequence: ${turnAdvantages.length} turn advantages for ${turns.length} turns`);
  const sequence: TrainSequence = { tokens: [], sampled: [], samplingLogprobs: [], advantage, environment: [], entropies: [], ...(turnAdvantages ? { advantages: [] } : {}) };
  const turnAdvantage = (turnIndex: number) => (turnAdvantages ? advantage + turnAdvantages[turnIndex]! : advantage);
  turns.forEach((turn, turnIndex) => {
    if (turn.completionIds.length !== turn.completionLogprobs.length) {
      throw new Error(`buildTrainSequence: ${turn.completionIds.length} sampled tokens but ${turn.completionLogprobs.length} log-probabilities`);
    }
    const entropies = turn.completionEntropies?.length === turn.completionIds.length ? turn.completionEntropies : undefined;
    for (const id of turn.promptIds) {
      sequence.tokens.push(id);
      sequence.sampled.push(0);
      sequence.samplingLogprobs.push(0);
      sequence.environment!.push(turnIndex > 0 ? 1 : 0);
      sequence.entropies!.push(0);
      sequence.advantages?.push(0);
    }
    turn.completionIds.forEach((id, i) => {
      sequence.tokens.push(id);
      sequence.sampled.push(1);
      sequence.samplingLogprobs.push(turn.completionLogprobs[i]!);
      sequence.environment!.push(0);
      sequence.entropies!.push(entropies ? entropies[i]! : -turn.completionLogprobs[i]!);
      sequence.advantages?.push(turnAdvantage(turnIndex));
    });
  });
  return sequence;
}

/** Returns the T that buildTrainBatch gives these sequences together: the longest, cut to maxLength, less one (the last token is only a target). */
export function trainingLength(sequences: ReadonlyArray<{ tokens: ArrayLike<number> }>, maxLength: number | undefined): number {
  const longest = Math.max(...sequences.map((sequence) => sequence.tokens.length));
  return Math.max(1, Math.min(longest, maxLength ?? longest) - 1);
}

/** Right-pads sequences into one batch; sequences longer than `maxLength` tokens are cut (their tail loses its loss). */
export function buildTrainBatch(sequences: readonly TrainSequence[], options: { padId?: number; maxLength?: number } = {}): TrainBatch {
  if (sequences.length === 0) throw new Error('buildTrainBatch: no sequences');
  const padId = options.padId ?? 0;
  const longest = Math.max(...sequences.map((sequence) => sequence.tokens.length));
  const T = Math.max(1, Math.min(longest, options.maxLength ?? longest) - 1);
  const B = sequences.length;
  const withEcho = sequences.some((sequence) => sequence.environment?.includes(1));
  const withEntropies = sequences.some((sequence) => sequence.entropies !== undefined);
  const batch: TrainBatch = {
    B,
    T,
    ids: new Int32Array(B * T).fill(padId),
    targets: new Int32Array(B * T).fill(padId),
    lossMask: new Float32Array(B * T),
    oldLogprobs: new Float32Array(B * T),
    advantages: new Float32Array(B * T),
    numLossTokens: 0,
    ...(withEcho ? { echoMask: new Float32Array(B * T) } : {}),
    ...(withEntropies ? { entropies: new Float32Array(B * T) } : {}),
  };
  sequences.forEach((sequence, b) => {
    const length = Math.min(sequence.tokens.length, T + 1);
    for (let t = 0; t + 1 < length; t++) {
      const at = b * T + t;
      batch.ids[at] = sequence.tokens[t]!;
      batch.targets[at] = sequence.tokens[t + 1]!;
      if (sequence.sampled[t + 1] === 1) {
        batch.lossMask[at] = 1;
        batch.oldLogprobs[at] = sequence.samplingLogprobs[t + 1]!;
        batch.advantages[at] = sequence.advantages?.[t + 1] ?? sequence.advantage;
        batch.numLossTokens += 1;
        if (batch.entropies && sequence.entropies) batch.entropies[at] = sequence.entropies[t + 1]!;
      }
      if (batch.echoMask && sequence.environment?.[t + 1] === 1) batch.echoMask[at] = 1;
    }
  });
  return batch;
}
