/**
 * Inference in the engine: seeded sampling, the Decoder contract and its CPU implementation,
 * batched generation, the in-process ChatClient, and model presets (see docs/inference.md).
 */
export { argmax, checkSamplingParams, Rng, sampleRng, sampleToken, tokenLogprob, topIds, type RngState, type SampledToken, type SamplingParams } from './sampler.ts';
export type { Decoder, SequenceId } from './decoder.ts';
export { attentionDecodeForward, createCpuDecoder, CpuDecoder } from './cpu-decoder.ts';
export { generate, Generator, type GeneratedSample, type GenerationFinishReason, type GenerationRequest, type GenerationResult, type GeneratorOptions } from './generate.ts';
export { LocalChatClient, type LocalChatChoice, type LocalChatClientOptions, type LocalChatCompletion, type LocalTurnTokens } from './local-chat-client.ts';
export { SMOLLM2_135M_CONFIG, TINY_CONFIG } from './presets.ts';
