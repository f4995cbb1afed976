/**
 * The one module that owns the engine worker (src/workers/engine.worker.ts): it starts the worker
 * lazily on first use, talks to it through a typed comlink Remote, and turns its API into what the
 * app needs: a ChatClient over the in-tab model (cancelling a request cancels it in the worker),
 * SFT and GRPO jobs with a `signal` that really stops them, progress through proxied callbacks, and
 * weights in and out as transferred buffers. It knows nothing of the DOM or of storage.
 */
import * as Comlink from 'comlink';
import { ChatClientError, type ChatClient, type ChatCompletion, type Message, type SamplingArgs } from '../envs/index.ts';
import type { NamedTensors } from '../gpu/model/backend.ts';

export type { NamedTensors };
import type {
  EngineLoadProgress,
  EngineModelSpec,
  ChatModelChoice,
  CheckpointFiles,
  CheckpointState,
  EngineApi,
  EngineChoice,
  EngineModelExport,
  EngineCheckpointCallback,
  EngineGrpoOptions,
  EngineInfo,
  EngineSftOptions,
  GrpoStepMetrics,
  GrpoStepReport,
  RestoredCheckpoint,
  SftStepMetrics,
} from './engine/protocol.ts';
import type { SandboxTrajectory } from './sandbox/protocol.ts';

export type { LossType } from '../rl/grpo-trainer.ts';
export type { RewardScaling, TurnCredit } from '../rl/advantages.ts';
export type {
  EngineLoadProgress,
  EngineModelSpec,
  ChatModelChoice,
  EngineModelExport,
  CheckpointFiles,
  CheckpointState,
  EngineCheckpointCallback,
  RestoredCheckpoint,
  EngineGrpoOptions,
  EngineInfo,
  EngineMemoryChoice,
  EngineSftOptions,
  EngineTrainingRollout,
  GrpoStepMetrics,
  GrpoStepReport,
  SftStepMetrics,
} from './engine/protocol.ts';

let worker: Worker | null = null;
let remote: Comlink.Remote<EngineApi> | null = null;
let started: Promise<EngineInfo> | null = null;
let nextId = 1;
const errorListeners = new Set<(message: string) => void>();

function engine(): Comlink.Remote<EngineApi> {
  if (!remote) {
    worker = new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name: 'tabrl-engine' });
    worker.addEventListener('error', (event) => {
      for (const listener of errorListeners) listener(`The engine worker failed: ${event.message || 'it could not start'}`);
    });
    remote = Comlink.wrap<EngineApi>(worker);
  }
  return remote;
}

/**
 * The engine the page's URL asks for: `?engine=cpu` the fast CPU backend even where WebGPU exists,
 * `?engine=cpu-reference` the plain-TypeScript reference (the oracle, to compare against); otherwise
 * 'auto' (WebGPU, else the fast CPU backend).
 */
export function engineChoiceFromSearch(search: string): EngineChoice {
  const asked = new URLSearchParams(search).get('engine');
  return asked === 'cpu' || asked === 'cpu-reference' ? asked : 'auto';
}

/** Starts the engine (the worker, its device as the page's URL chooses, and the tiny model from `seed`) once; later calls return the same promise. */
export function startEngine(seed = 0): Promise<EngineInfo> {
  if (!started) {
    const choice = engineChoiceFromSearch(globalThis.location?.search ?? '');
    started = engine().start(
      seed,
      Comlink.proxy((message: string) => {
        for (const listener of errorListeners) listener(message);
      }),
      choice,
    );
    started.catch(() => {
      started = null;
    });
  }
  return started;
}

/** Registers a listener for device loss and worker failures; returns the unsubscribe function. */
export function onEngineError(listener: (message: string) => void): () => void {
  errorListeners.add(listener);
  return () => errorListeners.delete(listener);
}

/** Re-initialises the model's weights and optimizer from `seed` (a new run). */
export async function resetEngine(seed: number): Promise<EngineInfo> {
  await startEngine(seed);
  return engine().reset(seed);
}

/**
 * Replaces the engine's model: tiny from a seed, a real preset (downloaded with progress, then
 * cached) or picked files. `signal` cancels a download. On failure the engine falls back to tiny
 * and this throws saying why. Resolves to the new model's info.
 */
export async function loadEngineModel(spec: EngineModelSpec, hooks: { onProgress?: (progress: EngineLoadProgress) => void; signal?: AbortSignal } = {}): Promise<EngineInfo> {
  await startEngine(spec.seed);
  try {
    const info = await runJob(hooks.signal, (jobId) =>
      engine().loadModel(
        jobId,
        spec,
        Comlink.proxy((progress: EngineLoadProgress) => hooks.onProgress?.(progress)),
      ),
    );
    started = Promise.resolve(info); // startEngine now answers with the loaded model's info
    return info;
  } catch (error) {
    started = null; // the engine holds tiny now (or nothing): ask it again
    await startEngine(spec.seed).catch(() => {});
    throw error;
  }
}

/** A ChatClient answered by the in-tab model in the engine worker ('base': the model before training, initialised from `baseSeed`); aborting a request cancels it there. */
export function createEngineChatClient(model: ChatModelChoice = 'trained', baseSeed?: number): ChatClient {
  return {
    chat: {
      completions: {
        async create(request) {
          const { signal, ...plain } = request;
          if (signal?.aborted) throw new ChatClientError('the request was aborted', 'aborted');
          await startEngine();
          const requestId = nextId++;
          const onAbort = () => void engine().cancel(requestId);
          signal?.addEventListener('abort', onAbort, { once: true });
          try {
            const outcome = await engine().complete(requestId, plain, { model, ...(baseSeed !== undefined ? { baseSeed } : {}) });
            if (outcome.ok) return outcome.completion as ChatCompletion;
            throw new ChatClientError(outcome.message, outcome.kind, outcome.status);
          } finally {
            signal?.removeEventListener('abort', onAbort);
          }
        },
      },
    },
  };
}

/** Runs a job in the engine, aborting it there when `signal` fires. */
async function runJob<T>(signal: AbortSignal | undefined, run: (jobId: number) => Promise<T>): Promise<T> {
  await startEngine();
  const jobId = nextId++;
  const onAbort = () => void engine().abort(jobId);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(jobId);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

function checkpointCallback(onCheckpoint: EngineCheckpointCallback | undefined): EngineCheckpointCallback | undefined {
  return onCheckpoint ? Comlink.proxy((files: CheckpointFiles, nextStep: number) => onCheckpoint(files, nextStep)) : undefined;
}

/** SFT on chat transcripts in the engine; `onSteps` receives metrics as they come (batched, at a bounded rate). */
export function trainSftInEngine(
  transcripts: Message[][],
  options: EngineSftOptions,
  hooks: { onSteps?: (steps: SftStepMetrics[]) => void; onCheckpoint?: EngineCheckpointCallback; signal?: AbortSignal } = {},
): Promise<SftStepMetrics[]> {
  return runJob(hooks.signal, (jobId) =>
    engine().sft(
      jobId,
      transcripts,
      options,
      Comlink.proxy((steps: SftStepMetrics[]) => hooks.onSteps?.(steps)),
      checkpointCallback(hooks.onCheckpoint),
    ),
  );
}

/** Where GRPO's rollouts come from, on the app side: a sandbox that rolls out training task i and scores finished groups. */
export interface AppRolloutSource {
  name: string;
  numTasks: number;
  /** `poolVersion`: with a task pool the app refreshes, the version the task was drawn from (absent: the first). */
  rollout(taskIndex: number, samplingArgs: SamplingArgs, poolVersion?: number): Promise<SandboxTrajectory>;
  /** Adds the environment's group rewards to one task's finished rollouts; absent when it has none. */
  scoreGroup?(group: SandboxTrajectory[]): Promise<SandboxTrajectory[]>;
  /** Awaited after each step once the engine samples with its weights (a task-pool refresh); returns the new number of training tasks, or undefined when the pool did not change. */
  onPolicySynced?(step: number, policyVersion: number): Promise<number | undefined>;
}

/** GRPO in the engine on rollouts made by `source`; `onSteps` receives each step's metrics and rollouts. */
export function trainGrpoInEngine(
  source: AppRolloutSource,
  options: EngineGrpoOptions,
  hooks: { onSteps?: (steps: GrpoStepReport[]) => void; onCheckpoint?: EngineCheckpointCallback; signal?: AbortSignal } = {},
): Promise<GrpoStepMetrics[]> {
  const rollout = Comlink.proxy((taskIndex: number, samplingArgs: SamplingArgs, poolVersion?: number) => source.rollout(taskIndex, samplingArgs, poolVersion));
  const scoreGroup = source.scoreGroup && Comlink.proxy((group: SandboxTrajectory[]) => source.scoreGroup!(group));
  return runJob(hooks.signal, (jobId) =>
    engine().grpo(
      jobId,
      source.name,
      source.numTasks,
      rollout,
      options,
      Comlink.proxy((steps: GrpoStepReport[]) => hooks.onSteps?.(steps)),
      checkpointCallback(hooks.onCheckpoint),
      scoreGroup,
      source.onPolicySynced && Comlink.proxy((step: number, policyVersion: number) => source.onPolicySynced!(step, policyVersion)),
    ),
  );
}

/** Pauses (true) or resumes (false) the running warm-up or training job in the engine; it holds between steps until resumed or stopped. */
export async function pauseEngineJob(paused: boolean): Promise<void> {
  if (!started) return;
  await engine().setPaused(paused);
}

/** The trained model's files: a LoRA model's PEFT adapter, or a fully fine-tuned model's folder. */
export async function exportEngineModel(): Promise<EngineModelExport> {
  await startEngine();
  return engine().exportModel();
}

/** Loads imported model files into the engine's model; throws saying what does not fit. Returns what was loaded, in words. */
export async function importEngineModel(files: CheckpointFiles, label: string): Promise<string> {
  await startEngine();
  // Own copies, since unzipped files may share one buffer (which can be transferred only once).
  const copies: CheckpointFiles = new Map([...files].map(([name, bytes]) => [name, bytes.slice()]));
  return engine().importModel(
    Comlink.transfer(
      copies,
      [...copies.values()].map((bytes) => bytes.buffer as ArrayBuffer),
    ),
    label,
  );
}

/** Loads parameters into the model (from a checkpoint). */
export async function setEngineWeights(weights: NamedTensors): Promise<void> {
  await startEngine();
  await engine().setWeights(
    Comlink.transfer(
      weights,
      [...weights.values()].map((tensor) => tensor.data.buffer as ArrayBuffer),
    ),
  );
}

/** A full checkpoint of the model (weights, AdamW state, and `state` as state.json) as files. */
export async function saveEngineCheckpoint(state: CheckpointState): Promise<CheckpointFiles> {
  await startEngine();
  return engine().saveCheckpoint(state);
}

/** Loads a full checkpoint (weights and optimizer state) into the model; throws naming a missing or corrupt file. The files are copied, not transferred. */
export async function restoreEngineCheckpoint(files: CheckpointFiles): Promise<RestoredCheckpoint> {
  await startEngine();
  return engine().restoreCheckpoint(files);
}
