/**
 * `npm run bench:memory`: GPU memory of a real-shaped LoRA training step in Node + Dawn, two ways.
 * The listing (bench/memory-accounting.ts: the buffers the backend allocates at that shape) and the
 * tracked peak: the backend created at the model's real shapes with random weights (no downloads),
 * one backward and one AdamW step at B × T, every createBuffer counted (live, peak, largest single
 * buffer). Cases: SmolLM2-135M and Qwen2.5-0.5B on WebGPU's default limits (256 MiB per buffer,
 * 128 MiB per binding: what every adapter grants; Qwen's 151,936 × 896 embedding, 519 MiB in f32,
 * lies in row chunks within one binding each), and `qwen-adapter`: Qwen2.5-0.5B on the adapter's own
 * limits (its embedding whole where they allow). f32 base weights unless the adapter has
 * shader-f16 and `--f16` is given; f32 activations unless `--f16-activations` (checkpointed layer
 * outputs stored as f16, as the engine runs them where the adapter has shader-f16). Prints a table per case and one `{"bench":"memory"}` JSON line each.
 * `--cases smol,qwen`, `--B 8 --T 256`, `--layers N` (the first N layers only: a quicker, smaller run,
 * said in the output), `--checkpointing auto|on|off` (activation checkpointing; default auto: on only
 * where the plain activations pass 256 MiB, which a small --B/--T does not), `--allocate-only` (create the backend and the step's buffers and plans, run
 * nothing: a real-shaped step takes many minutes on a loaded software adapter). Not a test.
 */
import { parseArgs } from 'node:util';
import { QWEN2_5_0_5B_CONFIG, SMOLLM2_135M_CONFIG } from '../src/gpu/inference/presets.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../src/gpu/model/layout.ts';
import { requestGPUDevice } from '../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';
import { largestBufferBytes, totalBytes, trackBufferMemory, trainingStepBuffers } from './memory-accounting.ts';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: 'smol,qwen' },
    B: { type: 'string', default: '8' },
    T: { type: 'string', default: '256' },
    layers: { type: 'string' },
    f16: { type: 'boolean', default: false },
    'f16-activations': { type: 'boolean', default: false },
    checkpointing: { type: 'string', default: 'auto' },
    'allocate-only': { type: 'boolean', default: false },
  },
});

const LORA: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };
const CASES: Record<string, { name: string; config: ModelConfig; defaultLimits: boolean }> = {
  smol: { name: 'SmolLM2-135M', config: SMOLLM2_135M_CONFIG, defaultLimits: true },
  qwen: { name: 'Qwen2.5-0.5B', config: QWEN2_5_0_5B_CONFIG, defaultLimits: true },
  'qwen-adapter': { name: 'Qwen2.5-0.5B', config: QWEN2_5_0_5B_CONFIG, defaultLimits: false },
};
const MiB = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

async function runCase(key: string, B: number, T: number): Promise<void> {
  const spec = CASES[key];
  if (spec === undefined) throw new Error(`unknown case ${key}: use ${Object.keys(CASES).join(', ')}`);
  const layers = values.layers === undefined ? spec.config.num_hidden_layers : Number(values.layers);
  const config: ModelConfig = { ...spec.config, num_hidden_layers: layers };
  const context = await requestGPUDevice({ gpu: createNodeGPU(), label: `bench:memory ${key}`, defaultLimits: spec.defaultLimits });
  const f16 = values.f16 && context.features.shaderF16;
  const activationsF16 = values['f16-activations'];
  const { maxBufferSize, maxStorageBufferBindingSize, minStorageBufferOffsetAlignment } = context.device.limits;
  const limits = { maxBufferSize, maxStorageBufferBindingSize };
  const checkpointing = { auto: 'auto' as const, on: true, off: false }[values.checkpointing];
  if (checkpointing === undefined) throw new Error(`--checkpointing takes auto, on or off, not ${values.checkpointing}`);
  const items = trainingStepBuffers(config, { lora: LORA, frozenWeightsF16: f16, activationsF16, activationCheckpointing: checkpointing, B, T, sampleSequences: 0, sampleTokens: 0 }, minStorageBufferOffsetAlignment / 4, limits);
  const title = `${spec.name} shapes${layers === spec.config.num_hidden_layers ? '' : `, first ${layers} of ${spec.config.num_hidden_layers} layers`}, LoRA r16 (all 7 projections), ${f16 ? 'f16' : 'f32'} base, ${activationsF16 ? 'f16' : 'f32'} activations, random weights`;
  console.log(`\n| ${title}, B ${B} × T ${T} | MiB |\n|---|---|`);
  for (const item of items) console.log(`| ${item.what} | ${MiB(item.bytes)} |`);
  console.log(`| **listed total** | **${MiB(totalBytes(items))}** |\n| largest buffer listed | ${MiB(largestBufferBytes(items))} |`);
  const tracker = trackBufferMemory(context.device);
  const started = performance.now();
  const backend = await createWebGPUBackend(context, config, { seed: 1 }, { lora: LORA, frozenWeightsF16: f16, activationsF16, activationCheckpointing: checkpointing });
  const created = performance.now();
  const N = B * T;
  if (values['allocate-only']) {
    backend.prepare(B, T);
    await context.device.queue.onSubmittedWorkDone();
    const batch = backend.batchMemory()!;
    const allocated = { bench: 'memory', date: new Date().toISOString(), model: title, run: 'allocated only (buffers and recorded plans of the step; nothing run)', adapter: context.adapter, limits: { ...limits, requested: spec.defaultLimits ? 'WebGPU defaults' : 'adapter' }, B, T, checkpointing: batch.checkpointing, groupSequences: batch.groupSequences, lmHeadRows: batch.lmHeadRows, items, totalBytes: totalBytes(items), listedLargestBufferBytes: largestBufferBytes(items), trackedPeakBytes: tracker.peakBytes(), largestBufferBytes: tracker.largestBytes(), createSeconds: (created - started) / 1000 };
    backend.dispose();
    context.device.destroy();
    console.log(`allocated only: tracked peak ${MiB(allocated.trackedPeakBytes)} MiB, largest buffer ${MiB(allocated.largestBufferBytes)} MiB; checkpointing ${batch.checkpointing}, ${batch.groupSequences} sequences per layer group, LM head ${batch.lmHeadRows} tokens per chunk`);
    console.log(JSON.stringify(allocated));
    return;
  }
  const ids = Int32Array.from({ length: N }, (_, i) => (i * 7919) % config.vocab_size);
  const targets = Int32Array.from({ length: N }, (_, i) => (i * 104729 + 1) % config.vocab_size);
  await backend.zeroGrad();
  const objective = await backend.backward(ids, targets, new Float32Array(N).fill(-1 / N), B, T, 1);
  const { gradNorm } = await backend.step({ lr: 1e-4, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
  const stepSeconds = (performance.now() - created) / 1000;
  const batch = backend.batchMemory()!;
  const result = {
    bench: 'memory',
    date: new Date().toISOString(),
    model: title,
    adapter: context.adapter,
    limits: { ...limits, requested: spec.defaultLimits ? 'WebGPU defaults' : 'adapter' },
    B,
    T,
    run: 'one backward + AdamW step',
    checkpointing: batch.checkpointing,
    groupSequences: batch.groupSequences,
    lmHeadRows: batch.lmHeadRows,
    items,
    totalBytes: totalBytes(items),
    listedLargestBufferBytes: largestBufferBytes(items),
    trackedPeakBytes: tracker.peakBytes(),
    largestBufferBytes: tracker.largestBytes(),
    createSeconds: (created - started) / 1000,
    stepSeconds,
    objective,
    gradNorm,
  };
  backend.dispose();
  context.device.destroy();
  console.log(
    `tracked peak ${MiB(result.trackedPeakBytes)} MiB, largest buffer ${MiB(result.largestBufferBytes)} MiB (listed ${MiB(result.listedLargestBufferBytes)}); ` +
      `limits ${MiB(maxBufferSize)} / ${MiB(maxStorageBufferBindingSize)} MiB (${result.limits.requested}); checkpointing ${batch.checkpointing}, LM head ${batch.lmHeadRows} tokens per chunk; ` +
      `create ${result.createSeconds.toFixed(1)} s, backward + AdamW step ${stepSeconds.toFixed(1)} s (adapter ${context.adapter.vendor} ${context.adapter.architecture}); grad norm ${gradNorm.toPrecision(4)}`,
  );
  console.log(JSON.stringify(result));
}

async function main(): Promise<void> {
  const [B, T] = [Number(values.B), Number(values.T)];
  for (const key of values.cases.split(',')) await runCase(key.trim(), B, T);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
