/**
 * A diagnostic, not a benchmark of the product: what Dawn's bounds checks ("robustness": Tint clamps
 * every index and Vulkan's robustBufferAccess is enabled) cost the WebGPU decoder on this adapter.
 * Two Dawn instances in one process, one default and one with `disable_robustness` (browsers cannot
 * turn robustness off), each with its own backend (the same seed, so the same weights), decode tiny
 * (64-token random prompts, 32 steps at temperature 1) on each path forced, with the CPU decoder as
 * the peer; the setups run interleaved in --rounds rounds and each keeps its best round. The second
 * instance of a process decodes the layered path faster even with identical flags (measured:
 * Node + Dawn's one-submit-per-step path is sensitive to it), so run it with both --order values and
 * read the fused column. Usage: npx tsx bench/sample-robustness.ts [--order default-first|robust-off-first] [--batches 1,8,32] [--rounds 3]
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { create, globals } from 'webgpu';
import { createCpuDecoder } from '../src/gpu/inference/cpu-decoder.ts';
import type { Decoder } from '../src/gpu/inference/decoder.ts';
import { TINY_CONFIG } from '../src/gpu/inference/presets.ts';
import { requestGPUDevice } from '../src/gpu/webgpu/device.ts';
import { SWIFTSHADER_ICD } from '../src/gpu/webgpu/node-gpu.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';
import { createWebGPUDecoder } from '../src/gpu/webgpu/webgpu-decoder.ts';
import { measure } from './sample-measure.ts';

const { values } = parseArgs({ options: { order: { type: 'string', default: 'default-first' }, batches: { type: 'string', default: '1,8,32' }, rounds: { type: 'string', default: '3' } } });
if (process.env.VK_ICD_FILENAMES === undefined && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
Object.assign(globalThis, globals);
const FLAGS = { default: [], 'robust-off': ['enable-dawn-features=allow_unsafe_apis,disable_robustness'] } as const;
const names = values.order === 'robust-off-first' ? (['robust-off', 'default'] as const) : (['default', 'robust-off'] as const);
const instances: GPU[] = []; // Dawn's GPU objects must stay reachable
const setups: Array<{ name: string; fused: Decoder; layered: Decoder }> = [];
let cpu: Decoder | null = null;
for (const name of names) {
  const gpu = create([...FLAGS[name]]);
  instances.push(gpu);
  const context = await requestGPUDevice({ gpu, label: `robustness ${name}` });
  const backend = await createWebGPUBackend(context, TINY_CONFIG, { seed: 1 });
  setups.push({ name, fused: await createWebGPUDecoder(backend, { decodePath: 'fused' }), layered: await createWebGPUDecoder(backend, { decodePath: 'layered' }) });
  cpu ??= await createCpuDecoder(backend);
}
const params = { temperature: 1 };
const prompt = 64;
const steps = 32;
await measure(cpu!, 1, prompt, 1, 98, params); // JIT warm-up of the peer
for (const B of values.batches.split(',').map(Number)) {
  for (const setup of setups) for (const path of ['fused', 'layered'] as const) await measure(setup[path], B, prompt, 1, 99, params);
  const best = new Map<string, number>();
  const keep = (key: string, tokensPerSecond: number): void => void best.set(key, Math.max(best.get(key) ?? 0, tokensPerSecond));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const setup of setups) for (const path of ['fused', 'layered'] as const) keep(`${setup.name} ${path}`, (await measure(setup[path], B, prompt, steps, 1 + round, params)).decode);
    keep('cpu', (await measure(cpu!, B, prompt, steps, 1 + round, params)).decode);
  }
  const ratio = (path: string): string => (best.get(`robust-off ${path}`)! / best.get(`default ${path}`)!).toFixed(2);
  console.log(`B=${B} (${values.order}) decode tok/s: ${[...best].map(([key, value]) => `${key} ${value.toFixed(0)}`).join(', ')}; robust-off / default: fused ${ratio('fused')}, layered ${ratio('layered')}`);
}
process.exit(0); // the Dawn instances hold the event loop open
