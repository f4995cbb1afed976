/**
 * `npm run bench:sample`: prefill and decode tokens/s of the WebGPU decoder at batch 1, 8 and 32,
 * for the tiny preset and for a random-weight model with SmolLM2-135M's shapes (on a software
 * adapter only its first --layers layers, default 2), with the CPU decoder on the same weights in
 * the same run as the peer (ratio = WebGPU / CPU). WebGPU through Dawn in Node. Each (model, batch)
 * runs once untimed on WebGPU (pipelines, plans; the CPU peer warms up once per model), then B prompts of --prompt random tokens are prefilled as one
 * ragged batch and decoded for --steps steps, drawing each token at --temperature (default 1, the
 * lessons' setting; 0 = greedy): the WebGPU decoder on the GPU (prefillAndSample, then decodeSteps:
 * only the ids come back) as it ships (decodePath 'auto': the cached timed trial picks the fused
 * multi-step kernel or the layered plan per batch bucket; the table gives its rounds and wall time, its
 * cost at decoder start), and with each path forced; the CPU decoder
 * with the CPU sampler over its logits, one seeded generator per sequence. With --host-sampling also
 * the layered plan reading the (B, V) logits back for the CPU sampler. The peer decodes as many steps
 * as ours; ours, each forced path and the peer run interleaved in --rounds rounds (default 2) and each
 * keeps its best round, so that a burst of load from elsewhere does not decide a ratio. Prints a
 * table and one JSON line.
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
import { createWebGPUDecoder, type DecodePath } from '../src/gpu/webgpu/webgpu-decoder.ts';
import { measure } from './sample-measure.ts';

const { values } = parseArgs({ options: { layers: { type: 'string' }, batches: { type: 'string' }, rounds: { type: 'string', default: '2' }, temperature: { type: 'string', default: '1' }, 'skip-peer': { type: 'boolean', default: false }, 'host-sampling': { type: 'boolean', default: false } } });
const params: SamplingParams = { temperature: Number(values.temperature) };
const context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'bench:sample' });
const software = context.adapter.isFallbackAdapter;
const adapter = `${context.adapter.vendor} ${context.adapter.architecture}${software ? ' (software)' : ''}`;
const smolLayers = Number(values.layers ?? (software ? 2 : SMOLLM2_135M_CONFIG.num_hidden_layers));
const batches = (values.batches ?? '1,8,32').split(',').map(Number);
const rounds = Number(values.rounds);

/** Tokens per second of a measurement's two phases. */
interface Speed {
  prefill: number;
  decode: number;
}

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
  const forced = { fused: await createWebGPUDecoder(backend, { decodePath: 'fused' }), layered: await createWebGPUDecoder(backend, { decodePath: 'layered' }) };
  const cpu = !values['skip-peer'] ? await createCpuDecoder(backend) : null; // a snapshot of the same weights
  if (cpu) await measure(cpu, 1, benchCase.prompt, 1, 98, params); // JIT warm-up of the peer
  for (const B of batches) {
    const steps = benchCase.steps;
    await measure(gpu, B, benchCase.prompt, 1, 99, params); // the trial of this batch's bucket, and its plans
    const path: DecodePath = await gpu.pathFor(B);
    const trial = await gpu.pathTrial(B); // its cost at decoder start: rounds and wall time
    for (const which of ['fused', 'layered'] as const) await measure(forced[which], B, benchCase.prompt, 1, 99, params);
    if (values['host-sampling']) await measure(forced.layered, B, benchCase.prompt, 1, 99, params, false);
    // Rounds of (ours, each path forced, the peer), interleaved so that a change in the machine's load
    // hits all of them; every measurement keeps its best round. The peer decodes as many steps as ours.
    const best = (a: Speed | null, b: Speed): Speed => (a === null ? b : { prefill: Math.max(a.prefill, b.prefill), decode: Math.max(a.decode, b.decode) });
    let ours: Speed | null = null;
    let peer: Speed | null = null;
    let hostSampled: Speed | null = null; // the layered plan reading the (B, V) logits back and sampling on the CPU
    const byPath: Record<DecodePath, Speed | null> = { fused: null, layered: null };
    for (let round = 0; round < rounds; round++) {
      ours = best(ours, await measure(gpu, B, benchCase.prompt, steps, 1 + round, params));
      for (const which of ['fused', 'layered'] as const) byPath[which] = best(byPath[which], await measure(forced[which], B, benchCase.prompt, steps, 1 + round, params));
      if (values['host-sampling']) hostSampled = best(hostSampled, await measure(forced.layered, B, benchCase.prompt, steps, 1 + round, params, false));
      if (cpu) peer = best(peer, await measure(cpu, B, benchCase.prompt, steps, 1 + round, params));
    }
    if (ours === null || byPath.fused === null || byPath.layered === null) throw new Error('bench:sample: --rounds must be at least 1');
    const row = {
      model: benchCase.name,
      B,
      promptTokens: benchCase.prompt,
      decodeSteps: steps,
      path,
      trial: trial === null ? null : { rounds: trial.rounds, ms: trial.elapsedMs, fusedBestMs: Math.min(...trial.times.fused), layeredBestMs: Math.min(...trial.times.layered) },
      webgpu: { prefillTokensPerSecond: ours.prefill, decodeTokensPerSecond: ours.decode },
      fusedDecodeTokensPerSecond: gpu.fusedProblem === null ? byPath.fused.decode : null,
      layeredDecodeTokensPerSecond: byPath.layered.decode,
      webgpuCpuSampling: hostSampled ? { prefillTokensPerSecond: hostSampled.prefill, decodeTokensPerSecond: hostSampled.decode } : null,
      cpu: peer ? { prefillTokensPerSecond: peer.prefill, decodeTokensPerSecond: peer.decode } : null,
      ratio: peer ? { prefill: ours.prefill / peer.prefill, decode: ours.decode / peer.decode } : null,
    };
    console.error(`  ${row.model} B=${B}: prefill ${ours.prefill.toFixed(0)} tok/s, decode ${ours.decode.toFixed(1)} tok/s (${path}; fused ${byPath.fused.decode.toFixed(1)}, layered ${byPath.layered.decode.toFixed(1)}), cpu ${peer?.decode.toFixed(1)}`);
    results.push(row);
  }
  gpu.dispose();
  forced.fused.dispose();
  forced.layered.dispose();
  cpu?.dispose();
  backend.dispose();
}

const fmt = (x: number | undefined): string => (x === undefined ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
console.log(`adapter: webgpu ${adapter}; peer: CPU decoder (reference ops) and CPU sampler on the same weights; tokens drawn at temperature ${params.temperature}, random prompts\n`);
console.log('| model | B | prompt | webgpu prefill tok/s | cpu prefill tok/s | ratio | path | trial rounds, ms | webgpu decode tok/s | fused | layered | layered, CPU sampling | cpu decode tok/s | ratio |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.model} | ${r.B} | ${r.promptTokens} | ${fmt(r.webgpu.prefillTokensPerSecond)} | ${fmt(r.cpu?.prefillTokensPerSecond)} | ${r.ratio ? r.ratio.prefill.toFixed(2) : '–'} ` +
      `| ${r.path} | ${r.trial ? `${r.trial.rounds}, ${r.trial.ms.toFixed(0)}` : '–'} | ${fmt(r.webgpu.decodeTokensPerSecond)} | ${fmt(r.fusedDecodeTokensPerSecond ?? undefined)} | ${fmt(r.layeredDecodeTokensPerSecond)} | ${fmt(r.webgpuCpuSampling?.decodeTokensPerSecond)} ` +
      `| ${fmt(r.cpu?.decodeTokensPerSecond)} | ${r.ratio ? r.ratio.decode.toFixed(2) : '–'} |`,
  );
}
console.log(JSON.stringify({ bench: 'sample', adapter, date: new Date().toISOString(), temperature: params.temperature, smolLayers, rounds, results }));
context.device.destroy();
