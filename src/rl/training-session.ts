/**
 * One training session, the same in `tabrl train` and in the tab's engine worker: measure, warm up
 * (SFT on demonstrations), measure, GRPO, measure, with checkpoints between steps and at phase ends.
 * What differs between the hosts comes in through three interfaces: where rollouts come from (a
 * `RolloutSource`: the environment in this process, or the tab's sandbox), where checkpoints go (a
 * `CheckpointStore`: files on disk, or messages to the page's IndexedDB) and who hears of progress
 * (a `TrainingReporter`: the terminal and metrics.jsonl, or postMessage). Measurements and
 * demonstrations are parts too (the worker has no environment, so the page makes them).
 * It owns no model and no storage; runTraining (training-run.ts) is its adapter for one process.
 */
import type { EvaluationSummary } from '../envs/index.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { GrpoTrainer, type GrpoOptions, type GrpoStepMetrics, type RolloutSource, type SamplingPolicy, type SavedRolloutBatch } from './grpo-trainer.ts';
import { runSft, type SftStepMetrics } from './sft-trainer.ts';
import type { TrainSequence } from './token-batch.ts';

/** SFT warm-up settings. */
export interface WarmupOptions {
  /** Rollouts of the expert to make demonstrations from (only passing ones are kept). */
  demonstrations: number;
  steps: number;
  batchSize: number;
  lr: number;
  /** The micro-batch for T-token sequences (WebGPU: chosen from the memory budget); absent: the whole batch in one backward. */
  microBatchFor?: (T: number) => number;
}

/** Settings of a training session (training-options.ts makes them from the table of training settings). */
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
  /** Save a checkpoint every this many steps of either phase (0 or absent: only at phase ends and at stop). */
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

/** Where checkpoints go: `save` stores the backend's weights and optimizer state now, as `position` (awaited before training goes on). */
export interface CheckpointStore {
  save(position: TrainingPosition): Promise<void>;
}

/** Who hears of a session's progress; every hook is optional and awaited where it returns a promise. */
export interface TrainingReporter {
  phase?(phase: 'evaluate' | 'demonstrations' | 'sft' | 'grpo', detail: string): void;
  evaluation?(evaluation: TrainingEvaluation): void;
  sftStep?(metrics: SftStepMetrics): void | Promise<void>;
  grpoStep?(metrics: GrpoStepMetrics, policy: SamplingPolicy): void | Promise<void>;
  /** Called after `grpoStep`, once the policy samples with the weights the step produced and before the step's checkpoint: where a task-pool refresh measures the policy. */
  grpoPolicySynced?(metrics: GrpoStepMetrics, policy: SamplingPolicy): void | Promise<void>;
  /** Called after each step's report and checkpoint: the place to hold while paused. */
  betweenSteps?(): Promise<void>;
}

/** What a session trains and with what: the model, and the host's parts. */
export interface TrainingSessionParts {
  backend: ModelBackend;
  /** The sampler over the backend's weights, synced after each update (LocalChatClient). */
  policy: SamplingPolicy;
  padId: number;
  /** GRPO's rollouts, or a function that makes them when GRPO starts; needed when the options have GRPO. */
  rollouts?: RolloutSource | (() => RolloutSource);
  /** The warm-up's training sequences; needed when the options have a warm-up. */
  demonstrations?: () => Promise<TrainSequence[]>;
  /** Measures the policy on held-out tasks (absent: no measurements; null: stopped meanwhile). */
  measure?: (label: TrainingEvaluation['label']) => Promise<TrainingEvaluation | null>;
  /** Checks a measurement once it is reported, and throws to stop the run (rewards that measure nothing). */
  checkMeasurement?: (evaluation: TrainingEvaluation) => void;
  checkpoints?: CheckpointStore;
  reporter?: TrainingReporter;
  signal?: AbortSignal;
}

/** What a session produced. */
export interface TrainingReport {
  evaluations: TrainingEvaluation[];
  demonstrationsKept: number;
  sft: SftStepMetrics[];
  grpo: GrpoStepMetrics[];
}

/** Runs measure → warm-up → measure → GRPO → measure (the phases the options have) on one model. */
export async function runTrainingSession(parts: TrainingSessionParts, options: TrainingRunOptions): Promise<TrainingReport> {
  const { backend, policy, reporter = {}, signal } = parts;
  const report: TrainingReport = { evaluations: [], demonstrationsKept: 0, sft: [], grpo: [] };
  const measure = async (label: TrainingEvaluation['label']) => {
    if (!parts.measure || options.evalTasks <= 0 || signal?.aborted) return;
    reporter.phase?.('evaluate', label);
    const evaluation = await parts.measure(label);
    // A measurement cut short by a stop is not a measurement; the resumed run takes it whole.
    if (!evaluation || signal?.aborted) return;
    report.evaluations.push(evaluation);
    reporter.evaluation?.(evaluation);
    parts.checkMeasurement?.(evaluation);
  };

  const resume = options.resumeFrom;
  const every = options.checkpointEvery ?? 0;
  let lastSaved: TrainingPosition | null = null;
  const checkpoint = async (position: TrainingPosition) => {
    lastSaved = position;
    await parts.checkpoints?.save(position);
  };
  const checkpointAfter = async (phase: TrainingPosition['phase'], step: number) => {
    if (every > 0 && (step + 1) % every === 0) await checkpoint({ phase, nextStep: step + 1 });
  };
  if (!resume) await measure('before');

  if (options.warmup && resume?.phase !== 'grpo' && !signal?.aborted) {
    if (!parts.demonstrations) throw new Error('an SFT warm-up needs demonstrations, and this session has no source of them');
    reporter.phase?.('demonstrations', `${options.warmup.demonstrations} expert rollouts`);
    const sequences = await parts.demonstrations();
    report.demonstrationsKept = sequences.length;
    reporter.phase?.('sft', `${options.warmup.steps} steps on ${sequences.length} demonstrations`);
    const startStep = resume?.phase === 'sft' ? resume.nextStep : 0;
    report.sft = await runSft(
      backend,
      sequences,
      {
        steps: options.warmup.steps,
        batchSize: options.warmup.batchSize,
        schedule: { lr: options.warmup.lr },
        seed: options.seed,
        padId: parts.padId,
        startStep,
        ...(options.warmup.microBatchFor ? { microBatchFor: options.warmup.microBatchFor } : {}),
      },
      {
        onStep: async (metrics) => {
          await reporter.sftStep?.(metrics);
          await checkpointAfter('sft', metrics.step);
          await reporter.betweenSteps?.();
        },
        signal,
      },
    );
    if (signal?.aborted) {
      await checkpoint({ phase: 'sft', nextStep: (report.sft.at(-1)?.step ?? startStep - 1) + 1 });
      return report;
    }
    // Saved as "SFT done, not yet measured", then again once measured: a crash during the
    // measurement resumes at the measurement rather than skipping it.
    await checkpoint({ phase: 'sft', nextStep: options.warmup.steps });
    await policy.syncWeights();
    await measure('after warm-up');
    if (signal?.aborted) return report;
    await checkpoint({ phase: 'grpo', nextStep: 0 });
  }

  if (options.grpo && !signal?.aborted) {
    if (!parts.rollouts) throw new Error('GRPO needs rollouts, and this session has no source of them');
    reporter.phase?.('grpo', `${options.grpo.steps} steps`);
    const startStep = resume?.phase === 'grpo' ? resume.nextStep : 0;
    const rolloutsAhead = resume?.phase === 'grpo' ? resume.rolloutsAhead : undefined;
    const rollouts = typeof parts.rollouts === 'function' ? parts.rollouts() : parts.rollouts;
    const trainer = new GrpoTrainer(rollouts, backend, policy, {
      ...options.grpo,
      seed: options.seed,
      maxTokens: options.maxTokens,
      padId: parts.padId,
      startStep,
      ...(rolloutsAhead ? { rolloutsAhead } : {}),
    });
    // A step due a checkpoint collects its rollouts sampled ahead in onStep, where they are held
    // against a stop, and saves them after the sync, so the checkpoint has what a task-pool refresh
    // did with the new weights; null: a stop had already aborted them.
    let ahead: SavedRolloutBatch[] | null | undefined;
    report.grpo = await trainer.run({
      onStep: async (metrics) => {
        await reporter.grpoStep?.(metrics, policy);
        ahead = every > 0 && (metrics.step + 1) % every === 0 ? await trainer.rolloutsAhead() : undefined;
      },
      onSynced: async (metrics) => {
        await reporter.grpoPolicySynced?.(metrics, policy);
        if (ahead) await checkpoint({ phase: 'grpo', nextStep: metrics.step + 1, ...(ahead.length > 0 ? { rolloutsAhead: ahead } : {}) });
        ahead = undefined;
        await reporter.betweenSteps?.();
      },
      ...(signal ? { signal } : {}),
    });
    // At the end, or when stopped: unless the last periodic checkpoint is this very position (with
    // its rollouts ahead, which a stop has aborted), save where the run stands.
    const nextStep = (report.grpo.at(-1)?.step ?? startStep - 1) + 1;
    const saved = lastSaved as TrainingPosition | null;
    if (!(saved !== null && saved.phase === 'grpo' && saved.nextStep === nextStep)) await checkpoint({ phase: 'grpo', nextStep });
    if (signal?.aborted) return report;
    await measure('after GRPO');
  }
  return report;
}
