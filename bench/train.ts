/**
 * `npm run bench:train`: GRPO step time split into sampling (rollouts through LocalChatClient),
 * scoring (the rubric, summed over rollouts) and the update (log-probs, backward, AdamW), for the
 * tiny preset (full fine-tuning) and for SmolLM2-135M's shapes with LoRA rank 16 (random weights; on
 * a software adapter only its first --layers layers, default 2). WebGPU through Dawn by default.
 * `--kl-beta B` adds GRPO's KL penalty (the reference: LoRA switched off, or for tiny a frozen copy),
 * so two runs give its cost per step; `--cases tiny` or `--cases smol` runs one case. Then, on
 * WebGPU, the peer: one training step of the tiny model (forward + backward + clip + AdamW at
 * --peer-batch × --peer-tokens, default 16 × 32) through our backend and through the same model
 * written with jax-js on the same adapter (bench/train-peer.ts), interleaved, "jax-js step / our
 * step" (`--no-peer` skips it, `--peer-only` runs only it). Prints tables and one JSON line.
 */
import { parseArgs } from 'node:util';
import { loadBuiltinEnvironment } from '../src/envs/builtin/index.ts';
import { ByteTokenizer } from '../src/gpu/io/byte-tokenizer.ts';
import { LocalChatClient } from '../src/gpu/inference/local-chat-client.ts';
import { SMOLLM2_135M_CONFIG, TINY_CONFIG } from '../src/gpu/inference/presets.ts';
import type { ModelBackend } from '../src/gpu/model/backend.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { createCpuBackend } from '../src/gpu/model/cpu-backend.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../src/gpu/model/layout.ts';
import { requestGPUDevice } from '../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';
import { environmentRollouts, GrpoTrainer, type GrpoStepMetrics } from '../src/rl/grpo-trainer.ts';
import { initJaxOnNode } from './node-jax.ts';
import { compareTrainStep, type TrainPeerResult } from './train-peer.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string' }, layers: { type: 'string' }, steps: { type: 'string' }, 'kl-beta': { type: 'string' }, cases: { type: 'string' },
    'no-peer': { type: 'boolean', default: false }, 'peer-only': { type: 'boolean', default: false }, 'peer-batch': { type: 'string', default: '16' }, 'peer-tokens': { type: 'string', default: '32' }, 'peer-reps': { type: 'string', default: '5' },
  },
});
const klBeta = Number(values['kl-beta'] ?? 0);
if (!(klBeta >= 0)) throw new Error(`--kl-beta must be a number ≥ 0, got ${values['kl-beta']}`);
const backendName = values.backend ?? 'webgpu';
const steps = Number(values.steps ?? 3);
const nodeGPU = backendName === 'webgpu' ? createNodeGPU() : null;
const context = nodeGPU ? await requestGPUDevice({ gpu: nodeGPU, label: 'bench:train' }) : null;
const device = context ? `webgpu (${context.adapter.vendor} ${context.adapter.architecture}${context.adapter.isFallbackAdapter ? ', software' : ''})` : 'cpu (reference backend)';
const smolLayers = Number(values.layers ?? (context?.adapter.isFallbackAdapter === false ? SMOLLM2_135M_CONFIG.num_hidden_layers : 2));

interface Case {
  name: string;
  config: ModelConfig;
  lora: LoraConfig | null;
}
const ALL_CASES: Array<Case & { id: string }> = [
  { id: 'tiny', name: 'tiny (full fine-tuning)', config: TINY_CONFIG, lora: null },
  { id: 'smol', name: `SmolLM2-135M shapes, ${smolLayers}/${SMOLLM2_135M_CONFIG.num_hidden_layers} layers, LoRA r16`, config: { ...SMOLLM2_135M_CONFIG, num_hidden_layers: smolLayers }, lora: { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] } },
];
const CASES = values['peer-only'] ? [] : values.cases === undefined ? ALL_CASES : ALL_CASES.filter((c) => values.cases!.split(',').includes(c.id));
if (CASES.length === 0 && !values['peer-only']) throw new Error(`--cases takes tiny, smol or both (comma-separated), got ${values.cases}`);

const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 8, numTasks: 100 });
const results = [];
for (const benchCase of CASES) {
  const backend: ModelBackend = context
    ? await createWebGPUBackend(context, benchCase.config, { seed: 1 }, { lora: benchCase.lora })
    : await createCpuBackend(benchCase.config, { seed: 1 }, { lora: benchCase.lora });
  const policy = new LocalChatClient({ backend, tokenizer: new ByteTokenizer(), defaultMaxTokens: 12 });
  const trainer = new GrpoTrainer(environmentRollouts(env, policy), backend, policy, {
    steps, tasksPerStep: 2, groupSize: 8, maxTokens: 12, schedule: { lr: 1e-4 }, maxAsync: 0, dropUninformativeGroups: false, klBeta,
  });
  const metrics: GrpoStepMetrics[] = [];
  await trainer.run({ onStep: (m) => { metrics.push(m); console.error(`  ${benchCase.name}: step ${m.step + 1}/${steps} ${(m.timings.stepMs / 1000).toFixed(2)} s`); } });
  const measured = metrics.slice(1); // the first step compiles pipelines
  const median = (pick: (m: GrpoStepMetrics) => number) => {
    const sorted = measured.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  };
  results.push({
    case: benchCase.name,
    stepMs: median((m) => m.timings.stepMs),
    sampleMs: median((m) => m.timings.sampleMs),
    scoringMs: median((m) => m.timings.scoringMs),
    updateMs: median((m) => m.timings.updateMs),
    sampledTokensPerSecond: median((m) => m.tokensPerSecond),
    tokensTrained: median((m) => m.tokensTrained),
  });
  backend.dispose();
}

console.log(`adapter: ${device}; ${steps} steps of 2 tasks × 8 completions × ≤12 tokens, KL β ${klBeta}, median of steps 2..${steps}\n`);
console.log('| model | step ms | sampling ms | scoring ms (summed) | update ms | sampled tok/s | trained tokens |');
console.log('|---|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.case} | ${r.stepMs.toFixed(0)} | ${r.sampleMs.toFixed(0)} | ${r.scoringMs.toFixed(1)} | ${r.updateMs.toFixed(0)} | ${r.sampledTokensPerSecond.toFixed(0)} | ${r.tokensTrained} |`);
let peer: TrainPeerResult | null = null;
if (nodeGPU && context && !values['no-peer']) {
  await initJaxOnNode(nodeGPU, context);
  peer = await compareTrainStep(context, 'tiny (full fine-tuning)', TINY_CONFIG, Number(values['peer-batch']), Number(values['peer-tokens']), Number(values['peer-reps']));
  console.log(`\ntraining step, ours vs jax-js (same model, weights and batch; forward + backward + clip + AdamW; median of ${values['peer-reps']} interleaved steps)\n`);
  console.log('| model | B × T | our step ms | jax-js step ms | jax-js / ours | objective ours / jax-js |');
  console.log('|---|---|---|---|---|---|');
  console.log(`| ${peer.model} | ${peer.B} × ${peer.T} | ${peer.oursMs.toFixed(1)} | ${peer.jaxMs.toFixed(1)} | ${peer.speedup.toFixed(2)} | ${peer.objective.ours.toFixed(6)} / ${peer.objective.jax.toFixed(6)} |`);
}
console.log(JSON.stringify({ bench: 'train', device, steps, klBeta, results, peer }));
context?.device.destroy();
