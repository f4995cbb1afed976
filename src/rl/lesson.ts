/**
 * The default lesson: what `npm start` opens and what runs offline. nano, TabRL's small pretrained
 * byte-level model shipped with the app, learns to reverse short texts — first by SFT on
 * demonstrations made by the environment's expert, then by GRPO on its own samples, scored by LCS
 * similarity (the tiny from-scratch model runs the same lesson, and learns far less). One table of
 * settings, shared by the playground, `npm run bench:learn` and the docs; and lesson 6 (Wordle with
 * nano), with `lessonPreset` for `tabrl train --lesson`.
 */
import type { TrainingRunOptions } from './training-run.ts';

/** The lesson's environment and its arguments (the compact form of reverse-text, for a byte-level model). */
export const DEFAULT_LESSON_ENVIRONMENT = {
  name: 'reverse-text',
  args: { compact: true, minLength: 4, maxLength: 8, numTasks: 400 },
} as const;

/**
 * The default lesson's model, and so the playground's default in-tab model: nano. Over the full lesson
 * (BENCHMARKS.md, "The default lesson: nano or tiny") nano ends at reward 0.96 with 78 % exact
 * reversals, tiny from random weights at 0.79 with 19 %; nano ships with the app, so it starts offline.
 */
export const DEFAULT_LESSON_MODEL = 'nano';

/** The lesson's training settings: a short warm-up, then GRPO with groups of 8. */
export const DEFAULT_LESSON_OPTIONS: TrainingRunOptions = {
  seed: 0,
  maxTokens: 12,
  evalTasks: 32,
  warmup: { demonstrations: 400, steps: 300, batchSize: 16, lr: 3e-3 },
  grpo: { steps: 60, tasksPerStep: 4, groupSize: 8, schedule: { lr: 5e-4 }, maxAsync: 1 },
  checkpointEvery: 20,
};

/**
 * Lesson 6's environment: the compact Wordle (board lines, bare-word replies, a 300-word answer
 * pool), with RL on the 100 practice answers and the warm-up on the 100 demonstration answers, so the
 * warm-up never shows GRPO's answers, measured on fresh games whose answers are drawn from the
 * whole pool (seeds disjoint from training: the game as played); scripts/nano/wordle-measure.ts
 * reports the 100 held-out answers beside it as the generalisation row. (The shipped nano's
 * pretraining games used both training sets; a nano pretrained with `--game-answers demonstration`
 * has never seen a practice answer played.)
 */
export const WORDLE_LESSON_ENVIRONMENT = {
  name: 'wordle',
  args: { compact: true, numTasks: 1000, answers: 'practice', evalSplit: 'fresh' },
} as const;

/** The model lesson 6 trains: nano, TabRL's small pretrained byte-level model. */
export const WORDLE_LESSON_MODEL = 'nano';

/**
 * Lesson 6's settings ("Train a Wordle agent in this tab"), the ones measured for it (BENCHMARKS.md,
 * "lesson 6 on the game as played", three seeds with scripts/nano/wordle-measure.ts): measure nano
 * on 100 fresh games, warm it up on the imperfect teacher's games (10 gentle steps at lr 2e-4, the
 * least harmful warm-up measured), measure, 12 GRPO steps of 8 practice words × 8 games at lr 2e-4
 * (5e-4 lost 6–7 points of fresh-game wins in 10 steps), measure.
 */
export const WORDLE_LESSON_OPTIONS: TrainingRunOptions = {
  seed: 0,
  maxTokens: 8,
  evalTasks: 100,
  warmup: { demonstrations: 400, steps: 10, batchSize: 16, lr: 2e-4 },
  grpo: { steps: 12, tasksPerStep: 8, groupSize: 8, schedule: { lr: 2e-4 }, maxAsync: 1 },
  checkpointEvery: 4,
};

/** The same recipe (game, learning rates, token limit) cut to a few minutes on a software adapter or the CPU: fewer steps, smaller groups, fewer games measured. */
export const WORDLE_LESSON_QUICK_OPTIONS: TrainingRunOptions = {
  seed: 0,
  maxTokens: WORDLE_LESSON_OPTIONS.maxTokens,
  evalTasks: 16,
  warmup: { demonstrations: 64, steps: 4, batchSize: 8, lr: WORDLE_LESSON_OPTIONS.warmup!.lr },
  grpo: { steps: 2, tasksPerStep: 2, groupSize: 4, schedule: { lr: WORDLE_LESSON_OPTIONS.grpo!.schedule!.lr }, maxAsync: 1 },
  checkpointEvery: 0,
};

/** A lesson's preset as `tabrl train --lesson` applies it: environment arguments, model and settings. */
export interface LessonPreset {
  envArgs: Record<string, unknown>;
  model: string;
  options: TrainingRunOptions;
}

/** The preset of the lesson that trains `envName` (reverse-text: the default lesson; wordle: lesson 6), full or quick; undefined for other environments. */
export function lessonPreset(envName: string, quick: boolean): LessonPreset | undefined {
  if (envName === WORDLE_LESSON_ENVIRONMENT.name) return { envArgs: { ...WORDLE_LESSON_ENVIRONMENT.args }, model: WORDLE_LESSON_MODEL, options: quick ? WORDLE_LESSON_QUICK_OPTIONS : WORDLE_LESSON_OPTIONS };
  if (envName === DEFAULT_LESSON_ENVIRONMENT.name) {
    const options = DEFAULT_LESSON_OPTIONS;
    return {
      envArgs: { ...DEFAULT_LESSON_ENVIRONMENT.args },
      model: DEFAULT_LESSON_MODEL,
      options: quick ? { ...options, evalTasks: 16, warmup: { ...options.warmup!, steps: 60 }, grpo: { ...options.grpo!, steps: 5 }, checkpointEvery: 0 } : options,
    };
  }
  return undefined;
}
