/** The UI's action modules form no import cycle: no section (environment, policy, evaluation, share links, training) reaches actions.ts, which re-exports them. */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const SRC = resolve(new URL('../../../src', import.meta.url).pathname);

/** Every file under src reachable from `start` through relative imports (type-only ones included). */
function reachable(start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)) visit(resolve(dirname(file), match[1]!));
  };
  visit(start);
  return seen;
}

describe('UI actions', () => {
  test('training-actions.ts does not reach actions.ts, and actions.ts does reach training-actions.ts (one direction)', () => {
    const actions = resolve(SRC, 'ui/app/actions.ts');
    const training = resolve(SRC, 'ui/features/training/training-actions.ts');
    expect(reachable(training).has(actions)).toBe(false);
    expect(reachable(actions).has(training)).toBe(true);
  });

  test.each(['features/environment/environment-actions.ts', 'features/policy/policy-actions.ts', 'features/evaluation/evaluation-actions.ts', 'features/share/share-actions.ts', 'features/training/training-actions.ts'])('%s does not reach actions.ts', (section) => {
    expect(reachable(resolve(SRC, 'ui', section)).has(resolve(SRC, 'ui/app/actions.ts'))).toBe(false);
  });
});
