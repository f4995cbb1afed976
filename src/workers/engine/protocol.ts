/**
 * The contract between the app and the engine worker: the API the worker exposes over comlink
 * (`EngineApi`), the options of its jobs, and the plain data that crosses (step reports, the
 * rollouts of a training step, weights). Everything here is structured-cloneable; callbacks cross
 * as comlink proxies. It holds no model code.
 */
import type { Message, SamplingArgs, ToolSchema } from '../../envs/index.ts';
import type { ModelDownloadProgress } from '../../models/cache.ts';
import type { NamedTensors } from '../../gpu/model/backend.ts';
import type { CheckpointState } from '../../rl/checkpoint.ts';
import type { GrpoStepMetrics } from '../../rl/grpo-trainer.ts';
import type { GrpoPhaseOptions } from '../../rl/training-options.ts';
import type { SftStepMetrics } from '../../rl/sft-trainer.ts';
import type { CompletionOutcome, SandboxChatRequest, SandboxTrajectory } from '../sandbox/protocol.ts';

export type { CheckpointState } from '../../rl/checkpoint.ts';
export type { GrpoStepMetrics } from '../../rl/grpo-trainer.ts';
export type { SftStepMetrics } from '../../rl/sft-trainer.ts';

/** What the engine reports once its model is ready. */
export interface EngineInfo {
  /** What the model runs on, as the app shows it: the WebGPU adapter ("google · swiftshader (software)") or the CPU backend ("CPU (WASM relaxed SIMD, 2 threads)"). */
  adapter: string;
  /** Why the engine runs on the CPU although WebGPU was wanted (no WebGPU, no adapter), or absent. */
  fallback?: string;
  /** The model's id: "tiny", a shipped model's id ("nano", "nano-2m"), a real preset's id (src/models/catalogue.ts) or "local". */
  model: string;
  /** The model's display name (e.g. "SmolLM2-135M-Instruct"). */
  modelName?: string;
  /** Number of parameters of the model. */
  parameters: number;
  /** Number of parameters that train (all of them when fully fine-tuned, the adapters under LoRA). */
  trainableParameters?: number;
  /** The LoRA rank, or null when every parameter trains (full fine-tuning). */
  loraRank?: number | null;
  /** The seed the weights (or the LoRA adapters) were initialised from. */
  seed: number;
  /** For each real preset id: null when this device can hold it, or why it cannot (said before downloading). */
  presetFit?: Record<string, string | null>;
}

/** Where the engine runs its model: 'auto' (WebGPU, else the fast CPU backend), 'cpu' (the fast CPU backend), 'cpu-reference' (the plain-TypeScript oracle). */
export type EngineChoice = 'auto' | 'cpu' | 'cpu-reference';

/**
 * Which model the engine should run: tiny from a seed, a shipped model by id (a pretrained byte-level
 * model the app ships, SHIPPED_MODELS in src/models/shipped-models.ts, fetched from `url`, its folder's
 * URL on the app's own origin), a real preset by id (downloaded and cached), or files the person
 * picked (`File`s clone into the worker).
 */
export type EngineModelSpec =
  { kind: 'tiny'; seed: number } | { kind: 'shipped'; id: string; url: string; seed: number } | { kind: 'preset'; id: string; seed: number } | { kind: 'local'; files: File[]; seed: number };

/** Download progress of a model's files, as the download reports it (the file being read, its bytes and all files' bytes done and total). */
export type EngineLoadProgress = ModelDownloadProgress;

/** SFT settings of a warm-up job. */
export interface EngineSftOptions {
  steps: number;
  batchSize: number;
  lr: number;
  seed: number;
  /** The environment's tools, rendered into the prompt as the chat template does when sampling. */
  tools?: ToolSchema[];
  /** The first step to run (continuing an interrupted warm-up; default 0). */
  startStep?: number;
  /** Send a full checkpoint every this many steps of the job (taken between steps, so it is exact; default never). */
  checkpointEvery?: number;
  /** WebGPU: the GPU memory a step may use, in MiB, that the micro-batch is chosen within (absent or 0: the GPU's default budget). */
  memoryBudgetMiB?: number;
}

/** The micro-batch a WebGPU job chose from its memory budget, in words a person reads: what fits and why one more does not. */
export interface EngineMemoryChoice {
  /** Sequences per backward pass, at T tokens each. */
  microBatch: number;
  T: number;
  budgetMiB: number;
  /** Model state + the batch's buffers, accounted as the backend allocates them. */
  stepMiB: number;
  /** Why not one more: the limit microBatch + 1 passes, or that it is the most asked for. */
  reason: string;
}

/**
 * GRPO settings of a training job: the trainer's options as the table's conversion makes them from
 * the panel's settings (grpoOptionsFrom, src/rl/training-options.ts), passed to GrpoTrainer as they
 * are, plus the job's sampling length, seed and position.
 */
export type EngineGrpoOptions = GrpoPhaseOptions & {
  maxTokens: number;
  seed: number;
  /** The first step to run (continuing an interrupted run; default 0). */
  startStep?: number;
  /** Send a full checkpoint every this many steps of the job (taken between steps, so it is exact; default never). */
  checkpointEvery?: number;
  /** WebGPU: the GPU memory a step may use, in MiB, that the micro-batch is chosen within (absent or 0: the GPU's default budget). */
  memoryBudgetMiB?: number;
  /** The weight of each of the environment's reward functions (group ones included), by name: with them, a step whose weighted functions all failed in every rollout fails the job instead of training on the zeros scored for the failures. */
  rewardWeights?: Record<string, number>;
};

/** One sampled turn of a training rollout: the model's tokens, the text each adds (decoded in the engine, whose tokenizer knows them) and their sampling log-probabilities. */
export interface EngineTurnTokens {
  completionIds: number[];
  /** One string per id (src/gpu/io/token-pieces.ts): joined, the turn's text; '' for a token holding only part of a character. */
  completionPieces: string[];
  completionLogprobs: number[];
}

/** A training rollout as the rollout viewer shows it. */
export interface EngineTrainingRollout {
  taskIndex: number;
  prompt: Message[];
  completion: Message[];
  reward: number;
  scores: Record<string, number>;
  passed: boolean;
  errors: string[];
  turns: EngineTurnTokens[];
  /** The rubric's weighted score of each model turn, when it scores turns (turn reward functions). */
  turnRewards?: number[];
}

/** One GRPO step as it streams to the app: its metrics and the rollouts it trained on. */
export interface GrpoStepReport {
  metrics: GrpoStepMetrics;
  rollouts: EngineTrainingRollout[];
  /** WebGPU: the micro-batch chosen for this step's length (absent on the CPU backends). */
  memory?: EngineMemoryChoice;
}

/** The files of a full checkpoint (weights.safetensors, optimizer.safetensors, state.json; see src/rl/checkpoint.ts), by name. */
export type CheckpointFiles = Map<string, Uint8Array>;

/** What restoring a checkpoint found: its state.json and the optimizer's step count as the backend now holds it. */
export interface RestoredCheckpoint {
  state: CheckpointState;
  /** AdamW's step count read back from the backend after the restore (a check that the optimizer state arrived). */
  optimizerStep: number;
}

/** Receives a full checkpoint taken between two steps of a job; `nextStep` is the job's next step. Its state.json holds only the phase and `nextStep` (`run` is empty). */
export type EngineCheckpointCallback = (files: CheckpointFiles, nextStep: number) => void;

/** Rolls out training task `taskIndex` once (in the app's sandbox) and returns the scored trajectory; `poolVersion` (with a task pool the app refreshes) is the pool the task was drawn from. */
export type EngineRolloutFunction = (taskIndex: number, samplingArgs: SamplingArgs, poolVersion?: number) => Promise<SandboxTrajectory>;

/** Hears that GRPO step `step` is done and the policy samples with its weights (`policyVersion`): where the app refreshes its task pool; returns the number of training tasks from now on (a new pool version), or undefined when the pool did not change. */
type EnginePolicySyncedFunction = (step: number, policyVersion: number) => Promise<number | undefined>;

/** Adds the environment's group rewards to one task's finished rollouts (in the app's sandbox) and returns them scored, in order. */
export type EngineScoreGroupFunction = (group: SandboxTrajectory[]) => Promise<SandboxTrajectory[]>;

/** Which weights answer a chat request: the model before training ('base') or as trained now ('trained', the default). */
export type ChatModelChoice = 'base' | 'trained';

/** Options of a chat request to the engine. */
export interface EngineCompleteOptions {
  /** 'base': a LoRA model with its adapters off (same weights, read in place); the tiny model as it was initialised (a kept copy). */
  model?: ChatModelChoice;
  /** The seed the trained weights were initialised from (a fully fine-tuned model's base is that initialisation; default: the engine's seed). */
  baseSeed?: number;
}

/** The trained model as files: a LoRA model's PEFT adapter ('adapter'), or a fully fine-tuned model's folder ('model'). */
export interface EngineModelExport {
  kind: 'adapter' | 'model';
  /** The model's name, for the archive's name. */
  model: string;
  files: CheckpointFiles;
}

/** The API of the engine worker. */
export interface EngineApi {
  /** Opens the device (`choice`, default 'auto') and builds the tiny model from `seed` (once; later calls return the same info). `onError` hears device loss. */
  start(seed: number, onError: (message: string) => void, choice?: EngineChoice): Promise<EngineInfo>;
  /** Re-initialises the weights (and the optimizer) from `seed`: a fresh tiny model, a shipped model's shipped weights, or fresh LoRA adapters on a real one. */
  reset(seed: number): Promise<EngineInfo>;
  /** Replaces the model (after `start`); `onProgress` hears the download, `abort(jobId)` cancels it. If loading fails, the model loaded before comes back when it needs no download (tiny or a shipped model, with its seed), tiny otherwise, and the error is thrown saying which. */
  loadModel(jobId: number, spec: EngineModelSpec, onProgress: (progress: EngineLoadProgress) => void): Promise<EngineInfo>;
  /** Answers one chat request with the model; `requestId` lets `cancel` stop it. */
  complete(requestId: number, request: SandboxChatRequest, options?: EngineCompleteOptions): Promise<CompletionOutcome>;
  /** Cancels a chat request in flight. */
  cancel(requestId: number): void;
  /** SFT on transcripts (assistant turns trained); `onSteps` receives step metrics at a bounded rate. */
  sft(jobId: number, transcripts: Message[][], options: EngineSftOptions, onSteps: (steps: SftStepMetrics[]) => void, onCheckpoint?: EngineCheckpointCallback): Promise<SftStepMetrics[]>;
  /** GRPO on rollouts of `numTasks` training tasks made by `rollout`, each finished group scored by `scoreGroup` when given (group rewards); `onSteps` receives step reports at a bounded rate; `onPolicySynced`, when given, is awaited after each step's weight sync and may change the training tasks (a refreshed pool). */
  grpo(
    jobId: number,
    name: string,
    numTasks: number,
    rollout: EngineRolloutFunction,
    options: EngineGrpoOptions,
    onSteps: (steps: GrpoStepReport[]) => void,
    onCheckpoint?: EngineCheckpointCallback,
    scoreGroup?: EngineScoreGroupFunction,
    onPolicySynced?: EnginePolicySyncedFunction,
  ): Promise<GrpoStepMetrics[]>;
  /** Stops a job: SFT and GRPO stop before their next step, and their model calls are cancelled. */
  abort(jobId: number): void;
  /** Pauses (true) or resumes (false) the running job: paused, it takes no next step and starts no new rollout; abort still stops it. */
  setPaused(paused: boolean): void;
  /** The trained model's files (adapter or model folder; buffers transferred). */
  exportModel(): Promise<EngineModelExport>;
  /** Loads imported model files (an adapter or a model folder) into the model; throws saying what does not fit (the model is left as it was). Returns what was loaded, in words. */
  importModel(files: CheckpointFiles, label: string): Promise<string>;
  /** Copies of the model's parameters by name (their buffers are transferred). */
  getWeights(): Promise<NamedTensors>;
  /** Overwrites the model's parameters (weights only; the optimizer state stays). */
  setWeights(weights: NamedTensors): Promise<void>;
  /** A full checkpoint of the model now: its weights, AdamW's state and `state` as state.json (buffers transferred). */
  saveCheckpoint(state: CheckpointState): Promise<CheckpointFiles>;
  /** Loads a full checkpoint's weights and optimizer state; throws naming the file that is missing or corrupt (the model is left as it was then). */
  restoreCheckpoint(files: CheckpointFiles): Promise<RestoredCheckpoint>;
}
