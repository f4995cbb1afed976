// Batched generation: greedy equals the reference argmax sequence, seeds reproduce samples
// whatever they are batched with, logprobs equal the backend's at the sampling temperature,
// stop tokens / stop strings / length end samples, concurrent requests share passes, a group of n
// prefills once, and aborted requests free their sequences.
import { beforeAll, describe, expect, test } from 'vitest';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { createCpuBackend, type CpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import { generate, Generator, type GenerationResult } from '../../../src/gpu/inference/generate.ts';
import { TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { argmax } from '../../../src/gpu/inference/sampler.ts';
import { expectClose } from '../../support/expect-close.ts';
import { ScriptedDecoder, spyDecoder } from './helpers.ts';

const tokenizer = new ByteTokenizer();
const V = TINY_CONFIG.vocab_size;
let backend: CpuBackend;
beforeAll(async () => {
  backend = await createCpuBackend(TINY_CONFIG, { seed: 1 });
});

const prompt = (text: string) => tokenizer.encode(tokenizer.renderChat([{ role: 'user', content: text }], { addGenerationPrompt: true }));

/** Greedy tokens by full forward passes of the reference backend, stopping at an eos id. */
async function referenceGreedy(tokens: number[], maxTokens: number): Promise<number[]> {
  const sequence = [...tokens];
  const out: number[] = [];
  for (let s = 0; s < maxTokens; s++) {
    const logits = await backend.forward(Int32Array.from(sequence), 1, sequence.length);
    const id = argmax(logits, (sequence.length - 1) * V, V);
    out.push(id);
    sequence.push(id);
    if (tokenizer.eosIds.includes(id)) break;
  }
  return out;
}

describe('generate on the tiny model', () => {
  test('greedy generation matches the argmax sequence of the reference model', async () => {
    const prompts = [prompt('hi'), prompt('a longer question?')];
    const results = await generate(await createCpuDecoder(backend), tokenizer, prompts.map((p) => ({ prompt: p, temperature: 0, maxTokens: 10 })));
    for (let i = 0; i < prompts.length; i++) {
      const sample = results[i]!.samples[0]!;
      expect(sample.tokenIds).toEqual(await referenceGreedy(prompts[i]!, 10));
      expect(sample.finishReason).toBe(sample.tokenIds.length < 10 ? 'stop' : 'length');
    }
  });

  test('a seed reproduces a sample whatever it is batched with; logprobs equal backend.logprobs at T', async () => {
    const request = { prompt: prompt('seeded'), temperature: 0.8, topK: 0, maxTokens: 12, seed: 1234 };
    const alone = (await generate(await createCpuDecoder(backend), tokenizer, [request]))[0]!.samples[0]!;
    const batched = await generate(await createCpuDecoder(backend), tokenizer, [
      { prompt: prompt('other'), temperature: 1, maxTokens: 5, seed: 1 },
      request,
      { prompt: prompt('third one'), temperature: 1.2, maxTokens: 9 },
    ]);
    expect(batched[1]!.samples[0]!.tokenIds).toEqual(alone.tokenIds);
    expect(batched[1]!.samples[0]!.logprobs).toEqual(alone.logprobs);
    const other = (await generate(await createCpuDecoder(backend), tokenizer, [{ ...request, seed: 99 }]))[0]!.samples[0]!;
    expect(other.tokenIds).not.toEqual(alone.tokenIds);

    // GRPO's old-policy logprobs: the trainer's backend.logprobs of the same tokens at the same T.
    const sequence = [...request.prompt, ...alone.tokenIds];
    const T = sequence.length - 1;
    const recomputed = await backend.logprobs(Int32Array.from(sequence.slice(0, T)), Int32Array.from(sequence.slice(1)), 1, T, 0.8);
    expectClose(alone.logprobs, recomputed.subarray(request.prompt.length - 1), { atol: 1e-6, rtol: 0, label: 'sampling vs backend logprobs' });
  });

  test('n samples prefill the prompt once, fork the cache, and differ', async () => {
    const decoder = spyDecoder(await createCpuDecoder(backend));
    const p = prompt('group');
    const [result] = await generate(decoder, tokenizer, [{ prompt: p, n: 4, temperature: 1, maxTokens: 6, seed: 5 }]);
    expect(result!.samples.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(decoder.calls.filter((c) => c.kind === 'prefill')).toEqual([{ kind: 'prefill', rows: 1, tokens: p.length }]);
    expect(new Set(result!.samples.map((s) => s.tokenIds.join())).size).toBeGreaterThan(1);
    expect(decoder.usage().sequences).toBe(0);
  });

  test('concurrent requests with the same prompt (G rollouts, n = 1 each) share one prefill and match running alone', async () => {
    const decoder = spyDecoder(await createCpuDecoder(backend));
    const generator = new Generator(decoder, tokenizer);
    const p = prompt('same task');
    const requests = [0, 1, 2, 3].map((seed) => ({ prompt: p, temperature: 1, maxTokens: 6, seed }));
    const results = await Promise.all([...requests.map((r) => generator.generate(r)), generator.generate({ prompt: prompt('other'), maxTokens: 3 })]);
    expect(decoder.calls.filter((c) => c.kind === 'prefill')).toEqual([{ kind: 'prefill', rows: 2, tokens: p.length + prompt('other').length }]);
    for (const [i, request] of requests.entries()) {
      const alone = await generate(await createCpuDecoder(backend), tokenizer, [request]);
      expect(results[i]!.samples[0]!.tokenIds).toEqual(alone[0]!.samples[0]!.tokenIds);
    }
    expect(decoder.usage().sequences).toBe(0);
  });

  test('concurrent requests in one tick share one prefill; a late request joins the running decode loop', async () => {
    const lateRequest = { prompt: prompt('late'), temperature: 1, maxTokens: 8, seed: 7 };
    let late: Promise<GenerationResult> | null = null;
    // the late request is issued during the second decode step, while the first three are running
    const decoder = spyDecoder(await createCpuDecoder(backend), (step) => {
      if (step === 2) late = generator.generate(lateRequest);
    });
    const generator = new Generator(decoder, tokenizer);
    const requests = ['one', 'two', 'three'].map((text, i) => ({ prompt: prompt(text), temperature: 1, maxTokens: 8, seed: i }));
    const results = await Promise.all(requests.map((r) => generator.generate(r)));
    const lateResult = await late!;
    const prefills = decoder.calls.filter((c) => c.kind === 'prefill');
    expect(prefills[0]!.rows).toBe(3);
    expect(prefills).toHaveLength(2);
    expect(decoder.calls.some((c) => c.kind === 'decode' && c.rows === 4)).toBe(true); // the late request decoded alongside
    // and each result is what it would be alone
    const alone = await generate(await createCpuDecoder(backend), tokenizer, [...requests, lateRequest]);
    expect([...results, lateResult].map((r) => r.samples[0]!.tokenIds)).toEqual(alone.map((r) => r.samples[0]!.tokenIds));
    await generator.idle();
  });

  test('keepSequences hands over the cache; extending it equals prefilling the whole context', async () => {
    const decoder = await createCpuDecoder(backend);
    const generator = new Generator(decoder, tokenizer);
    const p = prompt('turn one');
    const first = (await generator.generate({ prompt: p, temperature: 0, maxTokens: 4, keepSequences: true })).samples[0]!;
    expect(decoder.sequenceTokens(first.sequence!)).toEqual([...p, ...first.tokenIds.slice(0, -1)]);
    const followUp = tokenizer.encode('<|end|><|user|>next<|end|><|assistant|>');
    const extended = (await generator.generate({ prompt: [first.tokenIds.at(-1)!, ...followUp], parent: first.sequence!, temperature: 0, maxTokens: 5 })).samples[0]!;
    const fresh = (await generator.generate({ prompt: [...p, ...first.tokenIds, ...followUp], temperature: 0, maxTokens: 5 })).samples[0]!;
    expect(extended.tokenIds).toEqual(fresh.tokenIds);
    expect(decoder.usage().sequences).toBe(0);
  });

  test('an aborted request rejects and frees its sequences; the others finish', async () => {
    // A script that never ends a sample, so the abort (during the third decode step) always lands mid-generation.
    const controller = new AbortController();
    const decoder = spyDecoder(new ScriptedDecoder(V, () => 97), (step) => {
      if (step === 3) controller.abort(new Error('user abort'));
    });
    const generator = new Generator(decoder, tokenizer);
    const doomed = generator.generate({ prompt: prompt('stop me'), n: 2, temperature: 1, maxTokens: 200, signal: controller.signal });
    const survivor = generator.generate({ prompt: prompt('keep me'), temperature: 1, maxTokens: 6 });
    await expect(doomed).rejects.toThrow(/user abort/);
    expect((await survivor).samples[0]!.tokenIds).toHaveLength(6);
    await generator.idle();
    expect(decoder.usage().sequences).toBe(0);
  });

  test('rejects bad arguments before queueing', async () => {
    const generator = new Generator(await createCpuDecoder(backend), tokenizer);
    expect(() => generator.generate({ prompt: [] })).toThrow(/at least one token/);
    expect(() => generator.generate({ prompt: [1], n: 0 })).toThrow(/n must be/);
    expect(() => generator.generate({ prompt: [1], topP: 2 })).toThrow(/top_p/);
  });
});

describe('stops (scripted decoder)', () => {
  // The script spells "Hello, world!<|end|>" after whatever prompt, then repeats "!".
  const script = tokenizer.encode('Hello, world!<|end|>');
  const next = (promptLength: number) => (tokens: readonly number[]) => script[tokens.length - promptLength] ?? 33;

  test('the eos token ends a sample with finish "stop"; it is kept in tokenIds, not in text', async () => {
    const p = prompt('x');
    const [result] = await generate(new ScriptedDecoder(V, next(p.length)), tokenizer, [{ prompt: p, temperature: 0, maxTokens: 50 }]);
    const sample = result!.samples[0]!;
    expect(sample).toMatchObject({ text: 'Hello, world!', finishReason: 'stop', stop: { tokenId: tokenizer.specialId('<|end|>') } });
    expect(sample.tokenIds).toEqual(script);
    expect(sample.logprobs).toHaveLength(script.length);
  });

  test('extra stop token ids, stop strings (text cut where the first one starts) and the length limit', async () => {
    const p = prompt('x');
    const decoder = new ScriptedDecoder(V, next(p.length));
    const [byToken, byString, byTwoStrings, byLength] = await generate(decoder, tokenizer, [
      { prompt: p, temperature: 0, stopTokenIds: [44] }, // ','
      { prompt: p, temperature: 0, stopStrings: ['wor'] },
      { prompt: p, temperature: 0, stopStrings: ['ld', 'o, w'] },
      { prompt: p, temperature: 0, maxTokens: 4 },
    ]);
    expect(byToken!.samples[0]).toMatchObject({ text: 'Hello', finishReason: 'stop', stop: { tokenId: 44 }, tokenIds: tokenizer.encode('Hello,') });
    expect(byString!.samples[0]).toMatchObject({ text: 'Hello, ', finishReason: 'stop', stop: { string: 'wor' }, tokenIds: tokenizer.encode('Hello, wor') });
    expect(byTwoStrings!.samples[0]).toMatchObject({ text: 'Hell', stop: { string: 'o, w' } });
    expect(byLength!.samples[0]).toMatchObject({ text: 'Hell', finishReason: 'length', tokenIds: tokenizer.encode('Hell') });
    expect(byLength!.samples[0]!.stop).toBeUndefined();
    expect(decoder.usage().sequences).toBe(0);
  });
});
