/**
 * The committed WASM kernels against their sources: kernels.generated.ts holds exactly the committed
 * .wasm files, both validate with SIMD, and, on a machine with the clang of CLANG_VERSION,
 * build-kernels.sh rebuilds them byte for byte (a machine without that clang checks the rest).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KERNELS_SHARED_WASM, KERNELS_WASM } from '../../../../src/gpu/fast-cpu/wasm/kernels.generated.ts';

const WASM_DIR = fileURLToPath(new URL('../../../../src/gpu/fast-cpu/wasm/', import.meta.url));
const FILES = { 'kernels.wasm': KERNELS_WASM, 'kernels-shared.wasm': KERNELS_SHARED_WASM };

/** The first line of `clang --version`, or null when there is no clang. */
function clangVersion(): string | null {
  try {
    return execFileSync('clang', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    return null;
  }
}

describe('WASM kernels build', () => {
  it('kernels.generated.ts holds the committed .wasm files, and both are valid modules', () => {
    for (const [file, base64] of Object.entries(FILES)) {
      const bytes = readFileSync(join(WASM_DIR, file));
      expect(Buffer.from(base64, 'base64').equals(bytes), `${file} differs from kernels.generated.ts; run src/gpu/fast-cpu/wasm/build-kernels.sh`).toBe(true);
      expect(WebAssembly.validate(bytes), `${file} does not validate`).toBe(true);
    }
  });

  it('build-kernels.sh rebuilds the committed bytes where the recorded clang exists', () => {
    const recorded = readFileSync(join(WASM_DIR, 'CLANG_VERSION'), 'utf8').trim();
    if (clangVersion() !== recorded) {
      // Another clang (or none) emits other bytes; the check above still ties the module to the committed files.
      expect(recorded).toMatch(/clang version/);
      return;
    }
    const copy = mkdtempSync(join(tmpdir(), 'tabrl-wasm-'));
    try {
      for (const file of ['kernels.c', 'build-kernels.sh', 'write-generated.mjs']) cpSync(join(WASM_DIR, file), join(copy, file));
      execFileSync('sh', [join(copy, 'build-kernels.sh')], { stdio: 'pipe' });
      for (const file of [...Object.keys(FILES), 'kernels.generated.ts']) {
        expect(readFileSync(join(copy, file)).equals(readFileSync(join(WASM_DIR, file))), `${file} is not what build-kernels.sh makes from kernels.c; rerun it and commit the outputs`).toBe(true);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
