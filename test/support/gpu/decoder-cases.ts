/**
 * The WebGPU decoder's checks, written once and run in Node + Dawn (test/gpu-node/decoder.test.ts)
 * and in Chromium (decoder.test.ts): its four kernels against their references, KV-cache logits
 * against a full backend.forward of the whole sequence and against the CPU decoder (plain Llama,
 * QKV bias, q/k norm, LoRA), a ragged batch against each sequence alone (greedy), fork, extension,
 * release, the cache limits, and LocalChatClient over it. Sizes are tiny (SwiftShader is slow).
 */
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { attentionDecodeForward, createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import type { Decoder } from '../../../src/gpu/inference/decoder.ts';
import { generate, type GenerationRequest } from '../../../src/gpu/inference/generate.ts';
import { LocalChatClient } from '../../../src/gpu/inference/local-chat-client.ts';
import { kvCacheWrite, readPagedRows } from '../../../src/gpu/inference/paged-kv-cache.ts';
import { matmulForward } from '../../../src/gpu/reference/matmul.ts';
import { ropeForward } from '../../../src/gpu/reference/rope.ts';
import { swigluForward } from '../../../src/gpu/reference/swiglu.ts';
import { TINY_CONFIG as TINY_PRESET } from '../../../src/gpu/inference/presets.ts';
import { argmax } from '../../../src/gpu/inference/sampler.ts';
import type { NamedTensors } from '../../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import type { LoraConfig } from '../../../src/gpu/model/layout.ts';
import * as decoderOps from '../../../src/gpu/webgpu/decoder-ops.ts';
import type { GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { createTensor, KernelPlan, kernelsFor, readTensor } from '../../../src/gpu/webgpu/kernels.ts';
import { createWebGPUBackend, type WebGPUBackend } from '../../../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../../../src/gpu/webgpu/webgpu-decoder.ts';
import { expectClose, randomArray, seededUniform } from '../expect-close.ts';
import { TINY_CONFIG } from './backend-cases.ts';

/** One decoder check: a name for the test and a body that throws on mismatch. */
export interface DecoderCase {
  name: string;
  run: (context: GPUContext) => Promise<void>;
}

// The decoder runs the backend's kernels per row and attention_decode_forward mirrors
// attention_forward's arithmetic in the same order: on SwiftShader (2026-12-02) its logits equal a
// full backend.forward bitwise (atol 0 passes), and differ from the CPU decoder by at most 6e-8.
// Stated tolerance, atol 2e-5 + rtol 1e-4 (the backend-vs-CPU one), leaves room for other GPUs'
// rounding and fused multiply-adds.
const TOL = { atol: 2e-5, rtol: 1e-4 };

const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const VARIANTS: Array<{ name: string; config: ModelConfig; lora: LoraConfig | null }> = [
  { name: 'plain Llama', config: TINY_CONFIG, lora: null },
  { name: 'Qwen2-style QKV bias, tied', config: { ...TINY_CONFIG, architecture: 'Qwen2ForCausalLM', attention_bias: true, tie_word_embeddings: true }, lora: null },
  { name: 'Qwen3-style q/k norm', config: { ...TINY_CONFIG, architecture: 'Qwen3ForCausalLM', head_dim: 12, qk_norm: true, tie_word_embeddings: true }, lora: null },
  { name: 'LoRA on every linear', config: TINY_CONFIG, lora: LORA },
];

function randomTokens(count: number, V: number, seed: number): number[] {
  const uniform = seededUniform(seed);
  return Array.from({ length: count }, () => Math.floor(uniform() * V));
}

function row(logits: Float32Array, index: number, V: number): Float32Array {
  return logits.subarray(index * V, (index + 1) * V);
}

/** A WebGPU backend with random weights (LoRA B made non-zero so the adapters matter). */
async function makeBackend(context: GPUContext, config: ModelConfig, lora: LoraConfig | null, seed = 3): Promise<WebGPUBackend> {
  const backend = await createWebGPUBackend(context, config, { seed }, { lora, loraSeed: 4 });
  if (lora) {
    const tweaked: NamedTensors = new Map();
    for (const [name, tensor] of await backend.getParameters()) {
      if (name.includes('lora_B')) tweaked.set(name, { shape: tensor.shape, data: tensor.data.map((_, i) => Math.sin(i) * 0.05) });
    }
    await backend.setParameters(tweaked);
  }
  return backend;
}

async function withBackend(context: GPUContext, config: ModelConfig, lora: LoraConfig | null, body: (backend: WebGPUBackend) => Promise<void>): Promise<void> {
  const backend = await makeBackend(context, config, lora);
  try {
    await body(backend);
  } finally {
    backend.dispose();
  }
}

async function withDecoders(backend: WebGPUBackend, body: (gpu: Decoder, cpu: Decoder) => Promise<void>, options = {}): Promise<void> {
  const gpu = await createWebGPUDecoder(backend, options);
  const cpu = await createCpuDecoder(backend);
  try {
    await body(gpu, cpu);
  } finally {
    gpu.dispose();
    cpu.dispose();
  }
}

/** Greedy-decodes steps tokens for each sequence in one batch and returns the tokens per sequence. */
async function greedy(decoder: Decoder, prompts: number[][], steps: number): Promise<number[][]> {
  const V = decoder.vocabSize;
  const seqs = prompts.map(() => decoder.newSequence());
  let logits = await decoder.prefill(seqs, prompts);
  const out: number[][] = prompts.map(() => []);
  for (let step = 0; step < steps; step++) {
    const next = seqs.map((_, b) => argmax(logits, b * V, V));
    next.forEach((id, b) => out[b]!.push(id));
    logits = await decoder.decode(seqs, next);
  }
  for (const seq of seqs) decoder.release(seq);
  return out;
}

const kernelCase: DecoderCase = {
  name: 'kv_cache_write and attention_decode_forward match their references (paged cache, ragged rows)',
  async run(context) {
    const kernels = kernelsFor(context);
    const device = kernels.device;
    const [NH, KVH, HS, PAGE] = [6, 2, 12, 16];
    const KVD = KVH * HS;
    const pages = 9;
    const MP = 4;
    // three sequences on scattered pages; rows: 3 new tokens of seq 0 at 17..19, 1 of seq 1 at 40, 2 of seq 2 at 0..1
    const pageTable = Int32Array.from([5, 2, 0, 0, /* */ 1, 7, 3, 0, /* */ 8, 0, 0, 0, /* padding */ 0, 0, 0, 0]); // (4, MP)
    const positions = Int32Array.from([17, 18, 19, 40, 0, 1]);
    const rowSeq = Int32Array.from([0, 0, 0, 1, 2, 2]);
    const N = positions.length;
    const keys = randomArray(pages * PAGE * KVD, 1); // earlier tokens already cached
    const values = randomArray(pages * PAGE * KVD, 2);
    const k = randomArray(N * KVD, 3);
    const v = randomArray(N * KVD, 4);
    const q = randomArray(N * NH * HS, 5, 2);
    const expectedKeys = keys.slice();
    const expectedValues = values.slice();
    kvCacheWrite(expectedKeys, expectedValues, k, v, positions, rowSeq, pageTable, N, KVD, PAGE, MP);
    const rowPages = Array.from(rowSeq, (s) => pageTable.subarray(s * MP, (s + 1) * MP));
    const rowKeys = Array.from(rowSeq, (_, n) => readPagedRows(expectedKeys, rowPages[n]!, positions[n]! + 1, KVD, PAGE));
    const rowValues = Array.from(rowSeq, (_, n) => readPagedRows(expectedValues, rowPages[n]!, positions[n]! + 1, KVD, PAGE));
    const expectedOut = new Float32Array(N * NH * HS);
    attentionDecodeForward(expectedOut, q, rowKeys, rowValues, positions, N, NH, KVH, HS);

    const tensors = [keys, values, k, v, q, positions, rowSeq, pageTable].map((data) => createTensor(device, data));
    const [keysT, valuesT, kT, vT, qT, positionsT, rowSeqT, pageTableT] = tensors as [ReturnType<typeof createTensor>, ...ReturnType<typeof createTensor>[]];
    const out = createTensor(device, N * NH * HS * 4);
    const plan = new KernelPlan(kernels);
    decoderOps.kvCacheWrite(plan, keysT, valuesT!, kT!, vT!, positionsT!, rowSeqT!, pageTableT!, N, KVD, PAGE, MP);
    decoderOps.attentionDecodeForward(plan, out, qT!, keysT, valuesT!, positionsT!, rowSeqT!, pageTableT!, N, NH, KVH, HS, PAGE, MP);
    plan.submit();
    expectClose(await readTensor(device, keysT, keys.byteLength), expectedKeys, { atol: 0, rtol: 0, label: 'kv_cache_write keys' });
    expectClose(await readTensor(device, valuesT!, values.byteLength), expectedValues, { atol: 0, rtol: 0, label: 'kv_cache_write values' });
    expectClose(await readTensor(device, out, N * NH * HS * 4), expectedOut, { atol: 1e-5, rtol: 1e-4, label: 'attention_decode_forward out' });
    plan.destroy();
    for (const tensor of [...tensors, out]) tensor.buffer.destroy();
  },
};

const ropeCacheCase: DecoderCase = {
  name: 'rope_kv_cache_write matches ropeForward then kvCacheWrite (paged cache, ragged rows)',
  async run(context) {
    const kernels = kernelsFor(context);
    const device = kernels.device;
    const [KVH, HS, PAGE, MP, theta] = [3, 12, 16, 4, 10000];
    const KVD = KVH * HS;
    const pages = 9;
    const pageTable = Int32Array.from([5, 2, 0, 0, /* */ 1, 7, 3, 0, /* */ 8, 0, 0, 0, /* padding */ 0, 0, 0, 0]); // (4, MP)
    const positions = Int32Array.from([17, 18, 19, 40, 0, 1]);
    const rowSeq = Int32Array.from([0, 0, 0, 1, 2, 2]);
    const N = positions.length;
    const keys = randomArray(pages * PAGE * KVD, 11);
    const values = randomArray(pages * PAGE * KVD, 12);
    const k = randomArray(N * KVD, 13);
    const v = randomArray(N * KVD, 14);
    const rotated = new Float32Array(N * KVD);
    ropeForward(rotated, k, positions, 1, N, KVH, HS, theta);
    const expectedKeys = keys.slice();
    const expectedValues = values.slice();
    kvCacheWrite(expectedKeys, expectedValues, rotated, v, positions, rowSeq, pageTable, N, KVD, PAGE, MP);

    const tensors = [keys, values, k, v, positions, rowSeq, pageTable].map((data) => createTensor(device, data));
    const [keysT, valuesT, kT, vT, positionsT, rowSeqT, pageTableT] = tensors as [ReturnType<typeof createTensor>, ...ReturnType<typeof createTensor>[]];
    const plan = new KernelPlan(kernels);
    decoderOps.ropeKvCacheWrite(plan, keysT, valuesT!, kT!, vT!, positionsT!, rowSeqT!, pageTableT!, N, KVH, HS, PAGE, MP, theta);
    plan.submit();
    // keys: rope's table is float64 angles rounded to f32, so they match the reference to rounding; values are copied bitwise
    expectClose(await readTensor(device, keysT, keys.byteLength), expectedKeys, { atol: 1e-6, rtol: 1e-5, label: 'rope_kv_cache_write keys' });
    expectClose(await readTensor(device, valuesT!, values.byteLength), expectedValues, { atol: 0, rtol: 0, label: 'rope_kv_cache_write values' });
    plan.destroy();
    for (const tensor of tensors) tensor.buffer.destroy();
  },
};

const matmulSwigluCase: DecoderCase = {
  name: 'matmul_swiglu_forward matches matmulForward of gate and up then swigluForward (one row, and 6 rows: a partial 4-row tile)',
  async run(context) {
    const kernels = kernelsFor(context);
    const device = kernels.device;
    const [C, I] = [20, 36];
    const gate = randomArray(I * C, 21);
    const up = randomArray(I * C, 22);
    const gateT = createTensor(device, gate);
    const upT = createTensor(device, up);
    for (const N of [1, 6]) {
      const inp = randomArray(N * C, 23 + N);
      const gateOut = new Float32Array(N * I);
      const upOut = new Float32Array(N * I);
      const expected = new Float32Array(N * I);
      matmulForward(gateOut, inp, gate, null, N, C, I);
      matmulForward(upOut, inp, up, null, N, C, I);
      swigluForward(expected, gateOut, upOut, N * I);
      const inpT = createTensor(device, inp);
      const out = createTensor(device, N * I * 4);
      const plan = new KernelPlan(kernels);
      decoderOps.matmulSwigluForward(plan, out, inpT, gateT, upT, N, C, I);
      plan.submit();
      expectClose(await readTensor(device, out, N * I * 4), expected, { atol: 1e-5, rtol: 1e-4, label: `matmul_swiglu_forward N = ${N}` });
      plan.destroy();
      inpT.buffer.destroy();
      out.buffer.destroy();
    }
    gateT.buffer.destroy();
    upT.buffer.destroy();
  },
};

const fullForwardCases: DecoderCase[] = VARIANTS.map(({ name, config, lora }) => ({
  name: `${name}: prefill + decode logits match a full backend.forward at every position, and the CPU decoder`,
  run: (context) =>
    withBackend(context, config, lora, async (backend) => {
      const V = config.vocab_size;
      const tokens = randomTokens(20, V, 7); // crosses a page boundary (16)
      const expected = await backend.forward(Int32Array.from(tokens), 1, tokens.length);
      await withDecoders(backend, async (gpu, cpu) => {
        const [seq, cpuSeq] = [gpu.newSequence(), cpu.newSequence()];
        const prefillLength = 5;
        const first = await gpu.prefill([seq], [tokens.slice(0, prefillLength)]);
        expectClose(first, row(expected, prefillLength - 1, V), { ...TOL, label: 'prefill logits vs forward' });
        expectClose(first, await cpu.prefill([cpuSeq], [tokens.slice(0, prefillLength)]), { ...TOL, label: 'prefill logits vs CPU decoder' });
        for (let t = prefillLength; t < tokens.length; t++) {
          const logits = await gpu.decode([seq], [tokens[t]!]);
          expectClose(logits, row(expected, t, V), { ...TOL, label: `decode logits at t=${t} vs forward` });
          expectClose(logits, await cpu.decode([cpuSeq], [tokens[t]!]), { ...TOL, label: `decode logits at t=${t} vs CPU decoder` });
        }
        if (gpu.sequenceTokens(seq).join() !== tokens.join()) throw new Error('sequenceTokens differs from the tokens fed');
      });
    }),
}));

const raggedCase: DecoderCase = {
  name: 'a batch of different-length prompts gives the same greedy tokens and logits as each prompt alone',
  run: (context) =>
    withBackend(context, TINY_CONFIG, null, async (backend) => {
      const V = TINY_CONFIG.vocab_size;
      const prompts = [randomTokens(9, V, 1), randomTokens(1, V, 2), randomTokens(18, V, 3), randomTokens(4, V, 4), randomTokens(6, V, 5)];
      await withDecoders(backend, async (gpu, cpu) => {
        const batched = await greedy(gpu, prompts, 6);
        for (let i = 0; i < prompts.length; i++) {
          const alone = await greedy(gpu, [prompts[i]!], 6);
          if (alone[0]!.join() !== batched[i]!.join()) throw new Error(`prompt ${i}: batched greedy ${batched[i]} but alone ${alone[0]}`);
        }
        const cpuTokens = await greedy(cpu, prompts, 6);
        if (cpuTokens.join('|') !== batched.join('|')) throw new Error(`greedy tokens differ from the CPU decoder: ${batched.join('|')} vs ${cpuTokens.join('|')}`);
        // logits of the ragged prefill vs full forwards
        const seqs = prompts.map(() => gpu.newSequence());
        const logits = await gpu.prefill(seqs, prompts);
        for (let i = 0; i < prompts.length; i++) {
          const full = await backend.forward(Int32Array.from(prompts[i]!), 1, prompts[i]!.length);
          expectClose(row(logits, i, V), row(full, prompts[i]!.length - 1, V), { ...TOL, label: `ragged prefill row ${i}` });
        }
        if (gpu.usage().tokens !== prompts.reduce((a, p) => a + p.length, 0)) throw new Error(`usage ${JSON.stringify(gpu.usage())}`);
      });
    }),
};

const forkExtendCase: DecoderCase = {
  name: 'fork copies the cache (children diverge), extending a sequence prefills only the new tokens, release frees pages',
  run: (context) =>
    withBackend(context, { ...TINY_CONFIG, architecture: 'Qwen3ForCausalLM', qk_norm: true }, LORA, async (backend) => {
      const V = TINY_CONFIG.vocab_size;
      const prompt = randomTokens(17, V, 9);
      await withDecoders(
        backend,
        async (gpu) => {
          const decoder = gpu as Awaited<ReturnType<typeof createWebGPUDecoder>>;
          const parent = decoder.newSequence();
          await decoder.prefill([parent], [prompt]);
          const children = decoder.fork(parent, 3);
          decoder.release(parent);
          const next = [[5, 6, 7], [100, 1, 2], [259, 0, 0]];
          let logits = await decoder.decode(children, next.map((n) => n[0]!));
          for (let step = 1; step < 3; step++) logits = await decoder.decode(children, next.map((n) => n[step]!));
          for (let c = 0; c < 3; c++) {
            const whole = [...prompt, ...next[c]!];
            const full = await backend.forward(Int32Array.from(whole), 1, whole.length);
            expectClose(row(logits, c, V), row(full, whole.length - 1, V), { ...TOL, label: `forked child ${c}` });
          }
          // a follow-up turn: append several tokens to child 1 only
          const followUp = randomTokens(7, V, 11);
          const extended = await decoder.prefill([children[1]!], [followUp]);
          const whole = [...prompt, ...next[1]!, ...followUp];
          const full = await backend.forward(Int32Array.from(whole), 1, whole.length);
          expectClose(extended, row(full, whole.length - 1, V), { ...TOL, label: 'extended sequence' });
          if (decoder.sequenceLength(children[1]!) !== whole.length) throw new Error('extended sequence has the wrong length');
          // fork of an empty sequence, then release everything
          const empty = decoder.fork(decoder.newSequence(), 2);
          if (decoder.cacheUsage().pagesUsed !== 2 + 2 + 2) throw new Error(`pages in use ${decoder.cacheUsage().pagesUsed}, expected 6`);
          for (const seq of [...children, ...empty]) decoder.release(seq);
          if (decoder.cacheUsage().pagesUsed !== 0) throw new Error(`pages still in use after release: ${decoder.cacheUsage().pagesUsed}`);
        },
        { maxRows: 8 }, // the 17-token prompt runs as three batches
      );
    }),
};

const limitsCase: DecoderCase = {
  name: 'a full cache and a too-long sequence fail with a clear message, taking nothing',
  run: (context) =>
    withBackend(context, TINY_CONFIG, null, async (backend) => {
      const { num_hidden_layers: L, num_key_value_heads: KVH, head_dim: HS } = TINY_CONFIG;
      const pageBytes = 2 * L * 16 * KVH * HS * 4;
      const decoder = await createWebGPUDecoder(backend, { cacheBytes: 4 * pageBytes, maxSequenceLength: 40, maxRows: 8 }); // 3 usable pages
      try {
        const a = decoder.newSequence();
        await decoder.prefill([a], [randomTokens(33, TINY_CONFIG.vocab_size, 1)]);
        const b = decoder.newSequence();
        const full = await decoder.prefill([b], [[1]]).then(() => null, (error: Error) => error);
        if (!full || !/KV cache is full .*cacheBytes/.test(full.message)) throw new Error(`expected a full-cache error, got ${full?.message}`);
        if (decoder.sequenceLength(b) !== 0 || decoder.cacheUsage().pagesUsed !== 3) throw new Error('a failed prefill changed the state');
        const long = await decoder.prefill([a], [randomTokens(8, TINY_CONFIG.vocab_size, 2)]).then(() => null, (error: Error) => error);
        if (!long || !/maxSequenceLength 40/.test(long.message)) throw new Error(`expected a too-long error, got ${long?.message}`);
        decoder.release(a);
        const bad = await decoder.prefill([b], [[...randomTokens(12, TINY_CONFIG.vocab_size, 3), TINY_CONFIG.vocab_size]]).then(() => null, (error: Error) => error);
        if (!bad || !/outside the vocabulary/.test(bad.message) || decoder.sequenceLength(b) !== 0) throw new Error(`a bad token in the second batch of a split prefill: ${bad?.message}, length ${decoder.sequenceLength(b)}`);
        await decoder.prefill([b], [[1, 2, 3]]);
        if ((await decoder.prefill([], [])).length !== 0) throw new Error('an empty prefill returns logits');
      } finally {
        decoder.dispose();
      }
    }),
};

const chatClientCase: DecoderCase = {
  name: 'LocalChatClient with createWebGPUDecoder returns the CPU decoder\'s greedy completion, then extends the conversation',
  run: (context) =>
    withBackend(context, TINY_PRESET, null, async (backend) => {
      const tokenizer = new ByteTokenizer();
      const gpuClient = new LocalChatClient({ backend, tokenizer, createDecoder: (b) => createWebGPUDecoder(b) });
      const cpuClient = new LocalChatClient({ backend, tokenizer });
      const messages = [{ role: 'user' as const, content: 'hi' }];
      const request = { model: 'tiny', messages, max_tokens: 6, temperature: 0 };
      const [gpu, cpu] = [await gpuClient.chat.completions.create(request), await cpuClient.chat.completions.create(request)];
      const [gpuChoice, cpuChoice] = [gpu.choices[0]!, cpu.choices[0]!];
      if (gpuChoice.tokens.completionIds.join() !== cpuChoice.tokens.completionIds.join()) {
        throw new Error(`greedy completions differ: ${gpuChoice.tokens.completionIds} vs ${cpuChoice.tokens.completionIds}`);
      }
      expectClose(Float32Array.from(gpuChoice.tokens.completionLogprobs), Float32Array.from(cpuChoice.tokens.completionLogprobs), { atol: 1e-4, rtol: 1e-4, label: 'logprobs' });
      const followUp = [...messages, gpuChoice.message, { role: 'user' as const, content: 'ok' }];
      const [gpu2, cpu2] = [
        await gpuClient.chat.completions.create({ ...request, messages: followUp }),
        await cpuClient.chat.completions.create({ ...request, messages: followUp }),
      ];
      if (gpu2.choices[0]!.tokens.completionIds.join() !== cpu2.choices[0]!.tokens.completionIds.join()) throw new Error('follow-up completions differ');
      if (gpu2.choices[0]!.tokens.promptIds.length >= (gpu2.usage?.prompt_tokens ?? 0)) throw new Error('the follow-up re-sent the whole conversation');
      await gpuClient.syncWeights();
    }),
};

const generatorCase: DecoderCase = {
  name: 'the Generator samples on the GPU: a seed reproduces its tokens, temperature sampling draws the CPU decoder\'s tokens, top-k stays in the top k, log-probs match backend.logprobs, ids past the tokenizer are never drawn',
  run: (context) =>
    // 272 rows of logits for a 264-token vocabulary: the last 8 ids cannot be decoded and must never be drawn.
    withBackend(context, { ...TINY_PRESET, vocab_size: 272 }, null, async (backend) => {
      const tokenizer = new ByteTokenizer();
      const gpu = await createWebGPUDecoder(backend);
      const cpu = await createCpuDecoder(backend);
      try {
        const V = backend.config.vocab_size;
        const prompt = tokenizer.encode('hello there');
        const request: GenerationRequest = { prompt, n: 4, temperature: 1.3, maxTokens: 12, seed: 7 };
        const [first] = await generate(gpu, tokenizer, [request]);
        const [again] = await generate(gpu, tokenizer, [request]);
        const [onCpu] = await generate(cpu, tokenizer, [request]);
        const ids = (result: typeof first) => result!.samples.map((sample) => sample.tokenIds.join(',')).join(' | ');
        if (ids(first) !== ids(again)) throw new Error(`one seed drew different tokens: ${ids(first)} vs ${ids(again)}`);
        for (const sample of first!.samples) {
          if (sample.entropies?.length !== sample.tokenIds.length) throw new Error('the samples carry no entropies: the Generator did not sample on the GPU');
        }
        // Without truncation both walk the ids in order with the same uniforms: equal tokens but where f32 and float64 sums straddle a boundary.
        const same = first!.samples.filter((sample, i) => sample.tokenIds.join() === onCpu!.samples[i]!.tokenIds.join());
        if (same.length < 3) throw new Error(`the GPU and the CPU sampler drew different tokens from one seed: ${ids(first)} vs ${ids(onCpu)}`);

        const truncated = await generate(gpu, tokenizer, [{ prompt, n: 3, temperature: 1.5, topK: 4, maxTokens: 10, seed: 3 }, { prompt: tokenizer.encode('abc'), n: 2, temperature: 0.9, topP: 0.6, maxTokens: 10, seed: 4 }]);
        for (const [r, result] of truncated.entries()) {
          const temperature = r === 0 ? 1.5 : 0.9;
          const requestPrompt = r === 0 ? prompt : tokenizer.encode('abc');
          for (const sample of result.samples) {
            const sequence = [...requestPrompt, ...sample.tokenIds];
            const T = sequence.length - 1;
            const inputs = Int32Array.from(sequence.slice(0, T));
            const targets = Int32Array.from(sequence.slice(1));
            const rescored = await backend.logprobs(inputs, targets, 1, T, temperature);
            expectClose(Float32Array.from(sample.logprobs), rescored.subarray(requestPrompt.length - 1), { atol: 1e-4, rtol: 1e-4, label: 'sampled log-probs vs backend.logprobs' });
            if (r === 0) {
              const logits = await backend.forward(inputs, 1, T);
              sample.tokenIds.forEach((id, i) => {
                const at = (requestPrompt.length - 1 + i) * V;
                const better = Array.from({ length: tokenizer.vocabSize }, (_, v) => logits[at + v]!).filter((x) => x > logits[at + id]!).length;
                if (better >= 4) throw new Error(`top-k 4 drew token ${id}, which ${better} drawable tokens beat`);
              });
            }
          }
        }
        const all = [first!, onCpu!, ...truncated].flatMap((result) => result.samples.flatMap((sample) => sample.tokenIds));
        const past = all.filter((id) => id >= tokenizer.vocabSize);
        if (past.length > 0) throw new Error(`drew ids past the tokenizer's ${tokenizer.vocabSize} tokens: ${past.join(', ')}`);
      } finally {
        gpu.dispose();
        cpu.dispose();
      }
    }),
};

/** Every decoder check, in the order they run. */
export const DECODER_CASES: DecoderCase[] = [kernelCase, ropeCacheCase, matmulSwigluCase, ...fullForwardCases, raggedCase, forkExtendCase, limitsCase, chatClientCase, generatorCase];
