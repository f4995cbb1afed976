/**
 * Opens a model for the CLI: `tiny` (TabRL's from-scratch preset with the byte tokenizer, seeded
 * random weights), a shipped model by name (`nano`, TabRL's small pretrained byte-level model,
 * `nano-2m`, its larger sibling, `nano-wordle`, which reads Wordle boards (lesson 6), or `nano-tools`, which copies ids into tool calls: the folders under public/models, listed in
 * src/models/shipped-models.ts) or a Hugging Face-style folder (config.json + safetensors + tokenizer files,
 * or a byte-model folder like nano's), on the fast CPU backend (the default), the reference CPU
 * backend or WebGPU through Dawn (the software adapter where there is no GPU).
 */
import type { ActivationCheckpointing } from '../gpu/webgpu/activations.ts';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ByteTokenizer } from '../gpu/io/byte-tokenizer.ts';
import { loadFolderTokenizer } from '../gpu/io/byte-model-folder.ts';
import { loadModelFolder } from '../gpu/io/model-folder.ts';
import type { Tokenizer } from '../gpu/io/tokenizer.ts';
import type { Decoder } from '../gpu/inference/decoder.ts';
import { TINY_CONFIG } from '../gpu/inference/presets.ts';
import { findRealPreset, huggingFaceFileUrl, MODEL_PRESETS } from '../models/catalogue.ts';
import { findShippedModel, shippedModelIds } from '../models/shipped-models.ts';
import type { ModelBackend, ModelBackendOptions, ModelWeights, NamedTensors } from '../gpu/model/backend.ts';
import type { ModelConfig } from '../gpu/model/config.ts';
import { createCpuBackend } from '../gpu/model/cpu-backend.ts';
import { createFastCpuBackend } from '../gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels, defaultThreadCount } from '../gpu/fast-cpu/node-kernel-threads.ts';
import type { WasmKernels } from '../gpu/fast-cpu/wasm-kernels.ts';
import { CliError } from './cli-error.ts';
import { errorMessage } from '../common/error-message.ts';
import type { MicroBatchChoice } from '../gpu/webgpu/step-memory.ts';

/** Which engine runs the model: the fast CPU backend (WASM SIMD on every core), the plain-TypeScript reference, or WebGPU. */
export type BackendName = 'cpu' | 'cpu-reference' | 'webgpu';

/** An opened model: its backend, tokenizer and a label for messages. */
export interface OpenedModel {
  backend: ModelBackend;
  tokenizer: Tokenizer;
  label: string;
  /** Describes the device (adapter) the backend runs on. */
  device: string;
  /**
   * The decoder to sample with for evaluation and generation: on WebGPU, the KV-cache decoder that
   * reads the backend's weights in place; absent on the CPU backends (LocalChatClient's CPU decoder,
   * which runs on the backend's ops: the fast backend's kernels for `cpu`).
   */
  createDecoder?: (backend: ModelBackend) => Promise<Decoder>;
  /** On WebGPU, the micro-batch chooser over the backend's memory accounting (step-memory.ts) and its default budget; absent on the CPU backends. */
  memory?: {
    defaultBudgetBytes: number;
    chooseMicroBatch: (T: number, options: { budgetBytes: number; maxMicroBatch: number; forced?: number }) => MicroBatchChoice;
  };
}

/** Checks a `--backend` value. */
export function parseBackendName(value: string | undefined): BackendName {
  const name = value ?? 'cpu';
  if (name !== 'cpu' && name !== 'cpu-reference' && name !== 'webgpu') throw new CliError(`--backend must be cpu, cpu-reference or webgpu, got "${name}"`, 2);
  return name;
}

/** Throws naming the first tensor that holds a NaN or an infinity: such weights only ever print NaN. */
export function checkFinite(tensors: NamedTensors, label: string): void {
  for (const [name, tensor] of tensors) {
    const index = tensor.data.findIndex((value) => !Number.isFinite(value));
    if (index >= 0) throw new Error(`${label}: tensor ${name} holds ${tensor.data[index]} at index ${index}; the weights are broken (re-export or re-download them)`);
  }
}

/** Whether a `--model` value names a model shipped under public/models (SHIPPED_MODELS: trained whole, like tiny, rather than through LoRA). */
export function isShippedModel(spec: string): boolean {
  return findShippedModel(spec) !== undefined;
}

const SHIPPED_MODELS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'public', 'models');

/** The folder of the shipped `nano` model, in this repository (public/models/nano). */
export const NANO_MODEL_FOLDER = join(SHIPPED_MODELS_FOLDER, 'nano');

/** The folder a `--model` value names: a shipped model's name (nano, nano-2m, ...) is its folder under public/models; anything else but `tiny` is a path. */
export function modelFolderOf(spec: string): string {
  return isShippedModel(spec) ? join(SHIPPED_MODELS_FOLDER, spec) : spec;
}

let kernelsOfProcess: Promise<WasmKernels> | null = null;

/** The fast CPU backend's kernels on every core, started once per process and shared by every model it opens (the policy and a judge). */
function processKernels(): Promise<WasmKernels> {
  kernelsOfProcess ??= createNodeWasmKernels(defaultThreadCount());
  return kernelsOfProcess;
}

/** Opens `tiny`, a shipped model (`nano`, `nano-wordle`, `nano-tools`, `nano-2m`) or a model folder on the chosen backend. */
export async function openModel(spec: string, options: { backend: BackendName; seed: number; activationCheckpointing?: ActivationCheckpointing } & ModelBackendOptions): Promise<OpenedModel> {
  let config: ModelConfig;
  let weights: ModelWeights;
  let tokenizer: Tokenizer;
  if (spec === 'tiny') {
    config = TINY_CONFIG;
    weights = { seed: options.seed };
    tokenizer = new ByteTokenizer();
  } else if (findRealPreset(spec)) {
    const preset = findRealPreset(spec)!;
    const urls = preset.files.map((file) => `  ${huggingFaceFileUrl(preset.repo, file.name)}${file.optional ? ' (optional)' : ''}`).join('\n');
    throw new CliError(
      `"${spec}" is a real checkpoint (${preset.name}, about ${Math.round(preset.downloadBytes / 1e6)} MB), and the CLI downloads nothing (Node is offline-first). ` +
        `Download these files into a folder and pass the folder to --model:\n${urls}`,
      2,
    );
  } else if (spec in MODEL_PRESETS) {
    throw new CliError(`preset "${spec}" has shapes but no tokenizer or weights; give a model folder or "tiny"`, 2);
  } else {
    const folder = modelFolderOf(spec);
    const read = async (name: string) => new Uint8Array(await readFile(join(folder, name)));
    try {
      const model = await loadModelFolder(read, folder);
      checkFinite(model.tensors, `${folder}/model.safetensors`);
      config = model.config;
      weights = { tensors: model.tensors };
      tokenizer = await loadFolderTokenizer(read, folder);
    } catch (error) {
      const hint = isShippedModel(spec)
        ? `the shipped ${spec} folder is broken or missing; restore public/models/${spec} from git, or rebuild it with scripts/nano/pretrain.ts (the command is in docs/nano.md)`
        : `--model takes "tiny", ${shippedModelIds()
            .map((id) => `"${id}"`)
            .join(', ')} or a Hugging Face-style folder with config.json, model.safetensors, tokenizer.json and tokenizer_config.json`;
      throw new CliError(`${errorMessage(error)}\n(${hint})`);
    }
  }
  const backendOptions: ModelBackendOptions = { lora: options.lora ?? null, ...(options.loraSeed !== undefined ? { loraSeed: options.loraSeed } : {}) };
  if (options.backend === 'cpu-reference') {
    return { backend: await createCpuBackend(config, weights, backendOptions), tokenizer, label: spec, device: 'cpu (reference backend)' };
  }
  if (options.backend === 'cpu') {
    const kernels = await processKernels();
    return {
      backend: await createFastCpuBackend(config, weights, backendOptions, kernels),
      tokenizer,
      label: spec,
      device: `cpu (fast backend: ${kernels.simdName} on ${kernels.threadCount} thread${kernels.threadCount === 1 ? '' : 's'})`,
    };
  }
  const [{ createNodeGPU }, { requestGPUDevice }, { createWebGPUBackend }, { createWebGPUDecoder }] = await Promise.all([
    import('../gpu/webgpu/node-gpu.ts'),
    import('../gpu/webgpu/device.ts'),
    import('../gpu/webgpu/webgpu-backend.ts'),
    import('../gpu/webgpu/webgpu-decoder.ts'),
  ]);
  try {
    const context = await requestGPUDevice({ gpu: createNodeGPU(), label: `tabrl ${spec}` });
    const backend = await createWebGPUBackend(context, config, weights, { ...backendOptions, activationCheckpointing: options.activationCheckpointing ?? 'auto' });
    const { vendor, architecture, isFallbackAdapter } = context.adapter;
    // A real checkpoint's KV cache needs more room than the decoder's default.
    const cacheBytes = spec === 'tiny' || isShippedModel(spec) ? undefined : 2 ** 30;
    return {
      backend,
      tokenizer,
      label: spec,
      device: `webgpu (${vendor} ${architecture}${isFallbackAdapter ? ', software adapter' : ''})`,
      createDecoder: (model) => createWebGPUDecoder(model, cacheBytes === undefined ? {} : { cacheBytes }),
      memory: { defaultBudgetBytes: backend.defaultMemoryBudget(), chooseMicroBatch: (T, choice) => backend.chooseMicroBatch(T, choice) },
    };
  } catch (error) {
    throw new CliError(`--backend webgpu: ${errorMessage(error)}`);
  }
}
