/**
 * The default lesson: what `npm start` opens and what runs offline. nano, TabRL's small pretrained
 * byte-level model shipped with the app, learns to reverse short texts — first by SFT on
 * demonstrations made by the environment's expert, then by GRPO on its own samples, scored by LCS
 * similarity (the tiny from-scratch model runs the same lesson, and learns far less). One table of
 * settings, shared by the playground, `npm run bench:learn` and the docs; and lesson 6 (Wordle with
 * nano), with `lessonPreset` for `tabrl train --lesson`. A lesson is a row of overrides of the
 * one table of training settings (training-settings.ts): it names only the knobs it sets otherwise.
 */
import type { TrainingRunOptions } from './training-run.ts';
import { trainingRunOptionsFrom } from './training-options.ts';
import { withOverrides, type TrainingOverrides } from './training-settings.ts';

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

/** The default lesson's row: a longer warm-up on more demonstrations, short answers, then 60 GRPO steps at the table's rate with groups of 8. */
export const DEFAULT_LESSON_SETTINGS: TrainingOverrides = { demonstrations: 400, sftSteps: 300, maxTokens: 12, grpoSteps: 60, checkpointEvery: 20 };

/** The default lesson's training options (its row over the table's defaults). */
export const DEFAULT_LESSON_OPTIONS: TrainingRunOptions = trainingRunOptionsFrom(withOverrides(DEFAULT_LESSON_SETTINGS));

/** The default lesson cut to a few minutes (`tabrl train --quick`). */
export const DEFAULT_LESSON_QUICK_SETTINGS: TrainingOverrides = { ...DEFAULT_LESSON_SETTINGS, evalTasks: 16, sftSteps: 60, grpoSteps: 5, checkpointEvery: 0 };

/**
 * Lesson 6's environment: the compact Wordle (board lines, bare-word replies, 100 held-out answers),
 * with RL on the 100 practice answers and the warm-up on the 100 demonstration answers, so the
 * warm-up never shows GRPO's answers. (The shipped nano's pretraining games used both sets; a nano
 * pretrained with `--game-answers demonstration` has never seen a practice answer played.)
 */
export const WORDLE_LESSON_ENVIRONMENT = {
  name: 'wordle',
  args: { compact: true, numTasks: 1000, answers: 'practice' },
} as const;

/** The model lesson 6 trains: nano, TabRL's small pretrained byte-level model. */
export const WORDLE_LESSON_MODEL = 'nano';

/**
 * Lesson 6's settings ("Train a Wordle agent in this tab"): measure nano on the 100 held-out
 * answers, warm it up on the imperfect teacher's games, measure, GRPO with groups of 8 games, measure.
 */
export const WORDLE_LESSON_SETTINGS: TrainingOverrides = {
  maxTokens: 8,
  evalTasks: 100,
  // A short, gentle warm-up and a low GRPO lr: the least harmful settings measured (BENCHMARKS.md,
  // "lesson 6 with the forfeit closed"): 10 steps at 2e-4 cost 2 points of held-out greedy wins where
  // 30 at 1e-3 cost 8, and GRPO at 2e-4 lost 3 points over 55 steps where 5e-4 lost 13 over 42.
  demonstrations: 400,
  sftSteps: 10,
  sftLr: 2e-4,
  grpoSteps: 60,
  tasksPerStep: 8,
  grpoLr: 2e-4,
  checkpointEvery: 20,
};

/** Lesson 6's training options (its row over the table's defaults). */
export const WORDLE_LESSON_OPTIONS: TrainingRunOptions = trainingRunOptionsFrom(withOverrides(WORDLE_LESSON_SETTINGS));

/** The same run, cut to fit a software adapter (or the CPU) in a few minutes: fewer steps, games and measurements. */
export const WORDLE_LESSON_QUICK_SETTINGS: TrainingOverrides = { maxTokens: 8, evalTasks: 16, demonstrations: 64, sftSteps: 8, sftBatchSize: 8, sftLr: 1e-3, grpoSteps: 3, tasksPerStep: 2, groupSize: 4, checkpointEvery: 0 };

/** Lesson 6's quick options (its row over the table's defaults). */
export const WORDLE_LESSON_QUICK_OPTIONS: TrainingRunOptions = trainingRunOptionsFrom(withOverrides(WORDLE_LESSON_QUICK_SETTINGS));

/** A lesson's preset as `tabrl train --lesson` applies it: environment arguments, model and options. */
export interface LessonPreset {
  envArgs: Record<string, unknown>;
  model: string;
  options: TrainingRunOptions;
}

/** The preset of the lesson that trains `envName` (reverse-text: the default lesson; wordle: lesson 6), full or quick; undefined for other environments. */
export function lessonPreset(envName: string, quick: boolean): LessonPreset | undefined {
  if (envName === WORDLE_LESSON_ENVIRONMENT.name) return { envArgs: { ...WORDLE_LESSON_ENVIRONMENT.args }, model: WORDLE_LESSON_MODEL, options: quick ? WORDLE_LESSON_QUICK_OPTIONS : WORDLE_LESSON_OPTIONS };
  if (envName === DEFAULT_LESSON_ENVIRONMENT.name) {
    return { envArgs: { ...DEFAULT_LESSON_ENVIRONMENT.args }, model: DEFAULT_LESSON_MODEL, options: quick ? trainingRunOptionsFrom(withOverrides(DEFAULT_LESSON_QUICK_SETTINGS)) : DEFAULT_LESSON_OPTIONS };
  }
  return undefined;
}

/** The row of the lesson that trains `envName` (the overrides `tabrl train --lesson` puts under the flags), full or quick; undefined for other environments. */
export function lessonSettings(envName: string, quick: boolean): TrainingOverrides | undefined {
  if (envName === WORDLE_LESSON_ENVIRONMENT.name) return quick ? WORDLE_LESSON_QUICK_SETTINGS : WORDLE_LESSON_SETTINGS;
  if (envName === DEFAULT_LESSON_ENVIRONMENT.name) return quick ? DEFAULT_LESSON_QUICK_SETTINGS : DEFAULT_LESSON_SETTINGS;
  return undefined;
}
