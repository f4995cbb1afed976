/**
 * The WebGPU device: one code path for a page, a worker and Node (where `node-gpu.ts` supplies the
 * `GPU` object). It asks for the adapter's own limits and the optional features the engine uses,
 * and turns device loss and uncaptured validation errors into messages that say what happened and
 * what to do. It is not a buffer allocator or a kernel runner (see `kernels.ts`).
 */
import type { TuningStore } from './tuning-store.ts';

/** Optional features the engine uses when the adapter has them. */
export const OPTIONAL_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const satisfies readonly GPUFeatureName[];

/** Limits raised from the WebGPU defaults to whatever the adapter supports. */
export const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'maxUniformBuffersPerShaderStage',
  'maxBindGroups',
] as const;

/** What the adapter is, as reported by `adapter.info`. */
export interface AdapterDescription {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
}

/** Whether an adapter runs on the CPU (SwiftShader, Mesa's llvmpipe/lavapipe): there kernels prefer few threads per workgroup and no barriers. */
export function isSoftwareAdapter(adapter: AdapterDescription): boolean {
  return adapter.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe/i.test(`${adapter.architecture} ${adapter.description} ${adapter.device}`);
}

/** A device with the facts the kernels need about it. */
export interface GPUContext {
  device: GPUDevice;
  adapter: AdapterDescription;
  /** Which optional features were enabled on this device. */
  features: { shaderF16: boolean; subgroups: boolean; timestampQuery: boolean };
  /** Settles when the device is lost (destroyed on purpose or not). */
  lost: Promise<GPUDeviceLostInfo>;
  /** The first uncaptured validation or out-of-memory error, if any happened. */
  firstError: () => Error | undefined;
  /** Where tuning results (the matmul choice, the decode-path verdict) outlive the process, if the host supplied a store; otherwise they last only the process. */
  tuningStore?: TuningStore;
}

/** Options for `requestGPUDevice`. */
export interface RequestDeviceOptions {
  /** The `GPU` object; defaults to `navigator.gpu` (in Node pass `createNodeGPU()`). */
  gpu?: GPU;
  powerPreference?: GPUPowerPreference;
  label?: string;
  /** Called with a clear error on device loss or an uncaptured GPU error; defaults to console.error. */
  onError?: (error: Error) => void;
  /** Where the device's tuning results persist across visits (the engine worker passes IndexedDB); default none. */
  tuningStore?: TuningStore;
  /** Ask for WebGPU's default limits (256 MiB maxBufferSize, 128 MiB maxStorageBufferBindingSize) instead of the adapter's: checks that a model fits any adapter. Default false. */
  defaultLimits?: boolean;
}

/** Requests a high-performance adapter and a device with its limits and optional features, or throws loudly. */
export async function requestGPUDevice(options: RequestDeviceOptions = {}): Promise<GPUContext> {
  const gpu = options.gpu ?? (globalThis.navigator as { gpu?: GPU } | undefined)?.gpu;
  if (!gpu) {
    throw new Error(
      'WebGPU is not available here (navigator.gpu is missing). In Chromium pass --enable-unsafe-webgpu or use a ' +
        'secure context (http://127.0.0.1 or https); in Node call createNodeGPU() from src/gpu/webgpu/node-gpu.ts.',
    );
  }
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  if (!adapter) {
    throw new Error(
      "No WebGPU adapter: requestAdapter() returned null. Without a GPU, install Chromium's SwiftShader " +
        '(apt-get install chromium libvulkan1) and, in Node, let createNodeGPU() point VK_ICD_FILENAMES at it.',
    );
  }
  const requiredFeatures = OPTIONAL_FEATURES.filter((feature) => adapter.features.has(feature));
  const requiredLimits: Record<string, number> = {};
  for (const name of options.defaultLimits === true ? [] : RAISED_LIMITS) {
    const value = (adapter.limits as unknown as Record<string, number | undefined>)[name];
    if (typeof value === 'number') requiredLimits[name] = value;
  }
  const label = options.label ?? 'tabrl';
  const device = await adapter.requestDevice({ label, requiredFeatures, requiredLimits });
  const report = options.onError ?? ((error: Error) => console.error(error.message));

  let firstError: Error | undefined;
  device.addEventListener('uncapturederror', (event) => {
    const gpuError = (event as GPUUncapturedErrorEvent).error;
    const kind = gpuError instanceof GPUOutOfMemoryError ? 'out of memory' : 'validation error';
    const error = new Error(
      `WebGPU ${kind} on device "${label}": ${gpuError.message}\n` +
        (kind === 'out of memory'
          ? 'The model or batch does not fit this GPU: use a smaller model, batch or sequence length.'
          : 'The device rejected a buffer, pipeline or dispatch (bindings, sizes or limits); this is a bug in ' +
            "src/gpu/webgpu or a model too large for this device's limits. Please report it with this message."),
    );
    firstError ??= error;
    report(error);
  });
  const lost = device.lost.then((info) => {
    if (info.reason !== 'destroyed') {
      report(
        new Error(
          `The WebGPU device "${label}" was lost (${info.reason}): ${info.message}\n` +
            'The GPU driver reset or the browser reclaimed the GPU. Reload the page (or restart the process) to ' +
            'get a new device; training resumes from the last checkpoint.',
        ),
      );
    }
    return info;
  });

  // adapter.info is missing in browsers older than 2024
  const info: Partial<GPUAdapterInfo> = (adapter as { info?: GPUAdapterInfo }).info ?? {};
  return {
    device,
    adapter: {
      vendor: info.vendor ?? '',
      architecture: info.architecture ?? '',
      device: info.device ?? '',
      description: info.description ?? '',
      isFallbackAdapter: (info as { isFallbackAdapter?: boolean }).isFallbackAdapter ?? false,
    },
    features: {
      shaderF16: device.features.has('shader-f16'),
      subgroups: device.features.has('subgroups'),
      timestampQuery: device.features.has('timestamp-query'),
    },
    lost,
    firstError: () => firstError,
    ...(options.tuningStore ? { tuningStore: options.tuningStore } : {}),
  };
}
