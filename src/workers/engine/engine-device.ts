/**
 * What the engine worker's model runs on, and the backends and decoders made on it: WebGPU when the
 * browser offers an adapter, otherwise the fast CPU backend (WASM SIMD kernels on Web Workers that
 * share memory, one thread when the page is not cross-origin isolated), or, when asked for, the
 * plain-TypeScript reference backend (the oracle). The CPU runs the byte-level models (tiny and the shipped nano, nano-wordle, nano-tools, nano-2m);
 * real checkpoints need WebGPU and are refused on it with what to do. It holds no model itself.
 */
import { createFastCpuBackend } from '../../gpu/fast-cpu/fast-cpu-backend.ts';
import type { WasmKernels } from '../../gpu/fast-cpu/wasm-kernels.ts';
import { createBrowserWasmKernels, fastCpuLabel } from '../../gpu/fast-cpu/web-kernel-threads.ts';
import type { Decoder } from '../../gpu/inference/decoder.ts';
import type { ModelBackend, ModelWeights } from '../../gpu/model/backend.ts';
import type { ModelConfig } from '../../gpu/model/config.ts';
import { createCpuBackend } from '../../gpu/model/cpu-backend.ts';
import { requestGPUDevice, type GPUContext } from '../../gpu/webgpu/device.ts';
import { createWebGPUBackend } from '../../gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../../gpu/webgpu/webgpu-decoder.ts';
import { errorMessage } from '../../common/error-message.ts';
import { REAL_MODEL_PRESETS } from '../../models/catalogue.ts';
import { shippedModelIds } from '../../models/shipped-models.ts';
import type { EngineChoice } from './protocol.ts';
import { presetFitProblems } from './real-model.ts';
import { indexedDbTuningStore } from './tuning-store.ts';

/** The label of the reference backend, as the app shows it. */
const REFERENCE_CPU_LABEL = 'CPU (reference TypeScript, 1 thread)';

/** The byte-level models the CPU runs, for messages: "nano, nano-wordle, nano-tools, nano-2m or tiny". */
const BYTE_MODELS = `${shippedModelIds().join(', ')} or tiny`;

/** Why a real model cannot load when the engine runs on the CPU. */
const REAL_MODEL_NEEDS_WEBGPU = `needs WebGPU, and this tab runs the in-tab model on the CPU (only ${BYTE_MODELS} train there)`;

/**
 * The engine's device: a WebGPU context, or the CPU with the fast kernels (null: the reference
 * backend); `label` names it for the person, `fallback` says why it is the CPU when WebGPU was wanted.
 */
export type EngineDevice = { kind: 'webgpu'; context: GPUContext; label: string; fallback: null } | { kind: 'cpu'; kernels: WasmKernels | null; label: string; fallback: string | null };

const NO_WEBGPU = 'This browser offers no WebGPU to web workers (navigator.gpu is missing)';
const NO_ADAPTER = 'This browser has WebGPU but no GPU adapter for it (WebGPU is switched off or blocked for this GPU; chrome://gpu says why)';
const CPU_FALLBACK =
  `so the in-tab model runs on the CPU: ${BYTE_MODELS} evaluate and train there, more slowly than on a GPU. ` +
  'Real models need WebGPU: a recent Chrome or Edge (version 113 or later) with hardware acceleration on.';

/** WebGPU is missing (no navigator.gpu, or no adapter): the message says which. */
class NoWebGPUError extends Error {
  override readonly name = 'NoWebGPUError';
}

/**
 * Opens the device for `choice`: 'auto' tries WebGPU and falls back to the fast CPU backend when
 * the browser has no WebGPU or no adapter (its `fallback` says what happened and what it means);
 * 'cpu' and 'cpu-reference' skip WebGPU. `onError` hears the GPU device's uncaptured errors.
 */
export async function openEngineDevice(choice: EngineChoice, onError: (message: string) => void): Promise<EngineDevice> {
  if (choice === 'cpu-reference') return { kind: 'cpu', kernels: null, label: REFERENCE_CPU_LABEL, fallback: null };
  let fallback: string | null = null;
  if (choice === 'auto') {
    try {
      return await openWebGPU(onError);
    } catch (error) {
      if (!(error instanceof NoWebGPUError)) throw error;
      fallback = `${error.message}, ${CPU_FALLBACK}`;
    }
  }
  try {
    const browserKernels = await createBrowserWasmKernels();
    return { kind: 'cpu', kernels: browserKernels.kernels, label: fastCpuLabel(browserKernels), fallback };
  } catch (error) {
    // No WASM SIMD (an old browser): the reference still runs, slowly.
    const why = `The fast CPU kernels could not start (${errorMessage(error)}), so the in-tab model runs on the reference CPU backend, which is much slower.`;
    return { kind: 'cpu', kernels: null, label: REFERENCE_CPU_LABEL, fallback: fallback ? `${fallback} ${why}` : why };
  }
}

/** The WebGPU device, or a NoWebGPUError when the browser has no WebGPU or no adapter. */
async function openWebGPU(onError: (message: string) => void): Promise<EngineDevice> {
  const gpu = (self.navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) throw new NoWebGPUError(NO_WEBGPU);
  let context;
  try {
    context = await requestGPUDevice({ gpu, label: 'tabrl-engine', onError: (error) => onError(error.message), tuningStore: indexedDbTuningStore() });
  } catch (error) {
    if (/No WebGPU adapter/.test(errorMessage(error))) throw new NoWebGPUError(NO_ADAPTER);
    throw new Error(`The in-tab model needs a WebGPU device and none could be had: ${errorMessage(error)}`);
  }
  const label = `${context.adapter.vendor || 'unknown'} · ${context.adapter.architecture || context.adapter.device || 'adapter'}${context.adapter.isFallbackAdapter ? ' (software)' : ''}`;
  return { kind: 'webgpu', context, label, fallback: null };
}

/** A fully fine-tuned backend on `device`. */
export async function createDeviceBackend(device: EngineDevice, config: ModelConfig, weights: ModelWeights): Promise<ModelBackend> {
  if (device.kind === 'webgpu') return createWebGPUBackend(device.context, config, weights);
  if (device.kernels) return createFastCpuBackend(config, weights, {}, device.kernels);
  return createCpuBackend(config, weights);
}

/** The decoder factory for a chat client on `device`: the WebGPU decoder with a `cacheBytes` KV cache, or undefined (LocalChatClient's CPU decoder, on the backend's ops). */
export function deviceDecoderFactory(device: EngineDevice, cacheBytes: number): ((backend: ModelBackend) => Promise<Decoder>) | undefined {
  if (device.kind !== 'webgpu') return undefined;
  return (backend) => createWebGPUDecoder(backend, { cacheBytes });
}

/** For each real preset id: null when `device` can hold it, or why not (on the CPU: it needs WebGPU). */
export function devicePresetFit(device: EngineDevice): Record<string, string | null> {
  if (device.kind === 'webgpu') return presetFitProblems(device.context);
  return Object.fromEntries(REAL_MODEL_PRESETS.map((preset) => [preset.id, REAL_MODEL_NEEDS_WEBGPU]));
}

/** The WebGPU context a real model loads on, or an error saying that the CPU cannot hold one and what to choose instead. */
export function requireWebGPU(device: EngineDevice): GPUContext {
  if (device.kind === 'webgpu') return device.context;
  throw new Error(`A real model ${REAL_MODEL_NEEDS_WEBGPU}. Use a browser with WebGPU for it, or choose ${BYTE_MODELS}.`);
}
