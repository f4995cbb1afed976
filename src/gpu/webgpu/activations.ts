/**
 * The activations of one (B, T) batch on the GPU and their gradients, plain or checkpointed, and
 * the choice between the two. Plain: one buffer per role holding every layer's intermediates
 * (activationLayout without logits). Checkpointed (Chen et al. 2016, "Training Deep Nets with
 * Sublinear Memory Cost"): a `kept` buffer per role with each layer's output only, and one layer's
 * intermediates in a `layer` buffer per role that backward refills by re-running that layer's
 * forward. The backend asks for tensors by name through `act`/`layerAct` and never sees which it is.
 * It allocates buffers; it records nothing.
 */
import type { ModelConfig } from '../model/config.ts';
import { activationLayout, checkpointedActivationLayouts, type Layout, type LoraConfig } from '../model/layout.ts';
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
      for (const layout of [kept, layer]) checkBindingSizes(device, layout, what, 4, LOWER_THE_BATCH);
    } else {
      this.layout = activationLayout(config, B, T, lora, { alignment, logits: false });
      this.layerLayout = null;
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
      this.dacts = create(this.layout.totalSize, `activation gradients of a ${shape} batch`);
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

  /** The gradient of act(name). */
  dact(name: string): GPUTensor {
    return slotTensor(this.dacts, this.layout, name);
  }

  /** Layer l's intermediate by its name within the layer (`ln1`, `att`, `q_proj.lora_hidden`, …): its own slot, or the shared layer slot when checkpointed. */
  layerAct(l: number, name: string): GPUTensor {
    if (this.layerLayout === null || name === 'residual3') return slotTensor(this.acts, this.layout, `layers.${l}.${name}`);
    return slotTensor(this.layerActs!, this.layerLayout, name);
  }

  /** The gradient of layerAct(l, name). */
  layerDact(l: number, name: string): GPUTensor {
    if (this.layerLayout === null || name === 'residual3') return slotTensor(this.dacts, this.layout, `layers.${l}.${name}`);
    return slotTensor(this.layerDacts!, this.layerLayout, name);
  }

  /** The whole activation-gradient buffers, which backward clears: the kept one, and the layer one (cleared again before each layer when checkpointed). */
  gradientBuffers(): { all: GPUTensor; layer: GPUTensor | null } {
    const whole = (buffer: GPUBuffer): GPUTensor => ({ buffer, offset: 0, size: buffer.size });
    return { all: whole(this.dacts), layer: this.layerDacts ? whole(this.layerDacts) : null };
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
