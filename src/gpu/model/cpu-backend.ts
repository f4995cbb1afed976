/**
 * The CPU backend: the whole Llama-family model (forward, backward, AdamW, LoRA) built from
 * the plain-TypeScript references, over one flat buffer per role laid out by layout.ts. It is the
 * oracle for the WebGPU backend and for the fast CPU backend (src/gpu/fast-cpu), which reuses this class
 * with its matmuls, attention, RoPE, SwiGLU, RMSNorm, log-softmax, residual adds and AdamW swapped through
 * CpuBackendOps, and its buffers allocated by them (the fast ops keep them in the kernels' memory); with
 * REFERENCE_OPS it is deliberately not fast (no threads, no SIMD, activations recomputed by backward).
 */
import {
  adamwUpdate,
  attentionBackward,
  attentionForward,
  clipFactor,
  embeddingBackward,
  embeddingForward,
  globalGradNorm,
  logprobsBackward,
  logprobsForward,
  loraBackward,
  loraForward,
  matmulBackward,
  matmulForward,
  residualBackward,
  residualForward,
  rmsnormBackward,
  rmsnormForward,
  ropeBackward,
  ropeForward,
  scaleInPlace,
  swigluBackward,
  swigluForward,
} from '../reference/index.ts';
import type { LogprobsOptions, ModelBackend, ModelBackendOptions, ModelWeights, NamedTensor, NamedTensors, OptimizerState, OptimizerStepOptions } from './backend.ts';
import type { ModelConfig } from './config.ts';
import { initLoraParameters, initParameters } from './init.ts';
import { activationLayout, linearModuleName, linearSizes, loraLayout, loraParamName, paramLayout, type Layout, type LoraConfig, type LoraTargetModule, writeNamedTensors } from './layout.ts';

/** Activations of one (B, T) batch and, once backward has run, their gradients (same layout). */
interface Activations {
  B: number;
  T: number;
  layout: Layout;
  acts: Float32Array;
  dacts: Float32Array | null;
}

/** The ops a CpuBackend runs that a faster engine may replace (src/gpu/fast-cpu); the references by default. */
export interface CpuBackendOps {
  matmulForward: typeof matmulForward;
  /**
   * matmulForward by one dot product per element, whatever N, for the decoder's rows of a few new
   * tokens and its LM head: a row gets the same bits whatever other rows share the call (a sequence
   * samples the same tokens alone or batched).
   */
  matmulForwardDot: typeof matmulForward;
  /** matmulForward by packed blocks, whatever N, for the decoder's prefill rows: a row gets the same bits whatever other rows share the call. */
  matmulForwardPacked: typeof matmulForward;
  matmulBackward: typeof matmulBackward;
  attentionForward: typeof attentionForward;
  attentionBackward: typeof attentionBackward;
  ropeForward: typeof ropeForward;
  ropeBackward: typeof ropeBackward;
  swigluForward: typeof swigluForward;
  swigluBackward: typeof swigluBackward;
  rmsnormForward: typeof rmsnormForward;
  rmsnormBackward: typeof rmsnormBackward;
  logprobsForward: typeof logprobsForward;
  logprobsBackward: typeof logprobsBackward;
  residualForward: typeof residualForward;
  residualBackward: typeof residualBackward;
  adamwUpdate: typeof adamwUpdate;
  /** A zeroed buffer of `length` floats for the backend's weights, gradients, moments or activations. */
  allocate(length: number): Float32Array;
  /** Gives back a buffer from allocate() that the backend no longer uses. */
  release(buffer: Float32Array): void;
}

/** The plain-TypeScript references as CpuBackendOps: the oracle. */
const REFERENCE_OPS: CpuBackendOps = {
  matmulForward,
  matmulForwardDot: matmulForward,
  matmulForwardPacked: matmulForward,
  matmulBackward,
  attentionForward,
  attentionBackward,
  ropeForward,
  ropeBackward,
  swigluForward,
  swigluBackward,
  rmsnormForward,
  rmsnormBackward,
  logprobsForward,
  logprobsBackward,
  residualForward,
  residualBackward,
  adamwUpdate,
  allocate: (length) => new Float32Array(length),
  release: () => {},
};

/** Creates a CPU backend from a config and either a seed or named tensors (all base parameters required), on the references or on `ops`. */
export async function createCpuBackend(config: ModelConfig, weights: ModelWeights, options: ModelBackendOptions = {}, ops: CpuBackendOps = REFERENCE_OPS): Promise<CpuBackend> {
  const backend = new CpuBackend(config, options.lora ?? null, 'seed' in weights ? weights.seed : 0, options.loraSeed ?? 0, ops);
  if ('tensors' in weights) {
    const missing = backend.paramLayout.slots.map((slot) => slot.name).filter((name) => !weights.tensors.has(name));
    if (missing.length > 0) {
      throw new Error(`missing ${missing.length} parameter(s): ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
    }
    await backend.setParameters(weights.tensors);
  }
  return backend;
}

/** The Llama-family model on the CPU references; see ModelBackend for the contract. */
export class CpuBackend implements ModelBackend {
  readonly kind = 'cpu';
  readonly config: ModelConfig;
  readonly lora: LoraConfig | null;
  readonly paramLayout: Layout; // Hugging Face names
  readonly loraLayout: Layout | null; // PEFT names
  private params: Float32Array; // (paramLayout.totalSize)
  private loraParams: Float32Array | null; // (loraLayout.totalSize)
  private grads: Float32Array | null = null; // gradients of the trainable buffer, allocated by the first backward
  private adamM: Float32Array | null = null;
  private adamV: Float32Array | null = null;
  private stepCount = 0;
  private activations: Activations | null = null;
  private reference: Float32Array | null = null; // (paramLayout.totalSize) the frozen KL reference of full fine-tuning
  private adaptersOn = true; // false while a LoRA reference forward runs
  /** The matmuls, attention, RoPE and SwiGLU this backend runs on; the CPU decoder samples on the same ones. */
  readonly ops: CpuBackendOps;

  /** Builds the buffers and initialises them from seed (HF init) and loraSeed (PEFT init); `ops` runs the matmuls and attention. */
  constructor(config: ModelConfig, lora: LoraConfig | null, seed: number, loraSeed: number, ops: CpuBackendOps = REFERENCE_OPS) {
    this.ops = ops;
    this.config = config;
    this.lora = lora;
    this.paramLayout = paramLayout(config);
    this.params = ops.allocate(this.paramLayout.totalSize);
    initParameters(this.params, this.paramLayout, seed);
    if (lora !== null) {
      if (!(Number.isInteger(lora.rank) && lora.rank > 0)) throw new Error(`LoRA rank must be a positive integer, got ${lora.rank}`);
      if (lora.targetModules.length === 0) throw new Error('LoRA needs at least one target module');
      this.loraLayout = loraLayout(config, lora);
      this.loraParams = ops.allocate(this.loraLayout.totalSize);
      initLoraParameters(this.loraParams, this.loraLayout, config, lora, loraSeed);
    } else {
      this.loraLayout = null;
      this.loraParams = null;
    }
  }

  async forward(ids: Int32Array, B: number, T: number): Promise<Float32Array> {
    const activations = this.forwardPass(ids, B, T);
    return this.view(activations, 'logits').slice();
  }

  async logprobs(ids: Int32Array, targets: Int32Array, B: number, T: number, temperature: number, options: LogprobsOptions = {}): Promise<Float32Array> {
    const activations = options.weights === 'reference' ? this.withReference(() => this.forwardPass(ids, B, T)) : this.forwardPass(ids, B, T);
    this.checkTokens(targets, B * T, 'targets');
    const logprobs = this.view(activations, 'logprobs');
    this.ops.logprobsForward(logprobs, this.view(activations, 'logits'), targets, B * T, this.config.vocab_size, temperature);
    return logprobs.slice();
  }

  async backward(ids: Int32Array, targets: Int32Array, weights: Float32Array, B: number, T: number, temperature: number): Promise<number> {
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V } = this.config;
    const N = B * T;
    if (weights.length !== N) throw new Error(`weights has ${weights.length} values, expected B*T = ${N}`);
    const a = this.forwardPass(ids, B, T);
    this.checkTokens(targets, N, 'targets');
    const act = (name: string): Float32Array => this.view(a, name);
    this.ops.logprobsForward(act('logprobs'), act('logits'), targets, N, V, temperature);
    let objective = 0;
    for (let i = 0; i < N; i++) objective += weights[i]! * act('logprobs')[i]!;

    this.ensureGrads();
    if (a.dacts === null) a.dacts = this.ops.allocate(a.layout.totalSize);
    a.dacts.fill(0);
    const dacts = a.dacts;
    const dact = (name: string): Float32Array => {
      const slot = a.layout.byName.get(name)!;
      return dacts.subarray(slot.offset, slot.offset + slot.size);
    };
    const positions = this.positions(B, T);
    const theta = this.config.rope_theta;
    const L = this.config.num_hidden_layers;

    // LM head and final norm
    this.ops.logprobsBackward(dact('logits'), weights, act('logits'), targets, N, V, temperature);
    const lmHeadName = this.config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
    this.ops.matmulBackward(dact('lnf'), this.grad(lmHeadName), null, dact('logits'), act('lnf'), this.param(lmHeadName), N, C, V);
    const lastResidual = L > 0 ? `layers.${L - 1}.residual3` : 'encoded';
    this.ops.rmsnormBackward(dact(lastResidual), this.grad('model.norm.weight'), dact('lnf'), act(lastResidual), this.param('model.norm.weight'), act('lnf_rstd'), N, C);

    for (let l = L - 1; l >= 0; l--) {
      const la = (name: string): Float32Array => act(`layers.${l}.${name}`);
      const dla = (name: string): Float32Array => dact(`layers.${l}.${name}`);
      const lp = (name: string): Float32Array => this.param(`model.layers.${l}.${name}`);
      const lg = (name: string): Float32Array | null => this.grad(`model.layers.${l}.${name}`);
      const inputName = l === 0 ? 'encoded' : `layers.${l - 1}.residual3`;

      // MLP block
      this.ops.residualBackward(dla('residual2'), dla('mlp_out'), dla('residual3'), N * C);
      this.linearBackward(a, l, 'down_proj', dla('swiglu'), dla('mlp_out'), la('swiglu'), N);
      this.ops.swigluBackward(dla('gate'), dla('up'), dla('swiglu'), la('gate'), la('up'), N * I);
      this.linearBackward(a, l, 'gate_proj', dla('ln2'), dla('gate'), la('ln2'), N);
      this.linearBackward(a, l, 'up_proj', dla('ln2'), dla('up'), la('ln2'), N);
      this.ops.rmsnormBackward(dla('residual2'), lg('post_attention_layernorm.weight'), dla('ln2'), la('residual2'), lp('post_attention_layernorm.weight'), la('ln2_rstd'), N, C);

      // attention block
      this.ops.residualBackward(dact(inputName), dla('attproj'), dla('residual2'), N * C);
      this.linearBackward(a, l, 'o_proj', dla('atty'), dla('attproj'), la('atty'), N);
      this.ops.attentionBackward(dla('q_rope'), dla('k_rope'), dla('v'), dla('atty'), la('q_rope'), la('k_rope'), la('v'), la('att'), B, T, NH, KVH, HS);
      if (this.config.qk_norm) {
        this.ops.ropeBackward(dla('q_normed'), dla('q_rope'), positions, B, T, NH, HS, theta);
        this.ops.ropeBackward(dla('k_normed'), dla('k_rope'), positions, B, T, KVH, HS, theta);
        this.ops.rmsnormBackward(dla('q'), lg('self_attn.q_norm.weight'), dla('q_normed'), la('q'), lp('self_attn.q_norm.weight'), la('q_rstd'), N * NH, HS);
        this.ops.rmsnormBackward(dla('k'), lg('self_attn.k_norm.weight'), dla('k_normed'), la('k'), lp('self_attn.k_norm.weight'), la('k_rstd'), N * KVH, HS);
      } else {
        this.ops.ropeBackward(dla('q'), dla('q_rope'), positions, B, T, NH, HS, theta);
        this.ops.ropeBackward(dla('k'), dla('k_rope'), positions, B, T, KVH, HS, theta);
      }
      this.linearBackward(a, l, 'q_proj', dla('ln1'), dla('q'), la('ln1'), N);
      this.linearBackward(a, l, 'k_proj', dla('ln1'), dla('k'), la('ln1'), N);
      this.linearBackward(a, l, 'v_proj', dla('ln1'), dla('v'), la('ln1'), N);
      this.ops.rmsnormBackward(dact(inputName), lg('input_layernorm.weight'), dla('ln1'), act(inputName), lp('input_layernorm.weight'), la('ln1_rstd'), N, C);
    }
    const dwte = this.grad('model.embed_tokens.weight');
    if (dwte !== null) embeddingBackward(dwte, dact('encoded'), ids, N, C);
    return objective;
  }

  async zeroGrad(): Promise<void> {
    this.grads?.fill(0);
  }

  async gradNorm(): Promise<number> {
    return this.grads === null ? 0 : globalGradNorm(this.grads, this.grads.length);
  }

  async step({ lr, beta1, beta2, eps, weightDecay, maxGradNorm }: OptimizerStepOptions): Promise<{ gradNorm: number }> {
    this.ensureGrads();
    const grads = this.grads!;
    const trainable = this.trainableParams();
    const norm = globalGradNorm(grads, grads.length);
    const factor = clipFactor(norm, maxGradNorm);
    if (factor < 1) scaleInPlace(grads, grads.length, factor);
    if (this.adamM === null || this.adamV === null) {
      this.adamM = this.ops.allocate(trainable.length);
      this.adamV = this.ops.allocate(trainable.length);
    }
    this.stepCount++;
    this.ops.adamwUpdate(trainable, grads, this.adamM, this.adamV, trainable.length, { lr, beta1, beta2, eps, weightDecay, step: this.stepCount });
    return { gradNorm: norm };
  }

  async getParameters(): Promise<NamedTensors> {
    const tensors: NamedTensors = new Map();
    const copy = (layout: Layout, buffer: Float32Array): void => {
      for (const slot of layout.slots) {
        tensors.set(slot.name, { shape: [...slot.shape], data: buffer.slice(slot.offset, slot.offset + slot.size) });
      }
    };
    copy(this.paramLayout, this.params);
    if (this.loraLayout !== null && this.loraParams !== null) copy(this.loraLayout, this.loraParams);
    return tensors;
  }

  async getGradients(): Promise<NamedTensors> {
    this.ensureGrads();
    const layout = this.lora === null ? this.paramLayout : this.loraLayout!;
    const tensors: NamedTensors = new Map();
    for (const slot of layout.slots) tensors.set(slot.name, { shape: [...slot.shape], data: this.grads!.slice(slot.offset, slot.offset + slot.size) });
    return tensors;
  }

  async setParameters(tensors: NamedTensors): Promise<void> {
    for (const [name, tensor] of tensors) this.setParameter(name, tensor);
  }

  async getOptimizerState(): Promise<OptimizerState> {
    const layout = this.trainableLayout();
    const named = (buffer: Float32Array | null): NamedTensors =>
      new Map(layout.slots.map((slot) => [slot.name, { shape: [...slot.shape], data: buffer === null ? new Float32Array(slot.size) : buffer.slice(slot.offset, slot.offset + slot.size) }]));
    return { step: this.stepCount, m: named(this.adamM), v: named(this.adamV) };
  }

  async setOptimizerState(state: OptimizerState): Promise<void> {
    const layout = this.trainableLayout();
    const m = this.ops.allocate(layout.totalSize);
    const v = this.ops.allocate(layout.totalSize);
    try {
      writeNamedTensors(m, layout, state.m, 'optimizer state m');
      writeNamedTensors(v, layout, state.v, 'optimizer state v');
      if (!Number.isInteger(state.step) || state.step < 0) throw new Error(`optimizer state: step must be a non-negative integer, got ${state.step}`);
    } catch (error) {
      this.ops.release(m);
      this.ops.release(v);
      throw error;
    }
    this.releaseAll(this.adamM, this.adamV);
    this.adamM = m;
    this.adamV = v;
    this.stepCount = state.step;
  }

  async setReference(tensors: NamedTensors | null): Promise<void> {
    if (this.lora !== null) throw new Error('with LoRA the KL reference is the base model (adapters switched off); there is nothing to freeze');
    if (tensors === null) {
      this.releaseAll(this.reference);
      this.reference = null;
      return;
    }
    const reference = this.ops.allocate(this.paramLayout.totalSize);
    try {
      writeNamedTensors(reference, this.paramLayout, tensors, 'KL reference');
    } catch (error) {
      this.ops.release(reference);
      throw error;
    }
    this.releaseAll(this.reference);
    this.reference = reference;
  }

  async getReference(): Promise<NamedTensors | null> {
    if (this.reference === null) return null;
    const reference = this.reference;
    return new Map(this.paramLayout.slots.map((slot) => [slot.name, { shape: [...slot.shape], data: reference.slice(slot.offset, slot.offset + slot.size) }]));
  }

  dispose(): void {
    this.releaseAll(this.reference, this.params, this.loraParams, this.grads, this.adamM, this.adamV, this.activations?.acts ?? null, this.activations?.dacts ?? null);
    this.reference = null;
    this.params = new Float32Array(0);
    this.loraParams = null;
    this.grads = this.adamM = this.adamV = null;
    this.activations = null;
  }

  /** Gives the non-null buffers back to the ops that allocated them. */
  private releaseAll(...buffers: (Float32Array | null)[]): void {
    for (const buffer of buffers) if (buffer !== null) this.ops.release(buffer);
  }

  /** Copies one named tensor into the parameter or LoRA buffer, checking its shape. */
  private setParameter(name: string, tensor: NamedTensor): void {
    const inBase = this.paramLayout.byName.get(name);
    const slot = inBase ?? this.loraLayout?.byName.get(name);
    if (slot === undefined) throw new Error(`unknown parameter ${name} for this ${this.config.architecture} config`);
    const size = tensor.shape.reduce((x, y) => x * y, 1);
    if (tensor.shape.length !== slot.shape.length || tensor.shape.some((d, i) => d !== slot.shape[i]) || tensor.data.length !== size) {
      throw new Error(`parameter ${name}: shape [${tensor.shape}] with ${tensor.data.length} values, expected [${slot.shape}]`);
    }
    (inBase !== undefined ? this.params : this.loraParams!).set(tensor.data, slot.offset);
  }

  /** Runs `run` (synchronous) with the KL reference's weights: LoRA switched off, or the frozen copy swapped in. */
  private withReference<R>(run: () => R): R {
    if (this.lora !== null) {
      this.adaptersOn = false;
      try {
        return run();
      } finally {
        this.adaptersOn = true;
      }
    }
    if (this.reference === null) throw new Error('no KL reference: full fine-tuning needs setReference(weights) first (GrpoTrainer freezes the weights it starts from)');
    const trained = this.params;
    this.params = this.reference;
    try {
      return run();
    } finally {
      this.params = trained;
    }
  }

  /** Runs the forward pass into the activation buffer for (B, T), up to and including logits. */
  private forwardPass(ids: Int32Array, B: number, T: number): Activations {
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V } = this.config;
    const N = B * T;
    this.checkTokens(ids, N, 'ids');
    const a = this.activationsFor(B, T);
    const act = (name: string): Float32Array => this.view(a, name);
    const positions = this.positions(B, T);
    const eps = this.config.rms_norm_eps;
    const theta = this.config.rope_theta;

    embeddingForward(act('encoded'), ids, this.param('model.embed_tokens.weight'), N, C);
    let residual = act('encoded');
    for (let l = 0; l < this.config.num_hidden_layers; l++) {
      const la = (name: string): Float32Array => act(`layers.${l}.${name}`);
      const lp = (name: string): Float32Array => this.param(`model.layers.${l}.${name}`);

      // attention block
      this.ops.rmsnormForward(la('ln1'), la('ln1_rstd'), residual, lp('input_layernorm.weight'), N, C, eps);
      this.linearForward(a, l, 'q_proj', la('q'), la('ln1'), N);
      this.linearForward(a, l, 'k_proj', la('k'), la('ln1'), N);
      this.linearForward(a, l, 'v_proj', la('v'), la('ln1'), N);
      let q = la('q'); // (B, T, NH, HS)
      let k = la('k'); // (B, T, KVH, HS)
      if (this.config.qk_norm) {
        this.ops.rmsnormForward(la('q_normed'), la('q_rstd'), q, lp('self_attn.q_norm.weight'), N * NH, HS, eps);
        this.ops.rmsnormForward(la('k_normed'), la('k_rstd'), k, lp('self_attn.k_norm.weight'), N * KVH, HS, eps);
        q = la('q_normed');
        k = la('k_normed');
      }
      this.ops.ropeForward(la('q_rope'), q, positions, B, T, NH, HS, theta);
      this.ops.ropeForward(la('k_rope'), k, positions, B, T, KVH, HS, theta);
      this.ops.attentionForward(la('atty'), la('att'), la('q_rope'), la('k_rope'), la('v'), B, T, NH, KVH, HS);
      this.linearForward(a, l, 'o_proj', la('attproj'), la('atty'), N);
      this.ops.residualForward(la('residual2'), residual, la('attproj'), N * C);

      // MLP block
      this.ops.rmsnormForward(la('ln2'), la('ln2_rstd'), la('residual2'), lp('post_attention_layernorm.weight'), N, C, eps);
      this.linearForward(a, l, 'gate_proj', la('gate'), la('ln2'), N);
      this.linearForward(a, l, 'up_proj', la('up'), la('ln2'), N);
      this.ops.swigluForward(la('swiglu'), la('gate'), la('up'), N * I);
      this.linearForward(a, l, 'down_proj', la('mlp_out'), la('swiglu'), N);
      this.ops.residualForward(la('residual3'), la('residual2'), la('mlp_out'), N * C);
      residual = la('residual3');
    }
    this.ops.rmsnormForward(act('lnf'), act('lnf_rstd'), residual, this.param('model.norm.weight'), N, C, eps);
    const lmHead = this.param(this.config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
    this.ops.matmulForward(act('logits'), act('lnf'), lmHead, null, N, C, V);
    return a;
  }

  /** out = inp·Wᵀ + b for one linear module, plus its LoRA update when the module is adapted. */
  private linearForward(a: Activations, layer: number, module: LoraTargetModule, out: Float32Array, inp: Float32Array, N: number): void {
    const { IC, OC } = linearSizes(this.config, module);
    const prefix = linearModuleName(layer, module);
    const bias = this.paramLayout.byName.has(`${prefix}.bias`) ? this.param(`${prefix}.bias`) : null;
    this.ops.matmulForward(out, inp, this.param(`${prefix}.weight`), bias, N, IC, OC);
    if (this.adaptersOn && this.lora !== null && this.lora.targetModules.includes(module)) {
      const hidden = this.view(a, `layers.${layer}.${module}.lora_hidden`);
      loraForward(out, hidden, inp, this.loraParam(layer, module, 'A'), this.loraParam(layer, module, 'B'), N, IC, OC, this.lora.rank, this.lora.alpha);
    }
  }

  /** Accumulates the gradients of linearForward: dinp always, weight and bias when trainable, LoRA when adapted. */
  private linearBackward(a: Activations, layer: number, module: LoraTargetModule, dinp: Float32Array, dout: Float32Array, inp: Float32Array, N: number): void {
    const { IC, OC } = linearSizes(this.config, module);
    const prefix = linearModuleName(layer, module);
    const hasBias = this.paramLayout.byName.has(`${prefix}.bias`);
    const weight = this.param(`${prefix}.weight`);
    this.ops.matmulBackward(dinp, this.grad(`${prefix}.weight`), hasBias ? this.grad(`${prefix}.bias`) : null, dout, inp, weight, N, IC, OC);
    if (this.lora !== null && this.lora.targetModules.includes(module)) {
      const hidden = this.view(a, `layers.${layer}.${module}.lora_hidden`);
      const dA = this.grad(loraParamName(layer, module, 'A'))!;
      const dB = this.grad(loraParamName(layer, module, 'B'))!;
      const dhidden = new Float32Array(N * this.lora.rank); // (N, r)
      loraBackward(dinp, dA, dB, dhidden, dout, inp, hidden, this.loraParam(layer, module, 'A'), this.loraParam(layer, module, 'B'), N, IC, OC, this.lora.rank, this.lora.alpha);
    }
  }

  /** Returns the activation buffers for (B, T), reallocating when the shape changes. */
  private activationsFor(B: number, T: number): Activations {
    if (!(Number.isInteger(B) && B > 0 && Number.isInteger(T) && T > 0)) throw new Error(`B and T must be positive integers, got B=${B} T=${T}`);
    if (this.activations === null || this.activations.B !== B || this.activations.T !== T) {
      const layout = activationLayout(this.config, B, T, this.lora);
      this.releaseAll(this.activations?.acts ?? null, this.activations?.dacts ?? null);
      this.activations = null; // released before the next is allocated, so the memory can reuse it
      this.activations = { B, T, layout, acts: this.ops.allocate(layout.totalSize), dacts: null };
    }
    return this.activations;
  }

  /** Throws unless tokens has n values, each in [0, V). */
  private checkTokens(tokens: Int32Array, n: number, what: string): void {
    if (tokens.length !== n) throw new Error(`${what} has ${tokens.length} values, expected B*T = ${n}`);
    const V = this.config.vocab_size;
    for (let i = 0; i < n; i++) {
      if (tokens[i]! < 0 || tokens[i]! >= V) throw new Error(`${what}[${i}] = ${tokens[i]} is outside the vocabulary [0, ${V})`);
    }
  }

  /** Returns the position of every token: t within its right-padded row. */
  private positions(B: number, T: number): Int32Array {
    const positions = new Int32Array(B * T); // (B*T)
    for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) positions[b * T + t] = t;
    return positions;
  }

  /** Allocates the gradient buffer of whatever trains (the base, or the LoRA adapters). */
  private ensureGrads(): void {
    if (this.grads === null) this.grads = this.ops.allocate(this.trainableParams().length);
  }

  /** Returns the buffer the optimizer updates. */
  private trainableParams(): Float32Array {
    return this.loraParams ?? this.params;
  }

  /** Returns the layout of the buffer the optimizer updates. */
  private trainableLayout(): Layout {
    return this.loraLayout ?? this.paramLayout;
  }

  private view(a: Activations, name: string): Float32Array {
    const slot = a.layout.byName.get(name);
    if (slot === undefined) throw new Error(`no activation named ${name}`);
    return a.acts.subarray(slot.offset, slot.offset + slot.size);
  }

  private param(name: string): Float32Array {
    const slot = this.paramLayout.byName.get(name);
    if (slot === undefined) throw new Error(`no parameter named ${name}`);
    return this.params.subarray(slot.offset, slot.offset + slot.size);
  }

  private loraParam(layer: number, module: LoraTargetModule, matrix: 'A' | 'B'): Float32Array {
    const slot = this.loraLayout!.byName.get(loraParamName(layer, module, matrix))!;
    return this.loraParams!.subarray(slot.offset, slot.offset + slot.size);
  }

  /** Returns the gradient view of a trainable parameter, or null when it is frozen (the base under LoRA). */
  private grad(name: string): Float32Array | null {
    const layout = this.lora === null ? this.paramLayout : this.loraLayout!;
    const slot = layout.byName.get(name);
    if (slot === undefined) return null;
    return this.grads!.subarray(slot.offset, slot.offset + slot.size);
  }
}
