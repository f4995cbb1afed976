import { describe, expect, test } from 'vitest';
import { QWEN2_5_0_5B_CONFIG, SMOLLM2_135M_CONFIG } from '../../../src/gpu/inference/presets.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../../../src/gpu/model/layout.ts';
import type { BufferLimits } from '../../../src/gpu/webgpu/activations.ts';
import { batchMemoryPlan, bufferPastLimits, chooseMicroBatch, defaultMemoryBudget, lmHeadChunkSizes, modelStateMemory, storageBytes, type StepMemorySettings } from '../../../src/gpu/webgpu/step-memory.ts';

const MiB = 2 ** 20;
const LORA: LoraConfig = { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] };
/** WebGPU's default limits (what every adapter grants) and SwiftShader's (1 GiB each); both with a 256-byte offset alignment. */
const LIMITS: Record<string, BufferLimits> = {
  'WebGPU defaults': { maxBufferSize: 256 * MiB, maxStorageBufferBindingSize: 128 * MiB },
  SwiftShader: { maxBufferSize: 1024 * MiB, maxStorageBufferBindingSize: 1024 * MiB },
};

function settingsFor(limits: BufferLimits): StepMemorySettings {
  return { lora: LORA, activationCheckpointing: 'auto', limits, alignment: 64 };
}

/** Whether a B × T step fits, judged independently of the chooser: every buffer within the limits and state + batch within the budget. */
function fits(config: ModelConfig, B: number, T: number, limits: BufferLimits, budget: number): boolean {
  const settings = settingsFor(limits);
  const state = modelStateMemory(config, settings);
  const plan = batchMemoryPlan(config, B, T, settings);
  const bytes = [...state, ...plan.buffers].reduce((sum, buffer) => sum + buffer.bytes, 0);
  return bufferPastLimits([...state, ...plan.buffers], limits) === null && bytes <= budget;
}

describe('chooseMicroBatch on real shapes (LoRA r16, T 256)', () => {
  const cases: Array<[string, ModelConfig, string]> = [
    ['SmolLM2-135M', SMOLLM2_135M_CONFIG, 'WebGPU defaults'],
    ['SmolLM2-135M', SMOLLM2_135M_CONFIG, 'SwiftShader'],
    ['Qwen2.5-0.5B', QWEN2_5_0_5B_CONFIG, 'SwiftShader'],
  ];
  test.each(cases)('%s under %s limits: the chosen batch fits and one more does not', (_name, config, limitsName) => {
    const limits = LIMITS[limitsName]!;
    const budget = defaultMemoryBudget(limits);
    const choice = chooseMicroBatch(config, 256, { ...settingsFor(limits), budgetBytes: budget, maxMicroBatch: 256 });
    expect(choice.B).toBeGreaterThanOrEqual(1);
    expect(choice.B).toBeLessThan(256); // a limit stopped it, not the cap
    expect(fits(config, choice.B, 256, limits, budget)).toBe(true);
    expect(fits(config, choice.B + 1, 256, limits, budget)).toBe(false);
    expect(choice.stepBytes).toBeLessThanOrEqual(budget);
    expect(choice.stepBytes).toBe(choice.stateBytes + choice.plan.bytes);
    expect(choice.reason).toContain(`at ${choice.B + 1}:`);
    // a batch this large only fits with its activations checkpointed
    expect(choice.plan.checkpointing).toBe(true);
  });

  test('SmolLM2-135M under WebGPU defaults: the 1 GiB budget stops it, and a smaller budget picks a smaller batch', () => {
    const limits = LIMITS['WebGPU defaults']!;
    const choice = chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settingsFor(limits), budgetBytes: defaultMemoryBudget(limits), maxMicroBatch: 256 });
    expect(defaultMemoryBudget(limits)).toBe(1024 * MiB);
    expect(choice.reason).toContain('memory budget');
    const smaller = chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settingsFor(limits), budgetBytes: 800 * MiB, maxMicroBatch: 256 });
    expect(smaller.B).toBeLessThan(choice.B);
    expect(smaller.stepBytes).toBeLessThanOrEqual(800 * MiB);
  });

  test('stops at the most asked for when more would fit, and says so', () => {
    const limits = LIMITS.SwiftShader!;
    const choice = chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settingsFor(limits), budgetBytes: defaultMemoryBudget(limits), maxMicroBatch: 4 });
    expect(choice.B).toBe(4);
    expect(choice.reason).toBe('4 is the most asked for');
  });

  test('a forced micro-batch is checked: one that fits is kept, one that does not names the limit and the setting', () => {
    const limits = LIMITS['WebGPU defaults']!;
    const settings = { ...settingsFor(limits), budgetBytes: defaultMemoryBudget(limits), maxMicroBatch: 256 };
    expect(chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settings, forced: 2 }).B).toBe(2);
    const chosen = chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, settings).B;
    expect(() => chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settings, forced: chosen + 1 })).toThrow(/cannot fit at T 256: the step needs \d+ MiB .*past the memory budget of 1024 MiB; lower --micro-batch/);
    expect(() => chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settings, forced: 40 })).toThrow(/--micro-batch 40 cannot fit at T 256: the activations buffer needs 720 MiB, past this GPU's 256 MiB per buffer \(maxBufferSize\)/);
    // forced with checkpointing off, the plain activations pass the buffer limit
    expect(() => chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, { ...settings, activationCheckpointing: false, forced: 8 })).toThrow(/activations buffer needs \d+ MiB, past this GPU's 256 MiB per buffer \(maxBufferSize\).*turn on --activation-checkpointing/);
  });

  test('Qwen2.5-0.5B under WebGPU defaults: its embedding in row chunks within one binding each, so it trains in a budget that holds its state', () => {
    const limits = LIMITS['WebGPU defaults']!;
    // its 151,936 × 896 embedding is 519 MiB in f32: 5 row chunks of at most 128 MiB (maxStorageBufferBindingSize)
    const state = modelStateMemory(QWEN2_5_0_5B_CONFIG, settingsFor(limits));
    expect(bufferPastLimits(state, limits)).toBeNull();
    expect(Math.max(...state.map((buffer) => buffer.bindingBytes))).toBeLessThanOrEqual(128 * MiB);
    expect(lmHeadChunkSizes(QWEN2_5_0_5B_CONFIG, settingsFor(limits))).toEqual([37_448, 37_448, 37_448, 37_448, 2_144]);
    const choice = chooseMicroBatch(QWEN2_5_0_5B_CONFIG, 256, { ...settingsFor(limits), budgetBytes: 4096 * MiB, maxMicroBatch: 256 });
    expect(choice.B).toBeGreaterThanOrEqual(8);
    expect(fits(QWEN2_5_0_5B_CONFIG, choice.B, 256, limits, 4096 * MiB)).toBe(true);
    expect(fits(QWEN2_5_0_5B_CONFIG, choice.B + 1, 256, limits, 4096 * MiB)).toBe(false);
    expect(choice.plan.buffers.map((buffer) => buffer.label)).toContain('LM head vocabulary chunk');
    // the default 1 GiB budget is smaller than the model state (about 2 GiB): the error says to raise it
    expect(() => chooseMicroBatch(QWEN2_5_0_5B_CONFIG, 256, { ...settingsFor(limits), budgetBytes: defaultMemoryBudget(limits), maxMicroBatch: 64 })).toThrow(/not even one sequence of 256 tokens fits: the step needs \d+ MiB \(model state 20\d\d MiB .*raise --memory-budget/);
  });

  test('full fine-tuning of Qwen2.5-0.5B under WebGPU defaults cannot train at all, and the error says which buffer and limit', () => {
    const limits = LIMITS['WebGPU defaults']!;
    // trained weights lie in one buffer (AdamW runs over it): no row chunks
    expect(() => chooseMicroBatch(QWEN2_5_0_5B_CONFIG, 256, { ...settingsFor(limits), lora: null, budgetBytes: defaultMemoryBudget(limits), maxMicroBatch: 64 })).toThrow(/cannot train on this GPU: the base weights buffer needs 1885 MiB, past this GPU's 256 MiB per buffer \(maxBufferSize\); use LoRA/);
  });

  test('not even one sequence fits a budget below the model state: the error says to raise --memory-budget', () => {
    const limits = LIMITS.SwiftShader!;
    expect(() => chooseMicroBatch(QWEN2_5_0_5B_CONFIG, 256, { ...settingsFor(limits), budgetBytes: 1024 * MiB, maxMicroBatch: 64 })).toThrow(/not even one sequence of 256 tokens fits: .*raise --memory-budget/);
  });

  test('longer sequences get a smaller batch', () => {
    const limits = LIMITS.SwiftShader!;
    const settings = { ...settingsFor(limits), budgetBytes: defaultMemoryBudget(limits), maxMicroBatch: 256 };
    expect(chooseMicroBatch(SMOLLM2_135M_CONFIG, 1024, settings).B).toBeLessThan(chooseMicroBatch(SMOLLM2_135M_CONFIG, 256, settings).B);
  });
});

describe('f16 activations (activationsF16) in the accounting', () => {
  const limits = LIMITS['WebGPU defaults']!;
  const f16 = (settings: StepMemorySettings): StepMemorySettings => ({ ...settings, activationsF16: true });

  test('Qwen2.5-0.5B at B 8 × T 256: 23 of its 24 layer outputs as f16, 77 MiB less, and more than twice the micro-batch under WebGPU default buffers', () => {
    const [B, T] = [8, 256];
    const NC = B * T * QWEN2_5_0_5B_CONFIG.hidden_size;
    const plain = batchMemoryPlan(QWEN2_5_0_5B_CONFIG, B, T, settingsFor(limits));
    const half = batchMemoryPlan(QWEN2_5_0_5B_CONFIG, B, T, f16(settingsFor(limits)));
    expect([plain.checkpointing, plain.halfOutputs, half.checkpointing, half.halfOutputs]).toEqual([true, false, true, true]);
    const bytes = (plan: typeof plain, label: string): number => plan.buffers.find((buffer) => buffer.label === label)?.bytes ?? 0;
    expect(bytes(half, 'layer outputs (f16)')).toBe(23 * NC * 2); // 3.5 MiB each: already 256-byte aligned
    expect(bytes(plain, 'activations')).toBe(storageBytes(26 * NC + 2 * B * T)); // encoded, 24 outputs, lnf; lnf_rstd and logprobs (every slot 64-aligned)
    expect(bytes(half, 'activations')).toBe(storageBytes(3 * NC + 2 * B * T)); // encoded, the last output, lnf; the same two
    // the layer buffer gains an f32 input and output of its group (2 sequences); its gradients do not
    expect(bytes(half, "one layer's recomputed activations") - bytes(plain, "one layer's recomputed activations")).toBe((2 * 2 * NC) / B * 4);
    expect(bytes(half, "one layer's activation gradients")).toBe(bytes(plain, "one layer's activation gradients"));
    expect((plain.bytes - half.bytes) / MiB).toBeCloseTo(23 * 3.5 - 3.5, 5);

    const budget = { budgetBytes: 4096 * MiB, maxMicroBatch: 256 };
    const [f32Choice, f16Choice] = [chooseMicroBatch(QWEN2_5_0_5B_CONFIG, T, { ...settingsFor(limits), ...budget }), chooseMicroBatch(QWEN2_5_0_5B_CONFIG, T, { ...f16(settingsFor(limits)), ...budget })];
    expect(f32Choice.reason).toContain('the activations buffer');
    expect(f16Choice.B).toBeGreaterThan(2 * f32Choice.B);
    expect(f16Choice.reason).toContain('the layer outputs (f16) buffer'); // the buffer that grows with B × layers is still the limit, at twice the batch
  });

  test('uncheckpointed batches and 1-layer models are accounted as before', () => {
    for (const [config, checkpointing] of [
      [SMOLLM2_135M_CONFIG, false],
      [{ ...SMOLLM2_135M_CONFIG, num_hidden_layers: 1 }, true],
    ] as const) {
      const settings = { ...settingsFor(LIMITS.SwiftShader!), activationCheckpointing: checkpointing };
      const plan = batchMemoryPlan(config, 2, 64, f16(settings));
      expect(plan.halfOutputs).toBe(false);
      expect(plan).toEqual({ ...batchMemoryPlan(config, 2, 64, settings), halfOutputs: false });
    }
  });
});

describe('defaultMemoryBudget', () => {
  test('four of the largest buffers, within 1 and 4 GiB', () => {
    expect(defaultMemoryBudget({ maxBufferSize: 128 * MiB, maxStorageBufferBindingSize: 128 * MiB })).toBe(1024 * MiB);
    expect(defaultMemoryBudget({ maxBufferSize: 512 * MiB, maxStorageBufferBindingSize: 128 * MiB })).toBe(2048 * MiB);
    expect(defaultMemoryBudget({ maxBufferSize: 4096 * MiB, maxStorageBufferBindingSize: 2048 * MiB })).toBe(4096 * MiB);
  });
});
