/**
 * A whole training run, the way the default lesson goes: measure the model on held-out tasks,
 * make warm-up demonstrations by rolling the environment out with an expert (or teacher) client,
 * SFT on them, measure again, train with GRPO, measure a last time. It drives `tabrl train` and the
 * nano scripts (the playground's engine worker runs the same phases one by one, as the user starts
 * them: runSft and GrpoTrainer); it knows nothing of its caller.
 */
import { evaluate, MultiTurnEnv, type ChatClient, type Environment, type EvaluationSummary } from '../envs/index.ts';
import type { Tokenizer } from '../gpu/io/tokenizer.ts';
import type { Decoder } from '../gpu/inference/decoder.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { rubricRewardWeights } from '../envs/broken-rewards.ts';
import { BrokenRewardsError, checkRewardsMeasure, environmentRollouts, GrpoTrainer, type GrpoOptions, type GrpoStepMetrics, type SavedRolloutBatch } from './grpo-trainer.ts';
import { makeWarmupData } from './sft-data.ts';
import { runSft, type SftStepMetrics } from './sft-trainer.ts';
import { tokenizeTranscript } from './tokenize-transcript.ts';

/** SFT warm-up settings. */
export interface WarmupOptions {
  /** Rollouts of the expert to make demonstrations from (only passing ones are kept). */
  demonstrations: number;
  steps: number;
  batchSize: number;
  lr: number;
}

/** Settings of a training run. */
export interface TrainingRunOptions {
  seed: number;
  /** Max tokens per model turn, for evaluation, demonstrations' budget and GRPO. */
  maxTokens: number;
  /** Held-out tasks measured before and after each phase (0 = no measurements). */
  evalTasks: number;
  /** Temperature of the measurements (default 0: greedy, so they are comparable). */
  evalTemperature?: number;
  /** SFT warm-up, or null to skip it. */
  warmup: WarmupOptions | null;
  /** GRPO settings, or null to skip GRPO. */
  grpo: Omit<GrpoOptions, 'seed' | 'maxTokens' | 'startStep' | 'rolloutsAhead'> | null;
  /** Call `onCheckpoint` every this many steps of either phase (0 or absent: only at phase ends and at stop). */
  checkpointEvery?: number;
  /** Continue a run from a checkpoint (its weights and optimizer state already restored into the backend). */
  resumeFrom?: TrainingPosition;
}

/** Where a run stands: the phase and the next step to run in it, and (GRPO with max-async ≥ 1) the rollouts already sampled for the steps from there on. */
export interface TrainingPosition {
  phase: 'sft' | 'grpo';
  nextStep: number;
  /** Save them with the checkpoint: a resumed run trains on them, so it takes the same steps as an uninterrupted one. */
  rolloutsAhead?: SavedRolloutBatch[];
}

/** A labelled measurement of the model on held-out tasks. */
export interface TrainingEvaluation {
  label: 'before' | 'after warm-up' | 'after GRPO';
  summary: EvaluationSummary;
}

/** Callbacks of a training run. */
export interface TrainingRunHooks {
  onPhase?: (phase: 'evaluate' | 'demonstrations' | 'sft' | 'grpo', detail: string) => void;
  onEvaluation?: (evaluation: TrainingEvaluation) => void;
  onSftStep?: (metrics: SftStepMetrics) => void | Promise<void>;
  onGrpoStep?: (metrics: GrpoStepMetrics, policy: ChatClient) => void | Promise<void>;
  /** Save the backend's weights and optimizer state now, as position `position` (awaited before training goes on). */
  onCheckpoint?: (position: TrainingPosition) => void | Promise<void>;
  signal?: AbortSignal;
}

/** What a run produced. */
export interface TrainingReport {
  evaluations: TrainingEvaluation[];
  demonstrationsKept: number;
  sft: SftStepMetrics[];
  grpo: GrpoStepMetrics[];
}

/** The model a run trains: its backend and tokenizer, and optionally the decoder its measurements and rollouts sample with (openModel's `createDecoder` on WebGPU). */
export interface TrainingModel {
  backend: ModelBackend;
  tokenizer: Tokenizer;
  /** Builds the sampling decoder over the backend's weights (default: the CPU decoder, which copies them at each sync); the WebGPU decoder keeps sampling on the GPU. */
  createDecoder?: (backend: ModelBackend) => Promise<Decoder>;
}

/** Runs measure → warm-up → measure → GRPO → measure on one model. */
export async function runTraining(
  env: Environment,
  model: TrainingModel,
  expert: ChatClient | null,
  options: TrainingRunOptions,
  hooks: TrainingRunHooks = {},
): Promise<TrainingReport> {
  const policy = new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, defaultMaxTokens: options.maxTokens, ...(model.createDecoder ? { createDecoder: model.createDecoder } : {}) });
  const report: TrainingReport = { evaluations: [], demonstrationsKept: 0, sft: [], grpo: [] };
  const measure = async (label: TrainingEvaluation['label']) => {
    if (options.evalTasks <= 0 || hooks.signal?.aborted) return;
    hooks.onPhase?.('evaluate', label);
    const result = await evaluate(env, policy, {
      numTasks: options.evalTasks,
      samplingArgs: { temperature: options.evalTemperature ?? 0, max_tokens: options.maxTokens, seed: options.seed },
      signal: hooks.signal,
    });
    // A measurement cut short by a stop is not a measurement; the resumed run takes it whole.
    if (hooks.signal?.aborted) return;
    const evaluation = { label, summary: result.summary };
    report.evaluations.push(evaluation);
    hooks.onEvaluation?.(evaluation);
    // Before training, rewards that measure nothing stop the run (training would be on zeros); the last measurement is only reported.
    if (label !== 'after GRPO') checkRewardsMeasure(label === 'before' ? 'the measurement before training' : `the measurement ${label}`, result.records, rubricRewardWeights(env.rubric));
  };

  const resume = options.resumeFrom;
  const every = options.checkpointEvery ?? 0;
  let lastSaved: TrainingPosition | null = null;
  const checkpoint = async (position: TrainingPosition) => {
    lastSaved = position;
    await hooks.onCheckpoint?.(position);
  };
  const checkpointAfter = async (phase: TrainingPosition['phase'], step: number, trainer?: GrpoTrainer) => {
    if (!(every > 0 && (step + 1) % every === 0)) return;
    if (!trainer) return checkpoint({ phase, nextStep: step + 1 });
    // Stopped while the rollouts ahead were sampled: they were aborted, so this position cannot be kept exactly.
    const rolloutsAhead = await trainer.rolloutsAhead();
    if (rolloutsAhead !== null) await checkpoint({ phase, nextStep: step + 1, ...(rolloutsAhead.length > 0 ? { rolloutsAhead } : {}) });
  };
  if (!resume) await measure('before');

  if (options.warmup && resume?.phase !== 'grpo' && !hooks.signal?.aborted) {
    if (!expert) throw new Error(`${env.name}: an SFT warm-up needs demonstrations, but there is no expert or teacher client`);
    hooks.onPhase?.('demonstrations', `${options.warmup.demonstrations} expert rollouts`);
    const data = await makeWarmupData(env, expert, { numTasks: options.warmup.demonstrations, concurrency: 16, samplingArgs: { seed: options.seed }, signal: hooks.signal });
    report.demonstrationsKept = data.examples.length;
    if (data.brokenRewards) throw new BrokenRewardsError(`the ${data.rollouts} expert demonstrations: ${data.brokenRewards}; the run stops rather than warm up on rollouts picked by rewards that measure nothing. Fix the reward function and train again`);
    if (data.examples.length === 0) throw new Error(`${env.name}: none of the ${data.rollouts} expert rollouts passed, so there is nothing to warm up on`);
    const tools = env instanceof MultiTurnEnv ? env.tools : undefined;
    const sequences = data.examples.map((example) => tokenizeTranscript(model.tokenizer, example.messages, tools));
    hooks.onPhase?.('sft', `${options.warmup.steps} steps on ${sequences.length} demonstrations`);
    const startStep = resume?.phase === 'sft' ? resume.nextStep : 0;
    report.sft = await runSft(
      model.backend,
      sequences,
      { steps: options.warmup.steps, batchSize: options.warmup.batchSize, schedule: { lr: options.warmup.lr }, seed: options.seed, padId: model.tokenizer.padId, startStep },
      {
        onStep: async (metrics) => {
          await hooks.onSftStep?.(metrics);
          await checkpointAfter('sft', metrics.step);
        },
        signal: hooks.signal,
      },
    );
    if (hooks.signal?.aborted) {
      await checkpoint({ phase: 'sft', nextStep: (report.sft.at(-1)?.step ?? startStep - 1) + 1 });
      return report;
    }
    // Saved as "SFT done, not yet measured", then again once measured: a crash during the
    // measurement resumes at the measurement rather than skipping it.
    await checkpoint({ phase: 'sft', nextStep: options.warmup.steps });
    await policy.syncWeights();
    await measure('after warm-up');
    if (hooks.signal?.aborted) return report;
    await checkpoint({ phase: 'grpo', nextStep: 0 });
  }

  if (options.grpo && !hooks.signal?.aborted) {
    hooks.onPhase?.('grpo', `${options.grpo.steps} steps`);
    const startStep = resume?.phase === 'grpo' ? resume.nextStep : 0;
    const rolloutsAhead = resume?.phase === 'grpo' ? resume.rolloutsAhead : undefined;
    const trainer = new GrpoTrainer(environmentRollouts(env, policy), model.backend, policy, {
      ...options.grpo,
      seed: options.seed,
      maxTokens: options.maxTokens,
      padId: model.tokenizer.padId,
      startStep,
      ...(rolloutsAhead ? { rolloutsAhead } : {}),
    });
    report.grpo = await trainer.run({
      onStep: async (metrics) => {
        await hooks.onGrpoStep?.(metrics, policy);
        await checkpointAfter('grpo', metrics.step, trainer);
      },
      signal: hooks.signal,
    });
    // At the end, or when stopped: unless the last periodic checkpoint is this very position (with
    // its rollouts ahead, which a stop has aborted), save where the run stands.
    const nextStep = (report.grpo.at(-1)?.step ?? startStep - 1) + 1;
    const saved = lastSaved as TrainingPosition | null;
    if (!(saved !== null && saved.phase === 'grpo' && saved.nextStep === nextStep)) await checkpoint({ phase: 'grpo', nextStep });
    if (hooks.signal?.aborted) return report;
    await measure('after GRPO');
  }
  return report;
}
