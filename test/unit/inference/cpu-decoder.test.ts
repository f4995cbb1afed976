// KV-cache decoding on the CPU against the reference backend's full forward pass: logits per
// position, ragged batches, forks, extensions, LoRA, and the Qwen2 (QKV bias) / Qwen3 (q/k norm) variants.
import { describe, expect, test } from 'vitest';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import { TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { argmax } from '../../../src/gpu/inference/sampler.ts';
import { expectClose, seededUniform } from '../../support/expect-close.ts';

// Cached decoding runs the same per-row arithmetic as the backend, in the same order: today the
// logits are bitwise equal (atol 0 passes). The stated tolerance, atol 1e-5 + rtol 1e-4, leaves
// room for a change of summation order on either side.
const TOL = { atol: 1e-5, rtol: 1e-4 };

const SMALL: ModelConfig = { ...TINY_CONFIG, vocab_size: 50, hidden_size: 32, intermediate_size: 48, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8 };
const QWEN2: ModelConfig = { ...SMALL, architecture: 'Qwen2ForCausalLM', attention_bias: true, tie_word_embeddings: false };
const QWEN3: ModelConfig = { ...SMALL, architecture: 'Qwen3ForCausalLM', qk_norm: true, head_dim: 12 };

function randomTokens(count: number, V: number, seed: number): number[] {
  const uniform = seededUniform(seed);
  return Array.from({ length: count }, () => Math.floor(uniform() * V));
}

/** Full-forward logits of one sequence, (T, V). */
async function fullLogits(backend: Awaited<ReturnType<typeof createCpuBackend>>, tokens: number[]): Promise<Float32Array> {
  return backend.forward(Int32Array.from(tokens), 1, tokens.length);
}

describe('CPU decoder', () => {
  for (const [name, config] of [['llama', SMALL], ['qwen2 (qkv bias, untied)', QWEN2], ['qwen3 (q/k norm)', QWEN3]] as const) {
    test(`${name}: prefill + decode logits match a full forward at every position`, async () => {
      const backend = await createCpuBackend(config, { seed: 3 });
      const V = config.vocab_size;
      const tokens = randomTokens(12, V, 7);
      const expected = await fullLogits(backend, tokens);
      const decoder = await createCpuDecoder(backend);
      const seq = decoder.newSequence();
      const prefillLength = 5;
      const first = await decoder.prefill([seq], [tokens.slice(0, prefillLength)]);
      expectClose(first, expected.subarray((prefillLength - 1) * V, prefillLength * V), { ...TOL, label: 'prefill logits' });
      for (let t = prefillLength; t < tokens.length; t++) {
        const logits = await decoder.decode([seq], [tokens[t]!]);
        expectClose(logits, expected.subarray(t * V, (t + 1) * V), { ...TOL, label: `decode logits at t=${t}` });
      }
      expect(decoder.sequenceTokens(seq)).toEqual(tokens);
    });
  }

  test('a ragged batch (different prompt lengths, prefill then decode) matches each sequence alone', async () => {
    const backend = await createCpuBackend(SMALL, { seed: 5 });
    const V = SMALL.vocab_size;
    const sequences = [randomTokens(9, V, 1), randomTokens(3, V, 2), randomTokens(6, V, 3)];
    const prompts = [5, 1, 4];
    const decoder = await createCpuDecoder(backend);
    const seqs = sequences.map(() => decoder.newSequence());
    const expected = await Promise.all(sequences.map((tokens) => fullLogits(backend, tokens)));
    const logits = await decoder.prefill(seqs, sequences.map((tokens, i) => tokens.slice(0, prompts[i])));
    sequences.forEach((_, i) => expectClose(logits.subarray(i * V, (i + 1) * V), expected[i]!.subarray((prompts[i]! - 1) * V, prompts[i]! * V), { ...TOL, label: `prefill row ${i}` }));
    // decode the rest in lockstep while sequences still have tokens
    const at = [...prompts];
    while (at.some((t, i) => t < sequences[i]!.length)) {
      const live = seqs.map((_, i) => i).filter((i) => at[i]! < sequences[i]!.length);
      const step = await decoder.decode(live.map((i) => seqs[i]!), live.map((i) => sequences[i]![at[i]!]!));
      live.forEach((i, row) => {
        const t = at[i]!;
        expectClose(step.subarray(row * V, (row + 1) * V), expected[i]!.subarray(t * V, (t + 1) * V), { ...TOL, label: `seq ${i} t=${t}` });
        at[i] = t + 1;
      });
    }
    expect(decoder.usage()).toEqual({ sequences: 3, tokens: 18 });
  });

  test('fork copies the cache and extension appends a follow-up turn to a finished sequence', async () => {
    const backend = await createCpuBackend(SMALL, { seed: 9 });
    const V = SMALL.vocab_size;
    const prompt = randomTokens(6, V, 11);
    const decoder = await createCpuDecoder(backend);
    const parent = decoder.newSequence();
    await decoder.prefill([parent], [prompt]);
    const [a, b] = decoder.fork(parent, 2);
    const continuations = [randomTokens(3, V, 12), randomTokens(4, V, 13)];
    // a: extension by several tokens at once; b: one token at a time
    const logitsA = await decoder.prefill([a!], [continuations[0]!]);
    let logitsB: Float32Array = new Float32Array(0);
    for (const token of continuations[1]!) logitsB = await decoder.decode([b!], [token]);
    const fullA = await fullLogits(backend, [...prompt, ...continuations[0]!]);
    const fullB = await fullLogits(backend, [...prompt, ...continuations[1]!]);
    expectClose(logitsA, fullA.subarray(8 * V, 9 * V), { ...TOL, label: 'fork a' });
    expectClose(logitsB, fullB.subarray(9 * V, 10 * V), { ...TOL, label: 'fork b' });
    expect(decoder.sequenceLength(parent)).toBe(6);
    decoder.release(parent);
    expect(() => decoder.sequenceLength(parent)).toThrow(/released/);
  });

  test('LoRA adapters are applied (decoder follows the backend after a training step)', async () => {
    const lora = { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] as const };
    const backend = await createCpuBackend(SMALL, { seed: 2 }, { lora: { ...lora, targetModules: [...lora.targetModules] }, loraSeed: 1 });
    const V = SMALL.vocab_size;
    const tokens = randomTokens(8, V, 4);
    // one SGD-ish step so the LoRA B matrices are non-zero
    await backend.backward(Int32Array.from(tokens), Int32Array.from([...tokens.slice(1), 0]), new Float32Array(8).fill(1), 1, 8, 1);
    await backend.step({ lr: 0.05, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
    const params = await backend.getParameters();
    expect([...params.get('base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight')!.data].some((x) => x !== 0)).toBe(true);
    const expected = await fullLogits(backend, tokens);
    const decoder = await createCpuDecoder(backend);
    const seq = decoder.newSequence();
    const logits = await decoder.prefill([seq], [tokens]);
    expectClose(logits, expected.subarray(7 * V, 8 * V), { ...TOL, label: 'LoRA logits' });
  });

  test('greedy decoding of a batch of different-length prompts gives the tokens of each prompt alone', async () => {
    const backend = await createCpuBackend(TINY_CONFIG, { seed: 1 });
    const V = TINY_CONFIG.vocab_size;
    const prompts = [randomTokens(7, V, 21), randomTokens(2, V, 22), randomTokens(11, V, 23)];
    const greedy = async (batch: number[][], steps: number): Promise<number[][]> => {
      const decoder = await createCpuDecoder(backend);
      const seqs = batch.map(() => decoder.newSequence());
      let logits = await decoder.prefill(seqs, batch);
      const out: number[][] = batch.map(() => []);
      for (let s = 0; s < steps; s++) {
        const next = seqs.map((_, i) => argmax(logits, i * V, V));
        next.forEach((id, i) => out[i]!.push(id));
        logits = await decoder.decode(seqs, next);
      }
      return out;
    };
    const together = await greedy(prompts, 6);
    for (let i = 0; i < prompts.length; i++) expect(together[i]).toEqual((await greedy([prompts[i]!], 6))[0]);
    // and the same tokens as the argmax of the backend's full forward, token by token
    const sequence = [...prompts[0]!];
    for (let s = 0; s < 6; s++) {
      const logits = await fullLogits(backend, sequence);
      sequence.push(argmax(logits, (sequence.length - 1) * V, V));
    }
    expect(sequence.slice(prompts[0]!.length)).toEqual(together[0]);
  });

  test('rejects out-of-vocabulary tokens, empty appends and a sequence twice in one batch', async () => {
    const decoder = await createCpuDecoder(await createCpuBackend(SMALL, { seed: 0 }));
    const seq = decoder.newSequence();
    await expect(decoder.prefill([seq], [[SMALL.vocab_size]])).rejects.toThrow(/outside the vocabulary/);
    await expect(decoder.prefill([seq], [[]])).rejects.toThrow(/nothing to append/);
    await expect(decoder.decode([seq, seq], [1, 2])).rejects.toThrow(/only once/);
    decoder.dispose();
    expect(() => decoder.newSequence()).toThrow(/disposed/);
  });
});
