/**
 * The fused multi-step decode (`decode_steps.wgsl`): which models it runs (f32 weights in the
 * backend's one parameter buffer, no LoRA, no MLP bias, shapes within the device's limits; anything
 * else stays on the layered plan), and one recorded dispatch per batch bucket that runs up to
 * MAX_FUSED_STEPS decode steps of every sequence, one workgroup per 1, 2 or 4 sequences (they share
 * each weight load of the products), over the decoder's own
 * paged KV cache (so prefill, the layered plan and this kernel share one cache). Only the draws
 * ((steps, B) × 16 bytes) are read back, once per call. The decoder (webgpu-decoder.ts) owns the
 * pages and the token lists; this module packs the kernel's inputs and unpacks its results.
 */
import type { DeviceDecodePlan, DeviceDrawn } from '../inference/decoder.ts';
import { stopsAfter } from '../inference/decode-steps.ts';
import type { ModelConfig } from '../model/config.ts';
import { linearModuleName, type LoraConfig, type LoraTargetModule } from '../model/layout.ts';
import { isSoftwareAdapter } from './device.ts';
import { createTensor, KernelPlan, ROPE_TABLE_POSITIONS, u32, f32, type Dispatch, type GPUTensor, type Kernels, type Param } from './kernels.ts';
import { DRAW_WORDS, DRAWN_BYTES, packDraws, readStaged, stageRead, toTokenDraw } from './sampling.ts';
import type { BackendWeightsView } from './webgpu-backend.ts';

/** Most decode steps one fused dispatch runs (its uniforms and results are sized for it). */
export const MAX_FUSED_STEPS = 32;
/** Most stop ids per sequence the kernel checks; a call with more runs one step per call instead. */
export const MAX_STOP_IDS = 16;

const GLOBAL_WORDS = 16; // ints[0] = theta as f32 bits
const LAYER_WORDS = 16; // inNorm, q, qb, k, kb, v, vb, qNorm, kNorm, o, ob, postNorm, gate, up, down, pad
const STATE_WORDS = 8; // position, token, done, maxDraws, stopStart, stopCount, drawn, pad
const NONE = 0xffffffff;

/** The kernel's threads per sequence: 4 on a software adapter (one SwiftShader SIMD group: its barriers cost nothing), 64 on a GPU. */
function fusedWorkgroupSize(software: boolean): number {
  return software ? 4 : 64;
}

/** The sequences one workgroup of the kernel serves: 1, 2 or 4. */
export type FusedSequencesPerWorkgroup = 1 | 2 | 4;

/**
 * How many sequences a workgroup serves by default: on a software adapter 4 once the batch keeps
 * both of a 2-core machine's cores busy with them (8 or more: loads decide the speed there, and the
 * 4 share each weight load), else 1; on a GPU 1 (its many cores want many workgroups). Fewer when the
 * input vectors would not fit the device's workgroup memory.
 */
export function fusedSequencesPerWorkgroup(software: boolean, batch: number, config: ModelConfig, workgroupSize: number, device: GPUDevice): FusedSequencesPerWorkgroup {
  let seqs: FusedSequencesPerWorkgroup = software && batch >= 8 ? 4 : 1;
  while (seqs > 1 && workgroupBytes(config, workgroupSize, seqs) > device.limits.maxComputeWorkgroupStorageSize) seqs = seqs === 4 ? 2 : 1;
  return seqs;
}

/** vec4s of the kernel's shared input vector: the longest product input (C, NH·HS, I) / 4. */
function inputVec4s(config: ModelConfig): number {
  return Math.ceil(Math.max(config.hidden_size, config.num_attention_heads * config.head_dim, config.intermediate_size) / 4);
}

/** Bytes of workgroup memory the kernel declares at a workgroup size and sequences per workgroup: the input vectors, the reduction arrays, the states and draws. */
function workgroupBytes(config: ModelConfig, workgroupSize: number, seqs: number): number {
  return 16 * inputVec4s(config) * seqs + 24 * workgroupSize + 272;
}

/** Where the model's weights sit for the kernel: the parameter buffer and, per name, the offset in floats. */
interface WeightOffsets {
  buffer: GPUBuffer;
  offset(name: string): number;
  optional(name: string): number;
}

/** Returns why the fused kernel cannot decode this model on this device, or null when it can. */
export function fusedDecoderProblem(config: ModelConfig, lora: LoraConfig | null, weights: BackendWeightsView, device: GPUDevice): string | null {
  if (lora !== null && lora.targetModules.length > 0) return 'LoRA adapters (the layered plan applies them)';
  const { num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS } = config;
  if (NH % KVH !== 0) return `${NH} query heads are not a multiple of ${KVH} key/value heads`;
  if (HS % 2 !== 0) return `odd head_dim ${HS}`;
  const inputs = [config.hidden_size, NH * HS, config.intermediate_size];
  if (inputs.some((n) => n % 4 !== 0)) return `a product input size (hidden ${inputs[0]}, heads·head_dim ${inputs[1]}, intermediate ${inputs[2]}) is not a multiple of 4`;
  const shared = workgroupBytes(config, 64, 1);
  if (shared > device.limits.maxComputeWorkgroupStorageSize) return `its input vector needs ${shared} bytes of workgroup memory, past the device's ${device.limits.maxComputeWorkgroupStorageSize}`;
  const limits = device.limits;
  if (limits.maxStorageBuffersPerShaderStage < 8) return `the device binds ${limits.maxStorageBuffersPerShaderStage} storage buffers per stage; the kernel needs 8`;
  const embed = weights.param('model.embed_tokens.weight');
  if (embed === null) return 'no embedding';
  const names = weightNames(config);
  for (const name of names) {
    const tensor = weights.param(name);
    if (tensor === null) return `no parameter ${name}`;
    if (tensor.dtype === 'f16') return `${name} is stored as f16 (the *_f16w kernels read it)`;
    if (tensor.buffer !== embed.buffer) return `${name} is not in the parameter buffer`;
  }
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const modules: LoraTargetModule[] = ['gate_proj', 'up_proj', 'down_proj'];
    if (modules.some((module) => weights.param(`${linearModuleName(l, module)}.bias`) !== null)) return 'an MLP bias';
  }
  if (embed.buffer.size > limits.maxStorageBufferBindingSize) return `the parameter buffer (${embed.buffer.size} bytes) is past maxStorageBufferBindingSize`;
  return null;
}

/** The parameters the kernel reads (biases and q/k norms only where the config has them). */
function weightNames(config: ModelConfig): string[] {
  const names = ['model.embed_tokens.weight', 'model.norm.weight'];
  if (!config.tie_word_embeddings) names.push('lm_head.weight');
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}`;
    names.push(`${p}.input_layernorm.weight`, `${p}.post_attention_layernorm.weight`);
    for (const module of ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const) names.push(`${linearModuleName(l, module)}.weight`);
    if (config.qk_norm) names.push(`${p}.self_attn.q_norm.weight`, `${p}.self_attn.k_norm.weight`);
  }
  return names;
}

function weightOffsets(weights: BackendWeightsView): WeightOffsets {
  const embed = weights.param('model.embed_tokens.weight')!;
  const floats = (tensor: GPUTensor): number => tensor.offset / 4;
  return {
    buffer: embed.buffer,
    offset: (name) => floats(weights.param(name)!),
    optional: (name) => {
      const tensor = weights.param(name);
      return tensor === null ? NONE : floats(tensor);
    },
  };
}

/** What one call feeds a sequence: the cache length before it, the token to feed, its pages, and its plan. */
export interface FusedSequenceInput {
  position: number;
  token: number;
  pages: readonly number[];
  plan: DeviceDecodePlan;
}

/** The shared state of a decoder the plans bind: its cache and sizes. */
export interface FusedDecoderContext {
  kernels: Kernels;
  config: ModelConfig;
  weights: BackendWeightsView;
  keys: GPUBuffer;
  values: GPUBuffer;
  layerFloats: number; // floats of one layer's keys
  pageSize: number;
  maxPages: number; // MP, pages per sequence
  workgroupSize: number;
  sequencesPerWorkgroup: FusedSequencesPerWorkgroup;
}

/** decode_steps recorded for up to `batch` sequences: its buffers and dispatch. */
export class FusedDecodePlan {
  private readonly ints: GPUTensor;
  private readonly out: GPUTensor;
  private readonly scratch: GPUTensor;
  private readonly plan: KernelPlan;
  private readonly dispatch: Dispatch;
  private readonly params: Param[];
  private readonly stateBase: number;
  private readonly tableBase: number;
  private readonly stopBase: number;
  private readonly drawBase: number;
  private readonly rowsBase: number;

  constructor(
    private readonly context: FusedDecoderContext,
    readonly batch: number,
  ) {
    const { kernels, config, weights, pageSize, maxPages } = context;
    const device = kernels.device;
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V, num_hidden_layers: L } = config;
    const QD = NH * HS;
    const KVD = KVH * HS;
    const maxLen = maxPages * pageSize;
    // Per sequence: x, ln (C), q (QD), k, v (KVD), att (QD), mlp (I), 1/Σexp per head (NH), scores (NH, maxLen), logits (V).
    const layout = { x: 0, ln: C, q: 2 * C, k: 2 * C + QD, v: 2 * C + QD + KVD, att: 2 * C + QD + 2 * KVD, mlp: 2 * C + 2 * QD + 2 * KVD };
    const inv = layout.mlp + I;
    const scores = inv + NH;
    const logits = scores + NH * maxLen;
    const stride = Math.ceil((logits + V) / 4) * 4;
    const seqs = context.sequencesPerWorkgroup;
    const workgroups = Math.ceil(batch / seqs);
    const scratchBytes = workgroups * seqs * stride * 4; // whole workgroups: the products run on every slot
    if (scratchBytes > device.limits.maxStorageBufferBindingSize)
      throw new Error(`fused decoder: ${batch} sequences need ${scratchBytes} bytes of activations in one binding, past maxStorageBufferBindingSize`);
    this.scratch = createTensor(device, scratchBytes, 'fused decoder activations');
    this.stateBase = GLOBAL_WORDS + L * LAYER_WORDS;
    this.tableBase = this.stateBase + batch * STATE_WORDS;
    this.stopBase = this.tableBase + batch * maxPages;
    this.rowsBase = this.stopBase + batch * MAX_STOP_IDS;
    this.drawBase = this.rowsBase + batch * maxLen;
    const intWords = this.drawBase + batch * DRAW_WORDS + MAX_FUSED_STEPS * batch;
    this.ints = createTensor(device, intWords * 4, 'fused decoder tables');
    if (workgroupBytes(config, context.workgroupSize, seqs) > device.limits.maxComputeWorkgroupStorageSize)
      throw new Error(
        `fused decoder: workgroup size ${context.workgroupSize} with ${seqs} sequences needs more than the device's ${device.limits.maxComputeWorkgroupStorageSize} bytes of workgroup memory`,
      );
    this.out = createTensor(device, MAX_FUSED_STEPS * batch * DRAWN_BYTES, 'fused decoder drawn tokens');

    // The globals and per-layer weight offsets, written once (the weights are read in place).
    const w = weightOffsets(weights);
    const meta = new Uint32Array(GLOBAL_WORDS + L * LAYER_WORDS);
    new Float32Array(meta.buffer, 0, 1)[0] = config.rope_theta;
    for (let l = 0; l < L; l++) {
      const p = `model.layers.${l}`;
      const name = (module: LoraTargetModule): string => linearModuleName(l, module);
      meta.set(
        [
          w.offset(`${p}.input_layernorm.weight`),
          w.offset(`${name('q_proj')}.weight`),
          w.optional(`${name('q_proj')}.bias`),
          w.offset(`${name('k_proj')}.weight`),
          w.optional(`${name('k_proj')}.bias`),
          w.offset(`${name('v_proj')}.weight`),
          w.optional(`${name('v_proj')}.bias`),
          config.qk_norm ? w.offset(`${p}.self_attn.q_norm.weight`) : NONE,
          config.qk_norm ? w.offset(`${p}.self_attn.k_norm.weight`) : NONE,
          w.offset(`${name('o_proj')}.weight`),
          w.optional(`${name('o_proj')}.bias`),
          w.offset(`${p}.post_attention_layernorm.weight`),
          w.offset(`${name('gate_proj')}.weight`),
          w.offset(`${name('up_proj')}.weight`),
          w.offset(`${name('down_proj')}.weight`),
          0,
        ],
        GLOBAL_WORDS + l * LAYER_WORDS,
      );
    }
    device.queue.writeBuffer(this.ints.buffer, 0, meta);

    const table = kernels.ropeTable(HS, config.rope_theta);
    this.params = [
      u32(batch),
      u32(1),
      u32(L),
      u32(C),
      u32(I),
      u32(NH),
      u32(KVH),
      u32(HS),
      u32(V),
      u32(maxPages),
      u32(context.layerFloats),
      f32(config.rms_norm_eps),
      u32(ROPE_TABLE_POSITIONS),
      u32(w.offset('model.embed_tokens.weight')),
      u32(w.offset('model.norm.weight')),
      u32(w.offset(config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight')),
      u32(stride),
      u32(maxLen),
      u32(this.stateBase),
      u32(this.tableBase),
      u32(this.rowsBase),
      u32(this.drawBase),
      u32(layout.ln),
      u32(layout.q),
      u32(layout.k),
      u32(layout.v),
      u32(layout.att),
      u32(layout.mlp),
      u32(inv),
      u32(scores),
      u32(logits),
    ];
    this.plan = new KernelPlan(kernels);
    const whole = (buffer: GPUBuffer): GPUTensor => ({ buffer, offset: 0, size: buffer.size });
    this.dispatch = this.plan.add(
      kernels.dispatch(
        'decode_steps',
        { WG: context.workgroupSize, SEQS: seqs, QK_NORM: config.qk_norm, VIN4: inputVec4s(config), PAGE: pageSize },
        [whole(w.buffer), whole(w.buffer), whole(context.keys), whole(context.values), this.scratch, this.ints, this.out, table],
        this.params,
        [workgroups, 1, 1],
      ),
    );
  }

  /**
   * Runs up to `steps` (≤ MAX_FUSED_STEPS) decode steps of the given sequences (≤ batch; their pages
   * must already cover every position they may write) in one submit; returns each sequence's draws,
   * cut where the kernel stopped it.
   */
  async run(inputs: readonly FusedSequenceInput[], steps: number): Promise<DeviceDrawn[]> {
    const { kernels, config, maxPages } = this.context;
    const device = kernels.device;
    const B = this.batch;
    const V = config.vocab_size;
    if (inputs.length > B || steps > MAX_FUSED_STEPS) throw new Error(`fused decoder: ${inputs.length} sequences × ${steps} steps past its ${B} × ${MAX_FUSED_STEPS}`);
    // Sequence states, page tables and stop ids in one upload; padding sequences are done from the start.
    const words = new Uint32Array(this.stopBase + B * MAX_STOP_IDS - this.stateBase);
    for (let b = 0; b < B; b++) {
      const input = inputs[b];
      const at = b * STATE_WORDS;
      if (input === undefined) {
        words[at + 2] = 1;
        continue;
      }
      const stopStart = this.stopBase + b * MAX_STOP_IDS;
      words.set([input.position, input.token, 0, input.plan.maxDraws, stopStart, input.plan.stopIds.length, 0, 0], at);
      words.set(input.pages, this.tableBase - this.stateBase + b * maxPages);
      words.set(input.plan.stopIds, stopStart - this.stateBase);
    }
    device.queue.writeBuffer(this.ints.buffer, this.ints.offset + this.stateBase * 4, words);
    // Draws: (B, DRAW_WORDS) params, then (steps, B) uniforms.
    const drawBytes = packDraws(Array.from({ length: B }, (_, b) => toTokenDraw({ row: b, params: inputs[b]?.plan.params ?? { temperature: 0 }, uniform: 0 }, V)));
    const uniforms = new Float32Array(steps * B);
    inputs.forEach((input, b) => {
      if (input.plan.params.temperature === 0) return;
      for (let s = 0; s < Math.min(steps, input.plan.maxDraws); s++) uniforms[s * B + b] = Math.min(Math.fround(input.plan.uniforms[s]!), 1 - 2 ** -24);
    });
    device.queue.writeBuffer(this.ints.buffer, this.ints.offset + this.drawBase * 4, drawBytes, 0, B * DRAW_WORDS * 4);
    device.queue.writeBuffer(this.ints.buffer, this.ints.offset + (this.drawBase + B * DRAW_WORDS) * 4, uniforms);
    this.params[1] = u32(steps);
    kernels.writeParams(this.dispatch, this.params);

    const encoder = device.createCommandEncoder();
    this.plan.encode(encoder);
    const bytes = steps * B * DRAWN_BYTES;
    const staging = stageRead(device, encoder, this.out, bytes);
    device.queue.submit([encoder.finish()]);
    const result = await readStaged(staging, bytes);
    const bits = new Int32Array(result);
    const floats = new Float32Array(result);
    return inputs.map((input, b) => {
      const ids: number[] = [];
      const logprobs: number[] = [];
      const entropies: number[] = [];
      for (let s = 0; s < steps; s++) {
        const at = 4 * (s * B + b);
        ids.push(bits[at]!);
        logprobs.push(floats[at + 1]!);
        entropies.push(floats[at + 2]!);
        if (stopsAfter(input.plan, ids.at(-1)!, ids.length)) break;
      }
      return { ids: Int32Array.from(ids), logprobs: Float32Array.from(logprobs), entropies: Float32Array.from(entropies) };
    });
  }

  /** Frees the plan's buffers. */
  destroy(): void {
    this.plan.destroy();
    for (const tensor of [this.ints, this.out, this.scratch]) tensor.buffer.destroy();
  }
}

/** Returns the fused kernel's threads per sequence for a device. */
export function fusedWorkgroupSizeFor(kernels: Kernels): number {
  return fusedWorkgroupSize(isSoftwareAdapter(kernels.gpu.adapter));
}
