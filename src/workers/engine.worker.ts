/**
 * The engine worker: it owns the device (engine/engine-device.ts: WebGPU, or the fast CPU backend
 * when the browser has none) and the in-tab model on it (tiny from a seed or a model the app ships,
 * nano, nano-wordle, nano-tools or nano-2m, from its shipped weights (engine/shipped-model.ts), over the byte tokenizer and
 * fully fine-tuned, or a real checkpoint with LoRA: engine/real-model.ts), answers chat requests with it through LocalChatClient,
 * and trains it: SFT on transcripts and GRPO on rollouts that the app makes in its sandbox (a
 * proxied `rollout()` per training rollout). Step metrics go back at a bounded rate. The app talks
 * to it only through src/workers/engine-bridge.ts. It runs no environment code; the only storage it
 * touches is its own: downloaded model files (src/models/cache.ts) and the device's tuning results
 * (IndexedDB `tabrl-engine`, engine/tuning-store.ts).
 */
import * as Comlink from 'comlink';
import { ChatClientError, type Message } from '../envs/index.ts';
import { ByteTokenizer } from '../gpu/io/byte-tokenizer.ts';
import type { Tokenizer } from '../gpu/io/tokenizer.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import { TINY_CONFIG } from '../gpu/inference/presets.ts';
import type { ModelBackend, NamedTensors } from '../gpu/model/backend.ts';
import { tokenPieces } from '../gpu/io/token-pieces.ts';
import { WebGPUBackend } from '../gpu/webgpu/webgpu-backend.ts';
import { WebGPUDecoder } from '../gpu/webgpu/webgpu-decoder.ts';
import { CHECKPOINT_FORMAT, parseCheckpoint, serializeCheckpoint, type CheckpointState } from '../rl/checkpoint.ts';
import type { SavedRolloutBatch, GrpoStepMetrics, ScoredTrajectory } from '../rl/grpo-trainer.ts';
import type { SftStepMetrics } from '../rl/sft-trainer.ts';
import { tokenizeTranscript } from '../rl/tokenize-transcript.ts';
import { runTrainingSession, type CheckpointStore, type TrainingReporter } from '../rl/training-session.ts';
import { memoryChooser } from './engine/memory-choice.ts';
import { exportModelFiles, readModelImport } from './engine/model-files.ts';
import { createRealModel, freshOptimizerState, initialLoraTensors, trainableParameters, type RealModelSource } from './engine/real-model.ts';
import { createDeviceBackend, deviceDecoderFactory, devicePresetFit, openEngineDevice, requireWebGPU, type EngineDevice } from './engine/engine-device.ts';
import { PauseGate } from './engine/pause-gate.ts';
import { fetchShippedModel, type PretrainedByteModel } from './engine/shipped-model.ts';
import { sandboxRolloutSource } from './engine/sandbox-rollouts.ts';
import type { CheckpointFiles, EngineApi, EngineChoice, EngineCheckpointCallback, EngineInfo, EngineLoadProgress, EngineTrainingRollout, GrpoStepReport } from './engine/protocol.ts';
import type { CompletionOutcome } from './sandbox/protocol.ts';
import { errorMessage } from '../common/error-message.ts';

declare const self: DedicatedWorkerGlobalScope;

/** KV cache of the tiny model's WebGPU decoder: 64 MiB hold 131,072 tokens (rebuilt after every training step, so not the 256 MiB default). */
const TINY_CACHE_BYTES = 64 * 2 ** 20;
/** How often step metrics are sent to the app at most. */
const REPORT_INTERVAL_MS = 250;

interface Model {
  device: EngineDevice;
  backend: ModelBackend;
  tokenizer: Tokenizer;
  client: LocalChatClient;
  info: EngineInfo;
  /** A fully fine-tuned model's weights as initialised (its "base" in the chat); null for a LoRA model, whose base is its own weights with the adapters off. */
  initial: NamedTensors | null;
  /** A shipped model's id and the URL it was fetched from (so a failed load of another model can fetch it again); null for tiny and real models. */
  shipped: { id: string; url: string } | null;
  /** The chat client of the base model, built on first use, and the seed its weights come from (tiny). */
  base: { seed: number; model: Promise<BaseModel> } | null;
}

/** What answers the chat's "base" column: a client, and the backend it owns (null when it reads the trained model's weights in place). */
interface BaseModel {
  client: LocalChatClient;
  backend: ModelBackend | null;
}

let model: Promise<Model> | null = null;
/** Set when the device is lost: every later call fails with it. */
let deviceLost: string | null = null;
let reportError: (message: string) => void = () => {};
const requests = new Map<number, AbortController>();
const jobs = new Map<number, AbortController>();
/** The GRPO rollouts sampled ahead that the last restored checkpoint kept, for the job continuing at `nextStep`. */
let restoredRollouts: { nextStep: number; batches: SavedRolloutBatch[] } | null = null;
/** Closed while the person has paused the running job; jobs wait on it between steps and before new rollouts. */
const pauseGate = new PauseGate();

async function buildModel(seed: number, choice: EngineChoice): Promise<Model> {
  const device = await openEngineDevice(choice, (message) => reportError(message));
  if (device.kind === 'webgpu') {
    void device.context.lost.then((info) => {
      if (info.reason === 'destroyed') return;
      deviceLost = `The GPU device was lost (${info.message || info.reason}). Reload the page to get a new one; the run's last checkpoint is kept.`;
      reportError(deviceLost);
    });
  }
  return createModel(device, seed);
}

/**
 * The tiny preset on `device`, seeded, or — given `pretrained` — a shipped model (nano, nano-wordle, nano-tools, nano-2m)
 * from its shipped weights; either with a fresh optimizer and a chat client over it. Both are
 * byte-level and fully fine-tuned.
 */
async function createModel(device: EngineDevice, seed: number, pretrained?: PretrainedByteModel): Promise<Model> {
  const backend = pretrained ? await createDeviceBackend(device, pretrained.config, { tensors: pretrained.tensors }) : await createDeviceBackend(device, TINY_CONFIG, { seed });
  const tokenizer = new ByteTokenizer();
  const id = pretrained ? pretrained.id : 'tiny';
  // On WebGPU decoded and sampled on the GPU (the KV-cache decoder reads the backend's weights in place; only token ids come back); on the CPU by the CPU decoder on the backend's kernels.
  const createDecoder = deviceDecoderFactory(device, TINY_CACHE_BYTES);
  const client = new LocalChatClient({ backend, tokenizer, model: id, defaultMaxTokens: 64, ...(createDecoder ? { createDecoder } : {}) });
  const weights = await backend.getParameters();
  const parameters = [...weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  const modelName = pretrained ? `${id} (pretrained, ${(parameters / 1e6).toFixed(2)}M)` : 'tiny (from scratch)';
  // Fully fine-tuned, so the base is a copy of these initial weights (tiny ~100k parameters, nano a few hundred thousand, nano-2m 2.4M).
  return {
    device,
    backend,
    tokenizer,
    client,
    info: {
      adapter: device.label,
      ...(device.fallback ? { fallback: device.fallback } : {}),
      model: id,
      modelName,
      parameters,
      trainableParameters: parameters,
      loraRank: null,
      seed,
      presetFit: devicePresetFit(device),
    },
    initial: backend.lora ? null : weights,
    shipped: pretrained ? { id: pretrained.id, url: pretrained.url } : null,
    base: null,
  };
}

/** A real checkpoint on `device`, which must be WebGPU (LoRA adapters initialised from `seed`), with a chat client over it. */
async function createLoadedModel(device: EngineDevice, source: RealModelSource, seed: number, onProgress: (progress: EngineLoadProgress) => void, signal: AbortSignal): Promise<Model> {
  const context = requireWebGPU(device);
  const real = await createRealModel(context, source, seed, onProgress, signal);
  const info: EngineInfo = {
    adapter: device.label,
    model: real.id,
    modelName: real.name,
    parameters: real.parameters,
    trainableParameters: real.trainableParameters,
    loraRank: real.backend.lora?.rank ?? null,
    seed,
    presetFit: devicePresetFit(device),
  };
  return { device, backend: real.backend, tokenizer: real.tokenizer, client: real.client, info, initial: null, shipped: null, base: null };
}

/** The base model's chat client: a LoRA model's weights read in place with the adapters off, or a second backend holding the initial weights. */
async function createBaseModel(model: Model, seed: number): Promise<BaseModel> {
  const options = { tokenizer: model.tokenizer, model: `${model.info.model} (base)`, defaultMaxTokens: 64 };
  if (!model.initial) {
    const trained = model.backend;
    if (!(trained instanceof WebGPUBackend)) throw new Error('the base of a LoRA model is decoded on the WebGPU backend');
    // The WebGPU decoder with lora = null reads the same frozen weights and skips the adapters.
    const client = new LocalChatClient({ ...options, backend: trained, createDecoder: async () => new WebGPUDecoder(trained.kernels, trained.config, null, trained.decoderView()) });
    return { client, backend: null };
  }
  // The kept copy for the engine's own seed; a run begun from another seed gets that seed's initialisation (the same initialiser).
  const backend = await createDeviceBackend(model.device, model.backend.config, { seed });
  // A shipped model's base is its pretrained weights whatever the seed.
  if (seed === model.info.seed || model.shipped) await backend.setParameters(model.initial);
  const createDecoder = deviceDecoderFactory(model.device, TINY_CACHE_BYTES);
  return { client: new LocalChatClient({ ...options, backend, ...(createDecoder ? { createDecoder } : {}) }), backend };
}

/** Lets go of a model's base client and its backend. */
async function disposeBaseModel(model: Model): Promise<void> {
  const base = await model.base?.model.catch(() => null);
  model.base = null;
  if (!base) return;
  await base.client.forget();
  base.backend?.dispose();
}

/**
 * After a failed load, builds again the model that was loaded before when that needs nothing from the
 * network (a shipped model from the app's files, tiny from its seed), with its seed; a real model would need
 * its download again, so tiny (with the same seed) stands in for it. Returns which model it built.
 */
async function rebuildAfterFailedLoad(old: Model): Promise<string> {
  const { device, info, shipped } = old;
  if (shipped) {
    model = fetchShippedModel(shipped.id, shipped.url, { baseUrl: self.location.href, signal: new AbortController().signal }).then((pretrained) => createModel(device, info.seed, pretrained));
    try {
      await model;
      return shipped.id;
    } catch {
      // The app's own files failed too (offline and not cached): tiny needs nothing.
    }
  }
  model = createModel(device, info.seed);
  await model;
  return 'tiny';
}

async function getModel(): Promise<Model> {
  if (deviceLost) throw new Error(deviceLost);
  if (!model) throw new Error('the engine was not started');
  return model;
}

/** Collects items and sends them at most every REPORT_INTERVAL_MS; `flush` sends the rest and waits. */
function boundedReporter<T>(send: (items: T[]) => unknown) {
  let buffer: T[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last = 0;
  const flush = async () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (buffer.length === 0) return;
    const items = buffer;
    buffer = [];
    last = Date.now();
    await Promise.resolve(send(items)).catch(() => {});
  };
  return {
    push(item: T) {
      buffer.push(item);
      if (timer !== null) return;
      timer = setTimeout(() => void flush(), Math.max(0, last + REPORT_INTERVAL_MS - Date.now()));
    },
    flush,
  };
}

async function checkpointFiles(backend: ModelBackend, state: CheckpointState, rolloutsAhead?: SavedRolloutBatch[]): Promise<CheckpointFiles> {
  // Full fine-tuning with KL keeps its frozen reference; with LoRA the reference is the base.
  const reference = backend.lora === null ? await backend.getReference() : null;
  const files = serializeCheckpoint({
    state,
    weights: await trainableParameters(backend),
    optimizer: await backend.getOptimizerState(),
    ...(rolloutsAhead && rolloutsAhead.length > 0 ? { rolloutsAhead } : {}),
    ...(reference ? { reference } : {}),
  });
  return Comlink.transfer(
    files,
    [...files.values()].map((bytes) => bytes.buffer as ArrayBuffer),
  );
}

/**
 * The engine's checkpoint store: the session's checkpoints of this job's phase go to the page as
 * files (state.json holding the phase and next step; the page adds its run record and keeps them in
 * IndexedDB). Taken between two updates, with GRPO's rollouts sampled ahead, so a continued job is
 * exact. A position of another phase (the GRPO start the session marks after a warm-up) is not this job's.
 */
function messageCheckpointStore(backend: ModelBackend, phase: 'sft' | 'grpo', send: EngineCheckpointCallback | undefined): CheckpointStore {
  return {
    async save({ rolloutsAhead, ...position }) {
      if (!send || position.phase !== phase) return;
      const files = await checkpointFiles(backend, { format: CHECKPOINT_FORMAT, ...position, run: {} }, rolloutsAhead);
      await Promise.resolve(send(files, position.nextStep)).catch(() => {});
    },
  };
}

/** A session reporter over the bounded reporter: `hooks` push each step; between steps it holds while the person has paused the job, having sent every finished step first. */
function pausableReporter(reporter: { flush(): Promise<void> }, signal: AbortSignal, hooks: Pick<TrainingReporter, 'sftStep' | 'grpoStep' | 'grpoPolicySynced'>): TrainingReporter {
  return {
    ...hooks,
    async betweenSteps() {
      if (pauseGate.isPaused) await reporter.flush();
      await pauseGate.wait(signal);
    },
  };
}

function startJob(jobId: number): AbortSignal {
  const controller = new AbortController();
  jobs.set(jobId, controller);
  pauseGate.resume(); // a new job starts unpaused
  return controller.signal;
}

const api: EngineApi = {
  async start(seed, onError, choice = 'auto') {
    reportError = (message) => void Promise.resolve(onError(message)).catch(() => {});
    model ??= buildModel(seed, choice);
    model.catch(() => {
      model = null;
    });
    return (await model).info;
  },

  async reset(seed) {
    const old = await getModel();
    if (old.backend.lora && old.info.model !== 'tiny') {
      // A real model: the frozen base stays, the adapters and AdamW start afresh.
      const lora = initialLoraTensors(old.backend.config, old.backend.lora, seed);
      await old.backend.setParameters(lora);
      await old.backend.setOptimizerState(freshOptimizerState(lora));
      await disposeBaseModel(old);
      await old.client.forget();
      await old.client.syncWeights();
      old.info = { ...old.info, seed };
      return old.info;
    }
    const pretrained = old.shipped && old.initial ? { ...old.shipped, config: old.backend.config, tensors: old.initial } : undefined;
    const fresh = createModel(old.device, seed, pretrained);
    model = fresh;
    await disposeBaseModel(old);
    await old.client.forget();
    old.backend.dispose();
    return (await fresh).info;
  },

  async loadModel(jobId, spec, onProgress) {
    const signal = startJob(jobId);
    try {
      const old = await getModel();
      // Let go of the old model first: two real models may not fit the device together.
      await disposeBaseModel(old);
      await old.client.forget();
      old.backend.dispose();
      const source: RealModelSource | null = spec.kind === 'preset' ? { kind: 'preset', id: spec.id } : spec.kind === 'local' ? { kind: 'local', files: spec.files } : null;
      const fresh = source
        ? createLoadedModel(old.device, source, spec.seed, (progress) => void Promise.resolve(onProgress(progress)).catch(() => {}), signal)
        : spec.kind === 'shipped'
          ? fetchShippedModel(spec.id, spec.url, { baseUrl: self.location.href, signal }).then((pretrained) => createModel(old.device, spec.seed, pretrained))
          : createModel(old.device, spec.seed);
      model = fresh;
      try {
        return (await fresh).info;
      } catch (error) {
        const back = await rebuildAfterFailedLoad(old);
        throw new Error(`${errorMessage(error)} (the ${back} model is loaded instead)`);
      }
    } finally {
      jobs.delete(jobId);
    }
  },

  async complete(requestId, request, options): Promise<CompletionOutcome> {
    const controller = new AbortController();
    requests.set(requestId, controller);
    try {
      const loaded = await getModel();
      let client = loaded.client;
      if (options?.model === 'base') {
        const seed = options.baseSeed ?? loaded.info.seed;
        if (loaded.base && loaded.base.seed !== seed) await disposeBaseModel(loaded);
        if (!loaded.base) {
          const base = { seed, model: createBaseModel(loaded, seed) };
          loaded.base = base;
          base.model.catch(() => {
            if (loaded.base === base) loaded.base = null;
          });
        }
        client = (await loaded.base.model).client;
      }
      const completion = await client.chat.completions.create({ ...request, signal: controller.signal });
      return { ok: true, completion };
    } catch (error) {
      if (error instanceof ChatClientError) return { ok: false, message: error.message, kind: error.kind, ...(error.status !== undefined ? { status: error.status } : {}) };
      return { ok: false, message: `in-tab model: ${errorMessage(error)}`, kind: deviceLost ? 'device' : 'server' };
    } finally {
      requests.delete(requestId);
    }
  },

  cancel(requestId) {
    requests.get(requestId)?.abort();
  },

  async sft(jobId, transcripts: Message[][], options, onSteps, onCheckpoint) {
    const signal = startJob(jobId);
    const reporter = boundedReporter<SftStepMetrics>(onSteps);
    try {
      const { backend, tokenizer, client } = await getModel();
      // The one training session (src/rl/training-session.ts), with the warm-up alone: the page made the demonstrations.
      const report = await runTrainingSession(
        {
          backend,
          policy: client,
          padId: tokenizer.padId,
          demonstrations: async () => transcripts.map((messages) => tokenizeTranscript(tokenizer, messages, options.tools)),
          checkpoints: messageCheckpointStore(backend, 'sft', onCheckpoint),
          reporter: pausableReporter(reporter, signal, { sftStep: (metrics) => reporter.push(metrics) }),
          signal,
        },
        {
          seed: options.seed,
          maxTokens: 0,
          evalTasks: 0,
          warmup: {
            demonstrations: transcripts.length,
            steps: options.steps,
            batchSize: options.batchSize,
            lr: options.lr,
            // on WebGPU the micro-batch comes from the memory budget, as GRPO's does: at most the whole batch
            ...(backend instanceof WebGPUBackend ? { microBatchFor: memoryChooser(backend, options.memoryBudgetMiB, options.batchSize).microBatchFor } : {}),
          },
          grpo: null,
          ...(options.checkpointEvery !== undefined ? { checkpointEvery: options.checkpointEvery } : {}),
          ...(options.startStep ? { resumeFrom: { phase: 'sft', nextStep: options.startStep } } : {}),
        },
      );
      // The chat samples with the new weights, also after a stopped warm-up (the session syncs only a finished one).
      await client.syncWeights();
      return report.sft;
    } finally {
      await reporter.flush();
      jobs.delete(jobId);
    }
  },

  async grpo(jobId, name, numTasks, rollout, options, onSteps, onCheckpoint, scoreGroup, onPolicySynced) {
    const signal = startJob(jobId);
    const reporter = boundedReporter<GrpoStepReport>(onSteps);
    const history: GrpoStepMetrics[] = [];
    // Rollouts and group rewards come from the app's sandbox; the source keeps each step's rollouts for the viewer.
    const source = sandboxRolloutSource({
      name,
      numTasks,
      rollout,
      ...(scoreGroup ? { scoreGroup } : {}),
      signal,
      pauseGate,
      ...(options.rewardWeights ? { rewardWeights: options.rewardWeights } : {}),
    });
    // Continuing from a checkpoint that kept the rollouts sampled ahead: train on them (and show them).
    const ahead = restoredRollouts?.nextStep === (options.startStep ?? 0) && restoredRollouts.batches.length <= options.maxAsync ? restoredRollouts.batches : undefined;
    restoredRollouts = null;
    for (const batch of ahead ?? []) source.keepStep(batch.step, batch.trajectories);
    // The loaded model's tokenizer decodes the viewer's tokens (set once the model is at hand).
    let tokenizerOf: Tokenizer = new ByteTokenizer();
    const stepRollouts = (step: number): EngineTrainingRollout[] => source.takeStep(step).map((trajectory) => viewerRollout(trajectory, tokenizerOf));
    try {
      const { backend, tokenizer, client } = await getModel();
      tokenizerOf = tokenizer;
      // The options are the table's conversion (src/rl/training-options.ts); only what this engine knows is added.
      const { checkpointEvery, rewardWeights: _weights, memoryBudgetMiB, startStep = 0, seed, maxTokens, ...grpo } = options;
      // the micro-batch from the GPU's memory (step-memory.ts): the largest whose step fits the budget, at most a whole step
      const memory = backend instanceof WebGPUBackend ? memoryChooser(backend, memoryBudgetMiB, options.tasksPerStep * options.groupSize) : null;
      // The one training session (src/rl/training-session.ts), with GRPO alone: the page measures and warms up.
      await runTrainingSession(
        {
          backend,
          policy: client,
          padId: tokenizer.padId,
          rollouts: source,
          checkpoints: messageCheckpointStore(backend, 'grpo', onCheckpoint),
          reporter: pausableReporter(reporter, signal, {
            grpoStep: (metrics) => {
              history.push(metrics);
              const choice = memory?.latest();
              reporter.push({ metrics, rollouts: stepRollouts(metrics.step), ...(choice ? { memory: choice } : {}) });
            },
            ...(onPolicySynced
              ? {
                  // The app measures the synced weights (its task-pool refresh) before the step's checkpoint; its step reports go first.
                  grpoPolicySynced: async (metrics: GrpoStepMetrics) => {
                    await reporter.flush();
                    const size = await onPolicySynced(metrics.step, client.policyVersion);
                    if (size !== undefined) source.newPool(size);
                  },
                }
              : {}),
          }),
          signal,
        },
        {
          seed,
          maxTokens,
          evalTasks: 0,
          warmup: null,
          grpo: {
            ...grpo,
            ...(memory ? { microBatchFor: memory.microBatchFor } : {}),
          },
          ...(checkpointEvery !== undefined ? { checkpointEvery } : {}),
          resumeFrom: { phase: 'grpo', nextStep: startStep, ...(ahead ? { rolloutsAhead: ahead } : {}) },
        },
      );
      return history;
    } catch (error) {
      if (signal.aborted) return history;
      throw error;
    } finally {
      await reporter.flush();
      jobs.delete(jobId);
    }
  },

  abort(jobId) {
    jobs.get(jobId)?.abort();
  },

  setPaused(paused) {
    if (paused) pauseGate.pause();
    else pauseGate.resume();
  },

  async exportModel() {
    const { backend, info } = await getModel();
    const { kind, files } = exportModelFiles(await backend.getParameters(), backend.config, backend.lora, info.model);
    return Comlink.transfer(
      { kind, model: info.model, files },
      [...files.values()].map((bytes) => bytes.buffer as ArrayBuffer),
    );
  },

  async importModel(files, label) {
    const { backend, client, info } = await getModel();
    const imported = await readModelImport(files, backend.config, backend.lora, label, info.model);
    const previous = await backend.getParameters();
    try {
      await backend.setParameters(imported.tensors);
    } catch (error) {
      await backend.setParameters(previous);
      throw new Error(`${label} does not fit the loaded model (${info.model}): ${errorMessage(error)}`);
    }
    // Imported weights are a new starting point: AdamW's moments of the weights they replaced mean nothing for them.
    await backend.setOptimizerState(freshOptimizerState(await trainableParameters(backend)));
    await client.forget();
    await client.syncWeights();
    return `${imported.kind === 'adapter' ? 'LoRA adapter' : 'weights'} from ${label}`;
  },

  async getWeights() {
    const { backend } = await getModel();
    const weights: NamedTensors = await backend.getParameters();
    return Comlink.transfer(
      weights,
      [...weights.values()].map((tensor) => tensor.data.buffer as ArrayBuffer),
    );
  },

  async setWeights(weights) {
    const { backend, client } = await getModel();
    await backend.setParameters(weights);
    await client.forget();
    await client.syncWeights();
  },

  async saveCheckpoint(state) {
    const { backend } = await getModel();
    return checkpointFiles(backend, state);
  },

  async restoreCheckpoint(files) {
    const { backend, client } = await getModel();
    const checkpoint = await parseCheckpoint(async (name) => {
      const bytes = files.get(name);
      if (!bytes) throw new Error('not in the stored checkpoint');
      return bytes;
    }, 'the stored checkpoint');
    // Keep what the model holds, so a checkpoint that does not fit this model changes nothing.
    const previous = { weights: await trainableParameters(backend), optimizer: await backend.getOptimizerState() };
    try {
      await backend.setParameters(checkpoint.weights);
      await backend.setOptimizerState(checkpoint.optimizer);
    } catch (error) {
      await backend.setParameters(previous.weights);
      await backend.setOptimizerState(previous.optimizer);
      throw new Error(`the stored checkpoint does not fit the in-tab model: ${errorMessage(error)}`);
    }
    if (backend.lora === null) await backend.setReference(checkpoint.reference ?? null);
    restoredRollouts = checkpoint.state.phase === 'grpo' && checkpoint.rolloutsAhead ? { nextStep: checkpoint.state.nextStep, batches: checkpoint.rolloutsAhead } : null;
    await client.forget();
    await client.syncWeights();
    return { state: checkpoint.state, optimizerStep: (await backend.getOptimizerState()).step };
  },
};

/** A trajectory as the rollout viewer shows it: messages, rewards and the sampled tokens of each turn with their text. */
function viewerRollout(trajectory: ScoredTrajectory, tokenizer: Tokenizer): EngineTrainingRollout {
  return {
    taskIndex: trajectory.taskIndex ?? -1,
    prompt: trajectory.prompt,
    completion: trajectory.completion,
    reward: trajectory.reward,
    scores: trajectory.scores,
    passed: trajectory.passed,
    errors: trajectory.errors.map((error) => `${error.source} ${error.name}: ${error.message}`),
    turns: trajectory.turns.flatMap((turn) =>
      turn.tokens ? [{ completionIds: turn.tokens.completionIds, completionPieces: tokenPieces(tokenizer, turn.tokens.completionIds), completionLogprobs: turn.tokens.completionLogprobs }] : [],
    ),
    ...(trajectory.turnRewards?.length === trajectory.turns.length ? { turnRewards: trajectory.turnRewards } : {}),
  };
}

Comlink.expose(api);
