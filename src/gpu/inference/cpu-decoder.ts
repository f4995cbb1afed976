/**
 * The CPU decoder: KV-cache decoding of a Llama-family model built from the plain-TypeScript
 * references, the oracle for the WebGPU decoder. A batch is ragged: the new tokens of every
 * sequence are stacked into N rows that share every per-row op (embedding, norms, linears, RoPE
 * with each row's absolute position, SwiGLU, residuals), and only attention reads each sequence's
 * own cache. Only the last new row of each sequence goes through the final norm and the LM head.
 * Per row the arithmetic is the reference backend's, in the same order (attentionDecodeForward
 * mirrors attentionForward), so cached decoding reproduces a full forward pass up to float rounding
 * that in practice is zero. LoRA adapters are applied unmerged, as the CPU backend applies them.
 * The linears (LM head included), RoPE and SwiGLU run on CpuDecoderOps: the references by default,
 * and the backend's own ops when it was built on a CpuBackend, so a decoder over the fast CPU backend
 * samples on its WASM kernels, with its copy of the weights allocated in their memory (no copy per product). Attention stays the per-row loop below: the kernel's causal (B, T)
 * shape does not fit rows that each read their own cache.
 *
 * Batch-invariant: a sequence's logits are the same bits whether it is decoded alone or beside any
 * other sequences (prefilling or decoding), so sampling with a seed gives the same tokens and
 * log-probs whatever the timing that batched it. Every per-row op already computes each row on its
 * own; the linears pick their kernel per sequence (DOT_ROW_TOKENS), the sequences that take dot
 * products stacked first, so each linear is at most two calls on contiguous rows, and the LM head
 * always takes dot products. (The fast kernels' dot products and packed blocks round differently, so
 * picking by the batch's row count, as a plain matmul does, would make a row's bits depend on its company.)
 */
import type { ModelBackend, NamedTensors } from '../model/backend.ts';
import type { ModelConfig } from '../model/config.ts';
import { CpuBackend, type CpuBackendOps } from '../model/cpu-backend.ts';
import { linearModuleName, linearSizes, loraParamName, paramShapes, type LoraConfig, type LoraTargetModule } from '../model/layout.ts';
import { embeddingForward, loraForward, matmulForward, residualForward, rmsnormForward, ropeForward, swigluForward } from '../reference/index.ts';
import type { Decoder, SequenceId } from './decoder.ts';

/** One sequence's cache: per layer the rotated keys and the values of every token so far. */
interface SequenceCache {
  tokens: number[];
  keys: Float32Array[]; // L × (capacity, KVH*HS)
  values: Float32Array[]; // L × (capacity, KVH*HS)
  capacity: number;
}

/** The ops a CpuDecoder runs that a faster engine may replace: the linears (by dot products and by packed blocks), RoPE and SwiGLU, and the buffers its weights live in. */
export type CpuDecoderOps = Pick<CpuBackendOps, 'matmulForwardDot' | 'matmulForwardPacked' | 'ropeForward' | 'swigluForward' | 'allocate' | 'release'>;

/** The plain-TypeScript references as CpuDecoderOps: the oracle. */
export const REFERENCE_DECODER_OPS: CpuDecoderOps = {
  matmulForwardDot: matmulForward,
  matmulForwardPacked: matmulForward,
  ropeForward,
  swigluForward,
  allocate: (length) => new Float32Array(length),
  release: () => {},
};

/**
 * A sequence appending at most this many tokens (a decode step, a short follow-up) has its rows'
 * linears computed by dot products; one appending more (a prefill), by packed blocks. The choice is
 * the sequence's own, never the batch's, so its arithmetic does not depend on what it is batched with.
 */
const DOT_ROW_TOKENS = 4;

/**
 * Builds a CPU decoder over a backend's current parameters (LoRA adapters included), on the
 * backend's own ops when it is a CpuBackend (the fast one's kernels) and on the references otherwise;
 * call again after a training step.
 */
export async function createCpuDecoder(backend: ModelBackend): Promise<CpuDecoder> {
  const ops = backend instanceof CpuBackend ? backend.ops : REFERENCE_DECODER_OPS;
  return new CpuDecoder(backend.config, await backend.getParameters(), backend.lora, ops);
}

/**
 * Computes attention for N new rows against their sequences' caches: row n is query position
 * positions[n] of cache rowCache[n] and attends to cache positions 0..positions[n] (causal),
 * exactly as attentionForward does for that row, down to storing the probabilities as f32.
 */
export function attentionDecodeForward(
  out: Float32Array, // (N, NH, HS)
  q: Float32Array, // (N, NH, HS)
  rowKeys: readonly Float32Array[], // N × (≥ positions[n]+1, KVH, HS)
  rowValues: readonly Float32Array[], // N × (≥ positions[n]+1, KVH, HS)
  positions: Int32Array, // (N)
  N: number,
  NH: number,
  KVH: number,
  HS: number,
): void {
  const scale = 1 / Math.sqrt(HS);
  const groupSize = NH / KVH;
  let scores = new Float64Array(0);
  for (let n = 0; n < N; n++) {
    const keys = rowKeys[n]!;
    const values = rowValues[n]!;
    const T = positions[n]! + 1;
    if (scores.length < T) scores = new Float64Array(Math.max(T, 2 * scores.length));
    for (let h = 0; h < NH; h++) {
      const kvh = Math.floor(h / groupSize);
      const qBase = (n * NH + h) * HS;
      let maxScore = -Infinity;
      for (let t2 = 0; t2 < T; t2++) {
        const kBase = (t2 * KVH + kvh) * HS;
        let dot = 0;
        for (let i = 0; i < HS; i++) dot += q[qBase + i]! * keys[kBase + i]!;
        scores[t2] = dot * scale;
        if (scores[t2]! > maxScore) maxScore = scores[t2]!;
      }
      let sumExp = 0;
      for (let t2 = 0; t2 < T; t2++) {
        scores[t2] = Math.exp(scores[t2]! - maxScore);
        sumExp += scores[t2]!;
      }
      for (let t2 = 0; t2 < T; t2++) scores[t2] = Math.fround(scores[t2]! / sumExp); // f32, as the reference's att buffer
      for (let i = 0; i < HS; i++) {
        let sum = 0;
        for (let t2 = 0; t2 < T; t2++) sum += scores[t2]! * values[(t2 * KVH + kvh) * HS + i]!;
        out[qBase + i] = sum;
      }
    }
  }
}

/** KV-cache decoding on the CPU; see the file comment and Decoder for the contract. */
export class CpuDecoder implements Decoder {
  readonly vocabSize: number;
  private readonly params = new Map<string, Float32Array>();
  private readonly sequences = new Map<SequenceId, SequenceCache>();
  private nextId = 1;
  private disposed = false;

  /** Copies the parameters it needs (Hugging Face names, and PEFT names when lora is set) from tensors; `ops` runs the linears, RoPE and SwiGLU. */
  constructor(
    readonly config: ModelConfig,
    tensors: NamedTensors,
    readonly lora: LoraConfig | null = null,
    private readonly ops: CpuDecoderOps = REFERENCE_DECODER_OPS,
  ) {
    this.vocabSize = config.vocab_size;
    const take = (name: string, shape: number[]): void => {
      const tensor = tensors.get(name);
      if (tensor === undefined) throw new Error(`CPU decoder: missing parameter ${name}`);
      const size = shape.reduce((a, b) => a * b, 1);
      if (tensor.data.length !== size) throw new Error(`CPU decoder: parameter ${name} has ${tensor.data.length} values, expected [${shape}]`);
      const copy = this.ops.allocate(size); // resident in the fast kernels' memory: no copy per product
      copy.set(tensor.data);
      this.params.set(name, copy);
    };
    for (const [name, shape] of paramShapes(config)) take(name, shape);
    if (lora !== null) {
      for (let l = 0; l < config.num_hidden_layers; l++) {
        for (const module of lora.targetModules) {
          const { IC, OC } = linearSizes(config, module);
          take(loraParamName(l, module, 'A'), [lora.rank, IC]);
          take(loraParamName(l, module, 'B'), [OC, lora.rank]);
        }
      }
    }
  }

  newSequence(): SequenceId {
    this.checkAlive();
    const id = this.nextId++;
    const L = this.config.num_hidden_layers;
    this.sequences.set(id, { tokens: [], keys: Array.from({ length: L }, () => new Float32Array(0)), values: Array.from({ length: L }, () => new Float32Array(0)), capacity: 0 });
    return id;
  }

  fork(parent: SequenceId, count: number): SequenceId[] {
    const source = this.sequence(parent);
    const KVD = this.config.num_key_value_heads * this.config.head_dim;
    const used = source.tokens.length * KVD;
    const children: SequenceId[] = [];
    for (let c = 0; c < count; c++) {
      const id = this.nextId++;
      this.sequences.set(id, {
        tokens: [...source.tokens],
        keys: source.keys.map((keys) => keys.slice(0, used)),
        values: source.values.map((values) => values.slice(0, used)),
        capacity: source.tokens.length,
      });
      children.push(id);
    }
    return children;
  }

  sequenceLength(seq: SequenceId): number {
    return this.sequence(seq).tokens.length;
  }

  sequenceTokens(seq: SequenceId): number[] {
    return [...this.sequence(seq).tokens];
  }

  async prefill(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Promise<Float32Array> {
    if (tokens.length !== seqs.length) throw new Error(`prefill: ${seqs.length} sequences but ${tokens.length} token lists`);
    return this.append(seqs, tokens);
  }

  async decode(seqs: readonly SequenceId[], tokens: ArrayLike<number>): Promise<Float32Array> {
    if (tokens.length !== seqs.length) throw new Error(`decode: ${seqs.length} sequences but ${tokens.length} tokens`);
    return this.append(
      seqs,
      Array.from(seqs, (_, i) => [tokens[i]!]),
    );
  }

  release(seq: SequenceId): void {
    this.sequence(seq);
    this.sequences.delete(seq);
  }

  usage(): { sequences: number; tokens: number } {
    let tokens = 0;
    for (const cache of this.sequences.values()) tokens += cache.tokens.length;
    return { sequences: this.sequences.size, tokens };
  }

  dispose(): void {
    if (this.disposed) return;
    this.sequences.clear();
    for (const param of this.params.values()) this.ops.release(param);
    this.params.clear();
    this.disposed = true;
  }

  /** Runs the new tokens of every sequence through the model, appends their keys and values, and returns the last rows' logits (B, V). */
  private append(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Float32Array {
    this.checkAlive();
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V } = this.config;
    const QD = NH * HS;
    const KVD = KVH * HS;
    const eps = this.config.rms_norm_eps;
    const theta = this.config.rope_theta;
    const B = seqs.length;
    if (new Set(seqs).size !== B) throw new Error('a sequence may appear only once in a batch');
    const caches = seqs.map((seq) => this.sequence(seq));

    // Stack the new tokens into N rows; row n belongs to caches[rowSeq[n]] at position positions[n].
    // The sequences whose rows take dot products come first: rows [0, dotRows), then the prefills.
    let N = 0;
    let dotRows = 0;
    for (let b = 0; b < B; b++) {
      const count = tokens[b]!.length;
      if (count < 1) throw new Error(`sequence ${seqs[b]}: nothing to append`);
      N += count;
      if (count <= DOT_ROW_TOKENS) dotRows += count;
    }
    const short = (b: number): boolean => tokens[b]!.length <= DOT_ROW_TOKENS;
    const order = [...[...seqs.keys()].filter(short), ...[...seqs.keys()].filter((b) => !short(b))];
    const ids = new Int32Array(N); // (N)
    const positions = new Int32Array(N); // (N)
    const rowSeq = new Int32Array(N); // (N) index into seqs
    const lastRow = new Int32Array(B); // (B) each sequence's last new row
    let n = 0;
    for (const b of order) {
      const list = tokens[b]!;
      const start = caches[b]!.tokens.length;
      for (let t = 0; t < list.length; t++, n++) {
        const id = list[t]!;
        if (!Number.isInteger(id) || id < 0 || id >= V) throw new Error(`token ${id} is outside the vocabulary [0, ${V})`);
        ids[n] = id;
        positions[n] = start + t;
        rowSeq[n] = b;
      }
      lastRow[b] = n - 1;
    }
    for (let b = 0; b < B; b++) this.reserve(caches[b]!, caches[b]!.tokens.length + tokens[b]!.length);

    const x = new Float32Array(N * C); // (N, C) the residual stream
    const ln = new Float32Array(N * C); // (N, C)
    const rstd = new Float32Array(N * Math.max(NH, 1)); // (N*NH) scratch for norms
    const q = new Float32Array(N * QD); // (N, NH, HS)
    const k = new Float32Array(N * KVD); // (N, KVH, HS)
    const v = new Float32Array(N * KVD); // (N, KVH, HS)
    const qNormed = this.config.qk_norm ? new Float32Array(N * QD) : q;
    const kNormed = this.config.qk_norm ? new Float32Array(N * KVD) : k;
    const qRope = new Float32Array(N * QD); // (N, NH, HS)
    const kRope = new Float32Array(N * KVD); // (N, KVH, HS)
    const atty = new Float32Array(N * QD); // (N, NH, HS)
    const attproj = new Float32Array(N * C); // (N, C)
    const residual2 = new Float32Array(N * C); // (N, C)
    const gate = new Float32Array(N * I); // (N, I)
    const up = new Float32Array(N * I); // (N, I)
    const swiglu = new Float32Array(N * I); // (N, I)
    const mlpOut = new Float32Array(N * C); // (N, C)

    embeddingForward(x, ids, this.param('model.embed_tokens.weight'), N, C);
    for (let l = 0; l < this.config.num_hidden_layers; l++) {
      const lp = (name: string): Float32Array => this.param(`model.layers.${l}.${name}`);

      // attention block
      rmsnormForward(ln, rstd, x, lp('input_layernorm.weight'), N, C, eps);
      this.linear(l, 'q_proj', q, ln, N, dotRows);
      this.linear(l, 'k_proj', k, ln, N, dotRows);
      this.linear(l, 'v_proj', v, ln, N, dotRows);
      if (this.config.qk_norm) {
        rmsnormForward(qNormed, rstd, q, lp('self_attn.q_norm.weight'), N * NH, HS, eps);
        rmsnormForward(kNormed, rstd, k, lp('self_attn.k_norm.weight'), N * KVH, HS, eps);
      }
      this.ops.ropeForward(qRope, qNormed, positions, 1, N, NH, HS, theta);
      this.ops.ropeForward(kRope, kNormed, positions, 1, N, KVH, HS, theta);
      for (let r = 0; r < N; r++) {
        const cache = caches[rowSeq[r]!]!;
        cache.keys[l]!.set(kRope.subarray(r * KVD, (r + 1) * KVD), positions[r]! * KVD);
        cache.values[l]!.set(v.subarray(r * KVD, (r + 1) * KVD), positions[r]! * KVD);
      }
      const rowKeys = Array.from(rowSeq, (b) => caches[b]!.keys[l]!);
      const rowValues = Array.from(rowSeq, (b) => caches[b]!.values[l]!);
      attentionDecodeForward(atty, qRope, rowKeys, rowValues, positions, N, NH, KVH, HS);
      this.linear(l, 'o_proj', attproj, atty, N, dotRows);
      residualForward(residual2, x, attproj, N * C);

      // MLP block
      rmsnormForward(ln, rstd, residual2, lp('post_attention_layernorm.weight'), N, C, eps);
      this.linear(l, 'gate_proj', gate, ln, N, dotRows);
      this.linear(l, 'up_proj', up, ln, N, dotRows);
      this.ops.swigluForward(swiglu, gate, up, N * I);
      this.linear(l, 'down_proj', mlpOut, swiglu, N, dotRows);
      residualForward(x, residual2, mlpOut, N * C);
    }
    for (let b = 0; b < B; b++) caches[b]!.tokens.push(...Array.from(tokens[b]!));

    // Final norm and LM head on each sequence's last new row only.
    const last = new Float32Array(B * C); // (B, C)
    for (let b = 0; b < B; b++) last.set(x.subarray(lastRow[b]! * C, (lastRow[b]! + 1) * C), b * C);
    const lnf = new Float32Array(B * C); // (B, C)
    rmsnormForward(lnf, new Float32Array(B), last, this.param('model.norm.weight'), B, C, eps);
    const logits = new Float32Array(B * V); // (B, V)
    this.ops.matmulForwardDot(logits, lnf, this.param(this.config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight'), null, B, C, V);
    return logits;
  }

  /** out = inp·Wᵀ + b for one linear module (rows [0, dotRows) by dot products, the rest by packed blocks), plus its LoRA update when the module is adapted. */
  private linear(layer: number, module: LoraTargetModule, out: Float32Array, inp: Float32Array, N: number, dotRows: number): void {
    const { IC, OC } = linearSizes(this.config, module);
    const prefix = linearModuleName(layer, module);
    const weight = this.param(`${prefix}.weight`);
    const bias = this.params.get(`${prefix}.bias`) ?? null;
    if (dotRows > 0) this.ops.matmulForwardDot(out, inp, weight, bias, dotRows, IC, OC);
    if (N > dotRows) this.ops.matmulForwardPacked(out.subarray(dotRows * OC), inp.subarray(dotRows * IC), weight, bias, N - dotRows, IC, OC);
    if (this.lora !== null && this.lora.targetModules.includes(module)) {
      const hidden = new Float32Array(N * this.lora.rank); // (N, r)
      const loraA = this.param(loraParamName(layer, module, 'A'));
      const loraB = this.param(loraParamName(layer, module, 'B'));
      loraForward(out, hidden, inp, loraA, loraB, N, IC, OC, this.lora.rank, this.lora.alpha);
    }
  }

  /** Grows a cache (doubling) so it holds at least length tokens. */
  private reserve(cache: SequenceCache, length: number): void {
    if (length <= cache.capacity) return;
    const KVD = this.config.num_key_value_heads * this.config.head_dim;
    const capacity = Math.max(length, 2 * cache.capacity, 16);
    const grow = (old: Float32Array): Float32Array => {
      const grown = new Float32Array(capacity * KVD);
      grown.set(old.subarray(0, cache.tokens.length * KVD));
      return grown;
    };
    cache.keys = cache.keys.map(grow);
    cache.values = cache.values.map(grow);
    cache.capacity = capacity;
  }

  private sequence(seq: SequenceId): SequenceCache {
    this.checkAlive();
    const cache = this.sequences.get(seq);
    if (cache === undefined) throw new Error(`unknown or released sequence ${seq}`);
    return cache;
  }

  private param(name: string): Float32Array {
    const data = this.params.get(name);
    if (data === undefined) throw new Error(`CPU decoder: no parameter ${name}`);
    return data;
  }

  private checkAlive(): void {
    if (this.disposed) throw new Error('this decoder was disposed');
  }
}
