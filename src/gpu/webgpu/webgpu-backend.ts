/**
 * The WebGPU backend: the Llama-family model of src/gpu/model on the WGSL kernels, the same
 * ModelBackend contract as the CPU backend and the same pass structure, tensor for tensor. One flat
 * GPU buffer per role (params, LoRA params, grads, AdamW m and v, activations, their gradients)
 * laid out by layout.ts with offsets aligned to minStorageBufferOffsetAlignment; the passes of a
 * call (forward, log-probs, backward; or grad-norm, clip and AdamW) are recorded once per batch
 * shape and submitted as one command encoder. With `frozenWeightsF16` (LoRA on a device with
 * shader-f16) the frozen base matrices live in a second buffer as f16 and the *_f16w kernels convert
 * them on load; compute and accumulation stay f32. With `activationsF16` a checkpointed batch keeps
 * its layer outputs as f16 (activations.ts), widened and narrowed around each layer's forward. It is
 * not a sampler or a KV cache.
 */
import type { LogprobsOptions, ModelBackend, ModelBackendOptions, ModelWeights, NamedTensor, NamedTensors, OptimizerState, OptimizerStepOptions } from '../model/backend.ts';
import type { ModelConfig } from '../model/config.ts';
import { initLoraParameters, initParameters } from '../model/init.ts';
import { linearModuleName, linearSizes, loraLayout, loraParamName, paramLayout, paramShapes, type Layout, writeNamedTensors, type LoraConfig, type LoraTargetModule } from '../model/layout.ts';
import type { GPUContext } from './device.ts';
import { forceMatmul, tuneMatmul } from './matmul-tuning.ts';
import type { MatmulChoice } from './matmul-variants.ts';
import { createTensor, f32, KernelPlan, kernelsFor, readTensor, u32, type Kernels, type Dispatch, type GPUTensor } from './kernels.ts';
import { allocateBatch, destroyBatch, type BatchState } from './batch-state.ts';
import { LM_HEAD_CHUNK_BYTES, recordChunkedLmHead, recordLogits, type TemperatureDispatch } from './lm-head.ts';
import * as ops from './ops.ts';
import { LAYER_GROUP_BYTES, type ActivationCheckpointing, type SequenceGroup } from './activations.ts';
import { ParamStore, type RowChunkTensor } from './param-store.ts';
import { createStorage } from './storage.ts';
import { batchMemoryPlan, chooseMicroBatch, defaultMemoryBudget, isF16StorableWeight, type MemorySettingNames, type MicroBatchChoice, type StepMemorySettings } from './step-memory.ts';

export { isF16StorableWeight } from './step-memory.ts';

/** Options of the WebGPU backend: the shared ones plus how frozen weights are stored. */
export interface WebGPUBackendOptions extends ModelBackendOptions {
  /**
   * Store the frozen base matrices (the linear weights, the embedding and the LM head) as f16, halving
   * their memory; norms and biases stay f32, and so does all arithmetic. Needs `lora` (otherwise
   * nothing is frozen) and a device with shader-f16 (`context.features.shaderF16`); asking for it
   * without either is an error, not a silent f32 fallback. Default false: every weight in f32.
   */
  frozenWeightsF16?: boolean;
  /**
   * Force matmul kernels on this device (see matmul-variants.ts; tests and benchmarks). By default a
   * short timed trial picks them once per adapter (matmul-tuning.ts) before the backend is created.
   */
  matmul?: Partial<Omit<MatmulChoice, 'source'>>;
  /**
   * Activation checkpointing (activations.ts): true keeps only each layer's output and recomputes a
   * layer's intermediates in backward (about one more forward per step, a fraction of the memory);
   * false keeps every intermediate; 'auto' (default) checkpoints a batch shape whose plain activations
   * would pass 256 MiB or the device's buffer limits.
   */
  activationCheckpointing?: ActivationCheckpointing;
  /**
   * With LoRA, the most bytes of frozen base weights per buffer (default: the device's maxBufferSize);
   * more weights than that lie in several buffers, and a vocabulary table past it (or past
   * maxStorageBufferBindingSize) lies in row chunks (row-chunks.ts). Trained weights always lie in one.
   */
  maxParamBufferBytes?: number;
  /**
   * Checkpointed batches keep each layer's output (but the last's) as f16, half the bytes of the
   * buffer that grows with B × layers; every kernel still computes in f32 (the output is narrowed after
   * the layer's forward and widened before the next layer reads it, in forward and in backward's
   * recompute alike, so both see the same rounded values). Plain (uncheckpointed) batches and 1-layer
   * models are unchanged. The conversions need no shader-f16; the engine turns this on where the
   * adapter has shader-f16, with frozenWeightsF16. Default false.
   */
  activationsF16?: boolean;
  /** Checkpointed: the bytes one layer's recomputed activations aim at, which sets the sequences a layer runs over at once (default LAYER_GROUP_BYTES). */
  layerGroupBytes?: number;
  /** Bytes of the LM head's logits chunk (lm-head.ts; default LM_HEAD_CHUNK_BYTES): smaller saves memory, larger runs fewer, larger products. */
  lmHeadChunkBytes?: number;
}

/** Creates a WebGPU backend on a device from a config and either a seed or named tensors (all base parameters required). */
export async function createWebGPUBackend(context: GPUContext, config: ModelConfig, weights: ModelWeights, options: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
  const lora = options.lora ?? null;
  if (options.frozenWeightsF16 === true) {
    if (lora === null) {
      throw new Error('frozenWeightsF16 stores frozen weights as f16, but without LoRA every weight trains in f32: pass a lora config, or drop frozenWeightsF16');
    }
    if (!context.features.shaderF16) {
      throw new Error(
        `frozenWeightsF16 needs the shader-f16 feature, which this adapter (${context.adapter.vendor} ${context.adapter.architecture}) does not have: ` +
          'drop the option to keep every weight in f32 (check context.features.shaderF16 first)',
      );
    }
  }
  if (options.matmul) forceMatmul(kernelsFor(context), options.matmul);
  else await tuneMatmul(kernelsFor(context));
  if (options.maxParamBufferBytes !== undefined && !(options.maxParamBufferBytes > 0)) throw new Error(`maxParamBufferBytes must be positive, got ${options.maxParamBufferBytes}`);
  const backend = new WebGPUBackend(context, config, lora, 'seed' in weights ? weights.seed : 0, options.loraSeed ?? 0, options.frozenWeightsF16 === true, options.maxParamBufferBytes);
  backend.activationCheckpointing = options.activationCheckpointing ?? 'auto';
  backend.activationsF16 = options.activationsF16 === true;
  if (options.lmHeadChunkBytes !== undefined) {
    if (!(options.lmHeadChunkBytes > 0)) throw new Error(`lmHeadChunkBytes must be positive, got ${options.lmHeadChunkBytes}`);
    backend.lmHeadChunkBytes = options.lmHeadChunkBytes;
  }
  if (options.layerGroupBytes !== undefined) {
    if (!(options.layerGroupBytes > 0)) throw new Error(`layerGroupBytes must be positive, got ${options.layerGroupBytes}`);
    backend.layerGroupBytes = options.layerGroupBytes;
  }
  if ('tensors' in weights) {
    const names = [...backend.paramLayout.slots, ...(backend.halfParamLayout?.slots ?? [])].map((slot) => slot.name);
    const missing = names.filter((name) => !weights.tensors.has(name));
    if (missing.length > 0) {
      throw new Error(`missing ${missing.length} parameter(s): ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
    }
    await backend.setParameters(weights.tensors);
  }
  return backend;
}

/** Returns the binding of a named slot of a layout inside its buffer. */
function slotTensor(buffer: GPUBuffer, layout: Layout, name: string): GPUTensor {
  const slot = layout.byName.get(name);
  if (slot === undefined) throw new Error(`no tensor named ${name} in this layout`);
  return { buffer, offset: slot.offset * 4, size: slot.size * 4 };
}

/** What `WebGPUBackend.decoderView()` returns: bindings of the weights in the backend's own buffers. */
export interface BackendWeightsView {
  /** A base parameter by its Hugging Face name (dtype 'f16' when frozenWeightsF16 stores it as half: the ops pick the *_f16w kernel), or null when the model has none (e.g. a bias). */
  param(name: string): GPUTensor | null;
  /** A vocabulary table (the embedding, an untied LM head) in row order: its row chunks when it is past one binding (row-chunks.ts), else the whole table as one. */
  paramRows(name: string): RowChunkTensor[];
  /** A LoRA matrix by its PEFT name. */
  loraParam(name: string): GPUTensor;
}

/** The Llama-family model on WebGPU; see ModelBackend for the contract. */
export class WebGPUBackend implements ModelBackend {
  readonly kind = 'webgpu';
  readonly config: ModelConfig;
  readonly lora: LoraConfig | null;
  /** Hugging Face names and shapes: every base parameter, or those not in halfParamLayout; its offsets hold when the f32 parameters lie in one buffer (always when they train). */
  readonly paramLayout: Layout;
  /** With frozenWeightsF16: the base matrices stored as f16; otherwise null. */
  readonly halfParamLayout: Layout | null;
  readonly loraLayout: Layout | null; // PEFT names, aligned offsets
  /** The kernels and pipeline cache of this backend's device. */
  readonly kernels: Kernels;
  /** Whether batch shapes allocated from now on checkpoint their activations (see WebGPUBackendOptions). */
  activationCheckpointing: ActivationCheckpointing = 'auto';
  /** Whether checkpointed batch shapes allocated from now on keep their layer outputs as f16 (see WebGPUBackendOptions). */
  activationsF16 = false;
  /** Bytes the LM head's logits chunk aims at, for batch shapes allocated from now on. */
  lmHeadChunkBytes = LM_HEAD_CHUNK_BYTES;
  /** Checkpointed: bytes a layer's recomputed activations aim at, for batch shapes allocated from now on. */
  layerGroupBytes = LAYER_GROUP_BYTES;
  private readonly device: GPUDevice;
  private readonly params: ParamStore; // f32 base parameters, in one or more buffers
  private readonly halfParams: ParamStore | null; // f16 frozen matrices, in one or more buffers
  private readonly loraParams: GPUBuffer | null; // (loraLayout.totalSize)
  private readonly grads: GPUBuffer; // (trainable layout.totalSize)
  private readonly adamM: GPUBuffer;
  private readonly adamV: GPUBuffer;
  private readonly normPartials: GPUTensor; // (GRAD_NORM_PARTIALS)
  private readonly normResult: GPUTensor; // (2) clip factor, norm
  private readonly stepPlan: KernelPlan; // grad norm, clip factor, AdamW
  private readonly normPlan: KernelPlan; // grad norm only
  private readonly stepNormDispatch: Dispatch;
  private readonly adamwDispatch: Dispatch;
  private readonly maxParamBufferBytes: number;
  private stepCount = 0;
  private batch: BatchState | null = null;
  private referenceParams: GPUBuffer | null = null; // (paramLayout.totalSize) f32, the frozen KL reference of full fine-tuning

  /** Allocates the buffers and initialises them from seed (HF init) and loraSeed (PEFT init). */
  constructor(context: GPUContext, config: ModelConfig, lora: LoraConfig | null, seed: number, loraSeed: number, frozenWeightsF16 = false, maxParamBufferBytes = Infinity) {
    this.config = config;
    this.lora = lora;
    this.maxParamBufferBytes = maxParamBufferBytes;
    this.kernels = kernelsFor(context);
    this.device = context.device;
    const alignment = this.device.limits.minStorageBufferOffsetAlignment / 4;
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V } = config;
    for (const [name, value] of Object.entries({
      hidden_size: C,
      intermediate_size: I,
      'heads·head_dim': NH * HS,
      'kv_heads·head_dim': KVH * HS,
      vocab_size: V,
      ...(lora ? { 'LoRA rank': lora.rank } : {}),
    })) {
      if (value % 4 !== 0) throw new Error(`the WebGPU backend needs ${name} (${value}) to be a multiple of 4 (vec4 matmuls); use the cpu backend`);
    }
    if (frozenWeightsF16 && (lora === null || !context.features.shaderF16)) throw new Error('frozenWeightsF16 needs LoRA and shader-f16 (see createWebGPUBackend)');
    // the buffers (and their limit checks) before the host array of the initial weights exists: a model past a limit used to fill gigabytes first.
    // Frozen weights (LoRA) may lie in several buffers, each within maxBufferSize; trained ones lie in one, which AdamW runs over.
    const shapes = paramShapes(config);
    // frozen vocabulary tables past a buffer or a binding lie in row chunks, each bound on its own
    const common = { alignmentBytes: alignment * 4, maxBufferBytes: lora === null ? Infinity : Math.min(this.device.limits.maxBufferSize, maxParamBufferBytes), rowChunks: lora !== null };
    this.params = new ParamStore(this.device, frozenWeightsF16 ? shapes.filter(([name]) => !isF16StorableWeight(name)) : shapes, { ...common, bytesPerValue: 4, label: 'params' });
    try {
      this.halfParams = frozenWeightsF16
        ? new ParamStore(
            this.device,
            shapes.filter(([name]) => isF16StorableWeight(name)),
            { ...common, bytesPerValue: 2, label: 'params f16' },
          )
        : null;
    } catch (error) {
      this.params.destroy();
      throw error;
    }
    this.paramLayout = this.params.layout;
    this.halfParamLayout = this.halfParams?.layout ?? null;
    const fullLayout = paramLayout(config, { alignment });
    const initial = new Float32Array(fullLayout.totalSize);
    initParameters(initial, fullLayout, seed);
    for (const slot of fullLayout.slots) {
      this.setParameter(slot.name, { shape: slot.shape, data: initial.subarray(slot.offset, slot.offset + slot.size) });
    }
    if (lora !== null) {
      if (!(Number.isInteger(lora.rank) && lora.rank > 0)) throw new Error(`LoRA rank must be a positive integer, got ${lora.rank}`);
      if (lora.targetModules.length === 0) throw new Error('LoRA needs at least one target module');
      this.loraLayout = loraLayout(config, lora, { alignment });
      const initialLora = new Float32Array(this.loraLayout.totalSize);
      initLoraParameters(initialLora, this.loraLayout, config, lora, loraSeed);
      this.loraParams = createStorage(this.device, this.loraLayout.totalSize, 'lora params');
      this.device.queue.writeBuffer(this.loraParams, 0, initialLora);
    } else {
      this.loraLayout = null;
      this.loraParams = null;
    }
    const n = this.trainableLayout().totalSize;
    this.grads = createStorage(this.device, n, 'grads');
    this.adamM = createStorage(this.device, n, 'adamw m');
    this.adamV = createStorage(this.device, n, 'adamw v');
    this.normPartials = createTensor(this.device, ops.GRAD_NORM_PARTIALS * 4, 'grad norm partials');
    this.normResult = createTensor(this.device, 16, 'grad norm result');

    const whole = (buffer: GPUBuffer): GPUTensor => ({ buffer, offset: 0, size: n * 4 });
    this.stepPlan = new KernelPlan(this.kernels);
    this.stepNormDispatch = ops.globalGradNorm(this.stepPlan, this.normResult, this.normPartials, whole(this.grads), n, 0);
    const settings = { lr: 0, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, step: 1 };
    this.adamwDispatch = ops.adamwUpdate(this.stepPlan, whole(this.trainableBuffer()), whole(this.grads), whole(this.adamM), whole(this.adamV), this.normResult, n, settings);
    this.normPlan = new KernelPlan(this.kernels);
    ops.globalGradNorm(this.normPlan, this.normResult, this.normPartials, whole(this.grads), n, 0);
  }

  /** Allocates a (B, T) batch shape's buffers and records its plans without running anything: a batch that cannot fit fails here, before any sampling. */
  prepare(B: number, T: number): void {
    this.batchFor(B, T);
  }

  async forward(ids: Int32Array, B: number, T: number): Promise<Float32Array> {
    const batch = this.batchFor(B, T);
    this.writeTokens(batch.ids, ids, B * T, 'ids');
    // the (N, V) logits exist only for this call: training never holds them (lm-head.ts)
    const { hidden_size: C, vocab_size: V } = this.config;
    const N = B * T;
    const logits = createStorage(this.device, N * V, `logits of a (B, T) = (${B}, ${T}) forward`);
    const plan = new KernelPlan(this.kernels);
    for (let first = 0; first < N; first += batch.lmHeadRows) {
      const n = Math.min(batch.lmHeadRows, N - first);
      const lnf = { ...batch.lmHead.lnf, offset: batch.lmHead.lnf.offset + first * C * 4, size: n * C * 4 };
      recordLogits(plan, { buffer: logits, offset: first * V * 4, size: n * V * 4 }, lnf, batch.lmHead.weight, batch.lmHead.columns, n, C, V);
    }
    try {
      this.submit(batch.forwardPlan, plan);
      return await this.read({ buffer: logits, offset: 0, size: N * V * 4 });
    } finally {
      plan.destroy();
      logits.destroy();
    }
  }

  async logprobs(ids: Int32Array, targets: Int32Array, B: number, T: number, temperature: number, options: LogprobsOptions = {}): Promise<Float32Array> {
    const batch = this.batchFor(B, T);
    const plans = options.weights === 'reference' ? [this.referencePlanFor(batch)] : [batch.forwardPlan, batch.logprobsPlan];
    this.writeTokens(batch.ids, ids, B * T, 'ids');
    this.writeTokens(batch.targets, targets, B * T, 'targets');
    this.setTemperature(batch, temperature);
    this.submit(...plans);
    return this.read(batch.activations.act('logprobs'));
  }

  async backward(ids: Int32Array, targets: Int32Array, weights: Float32Array, B: number, T: number, temperature: number): Promise<number> {
    const N = B * T;
    if (weights.length !== N) throw new Error(`weights has ${weights.length} values, expected B*T = ${N}`);
    const batch = this.batchFor(B, T);
    this.writeTokens(batch.ids, ids, N, 'ids');
    this.writeTokens(batch.targets, targets, N, 'targets');
    this.device.queue.writeBuffer(batch.weights.buffer, 0, weights.buffer as ArrayBuffer, weights.byteOffset, N * 4);
    this.setTemperature(batch, temperature);
    this.submit(batch.forwardPlan, batch.backwardPlan);
    const logprobs = await this.read(batch.activations.act('logprobs'));
    let objective = 0;
    for (let i = 0; i < N; i++) objective += weights[i]! * logprobs[i]!;
    return objective;
  }

  async zeroGrad(): Promise<void> {
    const encoder = this.device.createCommandEncoder();
    encoder.clearBuffer(this.grads);
    this.device.queue.submit([encoder.finish()]);
  }

  async gradNorm(): Promise<number> {
    this.submit(this.normPlan);
    return (await this.read(this.normResult))[1]!;
  }

  async step({ lr, beta1, beta2, eps, weightDecay, maxGradNorm }: OptimizerStepOptions): Promise<{ gradNorm: number }> {
    this.stepCount++;
    const n = this.trainableLayout().totalSize;
    this.kernels.writeParams(this.stepNormDispatch, [u32(Math.min(ops.GRAD_NORM_PARTIALS, n)), f32(maxGradNorm)]);
    this.kernels.writeParams(this.adamwDispatch, ops.adamwParams(n, { lr, beta1, beta2, eps, weightDecay, step: this.stepCount }));
    this.submit(this.stepPlan);
    return { gradNorm: (await this.read(this.normResult))[1]! };
  }

  async getParameters(): Promise<NamedTensors> {
    const tensors: NamedTensors = new Map();
    await this.params.readAll(tensors);
    await this.halfParams?.readAll(tensors);
    if (this.loraLayout !== null && this.loraParams !== null) await this.copyOut(tensors, this.loraLayout, this.loraParams);
    return tensors;
  }

  async getGradients(): Promise<NamedTensors> {
    const tensors: NamedTensors = new Map();
    await this.copyOut(tensors, this.trainableLayout(), this.grads);
    return tensors;
  }

  async setParameters(tensors: NamedTensors): Promise<void> {
    for (const [name, tensor] of tensors) this.setParameter(name, tensor);
  }

  async getOptimizerState(): Promise<OptimizerState> {
    const m: NamedTensors = new Map();
    const v: NamedTensors = new Map();
    await this.copyOut(m, this.trainableLayout(), this.adamM);
    await this.copyOut(v, this.trainableLayout(), this.adamV);
    return { step: this.stepCount, m, v };
  }

  async setOptimizerState(state: OptimizerState): Promise<void> {
    if (!Number.isInteger(state.step) || state.step < 0) throw new Error(`optimizer state: step must be a non-negative integer, got ${state.step}`);
    const layout = this.trainableLayout();
    for (const [buffer, tensors, what] of [
      [this.adamM, state.m, 'optimizer state m'],
      [this.adamV, state.v, 'optimizer state v'],
    ] as const) {
      const values = new Float32Array(layout.totalSize);
      writeNamedTensors(values, layout, tensors, what);
      this.device.queue.writeBuffer(buffer, 0, values);
    }
    this.stepCount = state.step;
  }

  async setReference(tensors: NamedTensors | null): Promise<void> {
    if (this.lora !== null) throw new Error('with LoRA the KL reference is the base model (adapters switched off); there is nothing to freeze');
    if (tensors === null) {
      this.dropReferencePlan();
      this.referenceParams?.destroy();
      this.referenceParams = null;
      return;
    }
    const values = new Float32Array(this.paramLayout.totalSize);
    writeNamedTensors(values, this.paramLayout, tensors, 'KL reference');
    this.referenceParams ??= createStorage(this.device, this.paramLayout.totalSize, 'KL reference params');
    this.device.queue.writeBuffer(this.referenceParams, 0, values);
  }

  async getReference(): Promise<NamedTensors | null> {
    if (this.referenceParams === null) return null;
    const tensors: NamedTensors = new Map();
    await this.copyOut(tensors, this.paramLayout, this.referenceParams);
    return tensors;
  }

  /** GPU bytes the KL reference holds now: the frozen copy (full fine-tuning only) and the uniform buffers of its recorded forward plan. */
  referenceBytes(): number {
    const plan = this.batch?.referencePlan?.commands ?? [];
    return (this.referenceParams?.size ?? 0) + plan.reduce((sum, command) => sum + ('clear' in command ? 0 : command.params.size), 0);
  }

  /**
   * The weights as a KV-cache decoder reads them, without copying (see
   * src/gpu/webgpu/webgpu-decoder.ts): bindings into the parameter buffers (f32, or f16 for the
   * frozen matrices under frozenWeightsF16) and the LoRA buffer. They are live: a training step
   * changes what a decoder reads; they stay valid until dispose().
   */
  decoderView(): BackendWeightsView {
    return {
      param: (name) => (this.paramLayout.byName.has(name) || this.halfParamLayout?.byName.has(name) === true ? this.param(name) : null),
      paramRows: (name) => this.paramRows(name),
      loraParam: (name) => {
        if (this.loraParams === null || this.loraLayout === null) throw new Error(`no LoRA adapters on this backend (asked for ${name})`);
        return slotTensor(this.loraParams, this.loraLayout, name);
      },
    };
  }

  dispose(): void {
    this.releaseBatch();
    this.referenceParams?.destroy();
    this.stepPlan.destroy();
    this.normPlan.destroy();
    this.params.destroy();
    this.halfParams?.destroy();
    for (const buffer of [this.loraParams, this.grads, this.adamM, this.adamV, this.normPartials.buffer, this.normResult.buffer]) buffer?.destroy();
  }

  /**
   * Returns the largest micro-batch whose step at T tokens fits this device's buffer and binding
   * limits and `budgetBytes`, accounted as this backend allocates (step-memory.ts), or `forced`
   * checked; throws naming the limit and the setting (by `settingNames`: the CLI's flags unless given) when none fits.
   */
  chooseMicroBatch(T: number, options: { budgetBytes: number; maxMicroBatch: number; forced?: number; settingNames?: MemorySettingNames }): MicroBatchChoice {
    return chooseMicroBatch(this.config, T, { ...this.memorySettings(), ...options });
  }

  /** The memory budget a micro-batch is chosen within when none is given: defaultMemoryBudget of this device's limits. */
  defaultMemoryBudget(): number {
    return defaultMemoryBudget(this.device.limits);
  }

  /** How the current batch shape holds its activations: checkpointed or not, tokens per LM-head chunk, and the bytes of every per-batch buffer; null before the first call. */
  batchMemory(): { checkpointing: boolean; groupSequences: number; lmHeadRows: number; bytes: number } | null {
    if (this.batch === null) return null;
    const { activations, ids, targets, weights, scratch } = this.batch;
    const buffers = [...activations.buffers(), ids.buffer, targets.buffer, weights.buffer, ...scratch];
    return { checkpointing: activations.checkpointing, groupSequences: activations.groupSequences, lmHeadRows: this.batch.lmHeadRows, bytes: buffers.reduce((sum, buffer) => sum + buffer.size, 0) };
  }

  /** The base parameters' buffers (f32, then f16), for accounting. */
  parameterBuffers(): GPUBuffer[] {
    return [...this.params.buffers(), ...(this.halfParams?.buffers() ?? [])];
  }

  /** The bytes of each parameter buffer: f32 params, f16 params (0 unless frozenWeightsF16), LoRA params. */
  parameterBytes(): { f32: number; f16: number; lora: number } {
    return { f32: this.params.bytes(), f16: this.halfParams?.bytes() ?? 0, lora: this.loraParams?.size ?? 0 };
  }

  /** Copies one named tensor into the parameter, f16 parameter (rounded to nearest) or LoRA buffer, checking its shape. */
  private setParameter(name: string, tensor: NamedTensor): void {
    const inHalf = this.halfParams?.has(name) === true;
    const inBase = this.params.has(name);
    const slot = this.halfParamLayout?.byName.get(name) ?? this.paramLayout.byName.get(name) ?? this.loraLayout?.byName.get(name);
    if (slot === undefined) throw new Error(`unknown parameter ${name} for this ${this.config.architecture} config`);
    const size = tensor.shape.reduce((x, y) => x * y, 1);
    if (tensor.shape.length !== slot.shape.length || tensor.shape.some((d, i) => d !== slot.shape[i]) || tensor.data.length !== size) {
      throw new Error(`parameter ${name}: shape [${tensor.shape}] with ${tensor.data.length} values, expected [${slot.shape}]`);
    }
    if (inHalf) return this.halfParams!.write(name, tensor.data);
    if (inBase) return this.params.write(name, tensor.data);
    this.device.queue.writeBuffer(this.loraParams!, slot.offset * 4, tensor.data.buffer as ArrayBuffer, tensor.data.byteOffset, size * 4);
  }

  /** Reads a whole flat buffer back and adds a copy of each slot to tensors. */
  private async copyOut(tensors: NamedTensors, layout: Layout, buffer: GPUBuffer): Promise<void> {
    const values = await this.read({ buffer, offset: 0, size: layout.totalSize * 4 });
    for (const slot of layout.slots) tensors.set(slot.name, { shape: [...slot.shape], data: values.slice(slot.offset, slot.offset + slot.size) });
  }

  /** Encodes the plans into one command encoder and submits it once. */
  private submit(...plans: KernelPlan[]): void {
    const encoder = this.device.createCommandEncoder();
    for (const plan of plans) plan.encode(encoder);
    this.device.queue.submit([encoder.finish()]);
  }

  private read(tensor: GPUTensor): Promise<Float32Array> {
    return readTensor(this.device, tensor, tensor.size);
  }

  private setTemperature(batch: BatchState, temperature: number): void {
    if (!(temperature > 0)) throw new Error(`temperature must be positive, got ${temperature}`);
    if (temperature === batch.temperature) return;
    for (const { dispatch, N } of [...batch.temperatureDispatches, ...batch.referenceTemperatureDispatches])
      this.kernels.writeParams(dispatch, [u32(N), u32(this.config.vocab_size), f32(temperature)]);
    batch.temperature = temperature;
  }

  /** Checks that tokens has n values in [0, V) and uploads them. */
  private writeTokens(tensor: GPUTensor, tokens: Int32Array, n: number, what: string): void {
    if (tokens.length !== n) throw new Error(`${what} has ${tokens.length} values, expected B*T = ${n}`);
    const V = this.config.vocab_size;
    for (let i = 0; i < n; i++) {
      if (tokens[i]! < 0 || tokens[i]! >= V) throw new Error(`${what}[${i}] = ${tokens[i]} is outside the vocabulary [0, ${V})`);
    }
    this.device.queue.writeBuffer(tensor.buffer, 0, tokens.buffer as ArrayBuffer, tokens.byteOffset, n * 4);
  }

  private trainableLayout(): Layout {
    return this.loraLayout ?? this.paramLayout;
  }

  private trainableBuffer(): GPUBuffer {
    return this.loraParams ?? this.params.singleBuffer();
  }

  private releaseBatch(): void {
    if (this.batch === null) return;
    destroyBatch(this.batch);
    this.batch = null;
  }

  /** Returns the batch state for (B, T), allocating buffers and recording the plans when the shape changes. */
  private batchFor(B: number, T: number): BatchState {
    if (!(Number.isInteger(B) && B > 0 && Number.isInteger(T) && T > 0)) throw new Error(`B and T must be positive integers, got B=${B} T=${T}`);
    if (this.batch !== null && this.batch.B === B && this.batch.T === T) return this.batch;
    this.releaseBatch();
    const N = B * T;
    // the same accounting the micro-batch chooser reads (step-memory.ts): checkpointing and the LM head's chunk come from it
    const memory = batchMemoryPlan(this.config, B, T, this.memorySettings());
    const batch = allocateBatch(this.device, this.kernels, this.config, this.lora, memory, this.layerGroupBytes, this.paramRows(this.lmHeadName()));
    this.recordForward(batch.forwardPlan, batch, false);
    const { hidden_size: C, vocab_size: V } = this.config;
    batch.temperatureDispatches.push(...recordChunkedLmHead(batch.logprobsPlan, batch.lmHead, null, N, C, V, batch.lmHeadRows, 1));
    batch.temperatureDispatches.push(...this.recordBackward(batch, batch.dscores, batch.dhidden));
    this.batch = batch;
    return batch;
  }

  /** The LM head's parameter name: its own matrix, or the tied embedding. */
  private lmHeadName(): string {
    return this.config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  }

  private param(name: string): GPUTensor {
    if (this.halfParams?.has(name) === true) return this.halfParams.tensor(name);
    return this.params.tensor(name);
  }

  /** The bindings of a vocabulary table in row order: its row chunks when it is past one binding, else the whole table. */
  private paramRows(name: string): RowChunkTensor[] {
    return this.halfParams?.has(name) === true ? this.halfParams.rowChunks(name) : this.params.rowChunks(name);
  }

  /** The settings of this backend's memory accounting (step-memory.ts), as batchFor and chooseMicroBatch read them. */
  private memorySettings(): StepMemorySettings {
    const limits = this.device.limits;
    return {
      lora: this.lora,
      activationCheckpointing: this.activationCheckpointing,
      limits,
      alignment: limits.minStorageBufferOffsetAlignment / 4,
      frozenWeightsF16: this.halfParams !== null,
      activationsF16: this.activationsF16,
      layerGroupBytes: this.layerGroupBytes,
      lmHeadChunkBytes: this.lmHeadChunkBytes,
      maxParamBufferBytes: this.maxParamBufferBytes,
    };
  }

  /** Returns the gradient binding of a trainable parameter, or null when it is frozen (the base under LoRA). */
  private grad(name: string): GPUTensor | null {
    const layout = this.trainableLayout();
    return layout.byName.has(name) ? slotTensor(this.grads, layout, name) : null;
  }

  private loraParam(layer: number, module: LoraTargetModule, matrix: 'A' | 'B'): GPUTensor {
    return slotTensor(this.loraParams!, this.loraLayout!, loraParamName(layer, module, matrix));
  }

  private isAdapted(module: LoraTargetModule): boolean {
    return this.lora !== null && this.lora.targetModules.includes(module);
  }

  /** Returns the batch's reference forward plan, recording it on first use (no weights are copied: it binds the base, or the frozen copy). */
  private referencePlanFor(batch: BatchState): KernelPlan {
    if (batch.referencePlan !== null) return batch.referencePlan;
    if (this.lora === null && this.referenceParams === null) {
      throw new Error('no KL reference: full fine-tuning needs setReference(weights) first (GrpoTrainer freezes the weights it starts from)');
    }
    const plan = new KernelPlan(this.kernels);
    this.recordForward(plan, batch, true);
    const { hidden_size: C, vocab_size: V } = this.config;
    const lmHead = this.lora === null ? { ...batch.lmHead, weight: [{ tensor: slotTensor(this.referenceParams!, this.paramLayout, this.lmHeadName()), firstRow: 0, rows: V }] } : batch.lmHead;
    batch.referenceTemperatureDispatches = recordChunkedLmHead(plan, lmHead, null, batch.B * batch.T, C, V, batch.lmHeadRows, batch.temperature);
    batch.referencePlan = plan;
    return plan;
  }

  /** Forgets the recorded reference plan (its bindings name a buffer about to go). */
  private dropReferencePlan(): void {
    this.batch?.referencePlan?.destroy();
    if (this.batch !== null) {
      this.batch.referencePlan = null;
      this.batch.referenceTemperatureDispatches = [];
    }
  }

  /**
   * Records the forward pass (as CpuBackend.forwardPass) into `plan`: embedding, L blocks, final norm
   * (the LM head runs in chunks in the plans that need it). With `reference`, the KL reference's: LoRA
   * branches skipped, or the frozen copy's weights.
   */
  private recordForward(plan: KernelPlan, batch: BatchState, reference: boolean): void {
    const N = batch.B * batch.T;
    const C = this.config.hidden_size;
    const acts = batch.activations;
    const param = this.forwardParams(reference);
    if (reference && this.lora === null) ops.embeddingForward(plan, acts.act('encoded'), batch.ids, param('model.embed_tokens.weight'), N, C);
    else for (const chunk of this.paramRows('model.embed_tokens.weight')) ops.embeddingForward(plan, acts.act('encoded'), batch.ids, chunk.tensor, N, C, chunk);
    const L = this.config.num_hidden_layers;
    for (let l = 0; l < L; l++) for (const group of acts.groups()) this.recordLayerForward(plan, batch, l, group, reference, true);
    const last = L > 0 ? `layers.${L - 1}.residual3` : 'encoded';
    ops.rmsnormForward(plan, acts.act('lnf'), acts.act('lnf_rstd'), acts.act(last), param('model.norm.weight'), N, C, this.config.rms_norm_eps);
  }

  /** The base parameters a forward reads: the policy's, or under `reference` with full fine-tuning the frozen copy. */
  private forwardParams(reference: boolean): (name: string) => GPUTensor {
    if (reference && this.lora === null) return (name) => slotTensor(this.referenceParams!, this.paramLayout, name);
    return (name) => this.param(name);
  }

  /**
   * Records layer l's forward over a group of sequences, from its input (the previous layer's
   * residual3, or encoded; widened first when stored as f16) to layerAct(l, 'residual3'), every
   * intermediate into layerAct(l, ·); with `keepOutput`, an output stored as f16 is narrowed into its
   * kept slot (backward's recompute skips that: the slot already holds it).
   */
  private recordLayerForward(plan: KernelPlan, batch: BatchState, l: number, group: SequenceGroup, reference: boolean, keepOutput: boolean): void {
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS } = this.config;
    const T = batch.T;
    const B = group.count;
    const N = B * T;
    const residual = batch.activations.layerInput(l, group);
    const storedInput = batch.activations.halfInput(l, group);
    if (storedInput !== null) ops.convertF16ToF32(plan, residual, storedInput, N * C);
    const eps = this.config.rms_norm_eps;
    const theta = this.config.rope_theta;
    const positions = batch.positions;
    const param = this.forwardParams(reference);
    const la = (name: string): GPUTensor => batch.activations.layerAct(l, name, group);
    const lp = (name: string): GPUTensor => param(`model.layers.${l}.${name}`);
    const linear = (module: LoraTargetModule, out: GPUTensor, inp: GPUTensor): void => this.linearForward(plan, batch, l, group, module, out, inp, { param, adapters: !reference });

    // attention block
    ops.rmsnormForward(plan, la('ln1'), la('ln1_rstd'), residual, lp('input_layernorm.weight'), N, C, eps);
    linear('q_proj', la('q'), la('ln1'));
    linear('k_proj', la('k'), la('ln1'));
    linear('v_proj', la('v'), la('ln1'));
    let q = la('q'); // (B, T, NH, HS)
    let k = la('k'); // (B, T, KVH, HS)
    if (this.config.qk_norm) {
      ops.rmsnormForward(plan, la('q_normed'), la('q_rstd'), q, lp('self_attn.q_norm.weight'), N * NH, HS, eps);
      ops.rmsnormForward(plan, la('k_normed'), la('k_rstd'), k, lp('self_attn.k_norm.weight'), N * KVH, HS, eps);
      q = la('q_normed');
      k = la('k_normed');
    }
    ops.ropeForward(plan, la('q_rope'), q, positions, B, T, NH, HS, theta);
    ops.ropeForward(plan, la('k_rope'), k, positions, B, T, KVH, HS, theta);
    ops.attentionForward(plan, la('atty'), la('att'), la('q_rope'), la('k_rope'), la('v'), B, T, NH, KVH, HS);
    linear('o_proj', la('attproj'), la('atty'));
    ops.residualForward(plan, la('residual2'), residual, la('attproj'), N * C);

    // MLP block
    ops.rmsnormForward(plan, la('ln2'), la('ln2_rstd'), la('residual2'), lp('post_attention_layernorm.weight'), N, C, eps);
    linear('gate_proj', la('gate'), la('ln2'));
    linear('up_proj', la('up'), la('ln2'));
    ops.swigluForward(plan, la('swiglu'), la('gate'), la('up'), N * I);
    linear('down_proj', la('mlp_out'), la('swiglu'));
    ops.residualForward(plan, la('residual3'), la('residual2'), la('mlp_out'), N * C);
    const storedOutput = batch.activations.halfOutput(l, group);
    if (keepOutput && storedOutput !== null) ops.convertF32ToF16(plan, storedOutput, la('residual3'), N * C);
  }

  /**
   * Records the backward pass (as CpuBackend.backward, the LM head in chunks fused with its loss) and
   * returns the dispatches that hold the temperature. Layers run group by group of sequences (one
   * group when plain).
   */
  private recordBackward(batch: BatchState, dscores: GPUTensor, dhidden: GPUTensor): TemperatureDispatch[] {
    const C = this.config.hidden_size;
    const N = batch.B * batch.T;
    const plan = batch.backwardPlan;
    const acts = batch.activations;
    const L = this.config.num_hidden_layers;
    const layerInput = (l: number): string => (l === 0 ? 'encoded' : `layers.${l - 1}.residual3`);

    plan.clear(acts.gradients());
    // LM head (log-probs and their gradient, chunk by chunk) and final norm
    const gradients = { dlogprobs: batch.weights, dlnf: acts.dact('lnf'), dweight: this.grad(this.lmHeadName()) };
    const temperatureDispatches = recordChunkedLmHead(plan, batch.lmHead, gradients, N, C, this.config.vocab_size, batch.lmHeadRows, 1);
    const lastResidual = L > 0 ? `layers.${L - 1}.residual3` : 'encoded';
    ops.rmsnormBackward(plan, acts.dact(lastResidual), this.grad('model.norm.weight'), acts.dact('lnf'), acts.act(lastResidual), this.param('model.norm.weight'), acts.act('lnf_rstd'), N, C);

    for (let l = L - 1; l >= 0; l--) {
      for (const group of acts.groups()) this.recordLayerBackward(batch, l, group, layerInput(l), dscores, dhidden);
    }
    const dwte = this.grad('model.embed_tokens.weight');
    if (dwte !== null) ops.embeddingBackward(plan, dwte, acts.dact('encoded'), batch.ids, N, C);
    return temperatureDispatches;
  }

  /** Records layer l's backward over a group of sequences (checkpointed: after re-running its forward and clearing its gradients). */
  private recordLayerBackward(batch: BatchState, l: number, group: SequenceGroup, inputName: string, dscores: GPUTensor, dhidden: GPUTensor): void {
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS } = this.config;
    const T = batch.T;
    const B = group.count;
    const N = B * T;
    const plan = batch.backwardPlan;
    const acts = batch.activations;
    const positions = batch.positions;
    const theta = this.config.rope_theta;
    if (acts.checkpointing) this.recordLayerForward(plan, batch, l, group, false, false);
    for (const tensor of acts.clearsBeforeLayer(l, group)) plan.clear(tensor);
    const la = (name: string): GPUTensor => acts.layerAct(l, name, group);
    const dla = (name: string): GPUTensor => acts.layerDact(l, name, group);
    const lp = (name: string): GPUTensor => this.param(`model.layers.${l}.${name}`);
    const lg = (name: string): GPUTensor | null => this.grad(`model.layers.${l}.${name}`);
    const dinput = acts.dact(inputName, group);
    const input = acts.layerInput(l, group);
    const linear = (module: LoraTargetModule, dinp: GPUTensor, dout: GPUTensor, inp: GPUTensor): void => this.linearBackward(plan, batch, l, group, module, dinp, dout, inp, dhidden);

    // MLP block
    ops.residualBackward(plan, dla('residual2'), dla('mlp_out'), dla('residual3'), N * C);
    linear('down_proj', dla('swiglu'), dla('mlp_out'), la('swiglu'));
    ops.swigluBackward(plan, dla('gate'), dla('up'), dla('swiglu'), la('gate'), la('up'), N * I);
    linear('gate_proj', dla('ln2'), dla('gate'), la('ln2'));
    linear('up_proj', dla('ln2'), dla('up'), la('ln2'));
    ops.rmsnormBackward(plan, dla('residual2'), lg('post_attention_layernorm.weight'), dla('ln2'), la('residual2'), lp('post_attention_layernorm.weight'), la('ln2_rstd'), N, C);

    // attention block
    ops.residualBackward(plan, dinput, dla('attproj'), dla('residual2'), N * C);
    linear('o_proj', dla('atty'), dla('attproj'), la('atty'));
    ops.attentionBackward(plan, dla('q_rope'), dla('k_rope'), dla('v'), dscores, dla('atty'), la('q_rope'), la('k_rope'), la('v'), la('att'), B, T, NH, KVH, HS);
    if (this.config.qk_norm) {
      ops.ropeBackward(plan, dla('q_normed'), dla('q_rope'), positions, B, T, NH, HS, theta);
      ops.ropeBackward(plan, dla('k_normed'), dla('k_rope'), positions, B, T, KVH, HS, theta);
      ops.rmsnormBackward(plan, dla('q'), lg('self_attn.q_norm.weight'), dla('q_normed'), la('q'), lp('self_attn.q_norm.weight'), la('q_rstd'), N * NH, HS);
      ops.rmsnormBackward(plan, dla('k'), lg('self_attn.k_norm.weight'), dla('k_normed'), la('k'), lp('self_attn.k_norm.weight'), la('k_rstd'), N * KVH, HS);
    } else {
      ops.ropeBackward(plan, dla('q'), dla('q_rope'), positions, B, T, NH, HS, theta);
      ops.ropeBackward(plan, dla('k'), dla('k_rope'), positions, B, T, KVH, HS, theta);
    }
    linear('q_proj', dla('ln1'), dla('q'), la('ln1'));
    linear('k_proj', dla('ln1'), dla('k'), la('ln1'));
    linear('v_proj', dla('ln1'), dla('v'), la('ln1'));
    ops.rmsnormBackward(plan, dinput, lg('input_layernorm.weight'), dla('ln1'), input, lp('input_layernorm.weight'), la('ln1_rstd'), N, C);
  }

  /** Records out = inp·Wᵀ + b for one linear module, plus its LoRA update when the module is adapted. */
  private linearForward(
    plan: KernelPlan,
    batch: BatchState,
    layer: number,
    group: SequenceGroup,
    module: LoraTargetModule,
    out: GPUTensor,
    inp: GPUTensor,
    { param, adapters }: { param: (name: string) => GPUTensor; adapters: boolean },
  ): void {
    const { IC, OC } = linearSizes(this.config, module);
    const N = group.count * batch.T;
    const prefix = linearModuleName(layer, module);
    const bias = this.paramLayout.byName.has(`${prefix}.bias`) ? param(`${prefix}.bias`) : null;
    ops.matmulForward(plan, out, inp, param(`${prefix}.weight`), bias, N, IC, OC);
    if (adapters && this.isAdapted(module)) {
      const hidden = batch.activations.layerAct(layer, `${module}.lora_hidden`, group);
      ops.loraForward(plan, out, hidden, inp, this.loraParam(layer, module, 'A'), this.loraParam(layer, module, 'B'), N, IC, OC, this.lora!.rank, this.lora!.alpha);
    }
  }

  /** Records the gradients of linearForward: dinp always, weight and bias when trainable, LoRA when adapted. */
  private linearBackward(
    plan: KernelPlan,
    batch: BatchState,
    layer: number,
    group: SequenceGroup,
    module: LoraTargetModule,
    dinp: GPUTensor,
    dout: GPUTensor,
    inp: GPUTensor,
    dhidden: GPUTensor,
  ): void {
    const { IC, OC } = linearSizes(this.config, module);
    const N = group.count * batch.T;
    const prefix = linearModuleName(layer, module);
    const hasBias = this.paramLayout.byName.has(`${prefix}.bias`);
    ops.matmulBackward(plan, dinp, this.grad(`${prefix}.weight`), hasBias ? this.grad(`${prefix}.bias`) : null, dout, inp, this.param(`${prefix}.weight`), N, IC, OC);
    if (this.isAdapted(module)) {
      const hidden = batch.activations.layerAct(layer, `${module}.lora_hidden`, group);
      const dA = this.grad(loraParamName(layer, module, 'A'))!;
      const dB = this.grad(loraParamName(layer, module, 'B'))!;
      const dhiddenView = { ...dhidden, size: N * this.lora!.rank * 4 };
      ops.loraBackward(plan, dinp, dA, dB, dhiddenView, dout, inp, hidden, this.loraParam(layer, module, 'A'), this.loraParam(layer, module, 'B'), N, IC, OC, this.lora!.rank, this.lora!.alpha);
    }
  }
}
