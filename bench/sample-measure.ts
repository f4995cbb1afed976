/**
 * One measurement of bench:sample, shared by bench/sample.ts (Node) and bench/gpu-page.ts (Chromium):
 * prefill B random prompts as one ragged batch and decode sampled tokens, on the device (WebGPU
 * decoder: prefillAndSample, then decodeSteps when it has it — all steps in one call, the fused kernel
 * running many per dispatch — or else decodeAndSample per step; only ids come back) or with the CPU
 * sampler over the logits. No Node APIs. Not a test.
 */
import type { Decoder } from '../src/gpu/inference/decoder.ts';
import { Rng, sampleToken, type SamplingParams } from '../src/gpu/inference/sampler.ts';

/** Prefills B random prompts as one batch and decodes `steps` sampled tokens; returns tokens/s of each phase. */
export async function measure(decoder: Decoder, B: number, prompt: number, steps: number, seed: number, params: SamplingParams, onDevice = true): Promise<{ prefill: number; decode: number }> {
  const V = decoder.vocabSize;
  let state = seed;
  const next = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) % V;
  const prompts = Array.from({ length: B }, () => Array.from({ length: prompt }, next));
  const seqs = prompts.map(() => decoder.newSequence());
  const rngs = seqs.map((_, b) => new Rng(seed * 1000 + b));
  const draws = () => rngs.map((rng, row) => ({ row, params, uniform: params.temperature === 0 ? 0 : rng.next() }));
  const onCpu = (logits: Float32Array): number[] => rngs.map((rng, b) => sampleToken(logits, b * V, V, params, rng).id);
  let started = performance.now();
  let tokens = onDevice && decoder.prefillAndSample ? Array.from((await decoder.prefillAndSample(seqs, prompts, draws())).ids) : onCpu(await decoder.prefill(seqs, prompts));
  const prefillMs = performance.now() - started;
  started = performance.now();
  if (onDevice && decoder.decodeSteps && steps > 0) {
    // Every sequence decodes all steps (no stop ids), drawing with its own generator's uniforms.
    const plans = rngs.map((rng) => ({ params, uniforms: Array.from({ length: steps }, () => (params.temperature === 0 ? 0 : rng.next())), stopIds: [], maxDraws: steps }));
    await decoder.decodeSteps(seqs, tokens, plans, steps);
    const decodeMs = performance.now() - started;
    for (const seq of seqs) decoder.release(seq);
    return { prefill: (B * prompt) / (prefillMs / 1000), decode: (B * steps) / (decodeMs / 1000) };
  }
  for (let step = 0; step < steps; step++) {
    tokens = onDevice && decoder.decodeAndSample ? Array.from((await decoder.decodeAndSample(seqs, tokens, draws())).ids) : onCpu(await decoder.decode(seqs, tokens));
  }
  const decodeMs = performance.now() - started;
  for (const seq of seqs) decoder.release(seq);
  return { prefill: (B * prompt) / (prefillMs / 1000), decode: (B * steps) / (decodeMs / 1000) };
}

