/**
 * The default lesson: what `npm start` opens and what runs offline. nano, TabRL's small pretrained
 * byte-level model shipped with the app, learns to reverse short texts — first by SFT on
 * demonstrations made by the environment's expert, then by GRPO on its own samples, scored by LCS
 * similarity (the tiny from-scratch model runs the same lesson, and learns far less). One table of
 * settings, shared by the playground, `npm run bench:learn` and the docs; lesson 6 (Wordle with
 * nano-wordle) and lesson 7 (nano-tools on tasks planted backwards), with `lessonPreset` for `tabrl train --lesson`. A lesson is a row of overrides of the
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
 * Lesson 6's environment: the compact Wordle (board lines, bare-word replies, a 300-word answer
 * pool). GRPO plays games on the 100 practice and the 100 demonstration answers, the warm-up (and
 * the control that only imitates) the teacher's games on the demonstration answers alone, so only RL
 * ever meets a practice answer; measured on fresh games whose answers are drawn from the whole pool
 * (seeds disjoint from training: the game as played); scripts/nano/wordle-measure.ts reports the 100
 * held-out answers beside it as the generalisation row.
 */
export const WORDLE_LESSON_ENVIRONMENT = {
  name: 'wordle',
  args: { compact: true, numTasks: 1000, answers: 'practice-and-demonstration', evalSplit: 'fresh' },
} as const;

/**
 * The model lesson 6 trains: nano-wordle, nano's shape pretrained on varied teacher games whose
 * answers are demonstration answers only, so it reads boards rather than reciting games, and has
 * never seen a practice answer played (docs/nano.md, "nano-wordle").
 */
export const WORDLE_LESSON_MODEL = 'nano-wordle';

/**
 * Lesson 6's settings ("Train a Wordle agent in this tab"), the ones measured for it (BENCHMARKS.md,
 * "lesson 6 with nano-wordle", three seeds with scripts/nano/wordle-measure.ts): measure nano-wordle
 * on 100 fresh games, warm it up on the imperfect teacher's games (10 gentle steps at lr 2e-4),
 * measure, 240 GRPO steps of 8 words × 8 games at lr 2e-4 (the fresh-game win rate climbs for about
 * 160 of them), measure.
 */
export const WORDLE_LESSON_SETTINGS: TrainingOverrides = {
  maxTokens: 8,
  evalTasks: 100,
  demonstrations: 400,
  sftSteps: 10,
  sftLr: 2e-4,
  grpoSteps: 240,
  tasksPerStep: 8,
  grpoLr: 2e-4,
  checkpointEvery: 40,
};

/** Lesson 6's training options (its row over the table's defaults). */
export const WORDLE_LESSON_OPTIONS: TrainingRunOptions = trainingRunOptionsFrom(withOverrides(WORDLE_LESSON_SETTINGS));

/** The same recipe (game, learning rates, token limit) cut to a few minutes on a software adapter or the CPU: fewer steps, smaller groups, fewer games measured. */
export const WORDLE_LESSON_QUICK_SETTINGS: TrainingOverrides = {
  ...WORDLE_LESSON_SETTINGS,
  evalTasks: 16,
  demonstrations: 64,
  sftSteps: 4,
  sftBatchSize: 8,
  grpoSteps: 2,
  tasksPerStep: 2,
  groupSize: 4,
  checkpointEvery: 0,
};

/** Lesson 6's quick options (its row over the table's defaults). */
export const WORDLE_LESSON_QUICK_OPTIONS: TrainingRunOptions = trainingRunOptionsFrom(withOverrides(WORDLE_LESSON_QUICK_SETTINGS));

/**
 * Lesson 7's environment: the Parcelo tasks planted backwards (the lesson's file,
 * src/ui/features/lessons/sources/parcel-desk.ts, whose environment is named parcel-desk; the tab
 * opens it, `tabrl train FILE --lesson` finds this row by that name).
 */
export const PARCEL_LESSON_ENVIRONMENT = { name: 'parcel-desk', args: {} } as const;

/** The model lesson 7 trains: nano-tools, nano's shape pretrained to carry ids into tool calls (nano itself never copies one; docs/nano.md, "nano-tools"). */
export const PARCEL_LESSON_MODEL = 'nano-tools';

/**
 * Lesson 7's settings ("An agent for a tool you cannot call"): measure nano on the 12 held-out
 * planted tasks (greedy), warm it up on demonstrations written from the planted paths of the 20
 * training tasks and the 240 practice tasks with fresh ids (the tool calls in the harness's format,
 * then the answer: one per task, 240 steps of 4), measure, 10 GRPO steps of 2 tasks × 4 answers at
 * temperature 1, measure. A turn gets 128 tokens: the longest call, a reschedule, takes 114 bytes in
 * the byte tokenizer's `<tool_call>` form. Measured in BENCHMARKS.md ("lesson 7: practice tasks with
 * fresh ids").
 */
export const PARCEL_LESSON_SETTINGS: TrainingOverrides = {
  maxTokens: 128,
  evalTasks: 12,
  demonstrations: 260,
  sftSteps: 240,
  sftBatchSize: 4,
  grpoSteps: 10,
  tasksPerStep: 2,
  groupSize: 4,
  temperature: 1,
  checkpointEvery: 0,
};

/** Lesson 7's training options (its row over the table's defaults). */
export const PARCEL_LESSON_OPTIONS: TrainingRunOptions = trainingRunOptionsFrom(withOverrides(PARCEL_LESSON_SETTINGS));

/** Lesson 7 cut to a few minutes: fewer warm-up steps, two GRPO steps, six tasks measured. */
export const PARCEL_LESSON_QUICK_SETTINGS: TrainingOverrides = { ...PARCEL_LESSON_SETTINGS, evalTasks: 6, sftSteps: 20, grpoSteps: 2 };

/** A lesson's preset as `tabrl train --lesson` applies it: environment arguments, model and options. */
export interface LessonPreset {
  envArgs: Record<string, unknown>;
  model: string;
  options: TrainingRunOptions;
}

/** The preset of the lesson that trains `envName` (reverse-text: the default lesson; wordle: lesson 6; parcel-desk: lesson 7's file), full or quick; undefined for other environments. */
export function lessonPreset(envName: string, quick: boolean): LessonPreset | undefined {
  if (envName === PARCEL_LESSON_ENVIRONMENT.name)
    return { envArgs: { ...PARCEL_LESSON_ENVIRONMENT.args }, model: PARCEL_LESSON_MODEL, options: quick ? trainingRunOptionsFrom(withOverrides(PARCEL_LESSON_QUICK_SETTINGS)) : PARCEL_LESSON_OPTIONS };
  if (envName === WORDLE_LESSON_ENVIRONMENT.name)
    return { envArgs: { ...WORDLE_LESSON_ENVIRONMENT.args }, model: WORDLE_LESSON_MODEL, options: quick ? WORDLE_LESSON_QUICK_OPTIONS : WORDLE_LESSON_OPTIONS };
  if (envName === DEFAULT_LESSON_ENVIRONMENT.name) {
    return {
      envArgs: { ...DEFAULT_LESSON_ENVIRONMENT.args },
      model: DEFAULT_LESSON_MODEL,
      options: quick ? trainingRunOptionsFrom(withOverrides(DEFAULT_LESSON_QUICK_SETTINGS)) : DEFAULT_LESSON_OPTIONS,
    };
  }
  return undefined;
}

/** The row of the lesson that trains `envName` (the overrides `tabrl train --lesson` puts under the flags), full or quick; undefined for other environments. */
export function lessonSettings(envName: string, quick: boolean): TrainingOverrides | undefined {
  if (envName === PARCEL_LESSON_ENVIRONMENT.name) return quick ? PARCEL_LESSON_QUICK_SETTINGS : PARCEL_LESSON_SETTINGS;
  if (envName === WORDLE_LESSON_ENVIRONMENT.name) return quick ? WORDLE_LESSON_QUICK_SETTINGS : WORDLE_LESSON_SETTINGS;
  if (envName === DEFAULT_LESSON_ENVIRONMENT.name) return quick ? DEFAULT_LESSON_QUICK_SETTINGS : DEFAULT_LESSON_SETTINGS;
  return undefined;
}
