/**
 * `npm run bench:micro-batch`: the micro-batch `tabrl train --backend webgpu` chooses for a LoRA
 * r16 GRPO step, per model shape, sequence length T and adapter limits, from the backend's own
 * accounting (src/gpu/webgpu/step-memory.ts) under the default memory budget — or `--budget MiB`.
 * Pure accounting: no device is created (bench:memory checks the accounting against a tracked peak).
 * Prints a table and one `{"bench":"micro-batch"}` JSON line. `--T 256,512,1024`, `--max 256`
 * (the most sequences asked for), `--f16` (f16 frozen weights and activations, as the tab's engine
 * runs a real model where the adapter has shader-f16; default f32). Not a test.
 */
import { parseArgs } from 'node:util';
import { QWEN2_5_0_5B_CONFIG, SMOLLM2_135M_CONFIG } from '../src/gpu/inference/presets.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../src/gpu/model/layout.ts';
import type { BufferLimits } from '../src/gpu/webgpu/activations.ts';
import { chooseMicroBatch, defaultMemoryBudget } from '../src/gpu/webgpu/step-memory.ts';

const { values } = parseArgs({ options: { T: { type: 'string', default: '256,512,1024' }, max: { type: 'string', default: '256' }, budget: { type: 'string' }, f16: { type: 'boolean', default: false } } });

const MiB = 2 ** 20;
const LORA: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };
const MODELS = [
  { name: 'SmolLM2-135M', config: SMOLLM2_135M_CONFIG },
  { name: 'Qwen2.5-0.5B', config: QWEN2_5_0_5B_CONFIG },
];
const LIMITS: Array<{ name: string; limits: BufferLimits }> = [
  { name: 'WebGPU defaults (256 / 128 MiB)', limits: { maxBufferSize: 256 * MiB, maxStorageBufferBindingSize: 128 * MiB } },
  { name: 'SwiftShader (1 / 1 GiB)', limits: { maxBufferSize: 1024 * MiB, maxStorageBufferBindingSize: 1024 * MiB } },
];
const lengths = values.T.split(',').map(Number);
const maxMicroBatch = Number(values.max);

const rows: Array<Record<string, unknown>> = [];
const f16 = values.f16;
const precision = f16 ? 'f16 weights and activations' : 'f32 base';
console.log(`| model (LoRA r16, ${precision}) | limits | budget MiB | T | micro-batch | checkpointed | state MiB | step MiB | why not one more |\n|---|---|---|---|---|---|---|---|---|`);
for (const model of MODELS) {
  for (const { name, limits } of LIMITS) {
    const budgetBytes = values.budget === undefined ? defaultMemoryBudget(limits) : Number(values.budget) * MiB;
    for (const T of lengths) {
      try {
        const choice = chooseMicroBatch(model.config, T, { lora: LORA, activationCheckpointing: 'auto', limits, alignment: 64, budgetBytes, maxMicroBatch, frozenWeightsF16: f16, activationsF16: f16 });
        const row = { model: model.name, limits: name, budgetMiB: budgetBytes / MiB, T, B: choice.B, checkpointing: choice.plan.checkpointing, stateMiB: choice.stateBytes / MiB, stepMiB: choice.stepBytes / MiB, reason: choice.reason };
        rows.push(row);
        console.log(`| ${model.name} | ${name} | ${row.budgetMiB} | ${T} | ${choice.B} | ${choice.plan.checkpointing ? 'yes' : 'no'} | ${row.stateMiB.toFixed(0)} | ${row.stepMiB.toFixed(0)} | ${choice.reason} |`);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        rows.push({ model: model.name, limits: name, budgetMiB: budgetBytes / MiB, T, B: null, reason });
        console.log(`| ${model.name} | ${name} | ${budgetBytes / MiB} | ${T} | none | | | | ${reason} |`);
      }
    }
  }
}
console.log(JSON.stringify({ bench: 'micro-batch', date: new Date().toISOString(), lora: 'r16, all 7 projections', precision, maxMicroBatch, rows }));
