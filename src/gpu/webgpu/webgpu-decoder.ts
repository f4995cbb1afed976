/**
 * The WebGPU decoder: the `Decoder` contract (src/gpu/inference/decoder.ts) on the engine's own
 * buffers. Weights are read in place from the WebGPU backend (`decoderView()`: no copy; LoRA
 * applied unmerged from the backend's adapter buffer), so after a training step a decoder sees the
 * new weights and only its caches are stale. Frozen matrices stored as f16 (frozenWeightsF16) are
 * read by the *_f16w kernels, as in the backend. Keys (after q/k norm and RoPE) and values live in a
 * paged KV cache: per layer (pages, PAGE, KVH·HS) in one keys and one values buffer, a sequence
 * owning a list of pages of PAGE tokens (paged-kv-cache.ts). A call stacks the new tokens of all
 * its sequences into N rows (a ragged batch; each row carries its absolute position, sequence and
 * page table), runs every per-row op over them, stores the rows' roped keys and values
 * (`rope_kv_cache_write`), attends each row over its own sequence's cache (`attention_decode_forward`)
 * and computes the final norm and LM head on each sequence's last row only. `prefill` and `decode`
 * read the (B, V) logits back; `prefillAndSample`, `decodeAndSample` and `decodeSteps` (what
 * generate.ts uses) draw the tokens on the GPU (`sample_tokens` through sampling.ts, or inside the
 * fused multi-step kernel: see decodePath) and read back only the draws (16 bytes each: id,
 * log-probability, entropy, kept mass). Plans are recorded once per (rows, sequences) bucket (powers
 * of two; padding rows write to a scratch page). It is not a backend.
 */
import type { Decoder, DeviceDecodePlan, DeviceDraw, DeviceDrawn, SequenceId } from '../inference/decoder.ts';
import { checkDecodeSteps, decodeStepsOneByOne } from '../inference/decode-steps.ts';
import type { ModelBackend } from '../model/backend.ts';
import type { ModelConfig } from '../model/config.ts';
import { linearModuleName, linearSizes, loraParamName, type LoraConfig, type LoraTargetModule } from '../model/layout.ts';
import { PageAllocator } from '../inference/paged-kv-cache.ts';
import * as decoderOps from './decoder-ops.ts';
import { isSoftwareAdapter } from './device.ts';
import { FusedDecodePlan, fusedDecoderProblem, fusedSequencesPerWorkgroup, fusedWorkgroupSizeFor, MAX_FUSED_STEPS, MAX_STOP_IDS, type FusedSequencesPerWorkgroup } from './fused-decoder.ts';
import { resolveDecodePath, type ResolvedDecodePath } from './decode-path-cache.ts';
import { runPathTrial, type DecodePath, type PathTrialResult } from './decode-path-trial.ts';
import { createTensor, KernelPlan, type Dispatch, type GPUTensor, type Kernels } from './kernels.ts';
import * as ops from './ops.ts';
import { DRAW_WORDS, DRAWN_BYTES, packDraws, readStaged, sampleOnDevice, sampleTokens, setDrawCount, stageRead, toTokenDraw, unpackDrawn } from './sampling.ts';
import { WebGPUBackend, type BackendWeightsView } from './webgpu-backend.ts';

/** Tokens per cache page. With KVH·HS a multiple of 4, a page of one layer is a multiple of 256 bytes (the binding alignment). */
const KV_PAGE_SIZE = 16;

/** Sizes of a WebGPU decoder. */
export interface WebGPUDecoderOptions {
  /** Bytes of KV cache (keys and values of every layer), rounded down to whole pages and to the device's buffer limits; default 256 MiB. */
  cacheBytes?: number;
  /** The longest sequence (prompt and completion), in tokens; default 8192. */
  maxSequenceLength?: number;
  /** Most rows (new tokens) per submitted batch; longer prefills run in several batches; default 1024. */
  maxRows?: number;
  /**
   * How decodeSteps runs: 'fused' (decode_steps.wgsl, many steps per dispatch, where the model
   * allows it), 'layered' (the recorded per-layer plan, one submit per step), or 'auto' (default):
   * a short timed trial of both per adapter, model shape and batch bucket, remembered for the process
   * and in the context's TuningStore when the host passed one (decode-path-cache.ts).
   */
  decodePath?: DecodePath | 'auto';
  /** Threads per sequence of the fused kernel (a power of two); default 4 on a software adapter, 64 on a GPU. Tests force both. */
  fusedWorkgroupSize?: number;
  /** Sequences per workgroup of the fused kernel (1, 2 or 4); by default fusedSequencesPerWorkgroup's choice per batch bucket. Tests force them. */
  fusedSequencesPerWorkgroup?: FusedSequencesPerWorkgroup;
}

export type { DecodePath } from './decode-path-trial.ts';

/** One sequence: its tokens and the cache pages that hold them. */
interface SequenceState {
  tokens: number[];
  pages: number[];
}

/** The buffers and recorded plan of one (rows, sequences) bucket. */
interface StepPlan {
  rows: number; // Ncap
  batch: number; // Bcap
  ids: GPUTensor; // (Ncap) i32
  positions: GPUTensor; // (Ncap) i32
  rowSeq: GPUTensor; // (Ncap) i32, a row of pageTable; padding rows use row Bcap
  pageTable: GPUTensor; // (Bcap + 1, MP) i32, row Bcap all scratch page 0
  lastRows: GPUTensor; // (Bcap) i32
  logits: GPUTensor; // (Bcap, V)
  buffers: GPUBuffer[];
  plan: KernelPlan;
  /** The sampling pass over this plan's logits, per capacity of draws (a power of two). */
  samplers: Map<number, SamplerPlan>;
}

/** sample_tokens recorded over a step's logits for up to `capacity` draws. */
interface SamplerPlan {
  draws: GPUTensor; // (capacity, DRAW_WORDS) words
  out: GPUTensor; // (capacity, 4) results
  plan: KernelPlan;
  dispatch: Dispatch;
}

/** Plans kept per decoder (least recently used dropped first). */
const MAX_PLANS = 8;

/** Creates a WebGPU decoder over a WebGPU backend's weights; plugs into `new LocalChatClient({ createDecoder })`. */
export async function createWebGPUDecoder(backend: ModelBackend, options: WebGPUDecoderOptions = {}): Promise<WebGPUDecoder> {
  if (!(backend instanceof WebGPUBackend)) throw new Error(`the WebGPU decoder needs a WebGPU backend, got a ${backend.kind} backend (use createCpuDecoder)`);
  return new WebGPUDecoder(backend.kernels, backend.config, backend.lora, backend.decoderView(), options);
}

/** Returns the smallest power of two ≥ n. */
function bucket(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, n)));
}

/** KV-cache decoding on WebGPU; see the file comment and Decoder for the contract. */
export class WebGPUDecoder implements Decoder {
  readonly vocabSize: number;
  /** Pages in the cache (page 0 is scratch), tokens per page, and the longest sequence. */
  readonly capacity: { pages: number; pageSize: number; tokens: number; bytes: number; maxSequenceLength: number };
  private readonly device: GPUDevice;
  private readonly keys: GPUBuffer; // (L, pages, PAGE, KVD)
  private readonly values: GPUBuffer; // (L, pages, PAGE, KVD)
  private readonly layerBytes: number; // bytes of one layer's (pages, PAGE, KVD)
  private readonly pageBytes: number; // bytes of one layer's page
  private readonly MP: number; // most pages per sequence
  private readonly maxRows: number;
  private readonly allocator: PageAllocator;
  private readonly sequences = new Map<SequenceId, SequenceState>();
  private readonly plans = new Map<string, StepPlan>();
  private readonly fusedPlans = new Map<number, FusedDecodePlan>();
  /** Why the fused kernel cannot run this model here, or null. */
  readonly fusedProblem: string | null;
  private readonly decodePath: DecodePath | 'auto';
  private readonly fusedWorkgroupSize: number;
  private readonly fusedSequences: FusedSequencesPerWorkgroup | undefined;
  private nextId = 1;
  private disposed = false;

  constructor(
    private readonly kernels: Kernels,
    readonly config: ModelConfig,
    readonly lora: LoraConfig | null,
    private readonly weights: BackendWeightsView,
    { cacheBytes = 256 * 2 ** 20, maxSequenceLength = 8192, maxRows = 1024, decodePath = 'auto', fusedWorkgroupSize, fusedSequencesPerWorkgroup: fusedSequences }: WebGPUDecoderOptions = {},
  ) {
    this.device = kernels.device;
    this.fusedProblem = fusedDecoderProblem(config, lora, weights, kernels.device);
    this.decodePath = decodePath;
    this.fusedWorkgroupSize = fusedWorkgroupSize ?? fusedWorkgroupSizeFor(kernels);
    this.fusedSequences = fusedSequences;
    this.vocabSize = config.vocab_size;
    const KVD = config.num_key_value_heads * config.head_dim;
    const L = config.num_hidden_layers;
    this.pageBytes = KV_PAGE_SIZE * KVD * 4;
    const limits = this.device.limits;
    const byBudget = Math.floor(cacheBytes / (2 * L * this.pageBytes));
    const byBuffer = Math.floor(limits.maxBufferSize / (L * this.pageBytes));
    const byBinding = Math.floor(limits.maxStorageBufferBindingSize / this.pageBytes);
    const pages = Math.min(byBudget, byBuffer, byBinding);
    if (pages < 2) throw new Error(`WebGPU decoder: cacheBytes = ${cacheBytes} holds no page of ${KV_PAGE_SIZE} tokens (${2 * L * this.pageBytes} bytes for keys and values of every layer)`);
    this.layerBytes = pages * this.pageBytes;
    this.MP = Math.ceil(maxSequenceLength / KV_PAGE_SIZE);
    this.maxRows = maxRows;
    const tokens = (pages - 1) * KV_PAGE_SIZE;
    const bytes = 2 * L * this.layerBytes;
    this.capacity = { pages, pageSize: KV_PAGE_SIZE, tokens, bytes, maxSequenceLength };
    const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;
    this.allocator = new PageAllocator(
      pages,
      (missing) =>
        `WebGPU decoder: the KV cache is full (${pages - 1} pages of ${KV_PAGE_SIZE} tokens = ${tokens} tokens, ${mib(bytes)}; ` +
        `${missing} more page(s) needed): release finished sequences or create the decoder with a larger cacheBytes`,
    );
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.keys = this.device.createBuffer({ label: 'kv cache keys', size: L * this.layerBytes, usage });
    this.values = this.device.createBuffer({ label: 'kv cache values', size: L * this.layerBytes, usage });
  }

  newSequence(): SequenceId {
    this.checkAlive();
    const id = this.nextId++;
    this.sequences.set(id, { tokens: [], pages: [] });
    return id;
  }

  fork(parent: SequenceId, count: number): SequenceId[] {
    const source = this.sequence(parent);
    const used = source.pages.length;
    const children: SequenceState[] = [];
    try {
      for (let c = 0; c < count; c++) children.push({ tokens: [...source.tokens], pages: this.allocator.take(used) });
    } catch (error) {
      for (const child of children) this.allocator.give(child.pages);
      throw error;
    }
    if (used > 0 && count > 0)
      this.copyPages(
        source.pages,
        children.map((child) => child.pages),
      );
    return children.map((child) => {
      const id = this.nextId++;
      this.sequences.set(id, child);
      return id;
    });
  }

  sequenceLength(seq: SequenceId): number {
    return this.sequence(seq).tokens.length;
  }

  sequenceTokens(seq: SequenceId): number[] {
    return [...this.sequence(seq).tokens];
  }

  async prefill(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Promise<Float32Array> {
    if (tokens.length !== seqs.length) throw new Error(`prefill: ${seqs.length} sequences but ${tokens.length} token lists`);
    return this.appendInBatches(seqs, tokens);
  }

  async decode(seqs: readonly SequenceId[], tokens: ArrayLike<number>): Promise<Float32Array> {
    if (tokens.length !== seqs.length) throw new Error(`decode: ${seqs.length} sequences but ${tokens.length} tokens`);
    return this.appendInBatches(
      seqs,
      Array.from(seqs, (_, i) => [tokens[i]!]),
    );
  }

  /** Prefills as `prefill` does, then draws one token per draw on the GPU from the logits of sequence `draw.row`; reads back only the draws. */
  async prefillAndSample(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>, draws: readonly DeviceDraw[]): Promise<DeviceDrawn> {
    if (tokens.length !== seqs.length) throw new Error(`prefill: ${seqs.length} sequences but ${tokens.length} token lists`);
    return this.appendAndSample(seqs, tokens, draws);
  }

  /** Decodes as `decode` does, then draws on the GPU as `prefillAndSample` does (one submit, B results read back). */
  async decodeAndSample(seqs: readonly SequenceId[], tokens: ArrayLike<number>, draws: readonly DeviceDraw[]): Promise<DeviceDrawn> {
    if (tokens.length !== seqs.length) throw new Error(`decode: ${seqs.length} sequences but ${tokens.length} tokens`);
    return this.appendAndSample(
      seqs,
      Array.from(seqs, (_, i) => [tokens[i]!]),
      draws,
    );
  }

  /**
   * Runs decode steps as Decoder.decodeSteps says: with the fused kernel (decode_steps.wgsl: up to
   * MAX_FUSED_STEPS steps per submit, only the draws read back) when the model allows it and the
   * path chosen for this batch (decodePath, or the cached trial) is 'fused'; else one layered step per call.
   */
  async decodeSteps(seqs: readonly SequenceId[], tokens: ArrayLike<number>, plans: readonly DeviceDecodePlan[], steps: number): Promise<DeviceDrawn[]> {
    checkDecodeSteps(seqs, tokens, plans, steps);
    this.checkAppend(
      seqs,
      Array.from(seqs, (_, i) => [tokens[i]!]),
    );
    if (seqs.length === 0) return [];
    const path = await this.pathFor(seqs.length);
    if (path === 'layered' || plans.some((plan) => plan.stopIds.length > MAX_STOP_IDS)) return decodeStepsOneByOne(this, seqs, tokens, plans, steps);
    return this.decodeFused(seqs, tokens, plans, steps);
  }

  /** The path decodeSteps takes for a batch of B sequences (running the trial on first use when 'auto'). */
  async pathFor(B: number): Promise<DecodePath> {
    if (this.fusedProblem !== null) return 'layered';
    if (this.decodePath !== 'auto') return this.decodePath;
    return (await this.resolvePath(B))?.path ?? 'layered';
  }

  /**
   * The timed trial behind 'auto' for a batch of B sequences (its bucket) as this process ran it
   * (see resolvePath); null when no trial runs (a forced path, a model the fused kernel cannot run,
   * a verdict read from the TuningStore) or it failed (e.g. a full cache: layered then).
   */
  async pathTrial(B: number): Promise<PathTrialResult | null> {
    return (await this.resolvePath(B))?.trial ?? null;
  }

  /**
   * The 'auto' verdict for a batch of B sequences: remembered per adapter, model shape, batch bucket
   * and fused layout in the process and in the context's TuningStore, else timed on first use;
   * null when there is no choice to make or the trial failed.
   */
  private async resolvePath(B: number): Promise<ResolvedDecodePath | null> {
    if (this.fusedProblem !== null || this.decodePath !== 'auto') return null;
    const key = { config: this.config, bucket: bucket(B), fusedWorkgroupSize: this.fusedWorkgroupSize, fusedSequences: this.fusedSequences ?? ('auto' as const) };
    return resolveDecodePath(this.kernels.gpu.adapter, this.kernels.gpu.tuningStore, key, () => this.trial(bucket(B)));
  }

  /** Drops the tokens of a sequence past `length` and the pages they alone used (their cache rows are overwritten when it grows again). */
  truncate(seq: SequenceId, length: number): void {
    const state = this.sequence(seq);
    if (!Number.isInteger(length) || length < 0 || length > state.tokens.length) throw new Error(`truncate: sequence ${seq} holds ${state.tokens.length} tokens, cannot keep ${length}`);
    state.tokens.length = length;
    this.allocator.give(state.pages.splice(Math.ceil(length / KV_PAGE_SIZE)));
  }

  /**
   * The timed trial behind 'auto' (decode-path-trial.ts): B throw-away sequences of one token each
   * decode 2 steps at temperature 1 per timed run, after one untimed run of each path (pipelines,
   * plans); the paths are interleaved over up to 6 rounds and each keeps its best time.
   */
  private async trial(B: number): Promise<PathTrialResult> {
    const steps = 2;
    const seqs = Array.from({ length: B }, () => this.newSequence());
    try {
      await this.prefill(
        seqs,
        seqs.map((_, b) => [b % this.vocabSize]),
      );
      const plans = seqs.map(() => ({ params: { temperature: 1 }, uniforms: [0.25, 0.5], stopIds: [], maxDraws: steps }));
      const tokens = seqs.map((_, b) => (3 * b) % this.vocabSize);
      // Every run decodes from the same cache length: the steps' keys are written past it and overwritten by the next run.
      const run = async (path: DecodePath, count: number): Promise<void> => {
        if (path === 'fused') await this.decodeFused(seqs, tokens, plans, count);
        else await decodeStepsOneByOne(this, seqs, tokens, plans, count);
        for (const seq of seqs) this.truncate(seq, 1);
      };
      const time = async (path: DecodePath): Promise<number> => {
        const start = performance.now();
        await run(path, steps);
        return performance.now() - start;
      };
      return await runPathTrial(time, async () => {
        await run('fused', 1);
        await run('layered', 1);
      });
    } finally {
      for (const seq of seqs) this.release(seq);
    }
  }

  /** decodeSteps on the fused kernel, in chunks of at most MAX_FUSED_STEPS steps (the sequences still going feed their last draw to the next chunk). */
  private async decodeFused(seqs: readonly SequenceId[], tokens: ArrayLike<number>, plans: readonly DeviceDecodePlan[], steps: number): Promise<DeviceDrawn[]> {
    const made = seqs.map(() => ({ ids: [] as number[], logprobs: [] as number[], entropies: [] as number[] }));
    let live = seqs.map((_, b) => b);
    const fed = Array.from(tokens);
    for (let done = 0; done < steps && live.length > 0;) {
      const count = Math.min(MAX_FUSED_STEPS, steps - done);
      const chunkPlans = live.map((b) => ({ ...plans[b]!, uniforms: Array.from(plans[b]!.uniforms).slice(done, done + count), maxDraws: plans[b]!.maxDraws - made[b]!.ids.length }));
      const drawn = await this.runFused(
        live.map((b) => seqs[b]!),
        live.map((b) => fed[b]!),
        chunkPlans,
        count,
      );
      live.forEach((b, i) => {
        const result = drawn[i]!;
        made[b]!.ids.push(...result.ids);
        made[b]!.logprobs.push(...result.logprobs);
        made[b]!.entropies.push(...result.entropies);
        fed[b] = result.ids[result.ids.length - 1]!;
      });
      live = live.filter((_, i) => drawn[i]!.ids.length === count && !plans[live[i]!]!.stopIds.includes(fed[live[i]!]!) && made[live[i]!]!.ids.length < plans[live[i]!]!.maxDraws);
      done += count;
    }
    return made.map((m) => ({ ids: Int32Array.from(m.ids), logprobs: Float32Array.from(m.logprobs), entropies: Float32Array.from(m.entropies) }));
  }

  /** One fused submit of `steps` ≤ MAX_FUSED_STEPS: pages for every position a sequence may reach (all or none), the kernel, then the token lists and the pages past them given back. */
  private async runFused(seqs: readonly SequenceId[], tokens: readonly number[], plans: readonly DeviceDecodePlan[], steps: number): Promise<DeviceDrawn[]> {
    const states = seqs.map((seq) => this.sequence(seq));
    const limited = plans.map((plan, b) => {
      const room = this.capacity.maxSequenceLength - states[b]!.tokens.length;
      if (room < 1) throw new Error(`sequence ${seqs[b]} would hold ${states[b]!.tokens.length + 1} tokens, past this decoder's maxSequenceLength ${this.capacity.maxSequenceLength}`);
      return { ...plan, maxDraws: Math.min(plan.maxDraws, room) };
    });
    const taken: number[][] = [];
    try {
      states.forEach((state, b) => {
        const reach = state.tokens.length + Math.min(steps, limited[b]!.maxDraws);
        taken.push(this.allocator.take(Math.max(0, Math.ceil(reach / KV_PAGE_SIZE) - state.pages.length)));
      });
    } catch (error) {
      for (const pages of taken) this.allocator.give(pages);
      throw error;
    }
    states.forEach((state, b) => state.pages.push(...taken[b]!));
    const plan = this.fusedPlanFor(bucket(seqs.length));
    let drawn: DeviceDrawn[];
    try {
      drawn = await plan.run(
        states.map((state, b) => ({ position: state.tokens.length, token: tokens[b]!, pages: state.pages, plan: limited[b]! })),
        steps,
      );
    } catch (error) {
      states.forEach((state) => this.allocator.give(state.pages.splice(Math.ceil(state.tokens.length / KV_PAGE_SIZE))));
      throw error;
    }
    states.forEach((state, b) => {
      const ids = drawn[b]!.ids;
      state.tokens.push(tokens[b]!, ...Array.from(ids.subarray(0, ids.length - 1)));
      this.allocator.give(state.pages.splice(Math.ceil(state.tokens.length / KV_PAGE_SIZE)));
    });
    return drawn;
  }

  /** Returns the fused plan of a batch bucket, recording it on first use. */
  private fusedPlanFor(batch: number): FusedDecodePlan {
    let plan = this.fusedPlans.get(batch);
    if (plan === undefined) {
      plan = new FusedDecodePlan(
        {
          kernels: this.kernels,
          config: this.config,
          weights: this.weights,
          keys: this.keys,
          values: this.values,
          layerFloats: this.layerBytes / 4,
          pageSize: KV_PAGE_SIZE,
          maxPages: this.MP,
          workgroupSize: this.fusedWorkgroupSize,
          sequencesPerWorkgroup: this.fusedSequences ?? fusedSequencesPerWorkgroup(isSoftwareAdapter(this.kernels.gpu.adapter), batch, this.config, this.fusedWorkgroupSize, this.device),
        },
        batch,
      );
      this.fusedPlans.set(batch, plan);
    }
    return plan;
  }

  release(seq: SequenceId): void {
    const state = this.sequence(seq);
    this.allocator.give(state.pages);
    this.sequences.delete(seq);
  }

  usage(): { sequences: number; tokens: number } {
    let tokens = 0;
    for (const state of this.sequences.values()) tokens += state.tokens.length;
    return { sequences: this.sequences.size, tokens };
  }

  /** Pages of the cache in use and in all (the scratch page excluded). */
  cacheUsage(): { pagesUsed: number; pages: number } {
    return { pagesUsed: this.allocator.used, pages: this.capacity.pages - 1 };
  }

  dispose(): void {
    if (this.disposed) return;
    for (const plan of this.plans.values()) this.destroyPlan(plan);
    this.plans.clear();
    for (const plan of this.fusedPlans.values()) plan.destroy();
    this.fusedPlans.clear();
    this.sequences.clear();
    this.keys.destroy();
    this.values.destroy();
    this.disposed = true;
  }

  /**
   * Checks the whole call (token ids, lengths, free pages) so that a failure changes nothing, then
   * runs append over batches of at most maxRows rows (a long prefill is split; rows of a sequence stay in order).
   */
  private async appendInBatches(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Promise<Float32Array> {
    const total = this.checkAppend(seqs, tokens);
    if (seqs.length === 0) return new Float32Array(0);
    if (total <= this.maxRows) return (await this.append(seqs, tokens, null)).logits!;
    return this.appendSplit(seqs, tokens);
  }

  /** appendInBatches followed by the draws on the GPU; a prefill split into several submits reads its logits back and draws from an upload of them. */
  private async appendAndSample(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>, draws: readonly DeviceDraw[]): Promise<DeviceDrawn> {
    const total = this.checkAppend(seqs, tokens);
    for (const draw of draws) {
      if (!Number.isInteger(draw.row) || draw.row < 0 || draw.row >= seqs.length) throw new Error(`a draw reads logits row ${draw.row}, but the call has ${seqs.length} sequences`);
    }
    if (seqs.length === 0 || draws.length === 0) {
      if (seqs.length > 0) await this.appendInBatches(seqs, tokens);
      return { ids: new Int32Array(0), logprobs: new Float32Array(0), entropies: new Float32Array(0) };
    }
    if (total <= this.maxRows) return (await this.append(seqs, tokens, draws)).drawn!;
    const logits = await this.appendSplit(seqs, tokens);
    const uploaded = createTensor(this.device, logits, 'decoder split-prefill logits');
    try {
      return await sampleOnDevice(
        this.kernels,
        uploaded,
        this.vocabSize,
        draws.map((draw) => toTokenDraw(draw, this.vocabSize)),
      );
    } finally {
      uploaded.buffer.destroy();
    }
  }

  /** Checks a whole call (token ids, lengths, free pages) so that a failure changes nothing; returns the number of new tokens. */
  private checkAppend(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): number {
    this.checkAlive();
    if (new Set(seqs).size !== seqs.length) throw new Error('a sequence may appear only once in a batch');
    const V = this.vocabSize;
    let total = 0;
    let pagesNeeded = 0;
    seqs.forEach((seq, b) => {
      const state = this.sequence(seq);
      const list = tokens[b]!;
      if (list.length < 1) throw new Error(`sequence ${seq}: nothing to append`);
      for (let t = 0; t < list.length; t++) {
        const id = list[t]!;
        if (!Number.isInteger(id) || id < 0 || id >= V) throw new Error(`token ${id} is outside the vocabulary [0, ${V})`);
      }
      const length = state.tokens.length + list.length;
      if (length > this.capacity.maxSequenceLength) {
        throw new Error(`sequence ${seq} would hold ${length} tokens, past this decoder's maxSequenceLength ${this.capacity.maxSequenceLength}`);
      }
      total += list.length;
      pagesNeeded += Math.ceil(length / KV_PAGE_SIZE) - state.pages.length;
    });
    if (pagesNeeded > this.allocator.free) this.allocator.take(pagesNeeded); // throws the cache-full message, taking nothing
    return total;
  }

  /** Runs a checked call of more than maxRows rows as several submits (rows of a sequence stay in order); returns the (B, V) logits. */
  private async appendSplit(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Promise<Float32Array> {
    const V = this.vocabSize;
    const logits = new Float32Array(seqs.length * V); // (B, V)
    const done = seqs.map(() => 0); // tokens of each sequence appended so far
    while (done.some((count, b) => count < tokens[b]!.length)) {
      const batchSeqs: SequenceId[] = [];
      const batchTokens: number[][] = [];
      const batchIndex: number[] = [];
      let rows = 0;
      for (let b = 0; b < seqs.length && rows < this.maxRows; b++) {
        const rest = tokens[b]!.length - done[b]!;
        if (rest <= 0) continue;
        const take = Math.min(rest, this.maxRows - rows);
        batchSeqs.push(seqs[b]!);
        batchTokens.push(Array.from(tokens[b]!).slice(done[b], done[b]! + take));
        batchIndex.push(b);
        rows += take;
      }
      const batchLogits = (await this.append(batchSeqs, batchTokens, null)).logits!;
      batchIndex.forEach((b, i) => {
        done[b]! += batchTokens[i]!.length;
        if (done[b] === tokens[b]!.length) logits.set(batchLogits.subarray(i * V, (i + 1) * V), b * V);
      });
    }
    return logits;
  }

  /**
   * Runs the new tokens of every sequence (checked by checkAppend) through the model as one submit,
   * stores their keys and values, and returns the last rows' logits (B, V), or with draws only the
   * tokens drawn on the GPU from them (the sampling pass in the same submit).
   */
  private async append(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>, draws: readonly DeviceDraw[] | null): Promise<{ logits?: Float32Array; drawn?: DeviceDrawn }> {
    const V = this.vocabSize;
    const B = seqs.length;
    const states = seqs.map((seq) => this.sequence(seq));
    let N = 0;
    for (const list of tokens) N += list.length; // checked by appendInBatches
    // Pages for the new tokens, all or none.
    const taken: number[][] = [];
    try {
      for (let b = 0; b < B; b++) {
        const state = states[b]!;
        taken.push(this.allocator.take(Math.ceil((state.tokens.length + tokens[b]!.length) / KV_PAGE_SIZE) - state.pages.length));
      }
    } catch (error) {
      for (const pages of taken) this.allocator.give(pages);
      throw error;
    }
    states.forEach((state, b) => state.pages.push(...taken[b]!));

    const step = this.planFor(bucket(N), bucket(B));
    const ids = new Int32Array(step.rows); // padding rows: token 0 at position 0 of the scratch page
    const positions = new Int32Array(step.rows);
    const rowSeq = new Int32Array(step.rows).fill(step.batch);
    const pageTable = new Int32Array((step.batch + 1) * this.MP);
    const lastRows = new Int32Array(step.batch);
    let n = 0;
    for (let b = 0; b < B; b++) {
      const state = states[b]!;
      const list = tokens[b]!;
      for (let t = 0; t < list.length; t++, n++) {
        ids[n] = list[t]!;
        positions[n] = state.tokens.length + t;
        rowSeq[n] = b;
      }
      lastRows[b] = n - 1;
      pageTable.set(state.pages, b * this.MP);
    }
    const queue = this.device.queue;
    for (const [tensor, values] of [
      [step.ids, ids],
      [step.positions, positions],
      [step.rowSeq, rowSeq],
      [step.pageTable, pageTable],
      [step.lastRows, lastRows],
    ] as const) {
      queue.writeBuffer(tensor.buffer, tensor.offset, values.buffer as ArrayBuffer, values.byteOffset, values.byteLength);
    }
    const encoder = this.device.createCommandEncoder();
    step.plan.encode(encoder);
    let staging: GPUBuffer;
    let bytes: number;
    if (draws === null) {
      bytes = B * V * 4;
      staging = stageRead(this.device, encoder, step.logits, bytes);
    } else {
      const D = draws.length;
      const sampler = this.samplerFor(step, bucket(D));
      queue.writeBuffer(sampler.draws.buffer, sampler.draws.offset, packDraws(draws.map((draw) => toTokenDraw(draw, V))));
      setDrawCount(this.kernels, sampler.dispatch, D, V);
      sampler.plan.encode(encoder);
      bytes = D * DRAWN_BYTES;
      staging = stageRead(this.device, encoder, sampler.out, bytes);
    }
    // The read is in this submit, so a later call's uploads (written before its own submit) cannot overtake it.
    queue.submit([encoder.finish()]);
    for (let b = 0; b < B; b++) states[b]!.tokens.push(...Array.from(tokens[b]!));
    const result = await readStaged(staging, bytes);
    return draws === null ? { logits: new Float32Array(result) } : { drawn: unpackDrawn(result, draws.length) };
  }

  /** Returns the sampling pass over a step's logits for up to `capacity` draws, recording it on first use. */
  private samplerFor(step: StepPlan, capacity: number): SamplerPlan {
    let sampler = step.samplers.get(capacity);
    if (sampler === undefined) {
      const draws = createTensor(this.device, capacity * DRAW_WORDS * 4, 'decoder draws');
      const out = createTensor(this.device, capacity * DRAWN_BYTES, 'decoder drawn tokens');
      step.buffers.push(draws.buffer, out.buffer);
      const plan = new KernelPlan(this.kernels);
      const dispatch = sampleTokens(plan, out, step.logits, draws, capacity, this.vocabSize, { maxDraws: capacity });
      sampler = { draws, out, plan, dispatch };
      step.samplers.set(capacity, sampler);
    }
    return sampler;
  }

  /** Returns the plan of a (rows, sequences) bucket, recording it (and its buffers) on first use. */
  private planFor(rows: number, batch: number): StepPlan {
    const key = `${rows}x${batch}`;
    const cached = this.plans.get(key);
    if (cached !== undefined) {
      this.plans.delete(key); // re-insert: most recently used last
      this.plans.set(key, cached);
      return cached;
    }
    if (this.plans.size >= MAX_PLANS) {
      const [oldestKey, oldest] = this.plans.entries().next().value as [string, StepPlan];
      this.destroyPlan(oldest);
      this.plans.delete(oldestKey);
    }
    const step = this.recordPlan(rows, batch);
    this.plans.set(key, step);
    return step;
  }

  /** Records the forward pass of `rows` stacked rows with their last rows' LM head for `batch` sequences (as CpuDecoder.append). */
  private recordPlan(rows: number, batch: number): StepPlan {
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V } = this.config;
    const N = rows;
    const QD = NH * HS;
    const KVD = KVH * HS;
    const eps = this.config.rms_norm_eps;
    const theta = this.config.rope_theta;
    const buffers: GPUBuffer[] = [];
    const tensor = (floats: number, label: string): GPUTensor => {
      const bytes = floats * 4;
      if (bytes > this.device.limits.maxStorageBufferBindingSize) {
        throw new Error(`WebGPU decoder: ${label} of a ${rows}-row batch needs ${bytes} bytes in one binding, past maxStorageBufferBindingSize; use a smaller maxRows`);
      }
      const created = createTensor(this.device, bytes, `decoder ${label}`);
      buffers.push(created.buffer);
      return created;
    };
    const ids = tensor(N, 'ids'); // (N) i32
    const positions = tensor(N, 'positions'); // (N) i32
    const rowSeq = tensor(N, 'row sequences'); // (N) i32
    const pageTable = tensor((batch + 1) * this.MP, 'page tables'); // (batch + 1, MP) i32
    const lastRows = tensor(batch, 'last rows'); // (batch) i32
    const x = tensor(N * C, 'residual'); // (N, C)
    const ln = tensor(N * C, 'ln'); // (N, C)
    const rstd = tensor(N * NH, 'rstd'); // (N*NH) scratch for the norms
    const q = tensor(N * QD, 'q'); // (N, NH, HS)
    const k = tensor(N * KVD, 'k'); // (N, KVH, HS)
    const v = tensor(N * KVD, 'v'); // (N, KVH, HS)
    const qNormed = this.config.qk_norm ? tensor(N * QD, 'q normed') : q;
    const kNormed = this.config.qk_norm ? tensor(N * KVD, 'k normed') : k;
    const qRope = tensor(N * QD, 'q rope'); // (N, NH, HS)
    const atty = tensor(N * QD, 'atty'); // (N, NH, HS)
    const gate = tensor(N * I, 'gate'); // (N, I)
    const up = tensor(N * I, 'up'); // (N, I)
    const swiglu = tensor(N * I, 'swiglu'); // (N, I)
    const loraHidden = tensor(N * (this.lora?.rank ?? 1), 'lora hidden'); // (N, r)
    const last = tensor(batch * C, 'last rows'); // (batch, C)
    const lnf = tensor(batch * C, 'lnf'); // (batch, C)
    const lnfRstd = tensor(batch, 'lnf rstd'); // (batch)
    const logits = tensor(batch * V, 'logits'); // (batch, V)

    const plan = new KernelPlan(this.kernels);
    // out = inp·Wᵀ + bias (+ LoRA); with `accumulate` added to out instead (the residual stream).
    const linear = (layer: number, module: LoraTargetModule, out: GPUTensor, inp: GPUTensor, accumulate = false): void => {
      const { IC, OC } = linearSizes(this.config, module);
      const prefix = linearModuleName(layer, module);
      decoderOps.matmulForwardRows(plan, out, inp, this.param(`${prefix}.weight`), this.weights.param(`${prefix}.bias`), N, IC, OC, accumulate);
      if (this.lora !== null && this.lora.targetModules.includes(module)) {
        const loraA = this.weights.loraParam(loraParamName(layer, module, 'A'));
        const loraB = this.weights.loraParam(loraParamName(layer, module, 'B'));
        ops.loraForward(plan, out, loraHidden, inp, loraA, loraB, N, IC, OC, this.lora.rank, this.lora.alpha);
      }
    };

    // a table past one binding lies in row chunks: each chunk's dispatch writes the tokens whose ids it holds
    for (const chunk of this.weights.paramRows('model.embed_tokens.weight')) ops.embeddingForward(plan, x, ids, chunk.tensor, N, C, chunk);
    for (let l = 0; l < this.config.num_hidden_layers; l++) {
      const lp = (name: string): GPUTensor => this.param(`model.layers.${l}.${name}`);
      const layerKeys: GPUTensor = { buffer: this.keys, offset: l * this.layerBytes, size: this.layerBytes };
      const layerValues: GPUTensor = { buffer: this.values, offset: l * this.layerBytes, size: this.layerBytes };

      // attention block
      ops.rmsnormForward(plan, ln, rstd, x, lp('input_layernorm.weight'), N, C, eps);
      linear(l, 'q_proj', q, ln);
      linear(l, 'k_proj', k, ln);
      linear(l, 'v_proj', v, ln);
      if (this.config.qk_norm) {
        ops.rmsnormForward(plan, qNormed, rstd, q, lp('self_attn.q_norm.weight'), N * NH, HS, eps);
        ops.rmsnormForward(plan, kNormed, rstd, k, lp('self_attn.k_norm.weight'), N * KVH, HS, eps);
      }
      ops.ropeForward(plan, qRope, qNormed, positions, 1, N, NH, HS, theta);
      // keys rotated on their way into the cache (one dispatch for rope_forward + kv_cache_write)
      decoderOps.ropeKvCacheWrite(plan, layerKeys, layerValues, kNormed, v, positions, rowSeq, pageTable, N, KVH, HS, KV_PAGE_SIZE, this.MP, theta);
      decoderOps.attentionDecodeForward(plan, atty, qRope, layerKeys, layerValues, positions, rowSeq, pageTable, N, NH, KVH, HS, KV_PAGE_SIZE, this.MP);
      linear(l, 'o_proj', x, atty, true); // x += atty·Woᵀ: the residual add folded into the matmul

      // MLP block
      ops.rmsnormForward(plan, ln, rstd, x, lp('post_attention_layernorm.weight'), N, C, eps);
      const gateWeight = this.param(`${linearModuleName(l, 'gate_proj')}.weight`);
      const upWeight = this.param(`${linearModuleName(l, 'up_proj')}.weight`);
      if (this.fusedMlp(l, gateWeight, upWeight)) {
        decoderOps.matmulSwigluForward(plan, swiglu, ln, gateWeight, upWeight, N, C, I); // gate, up and swiglu in one dispatch
      } else {
        linear(l, 'gate_proj', gate, ln);
        linear(l, 'up_proj', up, ln);
        ops.swigluForward(plan, swiglu, gate, up, N * I);
      }
      linear(l, 'down_proj', x, swiglu, true); // x += swiglu·Wdownᵀ
    }
    // Final norm and LM head on each sequence's last row only (the gather is an embedding lookup into the rows).
    ops.embeddingForward(plan, last, lastRows, x, batch, C);
    ops.rmsnormForward(plan, lnf, lnfRstd, last, this.param('model.norm.weight'), batch, C, eps);
    const lmHead = this.weights.paramRows(this.config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
    if (lmHead.length === 1) {
      decoderOps.matmulForwardRows(plan, logits, lnf, lmHead[0]!.tensor, null, batch, C, V);
    } else {
      // row chunks of the vocabulary: each chunk's logits into a (batch, chunk rows) scratch, then into its columns of the logits
      const columns = tensor(batch * Math.max(...lmHead.map((chunk) => chunk.rows)), 'LM head vocabulary chunk');
      for (const chunk of lmHead) {
        const block = { ...columns, size: batch * chunk.rows * 4 };
        decoderOps.matmulForwardRows(plan, block, lnf, chunk.tensor, null, batch, C, chunk.rows);
        ops.copyColumns(plan, logits, block, batch, chunk.rows, { width: chunk.rows, column: 0 }, { width: V, column: chunk.firstRow });
      }
    }
    return { rows, batch, ids, positions, rowSeq, pageTable, lastRows, logits, buffers, plan, samplers: new Map() };
  }

  /** Whether layer l's gate and up products can run fused with swiglu: f32 weights, no bias, no LoRA on either. */
  private fusedMlp(l: number, gateWeight: GPUTensor, upWeight: GPUTensor): boolean {
    if (gateWeight.dtype === 'f16' || upWeight.dtype === 'f16') return false;
    const modules: LoraTargetModule[] = ['gate_proj', 'up_proj'];
    if (modules.some((module) => this.weights.param(`${linearModuleName(l, module)}.bias`) !== null)) return false;
    return this.lora === null || !modules.some((module) => this.lora!.targetModules.includes(module));
  }

  /** Copies the pages of a parent into each child's pages (same count), through a scratch buffer: a copy may not read and write one buffer. */
  private copyPages(source: readonly number[], targets: readonly (readonly number[])[]): void {
    const L = this.config.num_hidden_layers;
    const used = source.length;
    const span = used * this.pageBytes; // one layer's pages of the parent
    const scratch = this.device.createBuffer({ label: 'kv fork scratch', size: 2 * L * span, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const encoder = this.device.createCommandEncoder();
    const runs = (pages: readonly number[]): Array<[index: number, page: number, count: number]> => {
      const result: Array<[number, number, number]> = [];
      pages.forEach((page, index) => {
        const run = result[result.length - 1];
        if (run !== undefined && run[1] + run[2] === page) run[2]++;
        else result.push([index, page, 1]);
      });
      return result;
    };
    const cache = [this.keys, this.values];
    for (let l = 0; l < L; l++) {
      for (let kv = 0; kv < 2; kv++) {
        const scratchBase = (kv * L + l) * span;
        for (const [index, page, count] of runs(source)) {
          encoder.copyBufferToBuffer(cache[kv]!, l * this.layerBytes + page * this.pageBytes, scratch, scratchBase + index * this.pageBytes, count * this.pageBytes);
        }
      }
    }
    for (const target of targets) {
      const targetRuns = runs(target);
      for (let l = 0; l < L; l++) {
        for (let kv = 0; kv < 2; kv++) {
          const scratchBase = (kv * L + l) * span;
          for (const [index, page, count] of targetRuns) {
            encoder.copyBufferToBuffer(scratch, scratchBase + index * this.pageBytes, cache[kv]!, l * this.layerBytes + page * this.pageBytes, count * this.pageBytes);
          }
        }
      }
    }
    this.device.queue.submit([encoder.finish()]);
    scratch.destroy();
  }

  private destroyPlan(step: StepPlan): void {
    step.plan.destroy();
    for (const sampler of step.samplers.values()) sampler.plan.destroy();
    for (const buffer of step.buffers) buffer.destroy();
  }

  private param(name: string): GPUTensor {
    const tensor = this.weights.param(name);
    if (tensor === null) throw new Error(`WebGPU decoder: the backend has no parameter ${name}`);
    return tensor;
  }

  private sequence(seq: SequenceId): SequenceState {
    this.checkAlive();
    const state = this.sequences.get(seq);
    if (state === undefined) throw new Error(`unknown or released sequence ${seq}`);
    return state;
  }

  private checkAlive(): void {
    if (this.disposed) throw new Error('this decoder was disposed');
  }
}
