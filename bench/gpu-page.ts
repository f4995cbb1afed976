/**
 * The page of `npm run bench:gpu` (bench/gpu.ts opens it in headless Chromium after the kernel
 * page): sampling (the WebGPU decoder against the CPU decoder on the same weights, tokens drawn at
 * temperature 1), the training step against the jax-js peer (bench/train-peer.ts), and GPU memory
 * of a SmolLM2-135M-shaped LoRA GRPO step from buffer accounting (bench/memory-accounting.ts: the
 * listing from the backend's layouts, checked against tracked allocations of a model this adapter
 * can run; on a real GPU the SmolLM2-shaped step itself runs and its tracked peak is reported).
 * `?quick`: smaller cases for software adapters. Sets `window.benchResult`. Not a test.
 */
import { defaultDevice, init as initJax } from '@jax-js/jax';
import { createCpuDecoder } from '../src/gpu/inference/cpu-decoder.ts';
import { SMOLLM2_135M_CONFIG, TINY_CONFIG } from '../src/gpu/inference/presets.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../src/gpu/model/layout.ts';
import { isSoftwareAdapter, requestGPUDevice } from '../src/gpu/webgpu/device.ts';
import { kernelsFor } from '../src/gpu/webgpu/kernels.ts';
import { tuneMatmul } from '../src/gpu/webgpu/matmul-tuning.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../src/gpu/webgpu/webgpu-decoder.ts';
import { largestBufferBytes, totalBytes, trackBufferMemory, trainingStepBuffers, type StepShape } from './memory-accounting.ts';
import { estimatePeakF32 } from './peak.ts';
import { measure } from './sample-measure.ts';
import { compareTrainStep } from './train-peer.ts';

const QUICK = new URLSearchParams(location.search).has('quick');

const log = (line: string): void => {
  const element = document.getElementById('log')!;
  element.textContent += `\n${line}`;
};

const LORA: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };

async function main(): Promise<unknown> {
  const context = await requestGPUDevice({ label: 'bench:gpu' });
  const tracker = trackBufferMemory(context.device);
  const software = isSoftwareAdapter(context.adapter);
  const choice = await tuneMatmul(kernelsFor(context));
  log(`adapter ${JSON.stringify(context.adapter)}; matmul ${JSON.stringify(choice)}`);
  await initJax('webgpu');
  defaultDevice('webgpu');

  // sampling: WebGPU decoder vs the CPU decoder on the same weights
  const smolLayers = QUICK ? 2 : SMOLLM2_135M_CONFIG.num_hidden_layers;
  const cases: Array<{ name: string; config: ModelConfig; prompt: number; steps: number; batches: number[]; peer: boolean }> = [
    { name: 'tiny', config: TINY_CONFIG, prompt: 64, steps: QUICK ? 8 : 32, batches: QUICK ? [1, 8] : [1, 8, 32], peer: true },
    {
      name: `SmolLM2-135M shapes, ${smolLayers}/${SMOLLM2_135M_CONFIG.num_hidden_layers} layers`,
      config: { ...SMOLLM2_135M_CONFIG, num_hidden_layers: smolLayers },
      prompt: 32,
      steps: QUICK ? 2 : 16,
      batches: QUICK ? [8] : [1, 8, 32],
      peer: QUICK, // the CPU decoder at 30 layers takes minutes per row
    },
  ];
  const params = { temperature: 1 };
  const sample = [];
  for (const c of cases) {
    const backend = await createWebGPUBackend(context, c.config, { seed: 1 });
    const gpu = await createWebGPUDecoder(backend);
    const cpu = c.peer ? await createCpuDecoder(backend) : null;
    if (cpu) await measure(cpu, 1, c.prompt, 1, 98, params);
    for (const B of c.batches) {
      await measure(gpu, B, c.prompt, 1, 99, params);
      const ours = await measure(gpu, B, c.prompt, c.steps, 1, params);
      const peer = cpu ? await measure(cpu, B, c.prompt, Math.min(c.steps, 4), 1, params) : null;
      sample.push({ model: c.name, B, prompt: c.prompt, steps: c.steps, webgpu: ours, cpu: peer, decodeRatio: peer ? ours.decode / peer.decode : null });
      log(`sample ${c.name} B=${B}: decode ${ours.decode.toFixed(1)} tok/s (cpu ${peer?.decode.toFixed(1) ?? '-'})`);
    }
    gpu.dispose();
    cpu?.dispose();
    backend.dispose();
  }

  // training step against jax-js
  const trainPeer = await compareTrainStep(context, 'tiny (full fine-tuning)', TINY_CONFIG, QUICK ? 8 : 16, QUICK ? 16 : 32, QUICK ? 3 : 5);
  log(`train step: ours ${trainPeer.oursMs.toFixed(1)} ms, jax-js ${trainPeer.jaxMs.toFixed(1)} ms`);

  // memory: the listing for SmolLM2-135M + LoRA r16, checked against tracked allocations
  const alignment = context.device.limits.minStorageBufferOffsetAlignment / 4;
  const smolShape: StepShape = { lora: LORA, frozenWeightsF16: context.features.shaderF16, activationsF16: context.features.shaderF16, B: 8, T: 256, sampleSequences: 16, sampleTokens: 256 };
  const limits = { maxBufferSize: context.device.limits.maxBufferSize, maxStorageBufferBindingSize: context.device.limits.maxStorageBufferBindingSize };
  const smolItems = trainingStepBuffers(SMOLLM2_135M_CONFIG, smolShape, alignment, limits);
  const checkConfig = QUICK ? TINY_CONFIG : SMOLLM2_135M_CONFIG;
  // the check runs a step at B 4 × T 128 (B 8 × T 256 on a software adapter takes many minutes: npm run bench:memory runs it in Node)
  const checkShape: StepShape = QUICK ? { ...smolShape, lora: { ...LORA, rank: 8 }, frozenWeightsF16: false, activationsF16: false, B: 4, T: 32 } : { ...smolShape, B: 4, T: 128 };
  const listed = totalBytes(trainingStepBuffers(checkConfig, { ...checkShape, sampleSequences: 0, sampleTokens: 0 }, alignment, limits));
  tracker.resetPeak();
  const before = tracker.liveBytes();
  const backend = await createWebGPUBackend(context, checkConfig, { seed: 2 }, { lora: checkShape.lora, frozenWeightsF16: checkShape.frozenWeightsF16, activationsF16: checkShape.activationsF16 === true });
  const N = checkShape.B * checkShape.T;
  const ids = Int32Array.from({ length: N }, (_, i) => (i * 7) % checkConfig.vocab_size);
  await backend.zeroGrad();
  await backend.backward(ids, ids, new Float32Array(N).fill(-1 / N), checkShape.B, checkShape.T, 1);
  await backend.step({ lr: 1e-4, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
  const tracked = tracker.peakBytes() - before;
  const trackedLargest = tracker.largestBytes();
  backend.dispose();
  const memory = {
    model: `SmolLM2-135M shapes, LoRA r16 (all 7 projections), 30 layers${smolShape.frozenWeightsF16 ? ', f16 frozen weights and activations (shader-f16)' : ''}`,
    shape: smolShape,
    items: smolItems,
    totalBytes: totalBytes(smolItems),
    largestBufferBytes: largestBufferBytes(smolItems),
    check: { model: QUICK ? 'tiny, LoRA r8, B 4 × T 32' : 'SmolLM2-135M shapes, LoRA r16, B 4 × T 128', listedBytes: listed, trackedPeakBytes: tracked, trackedLargestBufferBytes: trackedLargest },
  };
  log(`memory: SmolLM2 LoRA step ${(memory.totalBytes / 2 ** 20).toFixed(1)} MiB listed; check listed ${listed} vs tracked ${tracked}`);

  return {
    adapter: context.adapter,
    software,
    features: context.features,
    hardwareConcurrency: navigator.hardwareConcurrency,
    peak: estimatePeakF32(context.adapter, navigator.hardwareConcurrency),
    matmulChoice: choice,
    quick: QUICK,
    sample,
    trainPeer,
    memory,
  };
}

const target = window as unknown as { benchResult?: unknown; benchError?: string };
main().then(
  (result) => {
    target.benchResult = result;
    log('done');
  },
  (error: unknown) => {
    target.benchError = error instanceof Error ? `${error.message}\n${error.stack}` : String(error);
    log(`failed: ${target.benchError}`);
  },
);
