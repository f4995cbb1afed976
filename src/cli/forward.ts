/**
 * `tabrl forward <model-dir> --tokens 1,2,3 [--backend cpu|cpu-reference|webgpu]`: loads a Hugging
 * Face-style model folder (config.json + model.safetensors, f32/f16/bf16), runs one forward pass
 * over the tokens and prints `{"logits": [[...], ...]}`, one row of V logits per position. A
 * debugging and cross-checking tool (compare with `transformers`), not a sampler. `--backend` means
 * what it means for the other commands: `cpu` the fast CPU backend, `cpu-reference` the oracle.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModelFolder } from '../gpu/io/model-folder.ts';
import type { NamedTensors } from '../gpu/model/backend.ts';
import type { ModelConfig } from '../gpu/model/config.ts';
import { createCpuBackend } from '../gpu/model/cpu-backend.ts';
import { createFastCpuBackend } from '../gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels, defaultThreadCount } from '../gpu/fast-cpu/node-kernel-threads.ts';
import { CliError } from './cli-error.ts';
import { parseFlags } from './flags.ts';
import { checkFinite, modelFolderOf, parseBackendName } from './open-model.ts';
import { shippedModelIds } from '../models/shipped-models.ts';
import { errorMessage } from '../common/error-message.ts';

/** Usage text of `tabrl forward`. */
const FORWARD_USAGE = `Usage: tabrl forward <model-dir | ${shippedModelIds().join(' | ')}> --tokens 1,2,3 [--backend cpu|cpu-reference|webgpu]

Runs the model in <model-dir> (config.json + model.safetensors, Llama/Qwen2/Qwen3), or a shipped
model (${shippedModelIds().join(', ')}), over the token ids and prints {"logits": [[...], ...]} as JSON, one row per position.

Options:
  --tokens IDS        comma-separated token ids (required)
  --backend NAME      cpu (default; the fast CPU backend, WASM SIMD on every core), cpu-reference
                      (the plain-TypeScript oracle, slow on large models) or webgpu`;

/** Runs `tabrl forward`; returns the exit code. */
export async function runForward(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    {
      args: argv,
      allowPositionals: true,
      options: {
        tokens: { type: 'string' },
        backend: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    { '--model': 'the model folder is the first argument: tabrl forward <model-dir> --tokens 1,2,3' },
  );
  if (values.help) {
    console.log(FORWARD_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (spec === undefined || positionals.length > 1) throw new CliError(`give exactly one model folder\n\n${FORWARD_USAGE}`, 2);
  if (spec === 'tiny')
    throw new CliError(
      `it runs a model folder; "tiny" has none (its weights are made from a seed): give a shipped model (${shippedModelIds().join(', ')}) or a folder, or sample tiny with tabrl generate tiny`,
      2,
    );
  const modelDir = modelFolderOf(spec);
  if (values.tokens === undefined) throw new CliError(`--tokens is required (e.g. --tokens 1,2,3)\n\n${FORWARD_USAGE}`, 2);
  const tokens = values.tokens.split(',').map((text) => text.trim());
  if (tokens.some((text) => !/^\d+$/.test(text))) throw new CliError(`--tokens must be comma-separated non-negative integers, got "${values.tokens}"`, 2);
  const ids = Int32Array.from(tokens, Number);
  const backendName = parseBackendName(values.backend);
  let model;
  try {
    model = await loadModelFolder(async (name) => new Uint8Array(await readFile(join(modelDir, name))), modelDir);
    checkFinite(model.tensors, `${modelDir}/model.safetensors`);
  } catch (error) {
    throw new CliError(errorMessage(error));
  }
  const V = model.config.vocab_size;
  const outside = [...ids].find((id) => id >= V);
  if (outside !== undefined) throw new CliError(`token ${outside} is outside the vocabulary of ${modelDir} (vocab_size ${V})`, 2);

  let logits: Float32Array; // (1, T, V)
  if (backendName === 'webgpu') {
    logits = await forwardOnWebGPU(model.config, model.tensors, ids);
  } else if (backendName === 'cpu') {
    const kernels = await createNodeWasmKernels(defaultThreadCount());
    try {
      const backend = await createFastCpuBackend(model.config, { tensors: model.tensors }, {}, kernels);
      logits = await backend.forward(ids, 1, ids.length);
      backend.dispose();
    } finally {
      kernels.dispose(); // stops the worker threads, which would keep the process alive
    }
  } else {
    const backend = await createCpuBackend(model.config, { tensors: model.tensors });
    logits = await backend.forward(ids, 1, ids.length);
    backend.dispose();
  }
  const rows: number[][] = [];
  for (let t = 0; t < ids.length; t++) rows.push(Array.from(logits.subarray(t * V, (t + 1) * V)));
  console.log(JSON.stringify({ logits: rows }));
  return 0;
}

/** Runs one forward pass on the WebGPU backend through Dawn (loaded lazily, so the cpu path never loads the native addon). */
async function forwardOnWebGPU(config: ModelConfig, tensors: NamedTensors, ids: Int32Array): Promise<Float32Array> {
  const [{ createNodeGPU }, { requestGPUDevice }, { createWebGPUBackend }] = await Promise.all([
    import('../gpu/webgpu/node-gpu.ts'),
    import('../gpu/webgpu/device.ts'),
    import('../gpu/webgpu/webgpu-backend.ts'),
  ]);
  let context;
  try {
    context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'tabrl forward' });
  } catch (error) {
    throw new CliError(`--backend webgpu: ${errorMessage(error)}`);
  }
  try {
    const backend = await createWebGPUBackend(context, config, { tensors }).catch((error: Error) => {
      throw new CliError(`--backend webgpu: ${error.message}`);
    });
    try {
      return await backend.forward(ids, 1, ids.length);
    } finally {
      backend.dispose();
    }
  } finally {
    context.device.destroy();
  }
}
