/**
 * The GRPO training loop. Each step takes a batch of tasks, rolls out G completions per task
 * through the policy's chat client (concurrently, with the environment's own harness and rubric,
 * then the rubric's group rewards on each finished group), optionally draws more tasks while groups
 * come back flat (dynamic sampling), turns rewards into group-relative advantages (scaled as
 * `scaleRewards` says; with turn rewards, plus per-turn advantages on each turn's tokens), builds
 * the token batch from exactly the sampled tokens (less truncated rollouts or low-entropy tokens
 * when asked), and updates the model with the clipped
 * policy-gradient objective (per-token or per-sequence ratios, averaged as `lossType` says, plus KL
 * and ECHO terms) in micro-batches with gradient accumulation, then one clipped AdamW step.
 *
 * Asynchronous by design: with `maxAsync = k`, rollouts for up to k steps ahead are sampled while
 * the current step trains, so environment work and scoring (a remote judge, say) overlap the
 * update. Rollouts are then at most k weight versions old; the clipped objective uses their
 * sampling log-probs as the old policy, so the staleness is accounted for, and each step reports it.
 * Step t samples with the weights after step t − k − 1, whatever the timing: the optimizer step
 * waits for the rollouts already started (they overlap the step's forward and backward passes, not
 * its update), and the policy takes the new weights only then (so with one sampler, k ≥ 2 adds
 * staleness but no more overlap). That holds for a sampler that snapshots the weights at
 * `syncWeights` (the CPU decoder) and for one that reads the live weights (the WebGPU decoder),
 * which would otherwise see the update land mid-rollout and sample by timing. A step's tasks are
 * drawn when the step is sampled and its rollouts keep them (`RolloutSource.taskAt`): when the tasks
 * change between steps (a task-pool refresh during training), rollouts sampled ahead still roll out
 * and score against the tasks they were drawn for, and only steps sampled later draw from the new ones.
 *
 * Exact resume with k > 0: when a checkpoint is taken after step s, the rollouts of steps s+1..s+k
 * were already started with older weights. `rolloutsAhead()` waits for them and returns them (with
 * how many weight versions old they are); a trainer given them back (`rolloutsAhead` option) trains
 * on them instead of sampling those steps again, so the resumed run takes the same steps as an
 * uninterrupted one. Task order and sampling seeds are pure functions of (seed, step): nothing else
 * needs saving.
 */
import type { ChatClient, Environment, RolloutError, SamplingArgs, Task, Trajectory } from '../envs/index.ts';
import { brokenRewardsReason, rubricRewardWeights, type ScoredRolloutLike } from '../envs/broken-rewards.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { computeAdvantages, computeTurnAdvantages, findGroupsWithoutSignal, TURN_CREDITS, type RewardScaling, type TurnCredit } from './advantages.ts';
import { entropyMask, entropyThreshold, grpoLoss } from './policy-loss.ts';
import { learningRateAt, type LearningRateSchedule } from './schedule.ts';
import { extraTaskIndicesForStep, taskIndicesForStep } from './task-order.ts';
import { buildTrainBatch, buildTrainSequence, trainingLength, type TrainSequence } from './token-batch.ts';
import { grpoKnobOptions } from './training-options.ts';
import { KNOB_DEFAULTS } from './training-settings.ts';

/** The sampler of the model being trained: which weights version it samples with, and how to refresh it (LocalChatClient is one). */
export interface TrainablePolicy {
  /** The weights version that new samples use (number of weight syncs so far). */
  readonly policyVersion: number;
  /** Makes new samples use the backend's current weights. */
  syncWeights(): Promise<unknown>;
}

/** A policy that is also the chat client rollouts talk to (the usual case in one process). */
export interface SamplingPolicy extends TrainablePolicy, ChatClient {}

/** A finished, scored rollout with the environment's verdict on it. */
export interface ScoredTrajectory extends Trajectory {
  passed: boolean;
}

/**
 * Where rollouts come from: the environment's training tasks, rolled out against the policy. In one
 * process that is the environment itself (`environmentRollouts`); in the browser, a sandbox that
 * runs the user's environment code and sends model calls back to the engine.
 */
export interface RolloutSource {
  readonly name: string;
  /** Number of training tasks. */
  readonly numTasks: number;
  /**
   * The training task at `taskIndex` now. The trainer takes a step's tasks with it when it samples
   * the step and hands each back to `rollout`, so a rollout started later (waiting for a free slot,
   * or sampled ahead) rolls out the task it was drawn for even when the tasks changed meanwhile (a
   * task-pool refresh between steps). Absent where the tasks never change during a run.
   */
  taskAt?(taskIndex: number): Task;
  /**
   * Rolls out training task `taskIndex` once, for GRPO step `step`: `task` when given (the task as
   * `taskAt` gave it when the step was sampled), else the one at `taskIndex` now. Never throws on
   * model, env or reward errors: they are in the trajectory.
   */
  rollout(taskIndex: number, samplingArgs: SamplingArgs, options: { signal?: AbortSignal; step: number; task?: Task }): Promise<ScoredTrajectory>;
  /** Adds the rubric's group rewards (functions that see the whole group of one task's rollouts) to a finished group; absent when the source has none to add. */
  scoreGroup?(group: ScoredTrajectory[]): Promise<ScoredTrajectory[]>;
  /** The weight of each reward function (group ones included), by name: with them, a step whose weighted functions all failed in every rollout stops the run (checkRewardsMeasure). */
  readonly rewardWeights?: Readonly<Record<string, number>>;
}

/** Rollouts of an environment's training tasks against `client`, in this process. */
export function environmentRollouts(env: Environment, client: ChatClient, model = 'policy'): RolloutSource {
  if (env.dataset.length === 0) throw new Error(`GRPO: environment ${env.name} has no training tasks`);
  return {
    name: env.name,
    // Read at each step: a task-pool refresh between steps may change the dataset.
    get numTasks() {
      return env.dataset.length;
    },
    rewardWeights: rubricRewardWeights(env.rubric),
    taskAt: (taskIndex) => {
      const task = env.dataset[taskIndex];
      if (!task) throw new Error(`GRPO: environment ${env.name} has ${env.dataset.length} training tasks, and task ${taskIndex} was asked for`);
      return task;
    },
    rollout: async (taskIndex, samplingArgs, { signal, task }) => {
      const trajectory = await env.rollout(client, task ?? env.dataset[taskIndex]!, samplingArgs, { model, signal, taskIndex });
      return { ...trajectory, passed: env.isPassed(trajectory) };
    },
    ...(env.rubric.hasGroupRewards
      ? {
          scoreGroup: async (group: ScoredTrajectory[]) => (await env.scoreGroup(group)).map((trajectory) => ({ ...trajectory, passed: env.isPassed(trajectory) })),
        }
      : {}),
  };
}

/** GRPO hyperparameters; the defaults of those that are knobs are the table's (training-settings.ts). */
export interface GrpoOptions {
  steps: number;
  /** Tasks per step (default 4). */
  tasksPerStep?: number;
  /** Completions per task, G (default 8). */
  groupSize?: number;
  /** Max tokens per model turn (default: the table's). */
  maxTokens?: number;
  /** Sampling temperature (default 1). */
  temperature?: number;
  topP?: number;
  /** Learning rate and schedule (default: the table's GRPO learning rate, constant, no warm-up). */
  schedule?: LearningRateSchedule;
  /** PPO clip ε below and above 1 (defaults 0.2 and 0.28, as DAPO). */
  clipLow?: number;
  clipHigh?: number;
  /**
   * KL coefficient β (default 0). With β > 0 and no `reference`, the reference is the backend's own
   * (`logprobs(..., { weights: 'reference' })`): with LoRA the base weights, adapters switched off (no
   * extra memory); with full fine-tuning a frozen copy of the weights GRPO starts from, which `run()`
   * takes at step 0 (`backend.setReference`) and a resumed run must get back from its checkpoint.
   */
  klBeta?: number;
  /** Another reference policy for KL (default: the backend's, see klBeta). */
  reference?: Pick<ModelBackend, 'logprobs'>;
  /** Rollouts sampled ahead before a checkpoint (`rolloutsAhead()`), for steps from startStep on: trained on instead of sampled again. */
  rolloutsAhead?: SavedRolloutBatch[];
  /** After subtracting the group mean, divide by the group's reward std, the step's, or nothing (default 'none', as Dr. GRPO). */
  scaleRewards?: RewardScaling;
  /**
   * With turn rewards (the rubric's `addTurnReward`): a turn's tokens get the rollout's advantage plus
   * the sum of its own and later turns' normalised turn rewards ('return-to-go', the default, as
   * DeepSeekMath's process supervision) or its own only ('turn').
   */
  turnCredit?: TurnCredit;
  /**
   * How token losses are averaged (default 'dapo'): 'dapo' over every loss token of the step;
   * 'bnpo' over each micro-batch's loss tokens, then over micro-batches (the same with one micro-batch);
   * 'grpo' over each sequence's tokens, then over sequences (DeepSeekMath: long answers weigh less per
   * token); 'dr_grpo' a constant, sequences × maxTokens (no length bias at all).
   */
  lossType?: LossType;
  /** PPO ratios per token (default 'token') or one length-normalised ratio per sequence ('sequence', GSPO). */
  importanceSampling?: 'token' | 'sequence';
  /** Leave rollouts cut by the token limit out of the loss (default false); they still count in their group's advantages. */
  maskTruncated?: boolean;
  /** Skip groups whose rewards are all equal (default true). */
  dropUninformativeGroups?: boolean;
  /**
   * Dynamic sampling (DAPO): when groups come back with equal rewards, roll out more tasks (from a
   * seeded stream of its own) until the step has `tasksPerStep` informative groups or has drawn
   * `maxTasksPerStep` tasks (default false).
   */
  dynamicSampling?: boolean;
  /** The most tasks one step may draw with dynamic sampling (default 3 × tasksPerStep). */
  maxTasksPerStep?: number;
  /** Train only on this top share of the step's loss tokens by sampling entropy (e.g. 0.2; default 1 = every token). */
  entropyTopQ?: number;
  /** The most weight versions old a step's rollouts may be (default: no bound); see `staleRollouts`. */
  maxStaleness?: number;
  /** Rollouts older than maxStaleness: 'resample' them with the current weights (default), or 'downweight' the step's loss by 0.5 per version past the bound. */
  staleRollouts?: 'resample' | 'downweight';
  /** λ of ECHO: an SFT loss on the environment's reply tokens in multi-turn rollouts, so the model learns what the world answers (default 0 = off). */
  echoWeight?: number;
  /** Sequences per backward pass (default 8); the step's gradient is accumulated over them. */
  microBatchSize?: number;
  /**
   * Chooses the sequences per backward pass from the step's training length T (its longest sequence,
   * cut to maxSequenceLength, less one): e.g. the WebGPU backend's largest micro-batch that fits its
   * memory. Given, it replaces microBatchSize; it may throw (a batch that cannot fit), which stops the step.
   */
  microBatchFor?: (T: number) => number;
  /** Clip the global gradient norm to this (default 1; ≤ 0 disables). */
  maxGradNorm?: number;
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** How many steps ahead rollouts may be sampled (default 1; 0 = strictly on-policy). */
  maxAsync?: number;
  /** Rollouts in flight at once (default: all of a step). */
  concurrency?: number;
  /** Seeds task order and sampling (default 0). */
  seed?: number;
  /** The first step to run (for resuming; default 0). */
  startStep?: number;
  /** Padding token id (default 0). */
  padId?: number;
  /** Longest training sequence in tokens (longer ones are cut). */
  maxSequenceLength?: number;
}

/** How token losses are averaged into the step's loss (see GrpoOptions.lossType). */
export type LossType = 'grpo' | 'bnpo' | 'dapo' | 'dr_grpo';

/** The loss types, for flags and menus. */
export const LOSS_TYPES: readonly LossType[] = ['dapo', 'bnpo', 'grpo', 'dr_grpo'];

/** Everything measured in one step. */
export interface GrpoStepMetrics {
  step: number;
  reward: { mean: number; std: number };
  /** Mean of each reward function's score. */
  rewards: Record<string, number>;
  passRate: number;
  advantage: { meanAbs: number; std: number };
  loss: number;
  /** Mean k3 KL to the reference (0 without one). */
  kl: number;
  /** Mean negative log-probability of the sampled tokens: a Monte Carlo estimate of the policy's entropy. */
  entropy: number;
  clipFraction: number;
  /** Share of loss tokens clipped below 1 − ε_low (negative advantage). */
  clipFractionLow: number;
  /** Share of loss tokens clipped above 1 + ε_high (positive advantage). */
  clipFractionHigh: number;
  gradNorm: number;
  learningRate: number;
  tokensSampled: number;
  tokensTrained: number;
  /** Sampled tokens per second of sampling time. */
  tokensPerSecond: number;
  /**
   * Wall times: sampling this step's rollouts (their scoring included), the update, and the step — the
   * time since the previous step ended (since the run began, for its first), so with rollouts sampled
   * ahead it is less than sampling plus the update, which overlap; scoring summed over rollouts.
   */
  timings: { sampleMs: number; updateMs: number; stepMs: number; scoringMs: number };
  /** Weight versions between sampling and training (0 = on-policy). */
  staleness: number;
  /** What maxStaleness did this step: rollouts resampled, or the loss weight (1 = untouched). */
  stale?: { resampled: number; lossWeight: number };
  /** Sampled tokens per rollout (all its turns): mean and max. */
  completionLength: { mean: number; max: number };
  /** Share of rollouts cut by the token limit. */
  truncatedFraction: number;
  /** Share of the step's groups whose rewards were all equal. */
  zeroStdFraction: number;
  /** Tasks rolled out this step (more than tasksPerStep with dynamic sampling). */
  tasksDrawn: number;
  /** Mean negative log-likelihood of the environment's reply tokens (ECHO's target; 0 without multi-turn token data). */
  echoLoss: number;
  rollouts: number;
  rolloutsWithErrors: number;
  groupsDropped: number;
  /** Why the update was skipped, if it was (all groups uninformative, non-finite loss or gradient). */
  skipped?: string;
  /** The first error of a rollout in this step, for display. */
  firstError?: string;
}

/** Stops a run: every rollout of a step failed. */
export class TrainingError extends Error {
  override readonly name = 'TrainingError';
}

/**
 * Stops a run: every weighted reward function failed in every scored rollout of a GRPO step, a
 * measurement or a batch of demonstrations, so the rewards are only the zeros scored for the failures.
 */
export class BrokenRewardsError extends Error {
  override readonly name = 'BrokenRewardsError';
}

/**
 * Throws BrokenRewardsError when `rollouts` (those of `where`: "GRPO step 3", say) have rewards that
 * measure nothing by the shared rule (src/envs/broken-rewards.ts); a partial failure passes.
 */
export function checkRewardsMeasure(where: string, rollouts: readonly ScoredRolloutLike[], weights: Readonly<Record<string, number>> | undefined): void {
  const reason = weights && brokenRewardsReason(rollouts, weights);
  if (reason) throw new BrokenRewardsError(`${where}: ${reason}; the run stops rather than train on rewards that measure nothing. Fix the reward function and train again`);
}

/** The rollouts of one step sampled ahead of a checkpoint, as `rolloutsAhead()` returns them (JSON-safe: no environment state). */
export interface SavedRolloutBatch {
  step: number;
  trajectories: ScoredTrajectory[];
  /** Weight versions between sampling and the checkpoint's weights (the staleness so far). */
  versionsBehind: number;
  sampleMs: number;
}

/** A task drawn for a step: its index in the training tasks when drawn, and the task itself where the source gives it (`taskAt`). */
interface DrawnTask {
  taskIndex: number;
  task: Task | undefined;
}

/** The rollouts of one step. */
interface RolloutBatch {
  step: number;
  trajectories: ScoredTrajectory[]; // group after group, G each
  sampledAtVersion: number;
  sampleMs: number;
}

/** GrpoOptions with every default filled in. */
type ResolvedGrpoOptions = Required<Omit<GrpoOptions, 'reference' | 'topP' | 'maxSequenceLength' | 'concurrency' | 'rolloutsAhead' | 'microBatchFor'>> &
  Pick<GrpoOptions, 'reference' | 'topP' | 'maxSequenceLength' | 'concurrency' | 'rolloutsAhead' | 'microBatchFor'>;

/** Runs GRPO; call `run()` and read each step's metrics from `onStep`. */
export class GrpoTrainer {
  private readonly options: ResolvedGrpoOptions;
  /** The batches started and not yet trained on, in step order. */
  private pending: Array<{ step: number; batch: Promise<RolloutBatch> }> = [];
  /** Aborts the rollouts in flight: follows the run's signal, except while they are held (holdingRollouts). */
  private rolloutAbort = new AbortController();
  /** Waits in progress that hold the rollouts sampled ahead (a stop aborts them only when none is left). */
  private rolloutHolds = 0;
  /** The backend holds weights the policy has not synced yet (between an update and its sync). */
  private updatePending = false;
  private signal: AbortSignal | undefined;

  constructor(
    readonly source: RolloutSource,
    readonly backend: ModelBackend,
    readonly policy: TrainablePolicy,
    options: GrpoOptions,
  ) {
    // The knobs' defaults are the table's (training-settings.ts); the rest are the trainer's own.
    const knobs = grpoKnobOptions(KNOB_DEFAULTS, options.steps);
    this.options = {
      ...(knobs as Required<typeof knobs>),
      maxTokens: KNOB_DEFAULTS.maxTokens,
      seed: KNOB_DEFAULTS.seed,
      maxTasksPerStep: 3 * (options.tasksPerStep ?? knobs.tasksPerStep!),
      maxStaleness: Infinity,
      microBatchSize: 8,
      beta1: 0.9,
      beta2: 0.99,
      eps: 1e-8,
      startStep: 0,
      padId: 0,
      // A key given as undefined keeps its default.
      ...(Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as GrpoOptions),
    };
    validateOptions(this.options);
    const ahead = this.options.rolloutsAhead ?? [];
    if (ahead.some((batch, i) => batch.step !== this.options.startStep + i) || ahead.length > this.options.maxAsync) {
      throw new Error(
        `GRPO: the rollouts sampled ahead are for steps ${ahead.map((b) => b.step).join(', ')}, but a run resuming at step ${this.options.startStep} with maxAsync ${this.options.maxAsync} needs consecutive steps from ${this.options.startStep}, at most ${this.options.maxAsync}`,
      );
    }
    if (source.numTasks === 0) throw new Error(`GRPO: ${source.name} has no training tasks`);
  }

  /**
   * Trains until `steps` (or the signal aborts); `onStep` receives each step's metrics as soon as the
   * step is trained, `onSynced` once the policy samples with the weights that step produced (after the
   * weight sync, which waits for the rollouts sampled ahead; at once after a step whose update was
   * skipped), before any later step is sampled: the place to measure the policy as it now is.
   */
  async run(
    hooks: { onStep?: (metrics: GrpoStepMetrics) => void | Promise<void>; onSynced?: (metrics: GrpoStepMetrics) => void | Promise<void>; signal?: AbortSignal } = {},
  ): Promise<GrpoStepMetrics[]> {
    const { steps, startStep, maxAsync } = this.options;
    await this.prepareReference();
    const history: GrpoStepMetrics[] = [];
    this.signal = hooks.signal;
    this.rolloutAbort = new AbortController();
    const stopRollouts = () => {
      if (this.rolloutHolds === 0) this.rolloutAbort.abort();
    };
    if (hooks.signal?.aborted) stopRollouts();
    hooks.signal?.addEventListener('abort', stopRollouts);
    const pending = this.pending;
    for (const saved of this.options.rolloutsAhead ?? []) {
      if (saved.step < steps)
        pending.push({
          step: saved.step,
          batch: Promise.resolve({ step: saved.step, trajectories: saved.trajectories, sampledAtVersion: this.policy.policyVersion - saved.versionsBehind, sampleMs: saved.sampleMs }),
        });
    }
    let nextToSample = startStep + pending.length;
    let previousStepEnded = now();
    try {
      for (let step = startStep; step < steps; step++) {
        if (hooks.signal?.aborted) break;
        while (nextToSample < steps && nextToSample <= step + maxAsync) {
          const batch = this.sampleStep(nextToSample, this.rolloutAbort.signal);
          // A batch sampled ahead may fail (a stopped sandbox rejects its rollouts) while the run waits
          // for an earlier one or trains: whoever awaits it later gets the error; until then it is no
          // unhandled rejection (in the engine worker, an uncaught "stopped" after Stop).
          batch.catch(() => {});
          pending.push({ step: nextToSample, batch });
          nextToSample++;
        }
        const batch = await pending.shift()!.batch;
        if (hooks.signal?.aborted) break;
        const metrics = await this.trainStep(batch, previousStepEnded);
        previousStepEnded = now();
        history.push(metrics);
        await hooks.onStep?.(metrics);
        if (this.updatePending) {
          // Each step samples with one weights version, whatever the timing: the rollouts already
          // started (steps up to step + maxAsync) finish with the weights they began with, and only
          // then does the policy take the new ones, for the next step to start.
          await Promise.all(pending.map((p) => p.batch));
          await this.policy.syncWeights();
          this.updatePending = false;
        }
        await hooks.onSynced?.(metrics);
      }
    } catch (error) {
      // The run fails (e.g. a fatal scoring error): the rollouts sampled ahead would only ask the same broken judge again.
      this.rolloutAbort.abort();
      throw error;
    } finally {
      // Rollouts sampled ahead are not trained on when the run stops; let them settle quietly.
      await Promise.allSettled(pending.map((p) => p.batch));
      pending.length = 0;
      hooks.signal?.removeEventListener('abort', stopRollouts);
      // Stopped between an update and its sync: sync now, so the policy answers with the trained weights.
      if (this.updatePending) {
        this.updatePending = false;
        await this.policy.syncWeights();
      }
    }
    return history;
  }

  /**
   * The rollouts already started for the steps after the last one trained (call it from `onStep`,
   * between two updates, to checkpoint them): waits for them and returns them JSON-safe, or null
   * when some were aborted (the run was stopped before), so they cannot be reused. A stop that
   * comes while it waits takes effect once they are in.
   */
  async rolloutsAhead(): Promise<SavedRolloutBatch[] | null> {
    const batches = await this.holdingRollouts(() => Promise.all(this.pending.map((p) => p.batch)));
    if (batches.some((batch) => batch.trajectories.some((t) => t.stopReason === 'aborted'))) return null;
    return batches.map((batch) => ({
      step: batch.step,
      trajectories: batch.trajectories.map(savedTrajectory),
      versionsBehind: this.policy.policyVersion + (this.updatePending ? 1 : 0) - batch.sampledAtVersion,
      sampleMs: batch.sampleMs,
    }));
  }

  /** Runs `wait` (a wait for the rollouts sampled ahead) with a stop deferred until it is over: a stop then aborts nothing those rollouts still need. */
  private async holdingRollouts<T>(wait: () => Promise<T>): Promise<T> {
    this.rolloutHolds++;
    try {
      return await wait();
    } finally {
      this.rolloutHolds--;
      if (this.rolloutHolds === 0 && this.signal?.aborted) this.rolloutAbort.abort();
    }
  }

  /** With β > 0 and the backend as reference under full fine-tuning: freezes the weights GRPO starts from (step 0), or checks that a resumed run restored them. */
  private async prepareReference(): Promise<void> {
    if (this.options.klBeta <= 0 || this.options.reference || this.backend.lora !== null) return;
    if (this.options.startStep > 0) {
      if ((await this.backend.getReference()) !== null) return;
      throw new Error(
        `GRPO: a full fine-tuning run with KL (β ${this.options.klBeta}) resuming at step ${this.options.startStep} needs the reference weights it started from; restore them from the checkpoint (backend.setReference) first`,
      );
    }
    const parameters = await this.backend.getParameters();
    await this.backend.setReference(parameters);
  }

  /**
   * Rolls out G completions for each task of `step`, scores each finished group with the group
   * rewards, and, with dynamic sampling, draws more tasks (in a fixed order) while groups come back
   * with equal rewards, up to maxTasksPerStep tasks.
   */
  private async sampleStep(step: number, signal?: AbortSignal): Promise<RolloutBatch> {
    const { tasksPerStep, groupSize, seed, maxTasksPerStep } = this.options;
    const started = now();
    const sampledAtVersion = this.policy.policyVersion;
    // The step's tasks, drawn now (before any await) from the tasks as they stand: every rollout of
    // the step rolls out the task drawn here, even one that starts after the tasks changed.
    const numTasks = this.source.numTasks;
    const maxExtra = this.options.dynamicSampling ? Math.max(0, maxTasksPerStep - tasksPerStep) : 0;
    const regular = this.drawTasks(taskIndicesForStep(step, tasksPerStep, numTasks, seed));
    const extra = this.drawTasks(extraTaskIndicesForStep(step, maxExtra, numTasks, seed));
    const regularSeeds = regular.map((_, group) => seed * 7919 + (step * tasksPerStep + group) * groupSize);
    const trajectories = await this.rolloutGroups(regular, regularSeeds, step, signal);
    if (this.options.dynamicSampling && !signal?.aborted) {
      // Extra groups' sampling seeds come from a range of their own, so they never repeat a regular group's.
      const extraSeed = (j: number) => seed * 7919 + 1_000_000_007 + (step * maxExtra + j) * groupSize;
      let drawn = 0;
      // A fatal scoring error (a judge that is unreachable or refuses) fails every group alike: draw no more.
      // Nor when the rewards measure nothing (every group is flat at 0 and always will be): the step fails on them.
      while (drawn < maxExtra && !signal?.aborted && !firstFatalScoringError(trajectories) && !brokenRewardsReason(trajectories, this.source.rewardWeights ?? {})) {
        const informative = findGroupsWithoutSignal(
          trajectories.map((t) => t.reward),
          trajectories.map(usableTurnRewards),
          groupSize,
        ).filter((flat) => !flat).length;
        const wanted = Math.min(tasksPerStep - informative, maxExtra - drawn);
        if (wanted <= 0) break;
        const tasks = extra.slice(drawn, drawn + wanted);
        trajectories.push(
          ...(await this.rolloutGroups(
            tasks,
            tasks.map((_, j) => extraSeed(drawn + j)),
            step,
            signal,
          )),
        );
        drawn += wanted;
      }
    }
    return { step, trajectories, sampledAtVersion, sampleMs: now() - started };
  }

  /** Each task index with its task as the source has it now (no task where the source cannot say: it looks the index up when it rolls out). */
  private drawTasks(taskIndices: number[]): DrawnTask[] {
    return taskIndices.map((taskIndex) => ({ taskIndex, task: this.source.taskAt?.(taskIndex) }));
  }

  /** Rolls out G completions of each drawn task (group g's rollout i samples with seed seeds[g] + i), concurrently, then adds group rewards; group after group. */
  private async rolloutGroups(tasks: DrawnTask[], seeds: number[], step: number, signal?: AbortSignal): Promise<ScoredTrajectory[]> {
    const { groupSize, temperature, topP, maxTokens } = this.options;
    const jobs = tasks.flatMap(({ taskIndex, task }, group) => Array.from({ length: groupSize }, (_, i) => ({ taskIndex, task, seed: seeds[group]! + i })));
    const trajectories = new Array<ScoredTrajectory>(jobs.length);
    const concurrency = this.options.concurrency ?? jobs.length;
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const index = next++;
        const job = jobs[index]!;
        trajectories[index] = await this.source.rollout(
          job.taskIndex,
          { temperature, max_tokens: maxTokens, seed: job.seed, ...(topP !== undefined ? { top_p: topP } : {}) },
          { signal, step, ...(job.task ? { task: job.task } : {}) },
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
    const scoreGroup = this.source.scoreGroup?.bind(this.source);
    // Stopped rollouts are never trained on: do not ask the group rewards (a judge, perhaps) about them.
    if (!scoreGroup || signal?.aborted) return trajectories;
    const groups = tasks.map((_, group) => trajectories.slice(group * groupSize, (group + 1) * groupSize));
    return (await Promise.all(groups.map((group) => scoreGroup(group)))).flat();
  }

  /** Scores → advantages → token batch → accumulated clipped-PG gradient → one AdamW step. */
  private async trainStep(sampled: RolloutBatch, previousStepEnded: number): Promise<GrpoStepMetrics> {
    const started = now();
    const o = this.options;
    // Rollouts older than the bound: sampled again with the current weights, or trained on with less weight.
    let batch = sampled;
    let stale: GrpoStepMetrics['stale'];
    const sampledStaleness = this.policy.policyVersion - sampled.sampledAtVersion;
    if (sampledStaleness > o.maxStaleness) {
      if (o.staleRollouts === 'resample') {
        batch = await this.sampleStep(sampled.step, this.rolloutAbort.signal);
        stale = { resampled: sampled.trajectories.length, lossWeight: 1 };
      } else {
        stale = { resampled: 0, lossWeight: 0.5 ** (sampledStaleness - o.maxStaleness) };
      }
    }
    const lossWeight = stale?.lossWeight ?? 1;
    const { trajectories } = batch;
    const failed = trajectories.filter((t) => t.errors.some((e) => e.source !== 'reward') && t.turns.length === 0);
    if (failed.length === trajectories.length) {
      throw new TrainingError(`every rollout of step ${batch.step} failed; the first error: ${failed[0]?.errors[0]?.message ?? 'unknown'}`);
    }
    // A fatal scoring error (an unreachable or refusing judge) would train on rewards of 0: stop the run instead.
    const fatalScoring = firstFatalScoringError(trajectories);
    if (fatalScoring) throw new TrainingError(`step ${batch.step}: ${fatalScoring.message}; the run stops rather than train on rewards that were never given`);
    // Every weighted reward function failed in every rollout: the rewards are the zeros scored for the failures.
    checkRewardsMeasure(`GRPO step ${batch.step + 1}`, trajectories, this.source.rewardWeights);

    const rewards = trajectories.map((t) => t.reward);
    const advantages = computeAdvantages(rewards, o.groupSize, { scaleRewards: o.scaleRewards });
    const turnRewards = trajectories.map(usableTurnRewards);
    const withTurnRewards = turnRewards.some((values) => values !== undefined);
    if (withTurnRewards && o.importanceSampling === 'sequence') {
      throw new TrainingError(
        `the rubric scores each turn (turn rewards), but importanceSampling 'sequence' (GSPO) gives a sequence one ratio and one advantage; use importanceSampling 'token', or remove the turn rewards`,
      );
    }
    const turnAdvantages = withTurnRewards ? computeTurnAdvantages(turnRewards, o.groupSize, { scaleRewards: o.scaleRewards, credit: o.turnCredit }) : undefined;
    const uninformative = findGroupsWithoutSignal(rewards, turnRewards, o.groupSize);
    const truncated = trajectories.map(isTruncatedByLength);
    const sequences: TrainSequence[] = [];
    let groupsDropped = 0;
    for (let group = 0; group < uninformative.length; group++) {
      if (o.dropUninformativeGroups && uninformative[group]) {
        groupsDropped += 1;
        continue;
      }
      for (let i = group * o.groupSize; i < (group + 1) * o.groupSize; i++) {
        if (o.maskTruncated && truncated[i]) continue;
        const turns = trajectories[i]!.turns.map((turn) => turn.tokens);
        if (turns.length === 0 || turns.some((tokens) => tokens === undefined)) continue;
        sequences.push(buildTrainSequence(turns as NonNullable<(typeof turns)[number]>[], advantages[i]!, turnRewards[i] ? turnAdvantages![i] : undefined));
      }
    }

    const lengths = trajectories.map((t) => t.turns.reduce((s, turn) => s + (turn.tokens?.completionIds.length ?? turn.usage?.completion_tokens ?? 0), 0));
    const tokensSampled = lengths.reduce((a, b) => a + b, 0);
    const sampledEntropies = sequences.flatMap((s) => s.entropies!.filter((_, t) => s.sampled[t] === 1).map(Math.fround));
    const learningRate = learningRateAt(batch.step, o.schedule);
    const base = {
      step: batch.step,
      ...rewardStats(trajectories),
      advantage: { meanAbs: mean(advantages.map(Math.abs)), std: Math.sqrt(mean(advantages.map((a) => a * a))) },
      entropy: mean(sampledEntropies),
      learningRate,
      tokensSampled,
      tokensPerSecond: batch.sampleMs > 0 ? (tokensSampled * 1000) / batch.sampleMs : 0,
      staleness: this.policy.policyVersion - batch.sampledAtVersion,
      ...(stale ? { stale } : {}),
      completionLength: { mean: mean(lengths), max: lengths.length > 0 ? Math.max(...lengths) : 0 },
      truncatedFraction: mean(truncated.map((t) => (t ? 1 : 0))),
      zeroStdFraction: mean(uninformative.map((flat) => (flat ? 1 : 0))),
      tasksDrawn: uninformative.length,
      rollouts: trajectories.length,
      rolloutsWithErrors: trajectories.filter((t) => t.errors.length > 0).length,
      groupsDropped,
      ...(firstError(trajectories) ? { firstError: firstError(trajectories) } : {}),
    };
    type Update = { loss: number; kl: number; clipFraction: number; clipFractionLow: number; clipFractionHigh: number; echoLoss: number; gradNorm: number; tokensTrained: number; skipped?: string };
    const finish = (update: Update): GrpoStepMetrics => {
      const ended = now();
      const scoringMs = trajectories.reduce((sum, t) => sum + t.timings.scoringMs, 0);
      return { ...base, ...update, timings: { sampleMs: batch.sampleMs, updateMs: ended - started, stepMs: ended - previousStepEnded, scoringMs } };
    };

    if (sequences.length === 0) {
      const why = groupsDropped === uninformative.length ? 'every group had equal rewards (no learning signal)' : 'no rollout was left to train on (all truncated, or without token data)';
      return finish({ loss: 0, kl: 0, clipFraction: 0, clipFractionLow: 0, clipFractionHigh: 0, echoLoss: 0, gradNorm: 0, tokensTrained: 0, skipped: why });
    }

    const totalLossTokens = sequences.reduce((sum, s) => sum + s.sampled.reduce((a, b) => a + b, 0), 0);
    const totalEchoTokens = sequences.reduce((sum, s) => sum + (s.environment ?? []).reduce((a, b) => a + b, 0), 0);
    const threshold = o.entropyTopQ < 1 ? entropyThreshold(sampledEntropies, o.entropyTopQ) : -Infinity;
    const microBatchSize = o.microBatchFor ? o.microBatchFor(trainingLength(sequences, o.maxSequenceLength)) : o.microBatchSize;
    if (!(Number.isInteger(microBatchSize) && microBatchSize > 0)) throw new Error(`the micro-batch must be a positive integer, got ${microBatchSize}`);
    const microBatches = Math.ceil(sequences.length / microBatchSize);
    await this.backend.zeroGrad();
    let loss = 0;
    let klSum = 0;
    let clipped = 0;
    let clippedLow = 0;
    let clippedHigh = 0;
    let lossTokens = 0;
    let echoNllSum = 0;
    let echoTokens = 0;
    for (let start = 0; start < sequences.length; start += microBatchSize) {
      const micro = buildTrainBatch(sequences.slice(start, start + microBatchSize), { padId: o.padId, ...(o.maxSequenceLength ? { maxLength: o.maxSequenceLength } : {}) });
      const logprobs = await this.backend.logprobs(micro.ids, micro.targets, micro.B, micro.T, o.temperature);
      const reference =
        o.klBeta > 0
          ? await (o.reference
              ? o.reference.logprobs(micro.ids, micro.targets, micro.B, micro.T, o.temperature)
              : this.backend.logprobs(micro.ids, micro.targets, micro.B, micro.T, o.temperature, { weights: 'reference' }))
          : undefined;
      const normalizer = lossNormalizer(o.lossType, { stepTokens: totalLossTokens, microTokens: micro.numLossTokens, microBatches, sequences: sequences.length, maxTokens: o.maxTokens });
      const tokenMask = o.entropyTopQ < 1 ? entropyMask(micro, threshold) : undefined;
      const result = grpoLoss(
        logprobs,
        micro,
        {
          clipLow: o.clipLow,
          clipHigh: o.clipHigh,
          klBeta: o.klBeta,
          normalizer,
          aggregation: o.lossType === 'grpo' ? 'sequence' : 'token',
          importanceSampling: o.importanceSampling,
          ...(tokenMask ? { tokenMask } : {}),
          ...(o.echoWeight > 0 && totalEchoTokens > 0 ? { echoWeight: o.echoWeight, echoNormalizer: totalEchoTokens } : {}),
        },
        reference,
      );
      const weights = lossWeight === 1 ? result.weights : result.weights.map((w) => w * lossWeight);
      await this.backend.backward(micro.ids, micro.targets, weights, micro.B, micro.T, o.temperature);
      loss += result.loss * lossWeight;
      klSum += result.klSum;
      clipped += result.clippedTokens;
      clippedLow += result.clippedLow;
      clippedHigh += result.clippedHigh;
      lossTokens += tokenMask ? tokenMask.reduce((a, b) => a + b, 0) : result.lossTokens;
      echoNllSum += result.echoNllSum;
      echoTokens += result.echoTokens;
    }
    const fraction = (count: number) => (totalLossTokens > 0 ? count / totalLossTokens : 0);
    const metrics = {
      kl: fraction(klSum),
      clipFraction: fraction(clipped),
      clipFractionLow: fraction(clippedLow),
      clipFractionHigh: fraction(clippedHigh),
      echoLoss: echoTokens > 0 ? echoNllSum / echoTokens : 0,
    };
    const gradNorm = await this.backend.gradNorm();
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
      await this.backend.zeroGrad();
      return finish({
        loss,
        ...metrics,
        gradNorm,
        tokensTrained: lossTokens,
        skipped: `non-finite ${Number.isFinite(loss) ? 'gradient' : 'loss'}; the update was skipped and the last good weights kept`,
      });
    }
    // Rollouts sampled ahead may read the live weights (the WebGPU decoder): they finish before the
    // update lands, and a stop meanwhile waits for them, so the checkpoint after this step keeps them.
    await this.holdingRollouts(() => Promise.allSettled(this.pending.map((p) => p.batch)));
    await this.backend.step({ lr: learningRate, beta1: o.beta1, beta2: o.beta2, eps: o.eps, weightDecay: o.weightDecay, maxGradNorm: o.maxGradNorm });
    await this.backend.zeroGrad();
    this.updatePending = true;
    return finish({ loss, ...metrics, gradNorm, tokensTrained: lossTokens });
  }
}

/** Z of a micro-batch's loss for each loss type (see GrpoOptions.lossType). */
export function lossNormalizer(lossType: LossType, counts: { stepTokens: number; microTokens: number; microBatches: number; sequences: number; maxTokens: number }): number {
  switch (lossType) {
    case 'dapo':
      return Math.max(1, counts.stepTokens);
    case 'bnpo':
      return Math.max(1, counts.microTokens) * counts.microBatches;
    case 'grpo':
      return counts.sequences;
    case 'dr_grpo':
      return counts.sequences * counts.maxTokens;
  }
}

/** Whether a rollout was cut by the token limit (a turn that ended on max_tokens), as TRL's mask_truncated_completions means it. */
function isTruncatedByLength(trajectory: Trajectory): boolean {
  return trajectory.stopReason === 'length' || trajectory.turns.some((turn) => turn.finishReason === 'length');
}

/** Refuses settings that cannot work, with the setting's name. */
function validateOptions(o: ResolvedGrpoOptions): void {
  if (!(o.klBeta >= 0)) throw new Error(`GRPO: klBeta must be ≥ 0, got ${o.klBeta}`);
  if (!LOSS_TYPES.includes(o.lossType)) throw new Error(`GRPO: lossType must be one of ${LOSS_TYPES.join(', ')}, got ${String(o.lossType)}`);
  if (!['group', 'batch', 'none'].includes(o.scaleRewards)) throw new Error(`GRPO: scaleRewards must be group, batch or none, got ${String(o.scaleRewards)}`);
  if (!TURN_CREDITS.includes(o.turnCredit)) throw new Error(`GRPO: turnCredit must be ${TURN_CREDITS.join(' or ')}, got ${String(o.turnCredit)}`);
  if (!['token', 'sequence'].includes(o.importanceSampling)) throw new Error(`GRPO: importanceSampling must be token or sequence, got ${String(o.importanceSampling)}`);
  if (!(o.entropyTopQ > 0 && o.entropyTopQ <= 1)) throw new Error(`GRPO: entropyTopQ must be in (0, 1], got ${o.entropyTopQ}`);
  if (!(o.maxStaleness >= 0)) throw new Error(`GRPO: maxStaleness must be ≥ 0, got ${o.maxStaleness}`);
  if (!['resample', 'downweight'].includes(o.staleRollouts)) throw new Error(`GRPO: staleRollouts must be resample or downweight, got ${String(o.staleRollouts)}`);
  if (!(o.echoWeight >= 0)) throw new Error(`GRPO: echoWeight must be ≥ 0, got ${o.echoWeight}`);
  if (o.dynamicSampling && !(Number.isInteger(o.maxTasksPerStep) && o.maxTasksPerStep >= o.tasksPerStep)) {
    throw new Error(`GRPO: maxTasksPerStep must be an integer ≥ tasksPerStep (${o.tasksPerStep}), got ${o.maxTasksPerStep}`);
  }
}

/**
 * A rollout's turn rewards when they can be trained on: finite numbers, one per sampled turn. The
 * rubric guarantees that; a rollout from environment code that built its own trajectory may not,
 * and then gets its outcome advantage only.
 */
function usableTurnRewards(trajectory: Trajectory): number[] | undefined {
  const values: unknown = trajectory.turnRewards;
  if (!Array.isArray(values) || values.length !== trajectory.turns.length) return undefined;
  return values.every((value) => typeof value === 'number' && Number.isFinite(value)) ? (values as number[]) : undefined;
}

/** A trajectory without what a checkpoint cannot hold: the environment's state (kept to the transcript) and its info. */
function savedTrajectory(trajectory: ScoredTrajectory): ScoredTrajectory {
  const { state: _state, info: _info, ...rest } = trajectory;
  return { ...rest, info: {}, state: { prompt: trajectory.prompt, completion: trajectory.completion, info: {}, turn: trajectory.turns.length } };
}

function rewardStats(trajectories: ScoredTrajectory[]): Pick<GrpoStepMetrics, 'reward' | 'rewards' | 'passRate'> {
  const rewards = trajectories.map((t) => t.reward);
  const m = mean(rewards);
  const names = [...new Set(trajectories.flatMap((t) => Object.keys(t.scores)))];
  return {
    reward: { mean: m, std: Math.sqrt(mean(rewards.map((r) => (r - m) ** 2))) },
    rewards: Object.fromEntries(names.map((name) => [name, mean(trajectories.map((t) => t.scores[name] ?? 0))])),
    passRate: mean(trajectories.map((t) => (t.passed ? 1 : 0))),
  };
}

function firstError(trajectories: Trajectory[]): string | undefined {
  const error = trajectories.flatMap((t) => t.errors)[0];
  return error ? `${error.source} ${error.name}: ${error.message}` : undefined;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function now(): number {
  return globalThis.performance?.now() ?? Date.now();
}

/** The first fatal reward error of a batch (a judge that is unreachable or refuses, per rollout or per group), whose rewards of 0 were never really given. */
function firstFatalScoringError(trajectories: readonly ScoredTrajectory[]): RolloutError | undefined {
  for (const trajectory of trajectories) {
    const fatal = trajectory.errors.find((error) => error.source === 'reward' && error.fatal);
    if (fatal) return fatal;
  }
  return undefined;
}
