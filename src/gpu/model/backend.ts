/**
 * The contract every model backend meets (the CPU backend built from the references, and the
 * WebGPU backend): forward to logits, per-token log-probs, backward of a weighted sum of
 * log-probs, an AdamW step with clipping, and parameters read and written as named tensors under
 * Hugging Face (and, for LoRA, PEFT) names. Every method is async so a GPU backend fits.
 */
import type { ModelConfig } from './config.ts';
import type { LoraConfig } from './layout.ts';
import type { AdamWHyperparameters } from '../reference/adamw.ts';

/** A tensor by value: row-major f32 data and its shape. */
export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

/** Tensors by name (Hugging Face names for the base model, PEFT names for LoRA adapters). */
export type NamedTensors = Map<string, NamedTensor>;

/**
 * Settings of one optimizer step: the AdamW hyperparameters but the step number (the backend counts
 * steps in its `OptimizerState`), and the clip_grad_norm_ threshold (≤ 0: no clipping).
 */
export interface OptimizerStepOptions extends Omit<AdamWHyperparameters, 'step'> {
  maxGradNorm: number;
}

/** AdamW's state: the number of steps taken and the first and second moments of each trainable parameter, by name. */
export interface OptimizerState {
  step: number;
  m: NamedTensors;
  v: NamedTensors;
}

/**
 * Which weights a log-prob call runs. 'reference' is the KL reference policy of GRPO: with LoRA the
 * base weights with the adapters switched off (the same buffers, nothing copied); with full
 * fine-tuning the copy frozen by `setReference` (an error when there is none).
 */
export interface LogprobsOptions {
  weights?: 'policy' | 'reference';
}

/** How a backend's weights start: a seeded random init (HF's: normal(0, 0.02), norms 1, biases 0) or given tensors. */
export type ModelWeights = { seed: number } | { tensors: NamedTensors };

/** Options shared by every backend's constructor function. */
export interface ModelBackendOptions {
  lora?: LoraConfig | null; // when set, only the adapters train and the base is frozen
  loraSeed?: number; // init of the LoRA A matrices (B starts at zero); default 0
}

/**
 * A Llama-family model on one backend. Token ids are (B, T) row-major, right-padded; a position's
 * target is the next token, and masking is the caller's per-token weight (0 = masked).
 */
export interface ModelBackend {
  /** Backend name, as `--backend` spells it. */
  readonly kind: 'cpu' | 'webgpu';
  /** The model's configuration. */
  readonly config: ModelConfig;
  /** The LoRA settings, or null when all parameters train. */
  readonly lora: LoraConfig | null;
  /** Runs the model and returns logits (B, T, V). */
  forward(ids: Int32Array, B: number, T: number): Promise<Float32Array>;
  /** Returns log_softmax(logits / temperature)[target] per position (B*T), under the trained weights or, with `{ weights: 'reference' }`, the KL reference. */
  logprobs(ids: Int32Array, targets: Int32Array, B: number, T: number, temperature: number, options?: LogprobsOptions): Promise<Float32Array>;
  /** Accumulates ∂(Σ_i weights[i]·logprob[i]) / ∂θ into the gradients of the trainable parameters; returns that sum. */
  backward(ids: Int32Array, targets: Int32Array, weights: Float32Array, B: number, T: number, temperature: number): Promise<number>;
  /** Sets every gradient to zero. */
  zeroGrad(): Promise<void>;
  /** Returns the global L2 norm of the trainable parameters' gradients. */
  gradNorm(): Promise<number>;
  /** Clips the gradients to maxGradNorm and applies one AdamW step (params −= …, i.e. descent on the backward's sum); returns the norm before clipping. */
  step(options: OptimizerStepOptions): Promise<{ gradNorm: number }>;
  /** Returns copies of all parameters (base and, when on, LoRA) by name. */
  getParameters(): Promise<NamedTensors>;
  /** Returns copies of the trainable parameters' gradients by name (all base parameters, or only the LoRA adapters). */
  getGradients(): Promise<NamedTensors>;
  /** Overwrites the named parameters (any subset); throws on an unknown name or a wrong shape. */
  setParameters(tensors: NamedTensors): Promise<void>;
  /** Returns a copy of AdamW's state (zeros before the first step), for checkpoints. */
  getOptimizerState(): Promise<OptimizerState>;
  /** Restores AdamW's state; every trainable parameter's m and v must be given, with its shape. */
  setOptimizerState(state: OptimizerState): Promise<void>;
  /**
   * Full fine-tuning: freezes a copy of `tensors` (every base parameter, by Hugging Face name) as the KL
   * reference, or drops it (null). It costs one more copy of the weights, so it is meant for small
   * models. With LoRA the reference is the base itself, and this throws.
   */
  setReference(tensors: NamedTensors | null): Promise<void>;
  /** Returns a copy of the frozen reference of full fine-tuning, or null (none frozen, or LoRA, whose reference is the base). */
  getReference(): Promise<NamedTensors | null>;
  /** Releases the backend's memory; it may not be used afterwards. */
  dispose(): void;
}
