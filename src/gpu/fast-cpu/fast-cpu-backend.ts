/**
 * The fast CPU backend: the CpuBackend (same contract, layouts, LoRA, AdamW, log-probs) with its
 * matmuls, attention, SwiGLU, RMSNorm, log-softmax, residual adds and AdamW on the WASM SIMD kernels
 * (wasm-kernels.ts, through fast-ops.ts), on one thread or, in Node, on worker threads
 * (node-kernel-threads.ts) that the caller creates, with its buffers resident in the kernels' memory
 * where that memory is shared. The rest (embedding, LoRA, gradient norm) is the plain-TypeScript
 * reference, which stays the oracle this backend is tested against.
 */
import type { ModelBackendOptions, ModelWeights } from '../model/backend.ts';
import type { ModelConfig } from '../model/config.ts';
import { createCpuBackend, type CpuBackend } from '../model/cpu-backend.ts';
import { createFastCpuOps } from './fast-ops.ts';
import { createWasmKernels, type WasmKernels } from './wasm-kernels.ts';

/** Creates the fast CPU backend (on `kernels`, or single-threaded ones of its own) from a config and a seed or named tensors. */
export async function createFastCpuBackend(config: ModelConfig, weights: ModelWeights, options: ModelBackendOptions = {}, kernels?: WasmKernels): Promise<CpuBackend> {
  return createCpuBackend(config, weights, options, createFastCpuOps(kernels ?? (await createWasmKernels())));
}
