// The training settings panel renders from the table: every GRPO knob the tab offers has its row
// (a control named train-<knob>) in the Train card, every warm-up knob in the Warm up card, each
// with the table's label.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { expect, test } from 'vitest';
import { TrainingSettingsPanel } from '../../../src/ui/features/training/TrainingSettingsPanel.tsx';
import { KNOB_NAMES, TRAINING_KNOBS } from '../../../src/rl/training-settings.ts';

const offered = (phases: string[]) => KNOB_NAMES.filter((name) => TRAINING_KNOBS[name].hosts === 'both' && phases.includes(TRAINING_KNOBS[name].phase));

test('the Train card renders every GRPO and sampling knob of the table, with its label', () => {
  const html = renderToStaticMarkup(createElement(TrainingSettingsPanel, { mode: 'train' }));
  const grpo = offered(['grpo', 'sampling', 'checkpoints']);
  expect(grpo.length).toBeGreaterThan(20);
  for (const name of grpo) {
    expect(html, name).toContain(`data-testid="train-${name}"`);
    expect(html, name).toContain(TRAINING_KNOBS[name].label.replace(/'/g, '&#x27;'));
  }
  // The learning rate shows the table's default value.
  expect(html).toMatch(/data-testid="train-grpoLr"[^>]* value="0.0005"/);
  // Warm-up knobs belong to the other card.
  expect(html).not.toContain('data-testid="train-sftLr"');
});

test('the Warm up card renders every warm-up knob of the table', () => {
  const html = renderToStaticMarkup(createElement(TrainingSettingsPanel, { mode: 'warmup' }));
  for (const name of offered(['warm-up'])) expect(html, name).toContain(`data-testid="train-${name}"`);
  expect(html).not.toContain('data-testid="train-grpoLr"');
});

test('both cards offer the GPU memory budget, empty by default (the GPU\'s default budget), and the Train card shows no step\'s choice before a step reports one', () => {
  const train = renderToStaticMarkup(createElement(TrainingSettingsPanel, { mode: 'train' }));
  const warmup = renderToStaticMarkup(createElement(TrainingSettingsPanel, { mode: 'warmup' }));
  for (const html of [train, warmup]) {
    expect(html).toMatch(/data-testid="train-memoryBudget"[^>]* value=""/);
    expect(html).toContain(TRAINING_KNOBS.memoryBudget.label);
    expect(html).toContain('Empty: 4 × the GPU&#x27;s maxBufferSize');
  }
  expect(train).not.toContain('data-testid="memory-choice"');
});
