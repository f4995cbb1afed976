import { expect, test } from 'vitest';
import { QWEN2_5_0_5B_CONFIG, SMOLLM2_135M_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { LORA_TARGET_MODULES } from '../../../src/gpu/model/layout.ts';
import { chooseMicroBatch, defaultMemoryBudget } from '../../../src/gpu/webgpu/step-memory.ts';
import { memoryChooser, type MemoryChoosingBackend } from '../../../src/workers/engine/memory-choice.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';

const MiB = 2 ** 20;
/** WebGPU's default limits, as a laptop's browser grants them. */
const LIMITS = { maxBufferSize: 256 * MiB, maxStorageBufferBindingSize: 128 * MiB };

/** A backend's chooser as the WebGPU backend's: the step-memory accounting of a real shape (LoRA r16) under the default limits. */
function accountingBackend(config: ModelConfig): MemoryChoosingBackend {
  const settings = { lora: { rank: 16, alpha: 32, targetModules: [...LORA_TARGET_MODULES] }, activationCheckpointing: 'auto' as const, limits: LIMITS, alignment: 64 };
  return { chooseMicroBatch: (T, options) => chooseMicroBatch(config, T, { ...settings, ...options }), defaultMemoryBudget: () => defaultMemoryBudget(LIMITS) };
}

test("the engine's chooser picks within the person's budget (0: the GPU's default) and remembers the choice for the step's report", () => {
  const smol = memoryChooser(accountingBackend(SMOLLM2_135M_CONFIG), 0, 32);
  expect(smol.latest()).toBeUndefined();
  expect(smol.microBatchFor(256)).toBe(13); // the default 1 GiB budget (BENCHMARKS.md)
  expect(smol.latest()).toEqual({ microBatch: 13, T: 256, budgetMiB: 1024, stepMiB: 1006, reason: expect.stringMatching(/^at 14: the step needs 1026 MiB .*past the memory budget of 1024 MiB$/) });
  const smaller = memoryChooser(accountingBackend(SMOLLM2_135M_CONFIG), 800, 32);
  expect(smaller.microBatchFor(256)).toBeLessThan(13);
  expect(smaller.latest()!.budgetMiB).toBe(800);
  expect(smaller.latest()!.stepMiB).toBeLessThanOrEqual(800);
  // at most the sequences asked for, said as the reason
  const few = memoryChooser(accountingBackend(SMOLLM2_135M_CONFIG), 4096, 4);
  expect(few.microBatchFor(64)).toBe(4);
  expect(few.latest()!.reason).toBe('4 is the most asked for');
  // Qwen2.5-0.5B's 2 GiB state does not fit the default budget: the error says to raise it, by the tab's own names
  // (the CLI's flags mean nothing in the tab), and nothing is remembered
  const qwen = memoryChooser(accountingBackend(QWEN2_5_0_5B_CONFIG), 0, 32);
  expect(() => qwen.microBatchFor(256)).toThrow(/raise the Memory budget setting, shorten the sequences \(Max tokens\) or use a smaller model$/);
  expect(() => qwen.microBatchFor(256)).not.toThrow(/--/);
  expect(qwen.latest()).toBeUndefined();
  expect(memoryChooser(accountingBackend(QWEN2_5_0_5B_CONFIG), 4096, 32).microBatchFor(256)).toBe(11);
});
