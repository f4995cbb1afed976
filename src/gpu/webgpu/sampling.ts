/**
 * Sampling on the GPU: the op wrapper of `sample_tokens.wgsl` (reference: src/gpu/reference/sample.ts),
 * the packing of draws into its (D, 8) words and the unpacking of its (D, 4) results, and a one-off
 * `sampleOnDevice` over a logits tensor. A draw reads one logits row, so a group of samples forked
 * from one prompt draws from one row; only ids, log-probabilities and entropies come back.
 */
import type { DeviceDraw, DeviceDrawn } from '../inference/decoder.ts';
import type { TokenDraw } from '../reference/sample.ts';
import { isSoftwareAdapter } from './device.ts';
import { createTensor, KernelPlan, u32, type Dispatch, type GPUTensor, type Kernels } from './kernels.ts';

/** 4-byte words per draw in the kernel's draws buffer (the WGSL struct Draw). */
export const DRAW_WORDS = 8;
/** Bytes per result (id bits, logprob, entropy, kept mass). */
export const DRAWN_BYTES = 16;
/** The largest f32 below 1: a uniform is clamped to it so that rounding to f32 never reaches 1. */
const BELOW_ONE = 1 - 2 ** -24;

/** The kernel's workgroup sizes (threads per draw): 4 for software adapters, 64 and 256 for GPUs. */
export const SAMPLE_WORKGROUP_SIZES = [4, 64, 256] as const;

/**
 * Returns the threads per draw for rows of V logits. On a software adapter 4 (one SIMD group of
 * SwiftShader: measured 0.11 ms per draw at V = 264 against 0.6–2 ms with 16–64 threads, whose
 * barriers dominate); on a GPU 64 for small vocabularies, else 256.
 */
function sampleWorkgroupSize(V: number, software: boolean): number {
  if (software) return 4;
  return V <= 4096 ? 64 : 256;
}

/** Records sample_tokens: D draws (draws (D, 8) words) from logits (rows, V) into out (D, 4); `workgroupSize` forces a variant (tests), D may be rewritten with `setDrawCount`. */
export function sampleTokens(
  plan: KernelPlan,
  out: GPUTensor,
  logits: GPUTensor,
  draws: GPUTensor,
  D: number,
  V: number,
  { maxDraws = D, workgroupSize }: { maxDraws?: number; workgroupSize?: number } = {},
): Dispatch {
  const WG = workgroupSize ?? sampleWorkgroupSize(V, isSoftwareAdapter(plan.kernels.gpu.adapter));
  return plan.add(plan.kernels.dispatch('sample_tokens', { WG }, [out, logits, draws], [u32(D), u32(V)], plan.kernels.grid(maxDraws, 1)));
}

/** Sets how many draws (≤ the recorded maxDraws) a recorded sample_tokens dispatch makes at its next submit. */
export function setDrawCount(kernels: Kernels, dispatch: Dispatch, D: number, V: number): void {
  kernels.writeParams(dispatch, [u32(D), u32(V)]);
}

/** Returns the draws as the kernel's words: row, temperature, topK, topP, drawable, uniform (clamped below 1), 2 pad. */
export function packDraws(draws: readonly TokenDraw[]): ArrayBuffer {
  const bytes = new ArrayBuffer(Math.max(1, draws.length) * DRAW_WORDS * 4);
  const view = new DataView(bytes);
  draws.forEach((draw, d) => {
    const at = d * DRAW_WORDS * 4;
    view.setUint32(at, draw.row, true);
    view.setFloat32(at + 4, draw.temperature, true);
    view.setUint32(at + 8, draw.topK, true);
    view.setFloat32(at + 12, draw.topP, true);
    view.setUint32(at + 16, draw.drawable, true);
    view.setFloat32(at + 20, Math.min(Math.fround(draw.uniform), BELOW_ONE), true);
  });
  return bytes;
}

/** Returns a decoder's draw as the kernel's: defaults filled in (top-k off, top-p off, every id of V drawable). */
export function toTokenDraw(draw: DeviceDraw, V: number): TokenDraw {
  const { temperature, topK = 0, topP = 1, sampleableIds = V } = draw.params;
  return { row: draw.row, temperature, topK, topP, drawable: Math.min(V, sampleableIds), uniform: draw.uniform };
}

/** Splits D results (id bits, logprob, entropy, kept mass) read back from the kernel's out buffer. */
export function unpackDrawn(bytes: ArrayBuffer, D: number): DeviceDrawn {
  const words = new Float32Array(bytes, 0, D * 4);
  const bits = new Int32Array(bytes, 0, D * 4);
  const ids = new Int32Array(D);
  const logprobs = new Float32Array(D);
  const entropies = new Float32Array(D);
  for (let d = 0; d < D; d++) {
    ids[d] = bits[4 * d]!;
    logprobs[d] = words[4 * d + 1]!;
    entropies[d] = words[4 * d + 2]!;
  }
  return { ids, logprobs, entropies };
}

/** Copies `byteLength` bytes of a tensor into a staging buffer within `encoder`; returns the staging buffer to map after submit. */
export function stageRead(device: GPUDevice, encoder: GPUCommandEncoder, tensor: GPUTensor, byteLength: number): GPUBuffer {
  const size = Math.ceil(byteLength / 4) * 4;
  const staging = device.createBuffer({ label: 'readback', size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  encoder.copyBufferToBuffer(tensor.buffer, tensor.offset, staging, 0, size);
  return staging;
}

/** Maps a staging buffer filled by a submitted copy and returns its bytes (the buffer is destroyed). */
export async function readStaged(staging: GPUBuffer, byteLength: number): Promise<ArrayBuffer> {
  await staging.mapAsync(GPUMapMode.READ);
  const bytes = staging.getMappedRange().slice(0, byteLength);
  staging.unmap();
  staging.destroy();
  return bytes;
}

/** Draws tokens from a logits tensor (rows, V) on the device in one submit and reads back only the draws. */
export async function sampleOnDevice(kernels: Kernels, logits: GPUTensor, V: number, draws: readonly TokenDraw[], workgroupSize?: number): Promise<DeviceDrawn> {
  const D = draws.length;
  if (D === 0) return { ids: new Int32Array(0), logprobs: new Float32Array(0), entropies: new Float32Array(0) };
  const device = kernels.device;
  const drawsTensor = createTensor(device, D * DRAW_WORDS * 4, 'draws');
  device.queue.writeBuffer(drawsTensor.buffer, 0, packDraws(draws));
  const out = createTensor(device, D * DRAWN_BYTES, 'drawn');
  const plan = new KernelPlan(kernels);
  sampleTokens(plan, out, logits, drawsTensor, D, V, { workgroupSize });
  const encoder = device.createCommandEncoder();
  plan.encode(encoder);
  const staging = stageRead(device, encoder, out, D * DRAWN_BYTES);
  device.queue.submit([encoder.finish()]);
  try {
    return unpackDrawn(await readStaged(staging, D * DRAWN_BYTES), D);
  } finally {
    plan.destroy();
    drawsTensor.buffer.destroy();
    out.buffer.destroy();
  }
}
