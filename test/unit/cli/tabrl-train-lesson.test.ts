// `tabrl train wordle --quick`: lesson 6's preset headless — nano, the compact Wordle, the quick
// settings — with flags overriding the preset; and --lesson refuses an environment without a lesson.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { WORDLE_LESSON_QUICK_OPTIONS } from '../../../src/rl/lesson.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 170_000 });

test('tabrl train wordle --quick trains nano on the compact Wordle with the quick preset, flags overriding it', { timeout: 180_000 }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-train-lesson-')), 'run');
  const { code, stderr } = await tabrl(['train', 'wordle', '--quick', '--eval-tasks', '2', '--sft-steps', '2', '--steps', '1', '--out', out]);
  expect(stderr).not.toContain('Error');
  expect(code).toBe(0);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  expect(report.model).toBe('nano');
  expect(report.env_args).toEqual({ compact: true, numTasks: 1000, answers: 'practice', evalSplit: 'fresh' });
  // Given flags win; the rest is the quick preset.
  expect(report.options.evalTasks).toBe(2);
  expect(report.options.warmup).toEqual({ ...WORDLE_LESSON_QUICK_OPTIONS.warmup, steps: 2 });
  expect(report.options.grpo).toMatchObject({ steps: 1, tasksPerStep: WORDLE_LESSON_QUICK_OPTIONS.grpo!.tasksPerStep, groupSize: WORDLE_LESSON_QUICK_OPTIONS.grpo!.groupSize });
  expect(report.options.maxTokens).toBe(WORDLE_LESSON_QUICK_OPTIONS.maxTokens);
  expect(report.evaluations.map((e: { label: string }) => e.label)).toEqual(['before', 'after warm-up', 'after GRPO']);
  expect(report.grpo[0].rewards).toHaveProperty('compactWinReward');
  // Full fine-tuning (no adapter folder), as for tiny.
  expect(readFileSync(join(out, 'model', 'config.json'), 'utf8')).toContain('"hidden_size": 96');
});

test('tabrl train --lesson refuses an environment that has no lesson', async () => {
  const { code, stderr } = await tabrl(['train', 'countdown', '--lesson']);
  expect(code).toBe(2);
  expect(stderr).toContain('--lesson and --quick know the lessons');
});
