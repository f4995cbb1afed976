/**
 * Node only: initialises jax-js on WebGPU through Dawn's `GPU` object (the `webgpu` package), the
 * same adapter our engine uses, for the peers of bench:train. jax-js looks for `navigator.gpu` and
 * `navigator.userAgent`, which Node lacks, so a minimal `navigator` is installed first.
 */
import type { GPUContext } from '../src/gpu/webgpu/device.ts';

/** Points jax-js at `gpu` and makes WebGPU its default device; throws when jax-js finds no WebGPU. */
export async function initJaxOnNode(gpu: GPU, context: GPUContext): Promise<void> {
  if (typeof (globalThis as { navigator?: unknown }).navigator === 'undefined' || !(globalThis as { navigator: { gpu?: unknown } }).navigator.gpu) {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu, userAgent: `node ${process.version}` }, configurable: true });
  }
  const jax = await import('@jax-js/jax');
  const devices = await jax.init('webgpu');
  if (!devices.includes('webgpu')) throw new Error(`jax-js found no WebGPU device (it has ${devices.join(', ')}); the peer must run on ${context.adapter.vendor} ${context.adapter.architecture}`);
  jax.defaultDevice('webgpu');
}
