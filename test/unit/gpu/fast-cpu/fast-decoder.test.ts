/**
 * The CPU decoder over the fast CPU backend (createCpuDecoder picks up the backend's WASM ops)
 * against the same decoder over the reference backend, at 1 and 2 kernel threads, on a model whose
 * sizes are not multiples of the gemm's blocks (hidden 130, MLP 1000, vocab 264, head 10): a ragged
 * batched prefill and lockstep decoding (logits and log-softmax), then greedy generation through
 * generate(), whose tokens must be identical and whose log-probs must agree; and batch invariance:
 * a sequence's logits alone and beside other prefills and decodes, bit for bit.
 */
import { describe, expect, it } from 'vitest';
import { createFastCpuBackend } from '../../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createCpuDecoder } from '../../../../src/gpu/inference/cpu-decoder.ts';
import { generate } from '../../../../src/gpu/inference/generate.ts';
import { argmax } from '../../../../src/gpu/inference/sampler.ts';
import { BYTE_VOCAB_SIZE, ByteTokenizer } from '../../../../src/gpu/io/byte-tokenizer.ts';
import { createCpuBackend } from '../../../../src/gpu/model/cpu-backend.ts';
import { fastCpuTestConfig, kernelPoolsForFile } from '../../../support/fast-cpu-setup.ts';
import { expectClose, randomInts } from '../../../support/expect-close.ts';

const CONFIG = fastCpuTestConfig({ vocab_size: BYTE_VOCAB_SIZE, hidden_size: 130, intermediate_size: 1000, num_attention_heads: 6, num_key_value_heads: 2, head_dim: 10 });
const V = CONFIG.vocab_size;
// Nine sequences: a decode step's MLP matmul (9 rows) is over the pool's threshold, so at 2 threads
// decoding is split too, not only the prefill.
const PROMPT_LENGTHS = [13, 7, 20, 1, 9, 5, 11, 3, 17];
const DECODE_STEPS = 6;
const TOL = { atol: 1e-4, rtol: 1e-4 };
const tokenizer = new ByteTokenizer();

const kernelsByThreads = kernelPoolsForFile([1, 2]);

/** log_softmax over each row of (rows, V) logits, in f64. */
function logSoftmax(logits: Float32Array, rows: number): Float64Array {
  const out = new Float64Array(rows * V);
  for (let r = 0; r < rows; r++) {
    let max = -Infinity;
    for (let i = 0; i < V; i++) max = Math.max(max, logits[r * V + i]!);
    let sum = 0;
    for (let i = 0; i < V; i++) sum += Math.exp(logits[r * V + i]! - max);
    const logSum = max + Math.log(sum);
    for (let i = 0; i < V; i++) out[r * V + i] = logits[r * V + i]! - logSum;
  }
  return out;
}

describe.each([1, 2])('fast CPU decoder at %i thread(s) against the reference decoder', (threads) => {
  it('ragged prefill and lockstep decode: logits and log-softmax agree, and the logits come from other arithmetic', async () => {
    const reference = await createCpuDecoder(await createCpuBackend(CONFIG, { seed: 11 }));
    const fast = await createCpuDecoder(await createFastCpuBackend(CONFIG, { seed: 11 }, {}, await kernelsByThreads.get(threads)!));
    const prompts = PROMPT_LENGTHS.map((length, i) => Array.from(randomInts(length, 100 + i, V)));
    const referenceSeqs = prompts.map(() => reference.newSequence());
    const fastSeqs = prompts.map(() => fast.newSequence());
    const B = prompts.length;

    let expected = await reference.prefill(referenceSeqs, prompts);
    let actual = await fast.prefill(fastSeqs, prompts);
    let differsSomewhere = false;
    for (let step = 0; ; step++) {
      expectClose(actual, expected, { ...TOL, label: `logits after step ${step}` });
      expectClose(logSoftmax(actual, B), logSoftmax(expected, B), { ...TOL, label: `log-softmax after step ${step}` });
      differsSomewhere ||= actual.some((value, i) => value !== expected[i]);
      if (step === DECODE_STEPS) break;
      // Both decoders are fed the reference's argmax, so a near-tie cannot make them diverge here.
      const next = Array.from({ length: B }, (_, b) => argmax(expected, b * V, V));
      expected = await reference.decode(referenceSeqs, next);
      actual = await fast.decode(fastSeqs, next);
    }
    // f32 kernel sums against the references' f64: bitwise equality everywhere would mean the
    // decoder never reached the kernels.
    expect(differsSomewhere).toBe(true);
    for (let b = 0; b < B; b++) expect(fast.sequenceTokens(fastSeqs[b]!)).toEqual(reference.sequenceTokens(referenceSeqs[b]!));
  });

  it('greedy generation: identical tokens and agreeing log-probs', async () => {
    const reference = await createCpuDecoder(await createCpuBackend(CONFIG, { seed: 12 }));
    const fast = await createCpuDecoder(await createFastCpuBackend(CONFIG, { seed: 12 }, {}, await kernelsByThreads.get(threads)!));
    const requests = ['hello', 'a longer prompt, with punctuation!', 'x'].map((text) => ({
      prompt: tokenizer.encode(tokenizer.renderChat([{ role: 'user', content: text }], { addGenerationPrompt: true })),
      temperature: 0,
      maxTokens: 16,
    }));
    const expected = await generate(reference, tokenizer, requests);
    const actual = await generate(fast, tokenizer, requests);
    for (let r = 0; r < requests.length; r++) {
      const want = expected[r]!.samples[0]!;
      const got = actual[r]!.samples[0]!;
      expect(got.tokenIds).toEqual(want.tokenIds);
      expect(got.tokenIds.length).toBeGreaterThan(0);
      expectClose(Float64Array.from(got.logprobs), Float64Array.from(want.logprobs), { ...TOL, label: `log-probs of request ${r}` });
    }
  });
  it('is batch-invariant: a sequence decoded alone, or beside prefills and other decodes, gets the same logits bit for bit', async () => {
    const decoder = await createCpuDecoder(await createFastCpuBackend(CONFIG, { seed: 13 }, {}, await kernelsByThreads.get(threads)!));
    const prompt = Array.from(randomInts(9, 300, V)); // a prefill of 9 tokens: packed blocks
    const followUp = Array.from(randomInts(3, 301, V)); // a short follow-up: dot products, like a decode step
    const steps = [7, 42, 99];
    /** The watched sequence's logits after its prefill, each decode step and the follow-up; `company` appends beside it. */
    const run = async (company: (step: number) => number[][]): Promise<Float32Array[]> => {
      const seen: Float32Array[] = [];
      const watched = decoder.newSequence();
      const others: number[] = [];
      const append = async (tokens: number[], step: number) => {
        const extra = company(step);
        while (others.length < extra.length) others.push(decoder.newSequence());
        const at = Math.min(1, extra.length); // second in the batch when it has company
        const seqs = [...others.slice(0, extra.length)];
        const lists = [...extra];
        seqs.splice(at, 0, watched);
        lists.splice(at, 0, tokens);
        const logits = await decoder.prefill(seqs, lists);
        seen.push(logits.slice(at * V, (at + 1) * V));
      };
      await append(prompt, 0);
      for (let i = 0; i < steps.length; i++) await append([steps[i]!], i + 1);
      await append(followUp, steps.length + 1);
      for (const seq of [watched, ...others]) decoder.release(seq);
      return seen;
    };
    const alone = await run(() => []);
    // Beside it: other sequences prefilling long prompts (packed rows) and decoding (dot rows), a different mix each call.
    const batched = await run((step) => [Array.from(randomInts(20 + step, 400 + step, V)), [5], Array.from(randomInts(2, 500 + step, V)), ...Array.from({ length: step }, () => [11])]);
    expect(batched.length).toBe(alone.length);
    alone.forEach((logits, i) => {
      const first = logits.findIndex((value, j) => !Object.is(value, batched[i]![j]));
      expect(first, `call ${i}: logit ${first} is ${batched[i]![first]} batched and ${logits[first]} alone`).toBe(-1);
    });
  });
});
