// Lesson 6's preset (nano-wordle on the compact Wordle) and how `tabrl train --lesson/--quick` reads presets.
import { describe, expect, test } from 'vitest';
import { loadBuiltinEnvironment } from '../../../src/envs/builtin/index.ts';
import { COMPACT_ANSWER_POOL } from '../../../src/envs/builtin/wordle-compact.ts';
import { DEFAULT_LESSON_OPTIONS, WORDLE_LESSON_ENVIRONMENT, WORDLE_LESSON_MODEL, WORDLE_LESSON_OPTIONS, WORDLE_LESSON_QUICK_OPTIONS, lessonPreset } from '../../../src/rl/lesson.ts';

describe('lesson 6 preset', () => {
  test('trains nano-wordle on the compact Wordle and measures on 100 fresh games from the whole answer pool, seeded apart from training', async () => {
    expect(WORDLE_LESSON_MODEL).toBe('nano-wordle');
    expect(WORDLE_LESSON_ENVIRONMENT).toMatchObject({ name: 'wordle', args: { compact: true, evalSplit: 'fresh' } });
    const env = await loadBuiltinEnvironment(WORDLE_LESSON_ENVIRONMENT.name, { ...WORDLE_LESSON_ENVIRONMENT.args });
    expect(env.evaluationTasks.length).toBe(WORDLE_LESSON_OPTIONS.evalTasks);
    expect(WORDLE_LESSON_OPTIONS.evalTasks).toBe(100);
    expect(env.dataset[0]!.question).toBe('????? + -');
    // RL plays practice and demonstration answers; demonstrations (the warm-up, and the control that only imitates) only the latter.
    const practice = new Set(COMPACT_ANSWER_POOL.practice);
    const training = new Set(COMPACT_ANSWER_POOL.training);
    expect(new Set(env.dataset.map((t) => t.answer as string))).toEqual(training);
    expect(env.demonstrationTasks.some((t) => practice.has(t.answer as string))).toBe(false);
    expect(env.demonstrationTasks.length).toBeGreaterThan(0);
    // Evaluation: games drawn from the whole pool (practice, demonstration and held-out answers alike), none a training game's seed.
    const pool = new Set(COMPACT_ANSWER_POOL.all);
    expect(env.evaluationTasks.every((t) => pool.has(t.answer as string))).toBe(true);
    for (const part of [COMPACT_ANSWER_POOL.heldOut, COMPACT_ANSWER_POOL.practice, COMPACT_ANSWER_POOL.demonstration]) {
      expect(env.evaluationTasks.some((t) => part.includes(t.answer as string))).toBe(true);
    }
    const trainingSeeds = new Set([...env.dataset, ...env.demonstrationTasks].map((t) => t.info!.gameSeed));
    expect(env.evaluationTasks.some((t) => trainingSeeds.has(t.info!.gameSeed))).toBe(false);
    // A guess is five letters and the end-of-turn token; a few spare tokens, no more.
    expect(WORDLE_LESSON_OPTIONS.maxTokens).toBeGreaterThanOrEqual(6);
    expect(WORDLE_LESSON_OPTIONS.maxTokens).toBeLessThanOrEqual(12);
    expect(WORDLE_LESSON_OPTIONS.warmup!.steps).toBeGreaterThan(0);
    expect(WORDLE_LESSON_OPTIONS.grpo!.groupSize).toBeGreaterThanOrEqual(4);
  });

  test('tabrl train wordle --lesson and --quick share one recipe: the same game, learning rates and token limit, the quick form cut short', () => {
    const full = lessonPreset('wordle', false)!;
    const quick = lessonPreset('wordle', true)!;
    expect(quick.envArgs).toEqual(full.envArgs);
    expect(quick.model).toBe(full.model);
    expect(quick.options.warmup!.lr).toBe(full.options.warmup!.lr);
    expect(quick.options.grpo!.schedule!.lr).toBe(full.options.grpo!.schedule!.lr);
    expect(quick.options.maxTokens).toBe(full.options.maxTokens);
    expect(quick.options.warmup!.steps).toBeLessThan(full.options.warmup!.steps);
    expect(quick.options.grpo!.steps).toBeLessThan(full.options.grpo!.steps);
    // Gentle, as measured: a warm-up and GRPO at lr 2e-4 or below (1e-3 and 5e-4 cost nano wins).
    expect(full.options.warmup!.lr).toBeLessThanOrEqual(2e-4);
    expect(full.options.grpo!.schedule!.lr).toBeLessThanOrEqual(2e-4);
    // The lesson's checkpoints fall inside its GRPO run.
    expect(full.options.checkpointEvery).toBeGreaterThan(0);
    expect(full.options.checkpointEvery).toBeLessThanOrEqual(full.options.grpo!.steps);
  });

  test('the quick form runs every phase with much less work', () => {
    const work = (o: typeof WORDLE_LESSON_OPTIONS): number => o.warmup!.steps * o.warmup!.batchSize + o.grpo!.steps * (o.grpo!.tasksPerStep ?? 0) * (o.grpo!.groupSize ?? 0) + o.evalTasks;
    expect(WORDLE_LESSON_QUICK_OPTIONS.warmup!.steps).toBeGreaterThan(0);
    expect(WORDLE_LESSON_QUICK_OPTIONS.grpo!.steps).toBeGreaterThan(0);
    expect(work(WORDLE_LESSON_QUICK_OPTIONS) * 10).toBeLessThan(work(WORDLE_LESSON_OPTIONS));
  });

  test('lessonPreset maps wordle to lesson 6 and reverse-text to the default lesson, nothing else', () => {
    expect(lessonPreset('wordle', false)).toEqual({ envArgs: { ...WORDLE_LESSON_ENVIRONMENT.args }, model: 'nano-wordle', options: WORDLE_LESSON_OPTIONS });
    expect(lessonPreset('wordle', true)!.options).toBe(WORDLE_LESSON_QUICK_OPTIONS);
    const reverse = lessonPreset('reverse-text', false)!;
    expect(reverse.model).toBe('nano');
    expect(reverse.options).toBe(DEFAULT_LESSON_OPTIONS);
    expect(lessonPreset('reverse-text', true)!.options.warmup!.steps).toBeLessThan(DEFAULT_LESSON_OPTIONS.warmup!.steps);
    expect(lessonPreset('countdown', false)).toBeUndefined();
  });
});
