/**
 * The page's URL chooses the engine: `?engine=cpu` the fast CPU backend, `?engine=cpu-reference`
 * the reference (the oracle); anything else, or nothing, lets the engine pick (WebGPU, else the
 * fast CPU backend).
 */
import { expect, it } from 'vitest';
import { engineChoiceFromSearch } from '../../../src/workers/engine-bridge.ts';

it('reads ?engine= from the page URL and ignores what it does not know', () => {
  expect(engineChoiceFromSearch('')).toBe('auto');
  expect(engineChoiceFromSearch('?engine=cpu')).toBe('cpu');
  expect(engineChoiceFromSearch('?lesson=2&engine=cpu-reference')).toBe('cpu-reference');
  expect(engineChoiceFromSearch('?engine=gpu')).toBe('auto');
  expect(engineChoiceFromSearch('?engine=CPU')).toBe('auto');
});
