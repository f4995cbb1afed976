/**
 * The activations of one (B, T) batch on the GPU and their gradients, plain or checkpointed, and
 * the choice between the two. Plain: one buffer per role holding every layer's intermediates
 * (activationLayout without logits). Checkpointed (Chen et al. 2016, "Training Deep Nets with
 * Sublinear Memory Cost"): a `kept` buffer with each layer's output only, one layer's intermediates
 * in a `layer` buffer that backward refills by re-running that layer's forward, and for the
 * gradients one layer's intermediates plus two (N, C) residual gradients used in turn (layer l's
 * output gradient and its input's, cleared before reuse). Checkpointed, a layer also runs over
 * groups of sequences (attention never looks across sequences), so the layer buffers hold one group:
 * `groupSequences` sequences, as many as fit LAYER_GROUP_BYTES. Checkpointed with `halfOutputs`
 * (f16 activations), the layer outputs that live through the step (all but the last layer's) are
 * stored as f16 in a buffer of their own, half the bytes of the largest per-batch buffer: a layer's
 * forward widens its input into an f32 `input` slot of the layer buffer and narrows its output from an
 * f32 `residual3` slot there (the conversions are the backend's to record; `halfInput`/`halfOutput`
 * name the f16 side), so every other kernel stays f32. The backend asks for tensors by
 * name and group through `act`/`layerAct`/`layerInput` and never sees which layout it is.
 * It allocates buffers; it records nothing.
 */
import type { ModelConfig } from '../model/config.ts';
import { activationLayout, buildLayout, checkpointedActivationLayouts, layerActivationShapes, type Layout, type LoraConfig } from '../model/layout.ts';
import type { GPUTensor } from './kernels.ts';
import { checkBindingSizes, createStorage, largestSlotBytes, LOWER_THE_BATCH } from './storage.ts';

/** Whether activations are checkpointed: forced on or off, or chosen per batch shape from the device's limits ('auto'). */
export type ActivationCheckpointing = boolean | 'auto';

/**
 * Under 'auto', plain activations above this many bytes per role are checkpointed: WebGPU's default
 * maxBufferSize (256 MiB), the limit every adapter grants. Below it the recompute is not worth it.
 */
export const CHECKPOINT_ABOVE_BYTES = 256 * 2 ** 20;

/** Checkpointed, the bytes one layer's recomputed activations aim at: a group of sequences that fits runs at a time (Qwen2.5-0.5B's layer at B 8 × T 256 is 202 MiB; at 2 sequences 50 MiB). */
export const LAYER_GROUP_BYTES = 64 * 2 ** 20;

/** A group of sequences [first, first + count) of the batch that a layer runs over at once. */
export interface SequenceGroup {
  first: number;
  count: number;
}

/**
 * Returns the sequences per group of a checkpointed layer: the most whose layer activations fit
 * groupBytes (default LAYER_GROUP_BYTES; at least 1), and B when a group's tokens would not start at an aligned offset
 * (T·4 bytes not a multiple of the alignment) or when not checkpointed.
 */
function chooseGroupSequences(
  config: ModelConfig,
  B: number,
  T: number,
  lora: LoraConfig | null,
  checkpointing: boolean,
  alignment: number,
  groupBytes = LAYER_GROUP_BYTES,
  halfOutputs = false,
): number {
  if (!checkpointing || T % alignment !== 0) return B;
  const perSequence = buildLayout(layerShapes(config, 1, T, lora, halfOutputs), { alignment }).totalSize * 4;
  return Math.max(1, Math.min(B, Math.floor(groupBytes / perSequence)));
}

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

/** The layouts of one batch shape's activation buffers; see BatchActivations. */
export interface ActivationLayouts {
  layout: Layout;
  /** Checkpointed with f16 outputs: `layers.{l}.residual3` for l < L − 1, in f16 values (offsets aligned in them); otherwise null. */
  halfLayout: Layout | null;
  layerLayout: Layout | null;
  /** Checkpointed: one layer's intermediate gradients (the layer layout without f16 outputs' `input` and `residual3`, whose gradients are residual slots); plain: null. */
  layerGradientLayout: Layout | null;
  gradientLayout: Layout;
  groupSequences: number;
}

/** Whether a batch stores its kept layer outputs as f16: asked for, checkpointed, and with at least one output besides the last layer's (which stays f32 for the final norm). */
export function storesHalfOutputs(config: ModelConfig, checkpointing: boolean, activationsF16: boolean): boolean {
  return activationsF16 && checkpointing && config.num_hidden_layers >= 2;
}

/** One layer's intermediates as the layer buffer holds them: without residual3 (it is kept), or with f16 outputs its f32 `input` and `residual3` too. */
function layerShapes(config: ModelConfig, B: number, T: number, lora: LoraConfig | null, halfOutputs: boolean): Array<[string, number[]]> {
  const shapes = layerActivationShapes(config, B, T, lora);
  return halfOutputs ? [['input', [B * T, config.hidden_size]], ...shapes] : shapes.filter(([name]) => name !== 'residual3');
}

/**
 * Returns the layouts BatchActivations allocates for a (B, T) batch, plain or checkpointed (pure: for
 * accounting too); `halfOutputs` (see storesHalfOutputs) moves the kept outputs of all layers but the
 * last into an f16 layout.
 */
export function activationLayouts(
  config: ModelConfig,
  B: number,
  T: number,
  lora: LoraConfig | null,
  checkpointing: boolean,
  alignment: number,
  groupBytes = LAYER_GROUP_BYTES,
  halfOutputs = false,
): ActivationLayouts {
  if (!checkpointing) {
    const layout = activationLayout(config, B, T, lora, { alignment, logits: false });
    return { layout, halfLayout: null, layerLayout: null, layerGradientLayout: null, gradientLayout: layout, groupSequences: B };
  }
  const groupSequences = chooseGroupSequences(config, B, T, lora, true, alignment, groupBytes, halfOutputs);
  const layer = buildLayout(layerShapes(config, groupSequences, T, lora, halfOutputs), { alignment });
  const layerGradient = halfOutputs ? buildLayout(layerShapes(config, groupSequences, T, lora, false), { alignment }) : layer;
  const NC = [B * T, config.hidden_size];
  const L = config.num_hidden_layers;
  const { kept } = halfOutputs
    ? {
        kept: buildLayout(
          [
            ['encoded', NC],
            [`layers.${L - 1}.residual3`, NC],
            ['lnf', NC],
            ['lnf_rstd', [B * T]],
            ['logprobs', [B * T]],
          ],
          { alignment },
        ),
      }
    : checkpointedActivationLayouts(config, B, T, lora, { alignment });
  const halfLayout = halfOutputs
    ? buildLayout(
        Array.from({ length: L - 1 }, (_, l): [string, number[]] => [`layers.${l}.residual3`, NC]),
        { alignment: alignment * 2 },
      )
    : null;
  const gradientLayout = buildLayout(
    [
      ['encoded', NC],
      ['residual3_grad.0', NC],
      ['residual3_grad.1', NC],
      ['lnf', NC],
    ],
    { alignment },
  );
  return { layout: kept, halfLayout, layerLayout: layer, layerGradientLayout: layerGradient, gradientLayout, groupSequences };
}

/**
 * Returns the tensor of a named slot inside its buffer, or with `rows` (of N = B·T, and T) the rows of
 * a sequence group in it; a layout of f16 values (`half`) gives tensors tagged dtype 'f16'.
 */
function slotTensor(buffer: GPUBuffer, layout: Layout, name: string, rows?: { group: SequenceGroup; N: number; T: number }, half = false): GPUTensor {
  const slot = layout.byName.get(name);
  if (slot === undefined) throw new Error(`no tensor named ${name} in this layout`);
  const bytes = half ? 2 : 4;
  const tag = half ? { dtype: 'f16' as const } : {};
  if (rows === undefined) return { buffer, offset: slot.offset * bytes, size: slot.size * bytes, ...tag };
  const width = slot.size / rows.N; // values per token
  return { buffer, offset: (slot.offset + rows.group.first * rows.T * width) * bytes, size: rows.group.count * rows.T * width * bytes, ...tag };
}

/** The activation and activation-gradient buffers of one batch shape; see the file comment. */
export class BatchActivations {
  readonly checkpointing: boolean;
  /** Whether the kept outputs of all layers but the last are stored as f16 (checkpointed only; see storesHalfOutputs). */
  readonly halfOutputs: boolean;
  /** Plain: every activation; checkpointed: what lives through the step (encoded, each layer's residual3 unless stored as f16, lnf, lnf_rstd, logprobs). */
  readonly layout: Layout;
  /** With halfOutputs: the f16 layout of `layers.{l}.residual3`, l < L − 1; otherwise null. */
  readonly halfLayout: Layout | null;
  /** Checkpointed: one layer's intermediates but residual3 (with f16 outputs, its f32 `input` and `residual3` too); plain: null. */
  readonly layerLayout: Layout | null;
  /** Checkpointed: one layer's intermediate gradients (see ActivationLayouts); plain: null. */
  readonly layerGradientLayout: Layout | null;
  /** The layout of the gradient buffer: `layout` when plain; checkpointed, `encoded`, `lnf` and the two residual gradients `residual3_grad.{0,1}` (layer l's in slot l % 2). */
  readonly gradientLayout: Layout;
  /** Sequences a layer runs over at once: B when plain, a group that fits LAYER_GROUP_BYTES when checkpointed. */
  readonly groupSequences: number;
  private readonly B: number;
  private readonly T: number;
  private readonly L: number;
  private readonly acts: GPUBuffer;
  private readonly halfActs: GPUBuffer | null;
  private readonly dacts: GPUBuffer;
  private readonly layerActs: GPUBuffer | null;
  private readonly layerDacts: GPUBuffer | null;

  /** Allocates the buffers of a (B, T) batch, checking every buffer and binding against the device's limits first; `activationsF16` stores the kept layer outputs as f16 where storesHalfOutputs allows. */
  constructor(device: GPUDevice, config: ModelConfig, B: number, T: number, lora: LoraConfig | null, checkpointing: boolean, groupBytes = LAYER_GROUP_BYTES, activationsF16 = false) {
    const alignment = device.limits.minStorageBufferOffsetAlignment / 4;
    const what = `activation of a (B, T) = (${B}, ${T}) batch${checkpointing ? ' (checkpointed)' : ''}:`;
    this.checkpointing = checkpointing;
    this.halfOutputs = storesHalfOutputs(config, checkpointing, activationsF16);
    this.B = B;
    this.T = T;
    this.L = config.num_hidden_layers;
    ({
      layout: this.layout,
      halfLayout: this.halfLayout,
      layerLayout: this.layerLayout,
      layerGradientLayout: this.layerGradientLayout,
      gradientLayout: this.gradientLayout,
      groupSequences: this.groupSequences,
    } = activationLayouts(config, B, T, lora, checkpointing, alignment, groupBytes, this.halfOutputs));
    for (const layout of [this.layout, this.layerLayout]) if (layout !== null) checkBindingSizes(device, layout, what, 4, LOWER_THE_BATCH);
    if (this.halfLayout !== null) checkBindingSizes(device, this.halfLayout, what, 2, LOWER_THE_BATCH);
    const shape = `(B, T) = (${B}, ${T})`;
    const made: GPUBuffer[] = [];
    try {
      const create = (count: number, label: string): GPUBuffer => {
        const buffer = createStorage(device, count, label, 4, LOWER_THE_BATCH);
        made.push(buffer);
        return buffer;
      };
      this.acts = create(this.layout.totalSize, `activations of a ${shape} batch`);
      this.halfActs = null;
      if (this.halfLayout !== null) {
        this.halfActs = createStorage(device, this.halfLayout.totalSize, `layer outputs (f16) of a ${shape} batch`, 2, LOWER_THE_BATCH);
        made.push(this.halfActs);
      }
      this.dacts = create(this.gradientLayout.totalSize, `activation gradients of a ${shape} batch`);
      this.layerActs = this.layerLayout ? create(this.layerLayout.totalSize, `one layer's recomputed activations of a ${shape} batch`) : null;
      this.layerDacts = this.layerGradientLayout ? create(this.layerGradientLayout.totalSize, `one layer's activation gradients of a ${shape} batch`) : null;
    } catch (error) {
      for (const buffer of made) buffer.destroy();
      throw error;
    }
  }

  /** The sequence groups a layer runs over, in order: one group of all B sequences when plain. */
  groups(): SequenceGroup[] {
    const groups: SequenceGroup[] = [];
    for (let first = 0; first < this.B; first += this.groupSequences) groups.push({ first, count: Math.min(this.groupSequences, this.B - first) });
    return groups;
  }

  /** A tensor outside the layers (`encoded`, `lnf`, `lnf_rstd`, `logprobs`) or a layer's output `layers.{l}.residual3` (dtype 'f16' when stored as half); with a group, only its rows. */
  act(name: string, group?: SequenceGroup): GPUTensor {
    if (this.halfLayout?.byName.has(name) === true) return slotTensor(this.halfActs!, this.halfLayout, name, this.rowsOf(group), true);
    return slotTensor(this.acts, this.layout, name, this.rowsOf(group));
  }

  /** The f32 input layer l reads for a group: `encoded` for the first layer, else the previous layer's output, or with f16 outputs the layer buffer's `input` that halfInput widens into. */
  layerInput(l: number, group: SequenceGroup): GPUTensor {
    if (l === 0) return this.act('encoded', group);
    return this.halfOutputs ? slotTensor(this.layerActs!, this.layerLayout!, 'input') : this.act(`layers.${l - 1}.residual3`, group);
  }

  /** With f16 outputs: the group's rows of the f16 tensor to widen into layerInput(l) before layer l runs (null: layerInput is read as it is). */
  halfInput(l: number, group: SequenceGroup): GPUTensor | null {
    return this.halfOutputs && l > 0 ? this.act(`layers.${l - 1}.residual3`, group) : null;
  }

  /** With f16 outputs: the group's rows of the f16 tensor that layer l's output (layerAct(l, 'residual3')) is narrowed into after its forward (null: the output is kept as written). */
  halfOutput(l: number, group: SequenceGroup): GPUTensor | null {
    return this.halfOutputs && l < this.L - 1 ? this.act(`layers.${l}.residual3`, group) : null;
  }

  /** The gradient of act(name) (`encoded`, `lnf` or `layers.{l}.residual3`); with a group, only its rows. */
  dact(name: string, group?: SequenceGroup): GPUTensor {
    const layer = this.checkpointing ? /^layers\.(\d+)\.residual3$/.exec(name) : null;
    return slotTensor(this.dacts, this.gradientLayout, layer ? `residual3_grad.${Number(layer[1]) % 2}` : name, this.rowsOf(group));
  }

  /**
   * Layer l's intermediate for a sequence group, by its name within the layer (`ln1`, `att`,
   * `q_proj.lora_hidden`, …): the group's rows of its own slot when plain; when checkpointed the shared
   * layer slot (sized for groupSequences; a smaller last group uses its start), or the group's rows of
   * the kept `residual3` (with f16 outputs only the last layer's: the others' residual3 is a layer slot,
   * narrowed into halfOutput).
   */
  layerAct(l: number, name: string, group: SequenceGroup): GPUTensor {
    if (this.layerLayout === null || (name === 'residual3' && this.halfOutput(l, group) === null)) return slotTensor(this.acts, this.layout, `layers.${l}.${name}`, this.rowsOf(group));
    return slotTensor(this.layerActs!, this.layerLayout, name);
  }

  /** The gradient of layerAct(l, name, group). */
  layerDact(l: number, name: string, group: SequenceGroup): GPUTensor {
    if (name === 'residual3') return this.dact(`layers.${l}.residual3`, group);
    if (this.layerLayout === null) return slotTensor(this.dacts, this.layout, `layers.${l}.${name}`, this.rowsOf(group));
    return slotTensor(this.layerDacts!, this.layerGradientLayout!, name);
  }

  /** The row selection of a group within the whole batch (undefined: the whole tensor). */
  private rowsOf(group: SequenceGroup | undefined): { group: SequenceGroup; N: number; T: number } | undefined {
    if (group === undefined || (group.first === 0 && group.count === this.B)) return undefined;
    return { group, N: this.B * this.T, T: this.T };
  }

  /** The activation-gradient buffer whole, which backward clears before it starts. */
  gradients(): GPUTensor {
    return { buffer: this.dacts, offset: 0, size: this.dacts.size };
  }

  /**
   * What backward clears before layer l's gradients (checkpointed: the layer's gradient buffer, and
   * the residual gradient slot its input's gradient accumulates into, which layer l + 2 used); plain: nothing.
   */
  clearsBeforeLayer(l: number, group: SequenceGroup): GPUTensor[] {
    if (this.layerDacts === null) return [];
    const layer = { buffer: this.layerDacts, offset: 0, size: this.layerDacts.size };
    return l > 0 ? [layer, this.dact(`layers.${l - 1}.residual3`, group)] : [layer];
  }

  /** Every buffer this batch holds, for accounting. */
  buffers(): GPUBuffer[] {
    return [this.acts, ...(this.halfActs ? [this.halfActs] : []), this.dacts, ...(this.layerActs ? [this.layerActs] : []), ...(this.layerDacts ? [this.layerDacts] : [])];
  }

  /** Frees the buffers. */
  destroy(): void {
    for (const buffer of this.buffers()) buffer.destroy();
  }
}
