/**
 * The default lesson: what `npm start` opens and what runs offline. TabRL's tiny from-scratch model
 * (byte-level tokenizer) learns to reverse short texts — first by SFT on demonstrations made by the
 * environment's expert, then by GRPO on its own samples, scored by LCS similarity. One table of
 * settings, shared by the playground, `npm run bench:learn` and the docs.
 */
import type { TrainingRunOptions } from './training-run.ts';

/** The lesson's environment and its arguments (the compact form of reverse-text, for a byte-level model). */
export const DEFAULT_LESSON_ENVIRONMENT = {
  name: 'reverse-text',
  args: { compact: true, minLength: 4, maxLength: 8, numTasks: 400 },
} as const;

/** The lesson's training settings: a short warm-up, then GRPO with groups of 8. */
export const DEFAULT_LESSON_OPTIONS: TrainingRunOptions = {
  seed: 0,
  maxTokens: 12,
  evalTasks: 32,
  warmup: { demonstrations: 400, steps: 300, batchSize: 16, lr: 3e-3 },
  grpo: { steps: 60, tasksPerStep: 4, groupSize: 8, schedule: { lr: 5e-4 }, maxAsync: 1 },
  checkpointEvery: 20,
};
