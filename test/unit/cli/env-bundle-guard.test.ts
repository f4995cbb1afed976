// Bundling an environment file sees only its folder and TabRL's built-in modules: every way a file
// found to inline the host's files (its API key in /proc/self/environ, a canary beside the folder, a
// symlink out of it, a text loader) is refused with a message naming the import, and a well-behaved
// file with its own modules, JSON and a built-in module still bundles.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { bundleEnvironmentFile, EnvFileCompileError } from '../../../src/cli/compile-env-file.ts';

const CANARY = 'canary-4f1d9e secret contents';

/** A folder `<root>/env` holding the environment file `source`, with a canary file beside the folder and helper files inside it. */
function envFolder(source: string): { file: string; root: string } {
  const root = mkdtempSync(join(tmpdir(), 'tabrl-guard-'));
  const dir = join(root, 'env');
  mkdirSync(dir);
  writeFileSync(join(root, 'canary.txt'), CANARY);
  writeFileSync(join(root, 'canary.ts'), `export default ${JSON.stringify(CANARY)};`);
  writeFileSync(join(dir, 'words.json'), '["alpha","beta"]');
  writeFileSync(join(dir, 'helper.ts'), 'export const double = (x: number) => 2 * x;');
  writeFileSync(join(dir, 'notes.txt'), 'plain text');
  symlinkSync(join(root, 'canary.ts'), join(dir, 'linked.ts'));
  const file = join(dir, 'env.ts');
  writeFileSync(file, source);
  return { file, root };
}

async function bundleError(source: string): Promise<string> {
  const { file } = envFolder(source);
  const error = await bundleEnvironmentFile(file).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(EnvFileCompileError);
  const message = (error as Error).message;
  expect(message).not.toContain(CANARY);
  return message;
}

test('a file with its own modules, JSON and a built-in module bundles', async () => {
  const { file } = envFolder(`
import words from './words.json';
import { double } from './helper.ts';
import { createRng } from 'tabrl/builtin/random';
export default () => [words, double(2), createRng];
`);
  const code = await bundleEnvironmentFile(file);
  expect(code).toContain('alpha');
  expect(code).toContain('rng.pick'); // the built-in module is bundled in
});

test.each([
  ['the host environment as text', `import data from '/proc/self/environ' with { type: 'text' };`, /with import attributes \(\{"type":"text"\}\)/],
  ['an absolute path', `import data from '/etc/hostname';`, /'\/etc\/hostname', an absolute path or URL: .*relative path/],
  ['a file beside the folder', `import data from '../canary.ts';`, /'\.\.\/canary\.ts', which resolves to .*canary\.ts, outside the environment's folder/],
  ['a symlink out of the folder', `import data from './linked.ts';`, /'\.\/linked\.ts', which resolves to .*canary\.ts, outside the environment's folder/],
  ['a text file in the folder', `import data from './notes.txt';`, /notes\.txt: an environment file imports code \(\.ts, \.js, \.\.\.\) and \.json only/],
  ['a file URL', `import data from 'file:///etc/hostname';`, /an absolute path or URL/],
  ['a require of an absolute JSON file', `const data = require('/etc/hostname.json');`, /an absolute path or URL/],
])('%s is refused with a message naming the import', async (_what, line, expected) => {
  const message = await bundleError(`${line}\nexport default () => data;\n`);
  expect(message).toMatch(expected);
});

test('every refused import of a file is reported, not only the first', async () => {
  const message = await bundleError(`
import a from '../canary.ts';
import b from './linked.ts';
import c from './notes.txt';
export default () => [a, b, c];
`);
  expect(message.split('\n')).toHaveLength(3);
});
