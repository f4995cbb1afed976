// `tabrl train wordle --quick`: lesson 6's preset headless — nano-wordle, the compact Wordle, the quick
// settings — with flags overriding the preset; lesson 7's file, whose warm-up plays the planted
// tasks' paths; and --lesson refuses an environment without a lesson.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { PARCEL_LESSON_QUICK_SETTINGS, WORDLE_LESSON_QUICK_OPTIONS } from '../../../src/rl/lesson.ts';
import { trainingRunOptionsFrom } from '../../../src/rl/training-options.ts';
import { withOverrides } from '../../../src/rl/training-settings.ts';
import { lessonSource } from '../../../src/ui/features/lessons/lesson-sources.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 170_000 });

test('tabrl train wordle --quick trains nano-wordle on the compact Wordle with the quick preset, flags overriding it', { timeout: 180_000 }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-train-lesson-')), 'run');
  const { code, stderr } = await tabrl(['train', 'wordle', '--quick', '--eval-tasks', '2', '--sft-steps', '2', '--steps', '1', '--out', out]);
  expect(stderr).not.toContain('Error');
  expect(code).toBe(0);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  expect(report.model).toBe('nano-wordle');
  expect(report.env_args).toEqual({ compact: true, numTasks: 1000, answers: 'practice-and-demonstration', evalSplit: 'fresh' });
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

const PARCEL_LESSON_QUICK_OPTIONS = trainingRunOptionsFrom(withOverrides(PARCEL_LESSON_QUICK_SETTINGS));

test("tabrl train on lesson 7's file --quick: its preset found by the environment's name, the warm-up's demonstrations written from the planted paths", { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-train-lesson7-'));
  // The file as the tab's editor shows it, as JavaScript so that loading skips the type check (lessons.test.ts type-checks it).
  const file = join(dir, 'parcel-desk.mjs');
  writeFileSync(file, ts.transpileModule(lessonSource('parcel-desk'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
  const out = join(dir, 'run');
  const { code, stderr } = await tabrl(['train', file, '--quick', '--eval-tasks', '1', '--demonstrations', '2', '--sft-steps', '1', '--sft-batch', '2', '--max-tokens', '8', '--steps', '0', '--out', out]);
  expect(stderr).not.toContain('Error');
  expect(code).toBe(0);
  expect(stderr).toContain('== demonstrations: 2 expert rollouts');
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  expect(report.model).toBe('nano-tools'); // the preset's model, which copies ids (docs/nano.md, "nano-tools")
  expect(report.options.warmup).toMatchObject({ demonstrations: 2, steps: 1, batchSize: 2 });
  expect(report.options.warmup.lr).toBe(PARCEL_LESSON_QUICK_OPTIONS.warmup!.lr);
  expect(report.demonstrationsKept).toBe(2);
  expect(report.evaluations.map((e: { label: string }) => e.label)).toEqual(['before', 'after warm-up']);
});
