/**
 * The fused multi-step decoder's checks (decode_steps.wgsl through WebGPUDecoder.decodeSteps), written
 * once and run in Node + Dawn on SwiftShader (test/gpu-node/fused-decoder.test.ts) and lavapipe
 * (fused-decoder-lavapipe.test.ts), and in Chromium (fused-decoder.test.ts). The oracle is the CPU
 * decoder with the CPU reference sampler (src/gpu/reference/sample.ts) fed the same uniforms:
 * greedy ids equal, log-probs and entropies close, seeded draws reproducible and equal to the
 * reference's except where a uniform sits on a boundary of the reference's CDF; the cache the kernel
 * writes is the layered plan's (a layered decode after it gives the CPU decoder's logits); stop ids
 * and draw limits end a sequence inside the kernel; models it does not run (LoRA) fall back to one
 * layered step per call. Shapes: vocabularies of 512 and 1000 and hidden sizes that are not
 * multiples of the workgroup size (both workgroup sizes forced).
 */
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { generate, type GenerationRequest } from '../../../src/gpu/inference/generate.ts';
import { createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import type { Decoder, DeviceDecodePlan, SequenceId } from '../../../src/gpu/inference/decoder.ts';
import { TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { Rng, type SamplingParams } from '../../../src/gpu/inference/sampler.ts';
import type { NamedTensors } from '../../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import type { LoraConfig } from '../../../src/gpu/model/layout.ts';
import { sampleTokens as referenceSample } from '../../../src/gpu/reference/sample.ts';
import type { GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { createWebGPUBackend, type WebGPUBackend } from '../../../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder, type WebGPUDecoder, type WebGPUDecoderOptions } from '../../../src/gpu/webgpu/webgpu-decoder.ts';
import type { FusedSequencesPerWorkgroup } from '../../../src/gpu/webgpu/fused-decoder.ts';
import { expectClose, seededUniform } from '../expect-close.ts';

/** One fused-decoder check: a name for the test and a body that throws on mismatch. */
export interface FusedDecoderCase {
  name: string;
  run: (context: GPUContext) => Promise<void>;
}

// The fused kernel sums in another order than the layered kernels and the CPU (float64 in places):
// logits differ by ~1e-6 on SwiftShader; log-probs and entropies are compared at 1e-4.
const TOL = { atol: 1e-4, rtol: 1e-4 };
const LOGITS_TOL = { atol: 2e-5, rtol: 1e-4 };

/** Plain Llama: MHA, untied head, vocab 1000, hidden 76 and intermediate 200 (not multiples of 64). */
const PLAIN: ModelConfig = { ...TINY_CONFIG, vocab_size: 1000, hidden_size: 76, intermediate_size: 200, num_attention_heads: 4, num_key_value_heads: 4, head_dim: 18, tie_word_embeddings: false };
/** Qwen2-style QKV bias, tied, GQA 4:2, vocab 512. */
const QKV_BIAS: ModelConfig = { ...TINY_CONFIG, architecture: 'Qwen2ForCausalLM', vocab_size: 512, hidden_size: 72, intermediate_size: 136, attention_bias: true, tie_word_embeddings: true };
/** GQA 6:2 with Qwen3-style q/k norm, vocab 1000, head_dim 12. */
const GQA_QK_NORM: ModelConfig = { ...TINY_CONFIG, architecture: 'Qwen3ForCausalLM', vocab_size: 1000, hidden_size: 84, intermediate_size: 160, num_attention_heads: 6, num_key_value_heads: 2, head_dim: 12, qk_norm: true, tie_word_embeddings: true };

const CONFIGS: Array<{ name: string; config: ModelConfig }> = [
  { name: 'plain Llama (V 1000, C 76, untied)', config: PLAIN },
  { name: 'QKV bias (V 512, C 72, GQA 4:2, tied)', config: QKV_BIAS },
  { name: 'GQA 6:2 + q/k norm (V 1000, C 84)', config: GQA_QK_NORM },
];

function randomTokens(count: number, V: number, seed: number): number[] {
  const uniform = seededUniform(seed);
  return Array.from({ length: count }, () => Math.floor(uniform() * V));
}

/**
 * A backend with random weights made sharper: at the initialiser's scale attention is nearly uniform
 * and the logits nearly flat, so a wrong score scale or a misplaced cache row would change little.
 * Query and key weights ×8 and the embedding ×4 make attention peaked and the logits spread.
 */
async function withBackend(context: GPUContext, config: ModelConfig, lora: LoraConfig | null, body: (backend: WebGPUBackend) => Promise<void>): Promise<void> {
  const backend = await createWebGPUBackend(context, config, { seed: 5 }, { lora, loraSeed: 6 });
  const sharpened: NamedTensors = new Map();
  for (const [name, tensor] of await backend.getParameters()) {
    const factor = /(q_proj|k_proj)\.weight$/.test(name) ? 8 : name === 'model.embed_tokens.weight' ? 4 : 1;
    if (factor !== 1) sharpened.set(name, { shape: tensor.shape, data: tensor.data.map((x) => x * factor) });
  }
  await backend.setParameters(sharpened);
  try {
    await body(backend);
  } finally {
    backend.dispose();
  }
}

async function fusedDecoder(backend: WebGPUBackend, options: WebGPUDecoderOptions): Promise<WebGPUDecoder> {
  return createWebGPUDecoder(backend, { cacheBytes: 8 * 2 ** 20, maxSequenceLength: 512, ...options });
}

/** What the oracle says one sequence draws: ids, log-probs, entropies, and per step the uniforms' interval that gives the id. */
interface OracleRun {
  ids: number[];
  logprobs: number[];
  entropies: number[];
  low: number[];
  high: number[];
}

/**
 * The CPU decoder + reference sampler: prefills the prompts, draws the first token from the prefill
 * logits with uniforms[0], then feeds each draw back, stopping a sequence as decodeSteps does.
 * Returns the first draws and the decode-step draws per sequence.
 */
async function oracle(cpu: Decoder, seqs: SequenceId[], prompts: number[][], plans: DeviceDecodePlan[], steps: number): Promise<{ first: number[]; runs: OracleRun[] }> {
  const V = cpu.vocabSize;
  const drawFrom = (logits: Float32Array, row: number, plan: DeviceDecodePlan, uniform: number) => {
    const { temperature, topK = 0, topP = 1, sampleableIds = V } = plan.params;
    return referenceSample(logits, V, [{ row, temperature, topK, topP, drawable: sampleableIds, uniform }])[0]!;
  };
  const prefill = await cpu.prefill(seqs, prompts);
  const first = seqs.map((_, b) => drawFrom(prefill, b, plans[b]!, 0.5).id);
  const runs: OracleRun[] = seqs.map(() => ({ ids: [], logprobs: [], entropies: [], low: [], high: [] }));
  let fed = first;
  let live = seqs.map((_, b) => b);
  for (let s = 0; s < steps && live.length > 0; s++) {
    const logits = await cpu.decode(live.map((b) => seqs[b]!), live.map((b) => fed[b]!));
    const next = [...fed];
    live.forEach((b, row) => {
      const plan = plans[b]!;
      const drawn = drawFrom(logits, row, plan, plan.params.temperature === 0 ? 0 : plan.uniforms[s]!);
      const run = runs[b]!;
      run.ids.push(drawn.id);
      run.logprobs.push(drawn.logprob);
      run.entropies.push(drawn.entropy);
      run.low.push(drawn.low);
      run.high.push(drawn.high);
      next[b] = drawn.id;
    });
    fed = next;
    live = live.filter((b) => runs[b]!.ids.length < plans[b]!.maxDraws && !plans[b]!.stopIds.includes(runs[b]!.ids.at(-1)!));
  }
  return { first, runs };
}

function plansFor(B: number, params: SamplingParams, steps: number, seed: number, extra: Partial<DeviceDecodePlan> = {}): DeviceDecodePlan[] {
  return Array.from({ length: B }, (_, b) => {
    const rng = new Rng(seed * 100 + b);
    return { params, uniforms: Array.from({ length: steps }, () => rng.next()), stopIds: [], maxDraws: steps, ...extra };
  });
}

/**
 * Runs the fused decoder and the oracle on the same prompts and plans and compares them: greedy ids
 * exactly; sampled ids up to the first step whose uniform lies within 1e-4 of the reference's
 * interval (then that sequence is no longer compared); log-probs and entropies of every compared
 * draw; then one layered decode step of every sequence against the CPU decoder's logits (the cache
 * the kernel wrote). Returns the fused draws.
 */
async function compareWithOracle(backend: WebGPUBackend, options: WebGPUDecoderOptions, prompts: number[][], plans: DeviceDecodePlan[], steps: number, label: string, logprobsOut?: number[][]): Promise<number[][]> {
  const gpu = await fusedDecoder(backend, options);
  const cpu = await createCpuDecoder(backend);
  try {
    const V = gpu.vocabSize;
    const gpuSeqs = prompts.map(() => gpu.newSequence());
    const cpuSeqs = prompts.map(() => cpu.newSequence());
    const { first, runs } = await oracle(cpu, cpuSeqs, prompts, plans, steps);
    await gpu.prefill(gpuSeqs, prompts); // the first token comes from the oracle, so both feed the same one
    const drawn = await gpu.decodeSteps(gpuSeqs, first, plans, steps);
    let compared = 0;
    drawn.forEach((result, b) => {
      const run = runs[b]!;
      const greedy = plans[b]!.params.temperature === 0;
      for (let s = 0; s < Math.min(result.ids.length, run.ids.length); s++) {
        if (result.ids[s] !== run.ids[s]) {
          const u = plans[b]!.uniforms[s]!;
          const onEdge = Math.abs(u - run.low[s]!) < 1e-4 || Math.abs(u - run.high[s]!) < 1e-4;
          if (greedy || !onEdge) throw new Error(`${label}: sequence ${b} step ${s}: fused drew ${result.ids[s]}, the reference ${run.ids[s]} (uniform ${u} in [${run.low[s]}, ${run.high[s]}))`);
          return;
        }
        expectClose(result.logprobs[s]!, run.logprobs[s]!, { ...TOL, label: `${label}: log-prob of sequence ${b} step ${s}` });
        expectClose(result.entropies[s]!, run.entropies[s]!, { ...TOL, label: `${label}: entropy of sequence ${b} step ${s}` });
        compared++;
      }
      if (result.ids.length !== run.ids.length) throw new Error(`${label}: sequence ${b} made ${result.ids.length} draws, the reference ${run.ids.length}`);
    });
    const total = runs.reduce((sum, run) => sum + run.ids.length, 0);
    if (compared < 0.75 * total) throw new Error(`${label}: only ${compared} of ${total} draws compared (too many boundary cases)`);
    // The cache the kernel wrote, read by the layered plan: one more step on both decoders, feeding the last draw.
    const same = drawn.map((result, b) => result.ids.join() === runs[b]!.ids.join());
    const keep = prompts.map((_, b) => b).filter((b) => same[b]);
    drawn.forEach((result, b) => {
      const length = prompts[b]!.length + result.ids.length;
      if (gpu.sequenceLength(gpuSeqs[b]!) !== length) throw new Error(`${label}: sequence ${b} holds ${gpu.sequenceLength(gpuSeqs[b]!)} tokens after ${result.ids.length} draws, expected ${length}`);
    });
    if (keep.length > 0) {
      const last = keep.map((b) => drawn[b]!.ids.at(-1)!);
      const gpuLogits = await gpu.decode(keep.map((b) => gpuSeqs[b]!), last);
      const cpuLogits = await cpu.decode(keep.map((b) => cpuSeqs[b]!), last);
      expectClose(gpuLogits, cpuLogits, { ...LOGITS_TOL, label: `${label}: layered logits after the fused steps` });
      if (gpuLogits.length !== keep.length * V) throw new Error('logits shape');
    }
    logprobsOut?.push(...drawn.map((result) => Array.from(result.logprobs)));
    return drawn.map((result) => Array.from(result.ids));
  } finally {
    gpu.dispose();
    cpu.dispose();
  }
}

/** One forced shape of the fused kernel: threads per workgroup and sequences per workgroup. */
interface FusedShape {
  workgroupSize: number;
  sequences: FusedSequencesPerWorkgroup;
}

/** The greedy comparison of one config at the given kernel shapes (3 sequences: with 2 or 4 per workgroup a slot is padding). */
function greedyCase(name: string, config: ModelConfig, shapes: readonly FusedShape[]): FusedDecoderCase {
  const described = shapes.map(({ workgroupSize, sequences }) => `${workgroupSize} threads × ${sequences} sequence${sequences > 1 ? 's' : ''}`);
  return {
    name: `${name}: greedy draws equal the CPU decoder's, log-probs and entropies close, the layered plan reads the cache it wrote (workgroups of ${described.join(', ')})`,
    run: (context) =>
      withBackend(context, config, null, async (backend) => {
        const V = config.vocab_size;
        const prompts = [randomTokens(5, V, 1), randomTokens(19, V, 2), randomTokens(11, V, 3)]; // ragged, crossing a 16-token page
        for (const { workgroupSize, sequences } of shapes) {
          const decoder = await fusedDecoder(backend, { decodePath: 'fused' });
          if (decoder.fusedProblem !== null) throw new Error(`the fused kernel refuses ${name}: ${decoder.fusedProblem}`);
          decoder.dispose();
          const options = { decodePath: 'fused', fusedWorkgroupSize: workgroupSize, fusedSequencesPerWorkgroup: sequences } as const;
          await compareWithOracle(backend, options, prompts, plansFor(3, { temperature: 0 }, 14, 1), 14, `${name}, WG ${workgroupSize} × ${sequences}`);
        }
      }),
  };
}

// Every config at 4 and 64 threads with one sequence per workgroup; the plain one (scalar cache reads:
// head_dim 18) also with 4 sequences sharing a workgroup, the QKV-bias one with 2 (the sampled case
// runs the q/k-norm config with 4).
const GROUPED: FusedShape[][] = [[{ workgroupSize: 4, sequences: 4 }], [{ workgroupSize: 4, sequences: 2 }], []];
const greedyCases: FusedDecoderCase[] = CONFIGS.map(({ name, config }, i) => greedyCase(name, config, [{ workgroupSize: 4, sequences: 1 }, { workgroupSize: 64, sequences: 1 }, ...GROUPED[i]!]));

const sampledCase: FusedDecoderCase = {
  name: 'seeded sampling (temperature, top-k, top-p, drawable ids) draws the reference sampler\'s tokens from the same uniforms and is reproducible by seed, and four sequences (each its own parameters) sharing one workgroup draw exactly what they draw one per workgroup',
  run: (context) =>
    withBackend(context, GQA_QK_NORM, null, async (backend) => {
      const V = GQA_QK_NORM.vocab_size;
      const prompts = [randomTokens(7, V, 4), randomTokens(3, V, 5), randomTokens(12, V, 6), randomTokens(9, V, 7)];
      const steps = 12;
      const plans = [
        ...plansFor(1, { temperature: 1.3 }, steps, 2),
        ...plansFor(1, { temperature: 0.8, topK: 20 }, steps, 3),
        ...plansFor(1, { temperature: 1, topP: 0.85 }, steps, 4),
        ...plansFor(1, { temperature: 1.1, topK: 50, topP: 0.9, sampleableIds: 700 }, steps, 5),
      ];
      const firstLogprobs: number[][] = [];
      const first = await compareWithOracle(backend, { decodePath: 'fused', fusedSequencesPerWorkgroup: 1 }, prompts, plans, steps, 'sampled', firstLogprobs);
      const again = await compareWithOracle(backend, { decodePath: 'fused', fusedSequencesPerWorkgroup: 1 }, prompts, plans, steps, 'sampled again');
      if (first.map((ids) => ids.join()).join(' | ') !== again.map((ids) => ids.join()).join(' | ')) throw new Error('one seed drew different tokens');
      if (first[3]!.some((id) => id >= 700)) throw new Error(`drew an id past sampleableIds 700: ${first[3]!.join()}`);
      // Sharing a workgroup changes nothing a sequence draws: the same ids and bit-equal log-probs.
      const groupedLogprobs: number[][] = [];
      const grouped = await compareWithOracle(backend, { decodePath: 'fused', fusedSequencesPerWorkgroup: 4 }, prompts, plans, steps, 'sampled, 4 sequences per workgroup', groupedLogprobs);
      if (grouped.map((ids) => ids.join()).join(' | ') !== first.map((ids) => ids.join()).join(' | ')) throw new Error(`4 sequences per workgroup drew ${grouped.join(' | ')}, one per workgroup ${first.join(' | ')}`);
      if (groupedLogprobs.map((row) => row.join()).join(' | ') !== firstLogprobs.map((row) => row.join()).join(' | ')) throw new Error('4 sequences per workgroup gave other log-probs than one per workgroup');
    }),
};

/** The stop-id check with each of the given numbers of sequences per workgroup. */
function stopCase(sequencesPerWorkgroup: readonly FusedSequencesPerWorkgroup[]): FusedDecoderCase {
  return {
    name: `a stop id ends a sequence inside the kernel (the others go on to their draw limits), over more steps than one dispatch runs, with ${sequencesPerWorkgroup.join(' and ')} sequence(s) per workgroup`,
    run: (context) =>
      withBackend(context, QKV_BIAS, null, async (backend) => {
        for (const sequences of sequencesPerWorkgroup) await stopIds(backend, sequences);
      }),
  };
}

/** The stop-id check at a number of sequences per workgroup (4: the stopped one shares its workgroup with the two going on). */
async function stopIds(backend: WebGPUBackend, sequences: FusedSequencesPerWorkgroup): Promise<void> {
  const V = QKV_BIAS.vocab_size;
  const prompts = [randomTokens(6, V, 8), randomTokens(10, V, 9), randomTokens(4, V, 10)];
  // Learn sequence 0's greedy draw at step 3, then make it a stop id of sequence 0 only.
  const options = { decodePath: 'fused', fusedSequencesPerWorkgroup: sequences } as const;
  const probe = await compareWithOracle(backend, options, prompts, plansFor(3, { temperature: 0 }, 6, 1), 6, `probe, ${sequences} per workgroup`);
  const stopId = probe[0]![3]!;
  const firstAt = probe[0]!.indexOf(stopId);
  const plans = plansFor(3, { temperature: 0 }, 40, 1);
  plans[0] = { ...plans[0]!, stopIds: [V - 1, stopId] };
  plans[1] = { ...plans[1]!, maxDraws: 5 };
  const drawn = await compareWithOracle(backend, options, prompts, plans, 40, `stop ids, ${sequences} per workgroup`); // 40 > MAX_FUSED_STEPS: two dispatches
  if (drawn[0]!.length !== firstAt + 1 || drawn[0]!.at(-1) !== stopId) throw new Error(`sequence 0 should stop at its first ${stopId} (draw ${firstAt + 1}): drew ${drawn[0]!.join()}`);
  if (drawn[1]!.length !== 5) throw new Error(`sequence 1 may draw 5 tokens, drew ${drawn[1]!.length}`);
  if (drawn[2]!.length !== 40) throw new Error(`sequence 2 should draw all 40 steps, drew ${drawn[2]!.length}`);
}

const fallbackCase: FusedDecoderCase = {
  name: 'a model the fused kernel does not run (LoRA) decodes steps on the layered plan, and a forced layered path gives the fused path\'s greedy draws',
  run: (context) => {
    const lora: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] };
    return withBackend(context, QKV_BIAS, lora, async (backend) => {
      const V = QKV_BIAS.vocab_size;
      const prompts = [randomTokens(8, V, 11), randomTokens(5, V, 12)];
      const decoder = await fusedDecoder(backend, { decodePath: 'fused' });
      const problem = decoder.fusedProblem;
      decoder.dispose();
      if (problem === null || !/LoRA/.test(problem)) throw new Error(`LoRA should keep the fused kernel off, got ${problem}`);
      await compareWithOracle(backend, { decodePath: 'fused' }, prompts, plansFor(2, { temperature: 0 }, 6, 1), 6, 'LoRA fallback');
    }).then(() =>
      withBackend(context, PLAIN, null, async (backend) => {
        const V = PLAIN.vocab_size;
        const prompts = [randomTokens(8, V, 13), randomTokens(5, V, 14)];
        const plans = plansFor(2, { temperature: 0.9, topK: 30 }, 8, 7);
        const layered = await compareWithOracle(backend, { decodePath: 'layered' }, prompts, plans, 8, 'forced layered');
        const fused = await compareWithOracle(backend, { decodePath: 'fused' }, prompts, plans, 8, 'forced fused');
        if (layered.map((ids) => ids.join()).join('|') !== fused.map((ids) => ids.join()).join('|')) throw new Error(`layered ${layered.join('|')} vs fused ${fused.join('|')}`);
      }),
    );
  },
};

const trialCase: FusedDecoderCase = {
  name: 'decodePath auto runs the timed trial once per batch bucket and decodes with the path it picked',
  run: (context) =>
    withBackend(context, { ...TINY_CONFIG, vocab_size: 300 }, null, async (backend) => {
      const decoder = await fusedDecoder(backend, {});
      try {
        const path = await decoder.pathFor(3);
        if (path !== 'fused' && path !== 'layered') throw new Error(`trial picked ${String(path)}`);
        if ((await decoder.pathFor(4)) !== path) throw new Error('the same bucket gave another path');
        const trial = await decoder.pathTrial(3);
        if (trial === null || trial.path !== path) throw new Error(`the cached trial (${JSON.stringify(trial)}) is not the one pathFor used`);
        if (trial.rounds < 2 || trial.times.fused.length !== trial.rounds || trial.times.layered.length !== trial.rounds) throw new Error(`trial rounds: ${JSON.stringify(trial)}`);
        if (decoder.usage().sequences !== 0 || decoder.cacheUsage().pagesUsed !== 0) throw new Error('the trial left sequences or pages behind');
        const seqs = [decoder.newSequence(), decoder.newSequence()];
        await decoder.prefill(seqs, [[1, 2, 3], [4, 5]]);
        const drawn = await decoder.decodeSteps(seqs, [6, 7], plansFor(2, { temperature: 0 }, 3, 1), 3);
        if (drawn.some((result) => result.ids.length !== 3)) throw new Error('auto path: wrong draw counts');
      } finally {
        decoder.dispose();
      }
    }),
};

const generateCase: FusedDecoderCase = {
  name: 'generate() decodes in chunks through decodeSteps: greedy tokens equal the CPU decoder\'s, and a stop string ends a kept sequence holding the tokens a call per step would have fed',
  run: (context) =>
    withBackend(context, TINY_CONFIG, null, async (backend) => {
      const tokenizer = new ByteTokenizer();
      const gpu = await fusedDecoder(backend, { decodePath: 'fused' });
      const cpu = await createCpuDecoder(backend);
      try {
        const prompt = tokenizer.encode('hello there');
        const request: GenerationRequest = { prompt, temperature: 0, maxTokens: 24, seed: 1 }; // 24 > one chunk of 16
        const [onGpu] = await generate(gpu, tokenizer, [request]);
        const [onCpu] = await generate(cpu, tokenizer, [request]);
        const ids = onGpu!.samples[0]!.tokenIds;
        if (ids.join() !== onCpu!.samples[0]!.tokenIds.join()) throw new Error(`greedy tokens differ: ${ids.join()} vs ${onCpu!.samples[0]!.tokenIds.join()}`);
        if (onGpu!.samples[0]!.entropies?.length !== ids.length) throw new Error('no entropies: generate did not sample on the device');
        const text = tokenizer.decode(ids, { skipSpecialTokens: true });
        if (text.length < 6) throw new Error(`the greedy completion is too short for a stop string: ${JSON.stringify(text)}`);
        const stop = text.slice(3, 5);
        let m = 1;
        while (!tokenizer.decode(ids.slice(0, m), { skipSpecialTokens: true }).includes(stop)) m++;
        const [kept] = await generate(gpu, tokenizer, [{ ...request, stopStrings: [stop], keepSequences: true }]);
        const sample = kept!.samples[0]!;
        if (sample.tokenIds.join() !== ids.slice(0, m).join()) throw new Error(`the stop string should end the sample after ${m} tokens: ${sample.tokenIds.join()}`);
        const length = gpu.sequenceLength(sample.sequence!);
        if (length !== prompt.length + m - 1) throw new Error(`the kept sequence holds ${length} tokens, expected the prompt and every sampled token but the last (${prompt.length + m - 1})`);
        if (gpu.sequenceTokens(sample.sequence!).join() !== [...prompt, ...ids.slice(0, m - 1)].join()) throw new Error('the kept sequence holds other tokens');
        gpu.release(sample.sequence!);
      } finally {
        gpu.dispose();
        cpu.dispose();
      }
    }),
};

/**
 * The check run on lavapipe, whose LLVM compiles the fused kernel slowly (with a cold shader cache,
 * 2026-12-03: 82 s for GQA at 64 threads and 70 s for the stop check in CI, 39 s for this one; ~5 min
 * at 64 threads under load): GQA with q/k norm, greedy, at 4 threads and one sequence per workgroup,
 * against the CPU decoder. The stop ids
 * (passed on lavapipe at 4 threads in CI before, and with 4 sequences per workgroup by hand: 569 s at
 * load 8) and the other shapes run on SwiftShader in Node and in Chromium only, for CI's budget.
 */
export const FUSED_DECODER_LAVAPIPE_CASES: FusedDecoderCase[] = [greedyCase(CONFIGS[2]!.name, GQA_QK_NORM, [{ workgroupSize: 4, sequences: 1 }])];

/**
 * The checks Chromium repeats (the kernel through the browser's own Dawn and shader compiler): one
 * config at 64 threads and with 4 sequences sharing a workgroup, the sampled and stop-id checks and
 * the LoRA fallback. Node + Dawn runs every case on the same SwiftShader (FUSED_DECODER_CASES), so
 * the other configs and the trial's bookkeeping are not run twice (CI time).
 */
export const FUSED_DECODER_BROWSER_CASES: FusedDecoderCase[] = [greedyCase(CONFIGS[0]!.name, CONFIGS[0]!.config, [{ workgroupSize: 64, sequences: 1 }, { workgroupSize: 4, sequences: 4 }]), sampledCase, stopCase([4]), fallbackCase];

/** Every fused-decoder check, in the order they run. */
export const FUSED_DECODER_CASES: FusedDecoderCase[] = [...greedyCases, sampledCase, stopCase([1, 4]), fallbackCase, trialCase, generateCase];
