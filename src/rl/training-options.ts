/**
 * The conversions from a row of training settings (training-settings.ts) to the trainers' options:
 * a whole run's `TrainingRunOptions`, the warm-up's SFT, and GRPO's. These are the only places where a
 * knob's name in the table becomes a trainer's option name (`sftLr` → `lr`, `grpoLr` → `schedule.lr`, `groupSize`
 * → `groupSize`, `keepEqualGroups` → `!dropUninformativeGroups`). Pure: no trainer runs here.
 */
import type { GrpoOptions } from './grpo-trainer.ts';
import type { TrainingRunOptions, WarmupOptions } from './training-run.ts';
import type { TrainingSettings } from './training-settings.ts';

/** GRPO's options as the table's knobs set them, those every caller reads set for sure. */
export type GrpoKnobOptions = Omit<GrpoOptions, 'steps' | 'seed' | 'maxTokens' | 'startStep' | 'rolloutsAhead' | 'padId' | 'reference' | 'microBatchFor'> &
  Required<Pick<GrpoOptions, 'tasksPerStep' | 'groupSize' | 'maxAsync' | 'schedule'>>;

/** GRPO's options of one phase, as a run or the engine passes them to GrpoTrainer (the caller adds seed, maxTokens, padId and the resume position). */
export type GrpoPhaseOptions = GrpoKnobOptions & { steps: number };

/** The warm-up's SFT options that the table's knobs set, named as a run's warm-up and the engine's SFT job (`EngineSftOptions`) take them. */
export interface SftKnobOptions {
  steps: number;
  batchSize: number;
  lr: number;
}

/** The warm-up's SFT options from the settings (null when SFT steps are 0). */
export function warmupOptionsFrom(settings: TrainingSettings): WarmupOptions | null {
  if (settings.sftSteps === 0) return null;
  return { demonstrations: settings.demonstrations, ...sftKnobOptions(settings) };
}

/** The SFT trainer's options that the table's knobs set (`sftSteps` → `steps`, `sftBatchSize` → `batchSize`, `sftLr` → `lr`); the tab's warm-up adds the seed and tools. */
export function sftKnobOptions(settings: TrainingSettings): SftKnobOptions {
  return { steps: settings.sftSteps, batchSize: settings.sftBatchSize, lr: settings.sftLr };
}

/** GRPO's options from the settings, every knob set (null when GRPO steps are 0). */
export function grpoOptionsFrom(settings: TrainingSettings): GrpoPhaseOptions | null {
  if (settings.grpoSteps === 0) return null;
  return { ...grpoKnobOptions(settings), steps: settings.grpoSteps };
}

/**
 * The GRPO trainer's options that the table's knobs set, for `steps` steps: the trainer takes its
 * own defaults from these with the table's defaults (GrpoTrainer), so no knob has a second default.
 */
export function grpoKnobOptions(settings: TrainingSettings, steps = settings.grpoSteps): GrpoKnobOptions {
  return {
    tasksPerStep: settings.tasksPerStep,
    groupSize: settings.groupSize,
    temperature: settings.temperature,
    schedule: {
      lr: settings.grpoLr,
      ...(settings.lrWarmup > 0 ? { warmupSteps: settings.lrWarmup } : {}),
      ...(settings.lrSchedule === 'cosine' ? { kind: 'cosine', totalSteps: steps } : {}),
    },
    maxAsync: settings.maxAsync,
    klBeta: settings.klBeta,
    lossType: settings.lossType,
    scaleRewards: settings.scaleRewards,
    turnCredit: settings.turnCredit,
    importanceSampling: settings.importanceSampling,
    clipLow: settings.clipLow,
    clipHigh: settings.clipHigh,
    maskTruncated: settings.maskTruncated,
    dropUninformativeGroups: !settings.keepEqualGroups,
    dynamicSampling: settings.dynamicSampling,
    ...(settings.maxTasksPerStep !== null ? { maxTasksPerStep: settings.maxTasksPerStep } : {}),
    entropyTopQ: settings.entropyTopQ,
    ...(settings.maxStaleness !== null ? { maxStaleness: settings.maxStaleness } : {}),
    staleRollouts: settings.staleRollouts,
    echoWeight: settings.echoWeight,
    ...(settings.microBatch !== null ? { microBatchSize: settings.microBatch } : {}),
    maxGradNorm: settings.maxGradNorm,
    weightDecay: settings.weightDecay,
  };
}

/** A whole run's options from the settings: seed, sampling, measurements, warm-up, GRPO and checkpoints. */
export function trainingRunOptionsFrom(settings: TrainingSettings): TrainingRunOptions {
  return {
    seed: settings.seed,
    maxTokens: settings.maxTokens,
    evalTasks: settings.evalTasks,
    ...(settings.evalTemperature !== 0 ? { evalTemperature: settings.evalTemperature } : {}),
    warmup: warmupOptionsFrom(settings),
    grpo: grpoOptionsFrom(settings),
    checkpointEvery: settings.checkpointEvery,
  };
}
