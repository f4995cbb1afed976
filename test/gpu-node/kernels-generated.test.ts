/**
 * Keeps src/gpu/webgpu/kernels.generated.ts in step with the .wgsl files it is made from. The .wgsl
 * files are the source; the generated map lets plain Node (tsx, the CLI) load them, where Vite's
 * `?raw` import does not exist; a kernel's `// #include "file.wgsl"` lines are replaced there by
 * kernels/include/file.wgsl (src/gpu/webgpu/wgsl-include.ts). After editing a kernel or an include run
 * `npm run gen:kernels` (this test with -u).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { resolveWgslIncludes } from '../../src/gpu/webgpu/wgsl-include.ts';

const KERNEL_DIR = new URL('../../src/gpu/webgpu/kernels/', import.meta.url);
const INCLUDE_DIR = new URL('include/', KERNEL_DIR);

/** The texts of kernels/include/*.wgsl by file name, for `// #include "file.wgsl"` lines. */
function readIncludes(): Record<string, string> {
  const files = readdirSync(INCLUDE_DIR).filter((file) => file.endsWith('.wgsl'));
  return Object.fromEntries(files.map((file) => [file, readFileSync(new URL(file, INCLUDE_DIR), 'utf8')]));
}

/** Returns the TypeScript module that maps each kernel name to its WGSL source (includes resolved). */
function renderKernelsModule(): string {
  const includes = readIncludes();
  const names = readdirSync(KERNEL_DIR)
    .filter((file) => file.endsWith('.wgsl'))
    .map((file) => file.slice(0, -'.wgsl'.length))
    .sort();
  const entries = names.map((name) => `  ${name}: ${JSON.stringify(resolveWgslIncludes(readFileSync(new URL(`${name}.wgsl`, KERNEL_DIR), 'utf8'), name, includes))},`);
  return [
    '// Generated from src/gpu/webgpu/kernels/*.wgsl (includes from kernels/include/ resolved) by test/gpu-node/kernels-generated.test.ts: do not edit.',
    '// After changing a kernel, run `npm run gen:kernels`.',
    '',
    '/** The WGSL source of every kernel, by name (the file name without `.wgsl`). */',
    'export const WGSL = {',
    ...entries,
    '} as const;',
    '',
    '/** The name of a kernel: its `.wgsl` file name without the extension. */',
    'export type KernelName = keyof typeof WGSL;',
    '',
  ].join('\n');
}

test('kernels.generated.ts matches the .wgsl files (regenerate: npm run gen:kernels)', async () => {
  await expect(renderKernelsModule()).toMatchFileSnapshot('../../src/gpu/webgpu/kernels.generated.ts');
});

test('the 8×16- and 16×16-tile matmul kernels are what scripts/gen-matmul-tiles.mjs writes (regenerate: npm run gen:kernels)', () => {
  const script = new URL('../../scripts/gen-matmul-tiles.mjs', import.meta.url).pathname;
  expect(() => execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' })).not.toThrow();
});
