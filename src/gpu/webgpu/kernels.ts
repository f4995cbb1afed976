/**
 * Running WGSL kernels: a pipeline cache under readable keys, GPU tensors as byte ranges of
 * buffers, and a KernelPlan, the list of dispatches of one step whose bind groups and parameter
 * buffers are built once, encoded into one command encoder and submitted once. The op wrappers
 * that fill a plan live in `ops.ts`; this file knows no op.
 *
 * Every storage binding of every kernel is declared `read_write`, inputs included: the tensors of
 * one role (activations, say) share one buffer, and WebGPU rejects a dispatch that binds one
 * buffer both read-only and writable. Writable ranges of one dispatch must not overlap.
 */
import type { GPUContext } from './device.ts';
import { WGSL, type KernelName } from './kernels.generated.ts';
import { defaultMatmulChoice, type MatmulChoice } from './matmul-variants.ts';

export type { KernelName } from './kernels.generated.ts';

/** A tensor on the GPU: a byte range of a buffer, bound as one storage binding. */
export interface GPUTensor {
  buffer: GPUBuffer;
  /** Byte offset, a multiple of the device's minStorageBufferOffsetAlignment. */
  offset: number;
  /** Byte length. */
  size: number;
  /** 'f16' for a tensor stored as half precision (frozen weights, activations stored as half); absent means f32. */
  dtype?: 'f16';
}

/** The kernels that convert activations between f32 and f16 storage: with the *_f16w ones, the only kernels that bind f16 tensors. */
const F16_CONVERSIONS: ReadonlySet<string> = new Set<KernelName>(['convert_f32_to_f16', 'convert_f16_to_f32']);

/** Positions covered by the RoPE cos/sin table; later positions use the GPU's less accurate sin and cos. */
export const ROPE_TABLE_POSITIONS = 8192;

/** One scalar of a kernel's uniform `Params` struct; the struct's fields are 4-byte scalars in order. */
export type Param = { u32: number } | { i32: number } | { f32: number };

/** Returns a u32 uniform field. */
export const u32 = (value: number): Param => ({ u32: value });
/** Returns an f32 uniform field. */
export const f32 = (value: number): Param => ({ f32: value });

/** Override constants of a pipeline. */
export type Constants = Record<string, number | boolean>;

/** One recorded kernel launch with everything bound. */
export interface Dispatch {
  /** The pipeline key, also the debug label of the pass. */
  label: string;
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  workgroups: readonly [number, number, number];
  /** The uniform buffer holding the Params struct (rewritable with `writeParams`). */
  params: GPUBuffer;
}

/** Returns the readable cache key of a pipeline, e.g. "matmul_forward|HAS_BIAS=true|WG_X=16|WG_Y=4". */
function pipelineKey(name: KernelName, constants: Constants): string {
  const parts = Object.keys(constants)
    .sort()
    .map((key) => `${key}=${constants[key]}`);
  return [name, ...parts].join('|');
}

/** Encodes a list of uniform fields as the bytes of a WGSL struct of 4-byte scalars (padded to 16). */
function packParams(fields: readonly Param[]): ArrayBuffer {
  const bytes = new ArrayBuffer(Math.max(16, Math.ceil((fields.length * 4) / 16) * 16));
  const view = new DataView(bytes);
  fields.forEach((field, i) => {
    if ('u32' in field) view.setUint32(4 * i, field.u32, true);
    else if ('i32' in field) view.setInt32(4 * i, field.i32, true);
    else view.setFloat32(4 * i, field.f32, true);
  });
  return bytes;
}

/** The device, its pipeline cache and the small helpers every op wrapper uses. */
export class Kernels {
  /** The device the kernels run on. */
  readonly device: GPUDevice;
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private placeholder: GPUTensor | undefined;
  private readonly ropeTables = new Map<string, GPUTensor>();
  private scratchBuffer: GPUBuffer | undefined;
  /** Which matmul kernel each product runs (ops.ts reads it): the adapter's default until a trial (matmul-tuning.ts) or `forceMatmul` changes it. */
  matmul: MatmulChoice;
  /** The pending or finished timed trial of this device, so that it runs once. */
  matmulTrial: Promise<MatmulChoice> | undefined;

  constructor(readonly gpu: GPUContext) {
    this.device = gpu.device;
    this.matmul = defaultMatmulChoice(gpu.adapter);
  }

  /**
   * A scratch tensor of at least `bytes` bytes (split-K's partial products). One buffer per device,
   * shared by every dispatch that asks: dispatches run in order, so reuse within and across plans is
   * safe as long as each user writes before it reads. A larger request allocates a larger buffer; plans
   * recorded earlier keep the one they bound.
   */
  scratch(bytes: number): GPUTensor {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    if (!this.scratchBuffer || this.scratchBuffer.size < size) {
      this.scratchBuffer = this.device.createBuffer({ label: 'matmul scratch', size, usage: GPUBufferUsage.STORAGE });
    }
    return { buffer: this.scratchBuffer, offset: 0, size };
  }

  /** Bytes of the current scratch buffer (for memory accounting). */
  scratchBytes(): number {
    return this.scratchBuffer?.size ?? 0;
  }

  /** Returns the compute pipeline of a kernel with these override constants, compiling it once. */
  pipeline(name: KernelName, constants: Constants = {}): GPUComputePipeline {
    const key = pipelineKey(name, constants);
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      const module = this.device.createShaderModule({ label: name, code: WGSL[name] });
      const numeric = Object.fromEntries(Object.entries(constants).map(([name, value]) => [name, Number(value)]));
      pipeline = this.device.createComputePipeline({ label: key, layout: 'auto', compute: { module, entryPoint: 'main', constants: numeric } });
      this.pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  /** The keys of the pipelines compiled so far. */
  pipelineKeys(): string[] {
    return [...this.pipelines.keys()];
  }

  /** A 16-byte tensor bound where a kernel's optional input (e.g. a missing bias) is switched off. */
  unusedTensor(): GPUTensor {
    this.placeholder ??= createTensor(this.device, 16, 'unused');
    return this.placeholder;
  }

  /** Returns the (ROPE_TABLE_POSITIONS, HS/2) table of [cos, sin] of position·theta^(-2i/HS), computed once in float64. */
  ropeTable(HS: number, theta: number): GPUTensor {
    const key = `${HS}|${theta}`;
    let table = this.ropeTables.get(key);
    if (!table) {
      const half = HS / 2;
      const values = new Float32Array(ROPE_TABLE_POSITIONS * half * 2); // (positions, HS/2, 2)
      for (let position = 0; position < ROPE_TABLE_POSITIONS; position++) {
        for (let i = 0; i < half; i++) {
          const angle = position * Math.pow(theta, (-2 * i) / HS);
          values[2 * (position * half + i)] = Math.cos(angle);
          values[2 * (position * half + i) + 1] = Math.sin(angle);
        }
      }
      table = createTensor(this.device, values, `rope table ${key}`);
      this.ropeTables.set(key, table);
    }
    return table;
  }

  /** Builds one dispatch: the pipeline, its uniform buffer and its bind group (tensors at bindings 0.., params last). */
  dispatch(name: KernelName, constants: Constants, tensors: readonly GPUTensor[], params: readonly Param[], workgroups: readonly [number, number, number]): Dispatch {
    const half = tensors.find((tensor) => tensor.dtype === 'f16');
    if (half !== undefined && !name.endsWith('_f16w') && !F16_CONVERSIONS.has(name)) {
      throw new Error(`${name} reads f32 tensors but was given an f16 one (${half.buffer.label}); only the *_f16w kernels read f16 weights (and convert_* f16 activations)`);
    }
    const pipeline = this.pipeline(name, constants);
    const bytes = packParams(params);
    const paramsBuffer = this.device.createBuffer({
      label: `${name} params`,
      size: bytes.byteLength,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    this.device.queue.writeBuffer(paramsBuffer, 0, bytes);
    const entries: GPUBindGroupEntry[] = tensors.map((tensor, binding) => ({
      binding,
      resource: { buffer: tensor.buffer, offset: tensor.offset, size: tensor.size },
    }));
    entries.push({ binding: tensors.length, resource: { buffer: paramsBuffer } });
    const bindGroup = this.device.createBindGroup({ label: name, layout: pipeline.getBindGroupLayout(0), entries });
    return { label: pipelineKey(name, constants), pipeline, bindGroup, workgroups, params: paramsBuffer };
  }

  /** Rewrites the uniform Params of a recorded dispatch (e.g. AdamW's step), taking effect at the next submit. */
  writeParams(dispatch: Dispatch, params: readonly Param[]): void {
    this.device.queue.writeBuffer(dispatch.params, 0, packParams(params));
  }

  /** Returns workgroup counts covering `threads` invocations of a 1-D kernel, folded into y past the per-dimension limit. */
  grid(threads: number, workgroupSize = 64): [number, number, number] {
    const groups = Math.max(1, Math.ceil(threads / workgroupSize));
    const maxPerDimension = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (groups <= maxPerDimension) return [groups, 1, 1];
    const y = Math.ceil(groups / maxPerDimension);
    return [Math.ceil(groups / y), y, 1];
  }
}

const KERNELS_BY_DEVICE = new WeakMap<GPUDevice, Kernels>();

/** Returns the one Kernels (and so the one pipeline cache) of a device, creating it on first use. */
export function kernelsFor(gpu: GPUContext): Kernels {
  let kernels = KERNELS_BY_DEVICE.get(gpu.device);
  if (!kernels) {
    kernels = new Kernels(gpu);
    KERNELS_BY_DEVICE.set(gpu.device, kernels);
  }
  return kernels;
}

/** A step: dispatches (and buffer clears) recorded once, encoded in order into one command encoder. */
export class KernelPlan {
  /** The recorded commands, in order. */
  readonly commands: Array<Dispatch | { clear: GPUTensor }> = [];

  constructor(readonly kernels: Kernels) {}

  /** Appends a dispatch. */
  add(dispatch: Dispatch): Dispatch {
    this.commands.push(dispatch);
    return dispatch;
  }

  /** Appends a zero-fill of a tensor (offset and size multiples of 4). */
  clear(tensor: GPUTensor): void {
    this.commands.push({ clear: tensor });
  }

  /** Encodes the plan: consecutive dispatches share one compute pass (each dispatch sees the previous one's writes). */
  encode(encoder: GPUCommandEncoder): void {
    let pass: GPUComputePassEncoder | undefined;
    for (const command of this.commands) {
      if ('clear' in command) {
        pass?.end();
        pass = undefined;
        encoder.clearBuffer(command.clear.buffer, command.clear.offset, command.clear.size);
        continue;
      }
      pass ??= encoder.beginComputePass();
      pass.setPipeline(command.pipeline);
      pass.setBindGroup(0, command.bindGroup);
      pass.dispatchWorkgroups(...command.workgroups);
    }
    pass?.end();
  }

  /** Destroys the uniform buffers of the recorded dispatches; the plan may not be submitted afterwards. */
  destroy(): void {
    for (const command of this.commands) if (!('clear' in command)) command.params.destroy();
    this.commands.length = 0;
  }

  /** Encodes the plan into one command encoder and submits it once. */
  submit(): void {
    const encoder = this.kernels.device.createCommandEncoder();
    this.encode(encoder);
    this.kernels.device.queue.submit([encoder.finish()]);
  }
}

/** Creates a storage tensor of `sizeOrData` bytes (zeros) or holding the given values. */
export function createTensor(device: GPUDevice, sizeOrData: number | Float32Array | Int32Array, label = 'tensor'): GPUTensor {
  const byteLength = typeof sizeOrData === 'number' ? sizeOrData : sizeOrData.byteLength;
  const size = Math.max(16, Math.ceil(byteLength / 16) * 16);
  const buffer = device.createBuffer({
    label,
    size,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  if (typeof sizeOrData !== 'number') device.queue.writeBuffer(buffer, 0, sizeOrData.buffer as ArrayBuffer, sizeOrData.byteOffset, sizeOrData.byteLength);
  return { buffer, offset: 0, size };
}

/** Copies a tensor back to the CPU (after all submitted work) as float32 values. */
export async function readTensor(device: GPUDevice, tensor: GPUTensor, byteLength = tensor.size): Promise<Float32Array> {
  const size = Math.ceil(byteLength / 4) * 4;
  const staging = device.createBuffer({ label: 'readback', size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(tensor.buffer, tensor.offset, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const values = new Float32Array(staging.getMappedRange().slice(0, byteLength));
  staging.unmap();
  staging.destroy();
  return values;
}
