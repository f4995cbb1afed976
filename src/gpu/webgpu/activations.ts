/**
 * The activations of one (B, T) batch on the GPU and their gradients, plain or checkpointed, and
 * the choice between the two. Plain: one buffer per role holding every layer's intermediates
 * (activationLayout without logits). Checkpointed (Chen et al. 2016, "Training Deep Nets with
 * Sublinear Memory Cost"): a `kept` buffer with each layer's output only, one layer's intermediates
 * in a `layer` buffer that backward refills by re-running that layer's forward, and for the
 * gradients one layer's intermediates plus two (N, C) residual gradients used in turn (layer l's
 * output gradient and its input's, cleared before reuse). The backend asks for tensors by name through `act`/`layerAct` and never sees which it is.
 * It allocates buffers; it records nothing.
 */
import type { ModelConfig } from '../model/config.ts';
import { activationLayout, buildLayout, checkpointedActivationLayouts, type Layout, type LoraConfig } from '../model/layout.ts';
import type { GPUTensor } from './kernels.ts';
import { checkBindingSizes, createStorage, largestSlotBytes, LOWER_THE_BATCH } from './storage.ts';

/** Whether activations are checkpointed: forced on or off, or chosen per batch shape from the device's limits ('auto'). */
export type ActivationCheckpointing = boolean | 'auto';

/**
 * Under 'auto', plain activations above this many bytes per role are checkpointed: WebGPU's default
 * maxBufferSize (256 MiB), the limit every adapter grants. Below it the recompute is not worth it.
 */
export const CHECKPOINT_ABOVE_BYTES = 256 * 2 ** 20;

/** The device limits the choice reads. */
export interface BufferLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
}

/**
 * Returns whether a (B, T) batch is checkpointed: as forced, or under 'auto' when its plain
 * activation buffer (one role) would pass CHECKPOINT_ABOVE_BYTES or the device's maxBufferSize, or one
 * of its tensors the binding limit.
 */
export function chooseCheckpointing(setting: ActivationCheckpointing, config: ModelConfig, B: number, T: number, lora: LoraConfig | null, limits: BufferLimits, alignment: number): boolean {
  if (setting !== 'auto') return setting;
  const plain = activationLayout(config, B, T, lora, { alignment, logits: false });
  const bytes = plain.totalSize * 4;
  return bytes > Math.min(CHECKPOINT_ABOVE_BYTES, limits.maxBufferSize) || largestSlotBytes(plain) > limits.maxStorageBufferBindingSize;
}

/** Returns the tensor of a named slot inside its buffer. */
function slotTensor(buffer: GPUBuffer, layout: Layout, name: string): GPUTensor {
  const slot = layout.byName.get(name);
  if (slot === undefined) throw new Error(`no tensor named ${name} in this layout`);
  return { buffer, offset: slot.offset * 4, size: slot.size * 4 };
}

/** The activation and activation-gradient buffers of one batch shape; see the file comment. */
export class BatchActivations {
  readonly checkpointing: boolean;
  /** Plain: every activation; checkpointed: what lives through the step (encoded, each layer's residual3, lnf, lnf_rstd, logprobs). */
  readonly layout: Layout;
  /** Checkpointed: one layer's intermediates but residual3; plain: null. */
  readonly layerLayout: Layout | null;
  /** The layout of the gradient buffer: `layout` when plain; checkpointed, `encoded`, `lnf` and the two residual gradients `residual3_grad.{0,1}` (layer l's in slot l % 2). */
  readonly gradientLayout: Layout;
  private readonly acts: GPUBuffer;
  private readonly dacts: GPUBuffer;
  private readonly layerActs: GPUBuffer | null;
  private readonly layerDacts: GPUBuffer | null;

  /** Allocates the buffers of a (B, T) batch, checking every buffer and binding against the device's limits first. */
  constructor(device: GPUDevice, config: ModelConfig, B: number, T: number, lora: LoraConfig | null, checkpointing: boolean) {
    const alignment = device.limits.minStorageBufferOffsetAlignment / 4;
    const what = `activation of a (B, T) = (${B}, ${T}) batch${checkpointing ? ' (checkpointed)' : ''}:`;
    this.checkpointing = checkpointing;
    if (checkpointing) {
      const { kept, layer } = checkpointedActivationLayouts(config, B, T, lora, { alignment });
      this.layout = kept;
      this.layerLayout = layer;
      const NC = [B * T, config.hidden_size];
      this.gradientLayout = buildLayout([['encoded', NC], ['residual3_grad.0', NC], ['residual3_grad.1', NC], ['lnf', NC]], { alignment });
      for (const layout of [kept, layer]) checkBindingSizes(device, layout, what, 4, LOWER_THE_BATCH);
    } else {
      this.layout = activationLayout(config, B, T, lora, { alignment, logits: false });
      this.layerLayout = null;
      this.gradientLayout = this.layout;
      checkBindingSizes(device, this.layout, what, 4, LOWER_THE_BATCH);
    }
    const shape = `(B, T) = (${B}, ${T})`;
    const made: GPUBuffer[] = [];
    try {
      const create = (count: number, label: string): GPUBuffer => {
        const buffer = createStorage(device, count, label, 4, LOWER_THE_BATCH);
        made.push(buffer);
        return buffer;
      };
      this.acts = create(this.layout.totalSize, `activations of a ${shape} batch`);
      this.dacts = create(this.gradientLayout.totalSize, `activation gradients of a ${shape} batch`);
      this.layerActs = this.layerLayout ? create(this.layerLayout.totalSize, `one layer's recomputed activations of a ${shape} batch`) : null;
      this.layerDacts = this.layerLayout ? create(this.layerLayout.totalSize, `one layer's activation gradients of a ${shape} batch`) : null;
    } catch (error) {
      for (const buffer of made) buffer.destroy();
      throw error;
    }
  }

  /** A tensor outside the layers (`encoded`, `lnf`, `lnf_rstd`, `logprobs`) or a layer's output `layers.{l}.residual3`. */
  act(name: string): GPUTensor {
    return slotTensor(this.acts, this.layout, name);
  }

  /** The gradient of act(name) (`encoded`, `lnf` or `layers.{l}.residual3`). */
  dact(name: string): GPUTensor {
    const layer = this.checkpointing ? /^layers\.(\d+)\.residual3$/.exec(name) : null;
    return slotTensor(this.dacts, this.gradientLayout, layer ? `residual3_grad.${Number(layer[1]) % 2}` : name);
  }

  /** Layer l's intermediate by its name within the layer (`ln1`, `att`, `q_proj.lora_hidden`, …): its own slot, or the shared layer slot when checkpointed. */
  layerAct(l: number, name: string): GPUTensor {
    if (this.layerLayout === null || name === 'residual3') return slotTensor(this.acts, this.layout, `layers.${l}.${name}`);
    return slotTensor(this.layerActs!, this.layerLayout, name);
  }

  /** The gradient of layerAct(l, name). */
  layerDact(l: number, name: string): GPUTensor {
    if (name === 'residual3') return this.dact(`layers.${l}.residual3`);
    if (this.layerLayout === null) return slotTensor(this.dacts, this.layout, `layers.${l}.${name}`);
    return slotTensor(this.layerDacts!, this.layerLayout, name);
  }

  /** The activation-gradient buffer whole, which backward clears before it starts. */
  gradients(): GPUTensor {
    return { buffer: this.dacts, offset: 0, size: this.dacts.size };
  }

  /**
   * What backward clears before layer l's gradients (checkpointed: the layer's gradient buffer, and
   * the residual gradient slot its input's gradient accumulates into, which layer l + 2 used); plain: nothing.
   */
  clearsBeforeLayer(l: number): GPUTensor[] {
    if (this.layerDacts === null) return [];
    const layer = { buffer: this.layerDacts, offset: 0, size: this.layerDacts.size };
    return l > 0 ? [layer, this.dact(`layers.${l - 1}.residual3`)] : [layer];
  }

  /** Every buffer this batch holds, for accounting. */
  buffers(): GPUBuffer[] {
    return [this.acts, this.dacts, ...(this.layerActs ? [this.layerActs] : []), ...(this.layerDacts ? [this.layerDacts] : [])];
  }

  /** Frees the buffers. */
  destroy(): void {
    for (const buffer of this.buffers()) buffer.destroy();
  }
}
