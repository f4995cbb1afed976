/**
 * Node only: the `GPU` object from the `webgpu` package (Dawn), for tests, benchmarks and the CLI.
 * This is the one file in src/gpu that uses Node APIs; browsers use `navigator.gpu` instead.
 */
import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';

/** Chromium's SwiftShader Vulkan driver on Debian: real WebGPU on the CPU. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

const NVIDIA_ICDS = ['/usr/share/vulkan/icd.d/nvidia_icd.json', '/etc/vulkan/icd.d/nvidia_icd.json'];

/**
 * Returns Dawn's `GPU` object, pointing Vulkan at SwiftShader when VK_ICD_FILENAMES is unset, the
 * driver is there and no NVIDIA driver is installed; installs the WebGPU globals (GPUBufferUsage...).
 */
export function createNodeGPU(): GPU {
  const holder = globalThis as { __tabrlNodeGPU?: GPU };
  if (holder.__tabrlNodeGPU) return holder.__tabrlNodeGPU;
  if (process.env.VK_ICD_FILENAMES === undefined && existsSync(SWIFTSHADER_ICD) && !NVIDIA_ICDS.some((path) => existsSync(path))) {
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  Object.assign(globalThis, globals);
  const gpu = create([]);
  // Dawn's GPU object must stay reachable: if it is garbage-collected Node segfaults.
  holder.__tabrlNodeGPU = gpu;
  return gpu;
}
