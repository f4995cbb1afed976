/**
 * The f32 peak of an adapter, where it is known or can be estimated: a short table of GPUs by what
 * `adapter.info` reports (vendor, architecture, description), and for software adapters the CPU's
 * theoretical peak from its core count (8-wide FMA at ~3 GHz per core: an upper bound). Null when
 * unknown: WebGPU reports neither clocks nor core counts. Not a test.
 */
import type { AdapterDescription } from '../src/gpu/webgpu/device.ts';
import { isSoftwareAdapter } from '../src/gpu/webgpu/device.ts';

/** A peak and where it came from. */
export interface PeakEstimate {
  gflops: number;
  basis: string;
}

/** Dense f32 (non-tensor-core) peaks of GPUs, by a pattern over "vendor architecture device description". */
const KNOWN_PEAKS: Array<[RegExp, number, string]> = [
  [/h200|h100.*sxm/i, 66900, 'NVIDIA H100/H200 SXM datasheet f32'],
  [/h100/i, 51200, 'NVIDIA H100 PCIe datasheet f32'],
  [/nvidia.*hopper/i, 66900, 'NVIDIA Hopper (H100/H200 SXM) datasheet f32, from the architecture only'],
  [/a100/i, 19500, 'NVIDIA A100 datasheet f32'],
  [/rtx\s*4090/i, 82600, 'NVIDIA RTX 4090 datasheet f32'],
  [/rtx\s*3090/i, 35600, 'NVIDIA RTX 3090 datasheet f32'],
  [/apple.*m1/i, 2600, 'Apple M1 (8-core GPU) f32'],
  [/apple.*m2/i, 3600, 'Apple M2 (10-core GPU) f32'],
];

/** Returns the f32 peak of `adapter` in GFLOP/s, or null when neither known nor estimable. */
export function estimatePeakF32(adapter: AdapterDescription, hardwareConcurrency: number): PeakEstimate | null {
  const text = `${adapter.vendor} ${adapter.architecture} ${adapter.device} ${adapter.description}`;
  if (isSoftwareAdapter(adapter)) {
    const cores = Math.max(1, hardwareConcurrency);
    return { gflops: cores * 16 * 2 * 3, basis: `software adapter: ${cores} CPU cores × 8-wide FMA × 2 units × 2 flop × ~3 GHz (upper bound)` };
  }
  for (const [pattern, gflops, basis] of KNOWN_PEAKS) if (pattern.test(text)) return { gflops, basis };
  return null;
}
