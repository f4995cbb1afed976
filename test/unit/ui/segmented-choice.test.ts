/** A segmented choice never shows an unavailable option as chosen (the Policy card's expert on a file without one). */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { expect, test } from 'vitest';
import { SegmentedChoice, type SegmentedOption } from '../../../src/ui/components/SegmentedChoice.tsx';

const OPTIONS: SegmentedOption<'expert' | 'endpoint' | 'in-tab'>[] = [
  { value: 'expert', label: 'Scripted expert' },
  { value: 'endpoint', label: 'Endpoint' },
  { value: 'in-tab', label: 'In-tab model' },
];

const render = (options: typeof OPTIONS, value: 'expert' | 'endpoint' | 'in-tab') =>
  renderToStaticMarkup(createElement(SegmentedChoice<'expert' | 'endpoint' | 'in-tab'>, { options, value, onChange: () => {}, label: 'Policy', testIdPrefix: 'policy' }));

test('the chosen option is marked; an unavailable one is disabled, says why and is not marked even when it is the value', () => {
  expect(render(OPTIONS, 'expert')).toMatch(/aria-checked="true" tabindex="0" class="selected"[^>]*data-testid="policy-expert"/);
  const withoutExpert = OPTIONS.map((option) => (option.value === 'expert' ? { ...option, unavailable: 'This file has no scripted expert.' } : option));
  const html = render(withoutExpert, 'expert');
  expect(html).not.toContain('class="selected"');
  expect(html).not.toContain('aria-checked="true"');
  expect(html).toMatch(/<button[^>]*disabled=""[^>]*title="This file has no scripted expert."[^>]*data-testid="policy-expert"/);
  // Tab reaches the first available option instead.
  expect(html).toMatch(/tabindex="0"[^>]*data-testid="policy-endpoint"/);
});
