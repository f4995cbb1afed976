/**
 * `npx tsx bench/train-kl.ts`: what GRPO's KL penalty costs per micro-batch on WebGPU (Dawn). It times,
 * on one (B, T) batch, the policy's log-probs, the reference's (`{ weights: 'reference' }`: LoRA
 * switched off, or tiny's frozen copy) and the backward pass, median of --repeats calls each, for the
 * tiny preset and SmolLM2-135M's shapes with LoRA r16 (first --layers layers on a software adapter).
 * A KL step adds one reference forward to the update's logprobs + backward. Prints a table and one JSON line.
 */
import { parseArgs } from 'node:util';
import { SMOLLM2_135M_CONFIG, TINY_CONFIG } from '../src/gpu/inference/presets.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../src/gpu/model/layout.ts';
import { requestGPUDevice } from '../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';

const { values } = parseArgs({ options: { layers: { type: 'string' }, repeats: { type: 'string' }, batch: { type: 'string' }, tokens: { type: 'string' } } });
const repeats = Number(values.repeats ?? 5);
const [B, T] = [Number(values.batch ?? 8), Number(values.tokens ?? 40)]; // one micro-batch of GRPO's default size
const context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'bench:train-kl' });
const device = `webgpu (${context.adapter.vendor} ${context.adapter.architecture}${context.adapter.isFallbackAdapter ? ', software' : ''})`;
const smolLayers = Number(values.layers ?? (context.adapter.isFallbackAdapter ? 2 : SMOLLM2_135M_CONFIG.num_hidden_layers));

const CASES: Array<{ name: string; config: ModelConfig; lora: LoraConfig | null }> = [
  { name: 'tiny (full fine-tuning, frozen copy)', config: TINY_CONFIG, lora: null },
  { name: `SmolLM2-135M shapes, ${smolLayers}/${SMOLLM2_135M_CONFIG.num_hidden_layers} layers, LoRA r16 (adapters off)`, config: { ...SMOLLM2_135M_CONFIG, num_hidden_layers: smolLayers }, lora: { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] } },
];

/** Median wall time in ms of `repeats` calls of `run`, after one warm-up call (pipeline compilation). */
async function time(run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const results = [];
for (const benchCase of CASES) {
  const backend = await createWebGPUBackend(context, benchCase.config, { seed: 1 }, { lora: benchCase.lora });
  if (benchCase.lora === null) await backend.setReference(await backend.getParameters());
  const ids = new Int32Array(B * T).map((_, i) => (i * 7) % 256);
  const targets = ids.map((_, i) => ids[(i + 1) % ids.length]!);
  const weights = new Float32Array(B * T).fill(1 / (B * T));
  const policyMs = await time(() => backend.logprobs(ids, targets, B, T, 1));
  const referenceMs = await time(() => backend.logprobs(ids, targets, B, T, 1, { weights: 'reference' }));
  const backwardMs = await time(() => backend.backward(ids, targets, weights, B, T, 1));
  results.push({ case: benchCase.name, policyMs, referenceMs, backwardMs, klShareOfUpdate: referenceMs / (policyMs + backwardMs), referenceBytes: backend.referenceBytes(), parameterBytes: backend.parameterBytes() });
  console.error(`  ${benchCase.name}: done`);
  backend.dispose();
}

console.log(`adapter: ${device}; one micro-batch (B, T) = (${B}, ${T}), median of ${repeats} calls after a warm-up\n`);
console.log('| model | policy log-probs ms | reference log-probs ms | backward ms | KL adds to the update | reference memory |');
console.log('|---|---|---|---|---|---|');
for (const r of results) {
  console.log(`| ${r.case} | ${r.policyMs.toFixed(0)} | ${r.referenceMs.toFixed(0)} | ${r.backwardMs.toFixed(0)} | ${(100 * r.klShareOfUpdate).toFixed(0)} % | ${(r.referenceBytes / 1024).toFixed(1)} KiB |`);
}
console.log(JSON.stringify({ bench: 'train-kl', device, B, T, repeats, results }));
context.device.destroy();
