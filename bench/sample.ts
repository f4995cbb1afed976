/**
 * `npm run bench:sample`: prefill and decode tokens/s of the WebGPU decoder at batch 1, 8 and 32,
 * for the tiny preset and for a random-weight model with SmolLM2-135M's shapes (on a software
 * adapter only its first --layers layers, default 2), with the CPU decoder on the same weights in
 * the same run as the peer (ratio = WebGPU / CPU). WebGPU through Dawn in Node. Each (model, batch)
 * runs once untimed on WebGPU (pipelines, plans; the CPU peer warms up once per model), then B prompts of --prompt random tokens are prefilled as one
 * ragged batch and decoded for --steps steps, drawing each token at --temperature (default 1, the
 * lessons' setting; 0 = greedy): the WebGPU decoder on the GPU (prefillAndSample / decodeAndSample:
 * only the ids come back), the CPU decoder with the CPU sampler over its logits, one seeded generator
 * per sequence. Prints a table and one JSON line.
 * Not a test: on SwiftShader only the ratios mean anything.
 */
import { parseArgs } from 'node:util';
import { createCpuDecoder } from '../src/gpu/inference/cpu-decoder.ts';
import { SMOLLM2_135M_CONFIG, TINY_CONFIG } from '../src/gpu/inference/presets.ts';
import type { SamplingParams } from '../src/gpu/inference/sampler.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { requestGPUDevice } from '../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../src/gpu/webgpu/webgpu-decoder.ts';
import { measure } from './sample-measure.ts';

const { values } = parseArgs({ options: { layers: { type: 'string' }, batches: { type: 'string' }, temperature: { type: 'string', default: '1' }, 'skip-peer': { type: 'boolean', default: false } } });
const params: SamplingParams = { temperature: Number(values.temperature) };
const context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'bench:sample' });
const software = context.adapter.isFallbackAdapter;
const adapter = `${context.adapter.vendor} ${context.adapter.architecture}${software ? ' (software)' : ''}`;
const smolLayers = Number(values.layers ?? (software ? 2 : SMOLLM2_135M_CONFIG.num_hidden_layers));
const batches = (values.batches ?? '1,8,32').split(',').map(Number);

interface Case {
  name: string;
  config: ModelConfig;
  prompt: number; // tokens per prompt
  steps: number; // decode steps
}
const CASES: Case[] = [
  { name: 'tiny', config: TINY_CONFIG, prompt: 64, steps: 32 },
  { name: `SmolLM2-135M shapes, ${smolLayers}/${SMOLLM2_135M_CONFIG.num_hidden_layers} layers`, config: { ...SMOLLM2_135M_CONFIG, num_hidden_layers: smolLayers }, prompt: 32, steps: 8 },
];

const results = [];
for (const benchCase of CASES) {
  const backend = await createWebGPUBackend(context, benchCase.config, { seed: 1 });
  const gpu = await createWebGPUDecoder(backend);
  const cpu = !values['skip-peer'] ? await createCpuDecoder(backend) : null; // a snapshot of the same weights
  if (cpu) await measure(cpu, 1, benchCase.prompt, 1, 98, params); // JIT warm-up of the peer
  for (const B of batches) {
    const steps = benchCase.steps;
    await measure(gpu, B, benchCase.prompt, 1, 99, params); // records the plans of this batch's buckets
    const ours = await measure(gpu, B, benchCase.prompt, steps, 1, params);
    // The same decoder reading the (B, V) logits back and sampling on the CPU: what sampling on the GPU changes.
    await measure(gpu, B, benchCase.prompt, 1, 99, params, false);
    const hostSampled = await measure(gpu, B, benchCase.prompt, steps, 1, params, false);
    const peer = cpu ? await measure(cpu, B, benchCase.prompt, Math.min(steps, 8), 1, params) : null;
    const row = {
      model: benchCase.name,
      B,
      promptTokens: benchCase.prompt,
      decodeSteps: steps,
      webgpu: { prefillTokensPerSecond: ours.prefill, decodeTokensPerSecond: ours.decode },
      webgpuCpuSampling: { prefillTokensPerSecond: hostSampled.prefill, decodeTokensPerSecond: hostSampled.decode },
      cpu: peer ? { prefillTokensPerSecond: peer.prefill, decodeTokensPerSecond: peer.decode } : null,
      ratio: peer ? { prefill: ours.prefill / peer.prefill, decode: ours.decode / peer.decode } : null,
    };
    console.error(`  ${row.model} B=${B}: prefill ${ours.prefill.toFixed(0)} tok/s, decode ${ours.decode.toFixed(1)} tok/s`);
    results.push(row);
  }
  gpu.dispose();
  cpu?.dispose();
  backend.dispose();
}

const fmt = (x: number | undefined): string => (x === undefined ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
console.log(`adapter: webgpu ${adapter}; peer: CPU decoder (reference ops) and CPU sampler on the same weights; tokens drawn at temperature ${params.temperature}, random prompts\n`);
console.log('| model | B | prompt | webgpu prefill tok/s | cpu prefill tok/s | ratio | webgpu decode tok/s | webgpu decode, CPU sampling | cpu decode tok/s | ratio |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.model} | ${r.B} | ${r.promptTokens} | ${fmt(r.webgpu.prefillTokensPerSecond)} | ${fmt(r.cpu?.prefillTokensPerSecond)} | ${r.ratio ? r.ratio.prefill.toFixed(2) : '–'} ` +
      `| ${fmt(r.webgpu.decodeTokensPerSecond)} | ${fmt(r.webgpuCpuSampling.decodeTokensPerSecond)} | ${fmt(r.cpu?.decodeTokensPerSecond)} | ${r.ratio ? r.ratio.decode.toFixed(2) : '–'} |`,
  );
}
console.log(JSON.stringify({ bench: 'sample', adapter, date: new Date().toISOString(), temperature: params.temperature, smolLayers, results }));
context.device.destroy();
