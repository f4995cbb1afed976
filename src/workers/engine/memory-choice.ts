/**
 * The engine's micro-batch chooser on WebGPU: per step length T, the largest micro-batch whose step
 * fits the memory budget (the person's, or the GPU's default), remembered so that each step's report
 * can say what was chosen and why one more does not fit.
 */
import type { MemorySettingNames, MicroBatchChoice } from '../../gpu/webgpu/step-memory.ts';
import { TRAINING_KNOBS } from '../../rl/training-settings.ts';
import type { EngineMemoryChoice } from './protocol.ts';

/** What the chooser needs of a WebGPU backend. */
export interface MemoryChoosingBackend {
  chooseMicroBatch(T: number, options: { budgetBytes: number; maxMicroBatch: number; settingNames?: MemorySettingNames }): MicroBatchChoice;
  defaultMemoryBudget(): number;
}

/** The tab's names for the settings an error asks to change: its settings' labels, not the CLI's flags. */
export const TAB_SETTING_NAMES: MemorySettingNames = {
  memoryBudget: `the ${TRAINING_KNOBS.memoryBudget.label} setting`,
  maxTokens: TRAINING_KNOBS.maxTokens.label,
};

/** A trainer's microBatchFor and the latest choice it made, as a report says it. */
export interface MemoryChooser {
  microBatchFor: (T: number) => number;
  latest(): EngineMemoryChoice | undefined;
}

/** Returns the chooser of a job: within `budgetMiB` (absent or 0: the backend's default budget), at most maxMicroBatch sequences. */
export function memoryChooser(backend: MemoryChoosingBackend, budgetMiB: number | undefined, maxMicroBatch: number): MemoryChooser {
  const budgetBytes = budgetMiB !== undefined && budgetMiB > 0 ? budgetMiB * 2 ** 20 : backend.defaultMemoryBudget();
  let latest: EngineMemoryChoice | undefined;
  return {
    microBatchFor: (T) => {
      const choice = backend.chooseMicroBatch(T, { budgetBytes, maxMicroBatch, settingNames: TAB_SETTING_NAMES });
      latest = { microBatch: choice.B, T, budgetMiB: Math.round(budgetBytes / 2 ** 20), stepMiB: Math.round(choice.stepBytes / 2 ** 20), reason: choice.reason };
      return choice.B;
    },
    latest: () => latest,
  };
}
