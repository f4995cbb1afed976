/**
 * `npm run bench:cpu-decode`: the CPU decoder's sampling speed (what `tabrl generate`, eval and
 * GRPO's rollouts run on the CPU) at nano's shape (vocab 264, hidden 96, 3 layers, mlp 256) and at
 * the ~4.5M shape of bench:cpu (hidden 256, 6 layers, mlp 768), on the reference CPU backend's
 * decoder and on the fast CPU backend's at 1 thread and at all cores, from the same seeded weights.
 * A batch of `batch` sequences prefills a prompt of `prompt` tokens each, then decodes `tokens`
 * greedy steps (the fast decoders' tokens must equal the reference's). Reps are interleaved across
 * the engines; each row is the median. Prints a table and one JSON line
 * {"bench":"cpu-decode","rows":[{"model","batch","engine","threads","prefillMs","decodeMs","tokensPerSecond"}]}
 * where tokensPerSecond = batch·tokens / decode time (the prefill is reported apart).
 *
 *   npm run bench:cpu-decode -- [--reps 3] [--models nano,4.5m] [--batches 1,8] [--prompt 32] [--tokens 32]
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createFastCpuBackend } from '../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../src/gpu/fast-cpu/node-kernel-threads.ts';
import type { WasmKernels } from '../src/gpu/fast-cpu/wasm-kernels.ts';
import { createCpuDecoder } from '../src/gpu/inference/cpu-decoder.ts';
import { argmax } from '../src/gpu/inference/sampler.ts';
import type { ModelBackend } from '../src/gpu/model/backend.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { createCpuBackend } from '../src/gpu/model/cpu-backend.ts';
import { seededUniform } from '../src/gpu/model/init.ts';

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    models: { type: 'string', default: 'nano,4.5m' },
    batches: { type: 'string', default: '1,8' },
    prompt: { type: 'string', default: '32' },
    tokens: { type: 'string', default: '32' },
  },
});
const positiveInteger = (flag: string, text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${flag} takes a positive integer, got "${text}"`);
  return value;
};
const REPS = positiveInteger('reps', values.reps);
const PROMPT = positiveInteger('prompt', values.prompt);
const TOKENS = positiveInteger('tokens', values.tokens);
const BATCHES = values.batches.split(',').map((text) => positiveInteger('batches', text));

const LLAMA = { architecture: 'LlamaForCausalLM', rope_theta: 10000, rms_norm_eps: 1e-5, tie_word_embeddings: true, attention_bias: false, attention_output_bias: false, qk_norm: false } as const;
const MODELS: Record<string, ModelConfig> = {
  nano: { ...LLAMA, vocab_size: 264, hidden_size: 96, intermediate_size: 256, num_hidden_layers: 3, num_attention_heads: 3, num_key_value_heads: 1, head_dim: 32 },
  '4.5m': { ...LLAMA, vocab_size: 264, hidden_size: 256, intermediate_size: 768, num_hidden_layers: 6, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 32 },
};
const modelNames = values.models.split(',');
for (const name of modelNames) if (!(name in MODELS)) throw new Error(`--models takes ${Object.keys(MODELS).join(', ')} (comma-separated), got ${name}`);
const THREADS = [...new Set([1, availableParallelism()])];

/** One engine the decoder runs on: the reference backend, or the fast one on a pool of `threads`. */
interface Engine {
  name: string;
  threads: number;
  backend: ModelBackend;
}

/** Prefills `prompts` and decodes TOKENS greedy steps on backend's decoder; returns both times and the tokens sampled. */
async function sample(backend: ModelBackend, prompts: number[][]): Promise<{ prefillMs: number; decodeMs: number; sampled: number[][] }> {
  const decoder = await createCpuDecoder(backend);
  const V = backend.config.vocab_size;
  const seqs = prompts.map(() => decoder.newSequence());
  const sampled: number[][] = prompts.map(() => []);
  const started = performance.now();
  let logits = await decoder.prefill(seqs, prompts);
  const prefilled = performance.now();
  for (let step = 0; step < TOKENS; step++) {
    const next = seqs.map((_, b) => argmax(logits, b * V, V));
    next.forEach((id, b) => sampled[b]!.push(id));
    if (step === TOKENS - 1) break; // the last token is sampled from the previous step's logits
    logits = await decoder.decode(seqs, next);
  }
  const finished = performance.now();
  decoder.dispose();
  return { prefillMs: prefilled - started, decodeMs: finished - prefilled, sampled };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, digits: number): number => Number(x.toFixed(digits));

console.log(`bench:cpu-decode on ${cpus()[0]?.model ?? 'cpu'} (${availableParallelism()} cores), Node ${process.version}; load average at start ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
const pools = new Map<number, WasmKernels>();
for (const threads of THREADS) pools.set(threads, await createNodeWasmKernels(threads));
const rows: { model: string; batch: number; engine: string; threads: number; prefillMs: number; decodeMs: number; tokensPerSecond: number }[] = [];
for (const name of modelNames) {
  const config = MODELS[name]!;
  const reference = await createCpuBackend(config, { seed: 1 });
  const tensors = await reference.getParameters();
  const engines: Engine[] = [{ name: 'reference', threads: 1, backend: reference }];
  for (const threads of THREADS) engines.push({ name: 'fast', threads, backend: await createFastCpuBackend(config, { tensors }, {}, pools.get(threads)!) });
  for (const batch of BATCHES) {
    const uniform = seededUniform(batch);
    const prompts = Array.from({ length: batch }, () => Array.from({ length: PROMPT }, () => Math.floor(uniform() * config.vocab_size)));
    const times = engines.map(() => ({ prefill: [] as number[], decode: [] as number[] }));
    for (const engine of engines.slice(1)) await sample(engine.backend, prompts.map((p) => p.slice(0, 4))); // warm-up (kernels compiled, pools awake)
    let expected: number[][] | null = null;
    for (let rep = 0; rep < REPS; rep++) {
      for (let e = 0; e < engines.length; e++) {
        const { prefillMs, decodeMs, sampled } = await sample(engines[e]!.backend, prompts);
        times[e]!.prefill.push(prefillMs);
        times[e]!.decode.push(decodeMs);
        if (e === 0) expected = sampled;
        else if (JSON.stringify(sampled) !== JSON.stringify(expected)) console.log(`✗ ${name}, batch ${batch}: the fast decoder at ${engines[e]!.threads} thread(s) sampled other greedy tokens than the reference`);
      }
    }
    engines.forEach((engine, e) => {
      const decodeMs = median(times[e]!.decode);
      rows.push({ model: name, batch, engine: engine.name, threads: engine.threads, prefillMs: median(times[e]!.prefill), decodeMs, tokensPerSecond: (batch * (TOKENS - 1)) / (decodeMs / 1000) });
    });
  }
}
for (const pool of pools.values()) pool.dispose();

console.log(`\nCPU decoder, greedy, prompt ${PROMPT} tokens, ${TOKENS} sampled per sequence (median of ${REPS} interleaved reps; tokens/s counts the ${TOKENS - 1} decode steps)`);
console.log('| model | batch | decoder | threads | prefill ms | decode ms | tokens/s | × reference |');
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const reference = rows.find((r) => r.model === row.model && r.batch === row.batch && r.engine === 'reference')!;
  console.log(`| ${row.model} | ${row.batch} | ${row.engine} | ${row.threads} | ${row.prefillMs.toFixed(0)} | ${row.decodeMs.toFixed(0)} | ${row.tokensPerSecond.toFixed(0)} | ${(row.tokensPerSecond / reference.tokensPerSecond).toFixed(1)} |`);
}
console.log(`load average at end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(JSON.stringify({ bench: 'cpu-decode', rows: rows.map((r) => ({ ...r, prefillMs: round(r.prefillMs, 1), decodeMs: round(r.decodeMs, 1), tokensPerSecond: round(r.tokensPerSecond, 1) })) }));
