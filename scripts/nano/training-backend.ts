/**
 * Opens a training backend for a model shape with seeded random weights, for the nano scripts: TabRL's
 * fast CPU backend (the default), its reference CPU backend (`--backend cpu-reference`), or its WebGPU backend through Dawn in Node (a real GPU where there is one, the
 * software adapter otherwise), as `tabrl train --backend webgpu` opens a model.
 */
import { cpus } from 'node:os';
import type { BackendName } from '../../src/cli/open-model.ts';
import type { ModelBackend } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../src/gpu/model/cpu-backend.ts';
import { createFastCpuBackend } from '../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels, defaultThreadCount } from '../../src/gpu/fast-cpu/node-kernel-threads.ts';

/** A backend and a one-line description of the machine it runs on (for pretraining.json). */
export interface TrainingBackend {
  backend: ModelBackend;
  machine: string;
}

/**
 * Opens `config` with weights initialised from `seed` on the CPU backend or on WebGPU (a missing adapter throws, and so does a software one when `requireHardware`);
 * the fast CPU backend runs its kernels on `threads` threads (default: every core), and computes the same weights whatever the count.
 */
export async function openTrainingBackend(config: ModelConfig, seed: number, name: BackendName, requireHardware = false, threads = defaultThreadCount()): Promise<TrainingBackend> {
  const host = `${cpus()[0]?.model ?? 'cpu'} (${cpus().length} logical cores, shared), Node ${process.version}`;
  if (name === 'cpu-reference') return { backend: await createCpuBackend(config, { seed }), machine: `${host}, TabRL reference CPU backend` };
  if (name === 'cpu') {
    const kernels = await createNodeWasmKernels(threads);
    return { backend: await createFastCpuBackend(config, { seed }, {}, kernels), machine: `${host}, TabRL fast CPU backend (${kernels.simdName}, ${kernels.threadCount} thread${kernels.threadCount === 1 ? '' : 's'})` };
  }
  const [{ createNodeGPU }, { isSoftwareAdapter, requestGPUDevice }, { createWebGPUBackend }] = await Promise.all([
    import('../../src/gpu/webgpu/node-gpu.ts'),
    import('../../src/gpu/webgpu/device.ts'),
    import('../../src/gpu/webgpu/webgpu-backend.ts'),
  ]);
  const context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'nano pretraining' });
  const { vendor, architecture, description, isFallbackAdapter } = context.adapter;
  const adapter = [vendor, architecture, description].filter((part) => part !== '').join(' ') || 'unknown adapter';
  if (requireHardware && isSoftwareAdapter(context.adapter)) {
    context.device.destroy();
    throw new Error(`--require-gpu: WebGPU answered with a software adapter (${adapter}); point VK_ICD_FILENAMES at the GPU's Vulkan driver (e.g. its nvidia_icd.json)`);
  }
  return { backend: await createWebGPUBackend(context, config, { seed }), machine: `${host}, TabRL WebGPU backend on ${adapter}${isFallbackAdapter ? ' (software adapter)' : ''} through Dawn` };
}
