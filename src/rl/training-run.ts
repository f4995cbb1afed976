/**
 * A training session in one process (`tabrl train`, `npm run bench:learn`, the nano scripts): the
 * environment is here, so its rollouts come from `environmentRollouts`, its measurements from
 * `evaluate()` and its demonstrations from an expert (or teacher) client rolled out through it. It
 * builds those parts around the model and runs the one training session (training-session.ts);
 * the engine worker builds its own parts around the same session. It knows nothing of its caller.
 */
import { evaluate, MultiTurnEnv, type ChatClient, type Environment, type ToolSchema } from '../envs/index.ts';
import type { Tokenizer } from '../gpu/io/tokenizer.ts';
import type { Decoder } from '../gpu/inference/decoder.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { rubricRewardWeights } from '../envs/broken-rewards.ts';
import { BrokenRewardsError, checkRewardsMeasure, environmentRollouts, type GrpoStepMetrics } from './grpo-trainer.ts';
import { makeWarmupData } from './sft-data.ts';
import type { SftStepMetrics } from './sft-trainer.ts';
import { tokenizeTranscript } from './tokenize-transcript.ts';
import { runTrainingSession, type CheckpointStore, type TrainingEvaluation, type TrainingPosition, type TrainingReport, type TrainingRunOptions } from './training-session.ts';

export type { TrainingEvaluation, TrainingPosition, TrainingReport, TrainingRunOptions, WarmupOptions } from './training-session.ts';

/** Callbacks of a training run. */
export interface TrainingRunHooks {
  onPhase?: (phase: 'evaluate' | 'demonstrations' | 'sft' | 'grpo', detail: string) => void;
  onEvaluation?: (evaluation: TrainingEvaluation) => void;
  onSftStep?: (metrics: SftStepMetrics) => void | Promise<void>;
  onGrpoStep?: (metrics: GrpoStepMetrics, policy: ChatClient) => void | Promise<void>;
  /** After onGrpoStep, once the policy samples with the step's new weights (before the step's checkpoint): measure the policy here, not in onGrpoStep, which comes before the sync. */
  onGrpoPolicySynced?: (metrics: GrpoStepMetrics, policy: ChatClient) => void | Promise<void>;
  /** Save the backend's weights and optimizer state now, as position `position` (awaited before training goes on). */
  onCheckpoint?: (position: TrainingPosition) => void | Promise<void>;
  /** Where the session's checkpoints go (replaces onCheckpoint): `tabrl train` passes its file store. */
  checkpoints?: CheckpointStore;
  signal?: AbortSignal;
}

/** The model a run trains: its backend and tokenizer, and optionally the decoder its measurements and rollouts sample with (openModel's `createDecoder` on WebGPU). */
export interface TrainingModel {
  backend: ModelBackend;
  tokenizer: Tokenizer;
  /** Builds the sampling decoder over the backend's weights (default: the CPU decoder, which copies them at each sync); the WebGPU decoder keeps sampling on the GPU. */
  createDecoder?: (backend: ModelBackend) => Promise<Decoder>;
}

/**
 * The tools the model sees in `env`'s prompts, which the warm-up's transcripts must be rendered with
 * (as sampling renders them): a MultiTurnEnv's own, or those an environment running in another
 * process described when it loaded (`info.tools`: tabrl's isolated environment files); none otherwise.
 */
export function environmentTools(env: Environment): ToolSchema[] | undefined {
  const own = env instanceof MultiTurnEnv ? env.tools : undefined;
  if (own) return own;
  const described = (env as { info?: { tools?: unknown } }).info?.tools;
  return Array.isArray(described) && described.length > 0 ? (described as ToolSchema[]) : undefined;
}

/** Runs measure → warm-up → measure → GRPO → measure on one model, with `env` in this process. */
export async function runTraining(env: Environment, model: TrainingModel, expert: ChatClient | null, options: TrainingRunOptions, hooks: TrainingRunHooks = {}): Promise<TrainingReport> {
  const policy = new LocalChatClient({
    backend: model.backend,
    tokenizer: model.tokenizer,
    defaultMaxTokens: options.maxTokens,
    ...(model.createDecoder ? { createDecoder: model.createDecoder } : {}),
  });
  const { signal } = hooks;
  let measuredRecords: Awaited<ReturnType<typeof evaluate>>['records'] = [];
  return runTrainingSession(
    {
      backend: model.backend,
      policy,
      padId: model.tokenizer.padId,
      // Made when GRPO starts, as the environment's dataset is then.
      rollouts: () => environmentRollouts(env, policy),
      measure: async (label) => {
        const result = await evaluate(env, policy, {
          numTasks: options.evalTasks,
          samplingArgs: { temperature: options.evalTemperature ?? 0, max_tokens: options.maxTokens, seed: options.seed },
          signal,
        });
        if (signal?.aborted) return null;
        measuredRecords = result.records;
        return { label, summary: result.summary };
      },
      // Before training, rewards that measure nothing stop the run (training would be on zeros), once the measurement is reported; the last one is only reported.
      checkMeasurement: ({ label }) => {
        if (label !== 'after GRPO') checkRewardsMeasure(label === 'before' ? 'the measurement before training' : `the measurement ${label}`, measuredRecords, rubricRewardWeights(env.rubric));
      },
      demonstrations: async () => {
        const warmup = options.warmup!;
        if (!expert) throw new Error(`${env.name}: an SFT warm-up needs demonstrations, but there is no expert or teacher client`);
        const data = await makeWarmupData(env, expert, { numTasks: warmup.demonstrations, concurrency: 16, samplingArgs: { seed: options.seed }, signal });
        if (data.brokenRewards)
          throw new BrokenRewardsError(
            `the ${data.rollouts} expert demonstrations: ${data.brokenRewards}; the run stops rather than warm up on rollouts picked by rewards that measure nothing. Fix the reward function and train again`,
          );
        if (data.examples.length === 0) throw new Error(`${env.name}: none of the ${data.rollouts} expert rollouts passed, so there is nothing to warm up on`);
        const tools = environmentTools(env);
        return data.examples.map((example) => tokenizeTranscript(model.tokenizer, example.messages, tools));
      },
      checkpoints: hooks.checkpoints ?? { save: async (position) => hooks.onCheckpoint?.(position) },
      reporter: {
        ...(hooks.onPhase ? { phase: hooks.onPhase } : {}),
        ...(hooks.onEvaluation ? { evaluation: hooks.onEvaluation } : {}),
        ...(hooks.onSftStep ? { sftStep: hooks.onSftStep } : {}),
        ...(hooks.onGrpoStep ? { grpoStep: (metrics: GrpoStepMetrics) => hooks.onGrpoStep!(metrics, policy) } : {}),
        ...(hooks.onGrpoPolicySynced ? { grpoPolicySynced: (metrics: GrpoStepMetrics) => hooks.onGrpoPolicySynced!(metrics, policy) } : {}),
      },
      ...(signal ? { signal } : {}),
    },
    options,
  );
}
