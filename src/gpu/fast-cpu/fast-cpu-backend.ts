/**
 * The fast CPU backend: the CpuBackend (same contract, layouts, LoRA, AdamW, log-probs) with its
 * matmuls on the WASM SIMD gemm (wasm-gemm.ts), on one thread or, in Node, on worker threads
 * (node-gemm-threads.ts) that the caller creates. Everything else is the plain-TypeScript reference,
 * which stays the oracle this backend is tested against.
 */
import { attentionBackward, attentionForward } from '../reference/index.ts';
import type { ModelBackendOptions, ModelWeights } from '../model/backend.ts';
import type { ModelConfig } from '../model/config.ts';
import { createCpuBackend, type CpuBackend, type CpuBackendOps } from '../model/cpu-backend.ts';
import { createFastMatmulOps } from './fast-ops.ts';
import { createWasmGemm, type WasmGemm } from './wasm-gemm.ts';

/** The CpuBackendOps of the fast backend on `gemm`. */
export function createFastCpuOps(gemm: WasmGemm): CpuBackendOps {
  return { ...createFastMatmulOps(gemm), attentionForward, attentionBackward };
}

/** Creates the fast CPU backend (on `gemm`, or a single-threaded one of its own) from a config and a seed or named tensors. */
export async function createFastCpuBackend(config: ModelConfig, weights: ModelWeights, options: ModelBackendOptions = {}, gemm?: WasmGemm): Promise<CpuBackend> {
  return createCpuBackend(config, weights, options, createFastCpuOps(gemm ?? (await createWasmGemm())));
}
