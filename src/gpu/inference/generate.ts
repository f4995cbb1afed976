/**
 * Batched generation over a Decoder. Requests that arrive while the engine is idle within one
 * short window (default: the same macrotask tick) are prefilled together; requests that arrive
 * while it is decoding join at the next step (continuous batching), so the concurrent rollouts of
 * a GRPO step share every prefill and decode pass. A request with n > 1, or several requests with
 * the same prompt admitted together (G rollouts of one task), prefill the prompt once and fork
 * the cache. Each sample has its own generator, seeded from the request's
 * seed and the sample's index, so a seed reproduces a sample whatever it was batched with.
 */
import type { Tokenizer } from '../io/tokenizer.ts';
import type { Decoder, DeviceDraw, SequenceId } from './decoder.ts';
import { checkSamplingParams, Rng, sampleRng, sampleToken, type SamplingParams } from './sampler.ts';

/** One generation request: a prompt (or tokens to append to an existing sequence) and how to sample. */
export interface GenerationRequest {
  /** Tokens to feed before sampling (at least one): the whole prompt, or what to append to `parent`. */
  prompt: readonly number[];
  /** A sequence of the decoder that the caller hands over, to extend with `prompt` instead of starting afresh. */
  parent?: SequenceId;
  /** Samples to draw from the prompt (default 1). */
  n?: number;
  /** Sampling temperature; 0 decodes greedily (default 1). */
  temperature?: number;
  /** Nucleus sampling threshold in (0, 1] (default 1, off). */
  topP?: number;
  /** Keep only the k most likely tokens (default 0, off). */
  topK?: number;
  /** Most tokens to sample per sample (default 256). */
  maxTokens?: number;
  /** Token ids that end a sample, besides the tokenizer's eosIds (the stop token is kept in tokenIds, not in text). */
  stopTokenIds?: readonly number[];
  /** Strings that end a sample; the text is cut where the first one starts (the tokens sampled so far are all kept). */
  stopStrings?: readonly string[];
  /** Seed of the sample generators; without one the engine draws a seed (reported in the result). */
  seed?: number;
  /** Keep each sample's sequence in the decoder (returned as `sequence`, owned by the caller) to extend it later. */
  keepSequences?: boolean;
  /** Cancels the request: its sequences are freed and its promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Why a sample ended: a stop token or stop string ('stop'), or maxTokens ('length'). */
export type GenerationFinishReason = 'stop' | 'length';

/** One sample of a request. */
export interface GeneratedSample {
  index: number;
  /** The decoded text without special tokens, cut before a stop string. */
  text: string;
  /** Every sampled token, the stop token included. */
  tokenIds: number[];
  /** log_softmax(logits / temperature)[id] of each sampled token (see sampler.ts). */
  logprobs: number[];
  /** Entropy of softmax(logits / temperature) at each sampled token (temperature 1 when greedy); only from a decoder that samples on its device. */
  entropies?: number[];
  finishReason: GenerationFinishReason;
  /** What stopped it, when finishReason is 'stop'. */
  stop?: { tokenId: number } | { string: string };
  /** The sample's sequence, when keepSequences: its cache holds the prompt and every sampled token but the last. */
  sequence?: SequenceId;
}

/** The result of one request. */
export interface GenerationResult {
  /** Tokens fed for this request (the prompt, or what was appended to the parent). */
  promptTokens: number;
  /** The seed the samples were drawn with (the request's, or the one the engine drew). */
  seed: number;
  samples: GeneratedSample[];
}

/** Options of a Generator. */
export interface GeneratorOptions {
  /** Milliseconds an idle engine waits to gather requests into one batch (default 0: until the next macrotask). */
  batchWindowMs?: number;
  /** Most sequences decoded at once; later requests wait for room (default 256). */
  maxBatch?: number;
  /** Seed of the generator that draws seeds for requests without one (default 0). */
  seed?: number;
}

/** A request in the engine. */
interface Job {
  request: GenerationRequest;
  params: SamplingParams;
  n: number;
  maxTokens: number;
  stopIds: Set<number>;
  stopStrings: readonly string[];
  seed: number;
  samples: Sample[];
  done: number;
  resolve: (result: GenerationResult) => void;
  reject: (error: unknown) => void;
}

/** One sample being decoded. */
interface Sample {
  job: Job;
  index: number;
  seq: SequenceId;
  rng: Rng;
  tokenIds: number[];
  logprobs: number[];
  entropies: number[];
  result: GeneratedSample | null;
}

/** A drawn token: its id and log-probability, and the entropy of its distribution when the device reports it. */
interface Drawn {
  id: number;
  logprob: number;
  entropy?: number;
}

/** The batching engine; see the file comment. */
export class Generator {
  private pending: Job[] = [];
  private live: Sample[] = [];
  private running = false;
  private idleWaiters: Array<() => void> = [];
  private readonly seeds: Rng;
  private readonly batchWindowMs: number;
  private readonly maxBatch: number;

  constructor(
    private decoderValue: Decoder,
    readonly tokenizer: Tokenizer,
    { batchWindowMs = 0, maxBatch = 256, seed = 0 }: GeneratorOptions = {},
  ) {
    this.seeds = new Rng(seed);
    this.batchWindowMs = batchWindowMs;
    this.maxBatch = maxBatch;
  }

  /** The decoder the engine samples from. */
  get decoder(): Decoder {
    return this.decoderValue;
  }

  /** Replaces the decoder (e.g. with one built from new weights); only while idle. */
  setDecoder(decoder: Decoder): void {
    if (this.running) throw new Error('setDecoder: the generator is busy; await idle() first');
    this.decoderValue = decoder;
  }

  /** Queues a request and resolves with its samples once all of them have finished. */
  generate(request: GenerationRequest): Promise<GenerationResult> {
    const job = this.makeJob(request);
    return new Promise<GenerationResult>((resolve, reject) => {
      job.resolve = resolve;
      job.reject = reject;
      this.pending.push(job);
      if (!this.running) {
        this.running = true;
        const start = () => void this.loop();
        if (this.batchWindowMs > 0) setTimeout(start, this.batchWindowMs);
        else void yieldToEventLoop().then(start);
      }
    });
  }

  /** Resolves when no request is queued or running. */
  idle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Checks a request and fills in its defaults (throws on bad arguments, before anything is queued). */
  private makeJob(request: GenerationRequest): Job {
    const n = request.n ?? 1;
    const maxTokens = request.maxTokens ?? 256;
    if (!Number.isInteger(n) || n < 1) throw new Error(`n must be a positive integer, got ${n}`);
    if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new Error(`max tokens must be a positive integer, got ${maxTokens}`);
    if (request.prompt.length < 1) throw new Error('the prompt must have at least one token');
    // Ids past the tokenizer's vocabulary (a model's padding rows) are never drawn: they decode to nothing.
    const params: SamplingParams = { temperature: request.temperature ?? 1, topK: request.topK ?? 0, topP: request.topP ?? 1, sampleableIds: this.tokenizer.vocabSize };
    checkSamplingParams(params);
    const stopStrings = (request.stopStrings ?? []).filter((stop) => stop.length > 0);
    const seed = request.seed ?? this.seeds.nextUint32();
    const fail = (): never => {
      throw new Error('job not queued');
    };
    return {
      request,
      params,
      n,
      maxTokens,
      stopIds: new Set([...this.tokenizer.eosIds, ...(request.stopTokenIds ?? [])]),
      stopStrings,
      seed,
      samples: [],
      done: 0,
      resolve: fail,
      reject: fail,
    };
  }

  /** Admits queued requests and decodes until nothing is left. */
  private async loop(): Promise<void> {
    try {
      while (this.pending.length > 0 || this.live.length > 0) {
        this.dropAborted();
        if (this.pending.length > 0) {
          const room = this.maxBatch - this.live.length;
          const admitted: Job[] = [];
          let used = 0;
          while (this.pending.length > 0) {
            const fits = used + this.pending[0]!.n <= room;
            const alone = admitted.length === 0 && this.live.length === 0; // a request larger than maxBatch still runs, alone
            if (!fits && !alone) break;
            const job = this.pending.shift()!;
            admitted.push(job);
            used += job.n;
          }
          if (admitted.length > 0) await this.guard(admitted, () => this.admit(admitted));
        }
        if (this.live.length > 0) {
          const jobs = [...new Set(this.live.map((sample) => sample.job))];
          await this.guard(jobs, () => this.step());
        }
        // Let requests issued meanwhile (other rollouts, environment replies) join the next step.
        await yieldToEventLoop();
      }
    } finally {
      this.running = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Runs work; if it throws, fails the given jobs (freeing their sequences) instead of the engine. */
  private async guard(jobs: Job[], work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      for (const job of jobs) this.fail(job, error);
    }
  }

  /**
   * Prefills the admitted requests in one batch and draws each sample's first token. Requests
   * with the same prompt and no parent (the G rollouts of one task, each asking for n = 1) share
   * one prefill: the first one's sequence is forked for every other sample of the group.
   */
  private async admit(jobs: Job[]): Promise<void> {
    const decoder = this.decoderValue;
    const heads: Job[] = []; // the jobs whose prompts are prefilled
    const groups = new Map<Job, Job[]>(); // head → the jobs that share its prefill, head first
    const byPrompt = new Map<string, Job>();
    for (const job of jobs) {
      const key = job.request.parent === undefined ? job.request.prompt.join(',') : null;
      const head = key === null ? undefined : byPrompt.get(key);
      if (head !== undefined) {
        groups.get(head)!.push(job);
        continue;
      }
      if (key !== null) byPrompt.set(key, job);
      heads.push(job);
      groups.set(job, [job]);
    }
    const seqs = heads.map((job) => job.request.parent ?? decoder.newSequence());
    heads.forEach((job, j) => (job.samples = [this.newSample(job, 0, seqs[j]!)])); // owned by the job from here on, freed on failure
    // Every sample's first draw, in the order the samples are made below: per head, its group's jobs, each job's samples by index.
    const planned: Array<{ job: Job; row: number; rng: Rng }> = [];
    heads.forEach((head, j) => {
      for (const job of groups.get(head)!) {
        for (let i = 0; i < job.n; i++) planned.push({ job, row: j, rng: job === head && i === 0 ? job.samples[0]!.rng : sampleRng(job.seed, i) });
      }
    });
    const prompts = heads.map((job) => job.request.prompt);
    let drawn: Drawn[];
    if (decoder.prefillAndSample !== undefined) {
      const result = await decoder.prefillAndSample(
        seqs,
        prompts,
        planned.map(({ job, row, rng }) => deviceDraw(row, job.params, rng)),
      );
      drawn = planned.map((_, d) => ({ id: result.ids[d]!, logprob: result.logprobs[d]!, entropy: result.entropies[d]! }));
    } else {
      const logits = await decoder.prefill(seqs, prompts);
      const V = decoder.vocabSize;
      drawn = planned.map(({ job, row, rng }) => sampleToken(logits, row * V, V, job.params, rng));
    }
    let d = 0;
    heads.forEach((head, j) => {
      for (const job of groups.get(head)!) {
        const have = job === head ? 1 : 0;
        decoder.fork(seqs[j]!, job.n - have).forEach((seq, i) => job.samples.push(this.newSample(job, i + have, seq, planned[d + i + have]!.rng)));
        for (const sample of job.samples) {
          this.accept(sample, drawn[d++]!);
          if (sample.result === null) this.live.push(sample);
        }
      }
    });
  }

  /** Feeds every live sample its last token and draws the next one. */
  private async step(): Promise<void> {
    const live = this.live;
    const decoder = this.decoderValue;
    const seqs = live.map((sample) => sample.seq);
    const lastTokens = live.map((sample) => sample.tokenIds.at(-1)!);
    if (decoder.decodeSteps !== undefined && decoder.truncate !== undefined) {
      // Up to DECODE_CHUNK steps per device call (the WebGPU decoder's fused kernel runs them in one
      // dispatch): stop ids and token limits end a sample on the device, stop strings are checked
      // here over the draws in order. Each sample's generator gives its uniforms in the order a
      // call per step would, so a seed draws the same tokens either way.
      const remaining = live.map((sample) => sample.job.maxTokens - sample.tokenIds.length);
      const steps = Math.max(1, Math.min(DECODE_CHUNK, Math.max(...remaining)));
      const plans = live.map((sample, row) => {
        const maxDraws = Math.max(1, remaining[row]!);
        const { params } = sample.job;
        return { params, uniforms: Array.from({ length: params.temperature === 0 ? 0 : Math.min(steps, maxDraws) }, () => sample.rng.next()), stopIds: [...sample.job.stopIds], maxDraws };
      });
      const lengths = live.map((sample) => decoder.sequenceLength(sample.seq));
      const results = await decoder.decodeSteps(seqs, lastTokens, plans, steps);
      live.forEach((sample, row) => {
        const drawn = results[row]!;
        let accepted = 0;
        while (accepted < drawn.ids.length && sample.result === null) {
          this.accept(sample, { id: drawn.ids[accepted]!, logprob: drawn.logprobs[accepted]!, entropy: drawn.entropies[accepted]! });
          accepted++;
        }
        // A sample that ended before its last draw (a stop string) keeps only the tokens a call per step would have fed.
        if (accepted < drawn.ids.length && sample.job.request.keepSequences) decoder.truncate!(sample.seq, lengths[row]! + accepted);
      });
    } else if (decoder.decodeAndSample !== undefined) {
      // The GPU draws: only B ids, log-probabilities and entropies come back.
      const result = await decoder.decodeAndSample(
        seqs,
        lastTokens,
        live.map((sample, row) => deviceDraw(row, sample.job.params, sample.rng)),
      );
      live.forEach((sample, row) => {
        if (sample.result === null) this.accept(sample, { id: result.ids[row]!, logprob: result.logprobs[row]!, entropy: result.entropies[row]! });
      });
    } else {
      const V = decoder.vocabSize;
      const logits = await decoder.decode(seqs, lastTokens);
      live.forEach((sample, row) => {
        if (sample.result === null) this.accept(sample, sampleToken(logits, row * V, V, sample.job.params, sample.rng));
      });
    }
    this.live = this.live.filter((sample) => sample.result === null);
  }

  private newSample(job: Job, index: number, seq: SequenceId, rng = sampleRng(job.seed, index)): Sample {
    return { job, index, seq, rng, tokenIds: [], logprobs: [], entropies: [], result: null };
  }

  /** Records a sampled token and ends the sample on a stop token, a stop string or the token limit. */
  private accept(sample: Sample, token: Drawn): void {
    const { job } = sample;
    sample.tokenIds.push(token.id);
    sample.logprobs.push(token.logprob);
    if (token.entropy !== undefined) sample.entropies.push(token.entropy);
    if (job.stopIds.has(token.id)) {
      this.finish(sample, 'stop', this.text(sample.tokenIds.slice(0, -1)), { tokenId: token.id });
      return;
    }
    if (job.stopStrings.length > 0) {
      const text = this.text(sample.tokenIds);
      let cut = -1;
      let which = '';
      for (const stop of job.stopStrings) {
        const at = text.indexOf(stop);
        if (at >= 0 && (cut < 0 || at < cut)) {
          cut = at;
          which = stop;
        }
      }
      if (cut >= 0) {
        this.finish(sample, 'stop', text.slice(0, cut), { string: which });
        return;
      }
    }
    if (sample.tokenIds.length >= job.maxTokens) this.finish(sample, 'length', this.text(sample.tokenIds));
  }

  private text(ids: number[]): string {
    return this.tokenizer.decode(ids, { skipSpecialTokens: true });
  }

  /** Completes a sample (freeing its sequence unless the caller keeps it); resolves the request when its last sample is done. */
  private finish(sample: Sample, finishReason: GenerationFinishReason, text: string, stop?: GeneratedSample['stop']): void {
    const { job } = sample;
    sample.result = {
      index: sample.index,
      text,
      tokenIds: sample.tokenIds,
      logprobs: sample.logprobs,
      ...(sample.entropies.length > 0 ? { entropies: sample.entropies } : {}),
      finishReason,
      ...(stop !== undefined ? { stop } : {}),
      ...(job.request.keepSequences ? { sequence: sample.seq } : {}),
    };
    if (!job.request.keepSequences) this.decoderValue.release(sample.seq);
    job.done++;
    if (job.done < job.n) return;
    job.resolve({ promptTokens: job.request.prompt.length, seed: job.seed, samples: job.samples.map((s) => s.result!) });
  }

  /** Rejects a job and frees its sequences (those that exist). */
  private fail(job: Job, error: unknown): void {
    for (const sample of job.samples) {
      try {
        this.decoderValue.release(sample.seq);
      } catch {
        // already released
      }
    }
    if (job.samples.length === 0 && job.request.parent !== undefined) {
      try {
        this.decoderValue.release(job.request.parent);
      } catch {
        // already released
      }
    }
    this.live = this.live.filter((sample) => sample.job !== job);
    this.pending = this.pending.filter((pending) => pending !== job);
    job.reject(error);
  }

  /** Fails every queued or running request whose signal has fired. */
  private dropAborted(): void {
    const jobs = new Set([...this.pending, ...this.live.map((sample) => sample.job)]);
    for (const job of jobs) {
      const signal = job.request.signal;
      if (signal?.aborted) this.fail(job, signal.reason ?? new Error('aborted'));
    }
  }
}

/** A draw for a decoder that samples on its device: the uniform comes from the sample's generator exactly as sampleToken takes it (one number per draw, none when greedy), so both paths consume a seed's stream alike. */
/** Most decode steps per decodeSteps call: longer chunks cost fewer device round trips, shorter ones waste less past a stop string and admit new requests sooner. */
const DECODE_CHUNK = 16;

function deviceDraw(row: number, params: SamplingParams, rng: Rng): DeviceDraw {
  return { row, params, uniform: params.temperature === 0 ? 0 : rng.next() };
}

/**
 * Resolves on the next macrotask, so requests issued by other code meanwhile are queued first. A
 * MessageChannel message, not setTimeout(0): browsers clamp nested timeouts to 4 ms, which would
 * cost 4 ms per decode step.
 */
function yieldToEventLoop(): Promise<void> {
  if (typeof MessageChannel === 'undefined') return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      port2.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

/** Generates for a list of requests as one batch over a decoder (a one-shot Generator). */
export async function generate(decoder: Decoder, tokenizer: Tokenizer, requests: readonly GenerationRequest[], options: GeneratorOptions = {}): Promise<GenerationResult[]> {
  const generator = new Generator(decoder, tokenizer, options);
  return Promise.all(requests.map((request) => generator.generate(request)));
}
