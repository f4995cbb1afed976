// The one table of training settings: every knob's default lies within its limits, a value out of
// them is refused naming the limit, the conversions set the trainers' options the knobs name, and
// every lesson (the CLI's presets and the tab's lessons) is a row naming only knobs of the table.
import { describe, expect, test } from 'vitest';
import { DEFAULT_LESSON_QUICK_SETTINGS, DEFAULT_LESSON_SETTINGS, WORDLE_LESSON_OPTIONS, WORDLE_LESSON_QUICK_SETTINGS, WORDLE_LESSON_SETTINGS } from '../../../src/rl/lesson.ts';
import { grpoOptionsFrom, sftKnobOptions, trainingRunOptionsFrom, warmupOptionsFrom } from '../../../src/rl/training-options.ts';
import { checkKnobValue, checkTrainingSettings, KNOB_DEFAULTS, KNOB_NAMES, TRAINING_KNOBS, unknownKnobs, withOverrides, type KnobName } from '../../../src/rl/training-settings.ts';
import { LESSONS } from '../../../src/ui/features/lessons/lessons.ts';

describe('the table', () => {
  test('every knob has its own flag, a label, a line of help, and a default within its limits', () => {
    const flags = KNOB_NAMES.map((name) => TRAINING_KNOBS[name].flag);
    expect(new Set(flags).size).toBe(flags.length);
    for (const name of KNOB_NAMES) {
      const knob = TRAINING_KNOBS[name];
      expect(knob.label.length, name).toBeGreaterThan(2);
      expect(knob.help.length, name).toBeGreaterThan(10);
      expect(checkKnobValue(name, knob.default), name).toBeUndefined();
    }
  });

  test('the GRPO learning rate has one default, and GrpoTrainer, the CLI and the tab read it from here', () => {
    expect(KNOB_DEFAULTS.grpoLr).toBe(5e-4);
    expect(grpoOptionsFrom(KNOB_DEFAULTS)!.schedule).toEqual({ lr: 5e-4 });
  });

  test('a value out of its limits is refused with a sentence naming the knob and the limit', () => {
    expect(checkKnobValue('groupSize', 1)).toBe('--group must be an integer ≥ 2 and ≤ 64, got "1"');
    expect(checkKnobValue('groupSize', 2.5)).toBe('--group must be an integer ≥ 2 and ≤ 64, got "2.5"');
    expect(checkKnobValue('grpoLr', 0)).toBe('--lr must be a number in (0, 1], got "0"');
    expect(checkKnobValue('grpoLr', 0, 'GRPO learning rate')).toBe('GRPO learning rate must be a number in (0, 1], got "0"');
    expect(checkKnobValue('entropyTopQ', 1.5)).toBe('--entropy-top-q is a share of the tokens, in (0, 1], got "1.5"');
    expect(checkKnobValue('lossType', 'ppo')).toBe('--loss-type must be one of dapo, bnpo, grpo, dr_grpo, got "ppo"');
    expect(checkKnobValue('maxStaleness', null)).toBeUndefined();
    expect(checkKnobValue('grpoSteps', null)).toMatch(/--steps must be an integer ≥ 0/);
  });

  test('rules between knobs: a bound on dynamic sampling needs it, a stale-rollout policy needs a bound', () => {
    expect(checkTrainingSettings(withOverrides({ maxTasksPerStep: 12 }))).toEqual(['--max-tasks-per-step bounds --dynamic-sampling; give both, or neither']);
    expect(checkTrainingSettings(withOverrides({ maxTasksPerStep: 2, dynamicSampling: true }))).toEqual(['--max-tasks-per-step must be ≥ --tasks-per-step (4), got 2']);
    expect(checkTrainingSettings(withOverrides({ staleRollouts: 'downweight' }))[0]).toContain('give --max-staleness too');
    expect(checkTrainingSettings(withOverrides({ staleRollouts: 'downweight', maxStaleness: 2 }))).toEqual([]);
  });
});

describe('the conversions', () => {
  test("each knob lands in the trainer's option it names", () => {
    const settings = withOverrides({ grpoLr: 2e-4, lrWarmup: 3, lrSchedule: 'cosine', grpoSteps: 40, keepEqualGroups: true, maxStaleness: 2, microBatch: 4, groupSize: 6, clipHigh: 0.3 });
    const grpo = grpoOptionsFrom(settings)!;
    expect(grpo.schedule).toEqual({ lr: 2e-4, warmupSteps: 3, kind: 'cosine', totalSteps: 40 });
    expect(grpo).toMatchObject({ steps: 40, groupSize: 6, clipHigh: 0.3, dropUninformativeGroups: false, maxStaleness: 2, microBatchSize: 4 });
    // Knobs left to the trainer are not set at all, so its own choice (e.g. the memory budget's micro-batch) stays.
    expect('microBatchSize' in grpoOptionsFrom(KNOB_DEFAULTS)!).toBe(false);
    expect('maxTasksPerStep' in grpoOptionsFrom(KNOB_DEFAULTS)!).toBe(false);
    expect(warmupOptionsFrom(withOverrides({ sftSteps: 7, sftLr: 1e-3 }))).toEqual({ demonstrations: 256, steps: 7, batchSize: 16, lr: 1e-3 });
    // The tab's warm-up job takes the same three from the table (the engine's SFT options), and no SFT steps means no warm-up.
    expect(sftKnobOptions(withOverrides({ sftSteps: 12, sftBatchSize: 4, sftLr: 3e-4 }))).toEqual({ steps: 12, batchSize: 4, lr: 3e-4 });
    expect(warmupOptionsFrom(withOverrides({ sftSteps: 0 }))).toBeNull();
    expect(trainingRunOptionsFrom(withOverrides({ sftSteps: 0, grpoSteps: 0 }))).toMatchObject({ warmup: null, grpo: null, seed: 0, maxTokens: 32, evalTasks: 32, checkpointEvery: 10 });
  });

  test("lesson 6's row gives its measured rates", () => {
    expect(WORDLE_LESSON_OPTIONS.grpo!.schedule).toEqual({ lr: 2e-4 });
    expect(WORDLE_LESSON_OPTIONS.warmup).toEqual({ demonstrations: 400, steps: 10, batchSize: 16, lr: 2e-4 });
  });
});

describe('lessons are rows of the table', () => {
  const rows: [string, Record<string, unknown>][] = [
    ['default lesson', DEFAULT_LESSON_SETTINGS],
    ['default lesson, quick', DEFAULT_LESSON_QUICK_SETTINGS],
    ['lesson 6', WORDLE_LESSON_SETTINGS],
    ['lesson 6, quick', WORDLE_LESSON_QUICK_SETTINGS],
    ...LESSONS.map((lesson): [string, Record<string, unknown>] => [`tab lesson ${lesson.id}`, lesson.preset.training]),
  ];
  test.each(rows)('%s names only knobs that exist, each within its limits', (_label, row) => {
    expect(unknownKnobs(row)).toEqual([]);
    for (const [name, value] of Object.entries(row)) expect(checkKnobValue(name as KnobName, value), name).toBeUndefined();
    expect(checkTrainingSettings(withOverrides(row))).toEqual([]);
  });

  test('a row with a name the table lacks is caught', () => {
    expect(unknownKnobs({ grpoLr: 1e-4, learningRate: 1e-4 })).toEqual(['learningRate']);
  });
});
