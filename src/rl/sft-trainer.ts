/**
 * Supervised fine-tuning: cross-entropy on the assistant tokens of chat transcripts, in
 * micro-batches with gradient accumulation and one clipped AdamW step per batch. The transcripts
 * arrive already tokenised as TrainSequences (assistant tokens marked as trained), so this loop is
 * the same for the byte-level tiny models and for real tokenizers.
 */
import type { ModelBackend } from '../gpu/model/backend.ts';
import { sftLoss, sftWeights } from './policy-loss.ts';
import { learningRateAt, type LearningRateSchedule } from './schedule.ts';
import { shuffledIndices } from './task-order.ts';
import { buildTrainBatch, trainingLength, type TrainSequence } from './token-batch.ts';

/** SFT hyperparameters. */
export interface SftOptions {
  steps: number;
  /** Sequences per optimizer step (default 8). */
  batchSize?: number;
  /** Sequences per backward pass (default = batchSize). */
  microBatchSize?: number;
  /**
   * The micro-batch for a step whose sequences are padded to T tokens (WebGPU: the largest that fits
   * the memory budget, as GRPO's microBatchFor). Given, it replaces microBatchSize; it may throw (a
   * batch that cannot fit), which stops the run.
   */
  microBatchFor?: (T: number) => number;
  /** Learning rate and schedule (default 1e-3 constant). */
  schedule?: LearningRateSchedule;
  maxGradNorm?: number;
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Shuffles the examples each epoch (default 0). */
  seed?: number;
  padId?: number;
  maxSequenceLength?: number;
  /** The first step to run (for resuming; default 0). */
  startStep?: number;
}

/** Metrics of one SFT step. */
export interface SftStepMetrics {
  step: number;
  /** Mean negative log-likelihood of the trained tokens. */
  loss: number;
  gradNorm: number;
  learningRate: number;
  tokensTrained: number;
  stepMs: number;
  skipped?: string;
}

/** Runs SFT steps over `sequences`; `onStep` receives each step's metrics. */
export async function runSft(
  backend: ModelBackend,
  sequences: readonly TrainSequence[],
  options: SftOptions,
  hooks: { onStep?: (metrics: SftStepMetrics) => void | Promise<void>; signal?: AbortSignal } = {},
): Promise<SftStepMetrics[]> {
  if (sequences.length === 0) throw new Error('SFT: no training examples (did the warm-up data keep any rollouts?)');
  const { steps, batchSize = 8, schedule = { lr: 1e-3 }, maxGradNorm = 1, weightDecay = 0, beta1 = 0.9, beta2 = 0.99, eps = 1e-8, seed = 0, padId = 0, startStep = 0 } = options;
  const history: SftStepMetrics[] = [];
  for (let step = startStep; step < steps; step++) {
    if (hooks.signal?.aborted) break;
    const started = globalThis.performance?.now() ?? Date.now();
    const batch = shuffledIndices(step * batchSize, batchSize, sequences.length, seed).map((index) => sequences[index]!);
    const tokensTrained = batch.reduce((sum, s) => sum + s.sampled.slice(1).reduce((a, b) => a + b, 0), 0);
    const normalizer = Math.max(1, tokensTrained);
    const microBatchSize = options.microBatchFor ? options.microBatchFor(trainingLength(batch, options.maxSequenceLength)) : (options.microBatchSize ?? batchSize);
    if (!(Number.isInteger(microBatchSize) && microBatchSize > 0)) throw new Error(`SFT: the micro-batch must be a positive integer, got ${microBatchSize}`);
    await backend.zeroGrad();
    let loss = 0;
    for (let start = 0; start < batch.length; start += microBatchSize) {
      const micro = buildTrainBatch(batch.slice(start, start + microBatchSize), { padId, ...(options.maxSequenceLength ? { maxLength: options.maxSequenceLength } : {}) });
      const weights = sftWeights(micro.lossMask, normalizer);
      // backward returns Σ w·logp with w = −mask/Z: this micro-batch's share of the mean NLL.
      loss += await backend.backward(micro.ids, micro.targets, weights, micro.B, micro.T, 1);
    }
    const learningRate = learningRateAt(step, schedule);
    const gradNorm = await backend.gradNorm();
    let skipped: string | undefined;
    if (Number.isFinite(loss) && Number.isFinite(gradNorm)) {
      await backend.step({ lr: learningRate, beta1, beta2, eps, weightDecay, maxGradNorm });
    } else {
      skipped = 'non-finite loss or gradient; the update was skipped and the last good weights kept';
    }
    await backend.zeroGrad();
    const metrics: SftStepMetrics = { step, loss, gradNorm, learningRate, tokensTrained, stepMs: (globalThis.performance?.now() ?? Date.now()) - started, ...(skipped ? { skipped } : {}) };
    history.push(metrics);
    await hooks.onStep?.(metrics);
  }
  return history;
}

/** The mean NLL of `sequences` under the backend's weights, without training (for before/after checks). */
export async function evaluateSftLoss(backend: ModelBackend, sequences: readonly TrainSequence[], padId = 0): Promise<number> {
  const batch = buildTrainBatch(sequences, { padId });
  const logprobs = await backend.logprobs(batch.ids, batch.targets, batch.B, batch.T, 1);
  return sftLoss(logprobs, batch.lossMask, Math.max(1, batch.numLossTokens));
}
