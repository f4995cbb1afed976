/** A segmented choice never shows an unavailable option as chosen (the Policy card's expert on a file without one), and the keyboard skips it. */
import { expect, test } from 'vitest';
import { nextChoice, segmentedState, type ChoosableOption } from '../../../src/ui/kit/segmented-state.ts';

type Policy = 'expert' | 'endpoint' | 'in-tab' | 'webllm';
const POLICIES: ChoosableOption<Policy>[] = [{ value: 'expert' }, { value: 'endpoint' }, { value: 'in-tab' }, { value: 'webllm' }];
const WITHOUT_EXPERT = POLICIES.map((option) => (option.value === 'expert' ? { ...option, unavailable: 'This file has no scripted expert.' } : option));

test('the chosen option is the value; an unavailable value is not chosen, and Tab reaches the first available option', () => {
  expect(segmentedState(POLICIES, 'expert')).toEqual({ chosen: 0, available: [0, 1, 2, 3], tabStop: 0 });
  expect(segmentedState(WITHOUT_EXPERT, 'expert')).toEqual({ chosen: -1, available: [1, 2, 3], tabStop: 1 });
  expect(segmentedState(WITHOUT_EXPERT, 'in-tab')).toEqual({ chosen: 2, available: [1, 2, 3], tabStop: 2 });
});

test('arrows, Home and End move among the available options only, wrapping', () => {
  const state = segmentedState(WITHOUT_EXPERT, 'endpoint');
  expect(nextChoice(state, 'ArrowLeft')).toBe(3);
  expect(nextChoice(state, 'ArrowRight')).toBe(2);
  expect(nextChoice(state, 'Home')).toBe(1);
  expect(nextChoice(state, 'End')).toBe(3);
  expect(nextChoice(state, 'a')).toBeUndefined();
  expect(nextChoice(segmentedState(POLICIES, 'webllm'), 'ArrowRight')).toBe(0);
});
