/** The UI's action modules form no import cycle: no feature's actions (environment, policy, evaluation, share links, training) reach the app's start-up, which imports them, and nothing below the app reaches src/ui/app at all. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const SRC = resolve(new URL('../../../src', import.meta.url).pathname);

/** Every file under src reachable from `start` through relative imports (type-only ones included; a `?raw` import counts as its file). */
function reachable(start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    if (!/\.tsx?$/.test(file)) return; // a stylesheet or a ?raw text: nothing to follow
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)) visit(resolve(dirname(file), match[1]!.replace(/\?.*$/, '')));
  };
  visit(start);
  return seen;
}

describe('UI actions', () => {
  test('training-actions.ts does not reach init-playground.ts, and init-playground.ts does reach training-actions.ts (one direction)', () => {
    const actions = resolve(SRC, 'ui/app/init-playground.ts');
    const training = resolve(SRC, 'ui/features/training/training-actions.ts');
    expect(reachable(training).has(actions)).toBe(false);
    expect(reachable(actions).has(training)).toBe(true);
  });

  test.each(['features/environment/environment-actions.ts', 'features/policy/policy-actions.ts', 'features/evaluation/evaluation-actions.ts', 'features/share/share-actions.ts', 'features/training/training-actions.ts'])('%s does not reach init-playground.ts', (section) => {
    expect(reachable(resolve(SRC, 'ui', section)).has(resolve(SRC, 'ui/app/init-playground.ts'))).toBe(false);
  });

  test('no file in src/ui/features, src/ui/kit or src/ui/store reaches src/ui/app', () => {
    const app = resolve(SRC, 'ui/app');
    const below = ['features', 'kit', 'store'].flatMap((folder) => sourceFiles(resolve(SRC, 'ui', folder)));
    expect(below.length).toBeGreaterThan(50);
    const reachingApp = below.filter((file) => [...reachable(file)].some((reached) => reached.startsWith(`${app}/`)));
    expect(reachingApp).toEqual([]);
  });
});

/** The .ts and .tsx files under `folder`, at any depth. */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}
