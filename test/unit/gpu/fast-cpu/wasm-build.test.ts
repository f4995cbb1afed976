/**
 * The committed WASM kernels against their sources: kernels.generated.ts holds exactly the committed
 * .wasm files, all four validate (the relaxed pair once Node's relaxed SIMD is on), each says which
 * build it is, the relaxed renumbering refuses to guess, and, on a machine with the clang of
 * CLANG_VERSION, build-kernels.sh rebuilds them byte for byte (a machine without that clang checks the rest).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { enableNodeRelaxedSimd } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { KERNELS_RELAXED_SHARED_WASM, KERNELS_RELAXED_WASM, KERNELS_SHARED_WASM, KERNELS_WASM } from '../../../../src/gpu/fast-cpu/wasm/kernels.generated.ts';

const WASM_DIR = fileURLToPath(new URL('../../../../src/gpu/fast-cpu/wasm/', import.meta.url));
const FILES = { 'kernels.wasm': KERNELS_WASM, 'kernels-shared.wasm': KERNELS_SHARED_WASM, 'kernels-relaxed.wasm': KERNELS_RELAXED_WASM, 'kernels-relaxed-shared.wasm': KERNELS_RELAXED_SHARED_WASM };
const SCRIPTS = ['kernels.c', 'build-kernels.sh', 'write-generated.mjs', 'renumber-relaxed.mjs'];

/** The first line of `clang --version`, or null when there is no clang. */
function clangVersion(): string | null {
  try {
    return execFileSync('clang', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    return null;
  }
}

describe('WASM kernels build', () => {
  it('kernels.generated.ts holds the committed .wasm files, and all are valid modules', () => {
    expect(enableNodeRelaxedSimd(), 'Node 20+ runs relaxed SIMD (behind a flag in 20)').toBe(true);
    for (const [file, base64] of Object.entries(FILES)) {
      const bytes = readFileSync(join(WASM_DIR, file));
      expect(Buffer.from(base64, 'base64').equals(bytes), `${file} differs from kernels.generated.ts; run src/gpu/fast-cpu/wasm/build-kernels.sh`).toBe(true);
      expect(WebAssembly.validate(bytes), `${file} does not validate`).toBe(true);
    }
  });

  it('each module says which build it is, and only the relaxed ones hold relaxed_madd (0xfd 0x105)', async () => {
    enableNodeRelaxedSimd();
    const relaxedMadd = Buffer.from([0xfd, 0x85, 0x02]);
    for (const [file, base64] of Object.entries(FILES)) {
      const bytes = Buffer.from(base64, 'base64');
      const shared = file.includes('shared');
      const memory = new WebAssembly.Memory({ initial: 16, maximum: 32768, shared });
      const { instance } = await WebAssembly.instantiate(bytes, { env: { memory } });
      const relaxed = file.includes('relaxed');
      expect((instance.exports.kernels_relaxed_simd as () => number)(), file).toBe(relaxed ? 1 : 0);
      expect(bytes.includes(relaxedMadd), file).toBe(relaxed);
    }
  });

  it('renumber-relaxed.mjs refuses a module whose byte pattern count differs from the instruction count', () => {
    const copy = mkdtempSync(join(tmpdir(), 'tabrl-wasm-'));
    try {
      const file = join(copy, 'proto.wasm');
      // a prototype f32x4.fma (fd af 01) stands in a module's bytes; told there are two instructions, the script must stop
      execFileSync('node', ['-e', `require('fs').writeFileSync(${JSON.stringify(file)}, Buffer.from([0, 0x61, 0x73, 0x6d, 0xfd, 0xaf, 0x01]))`]);
      const result = spawnSync('node', [join(WASM_DIR, 'renumber-relaxed.mjs'), file, '2'], { encoding: 'utf8' });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('1 byte runs fd af 01 but 2 f32x4.fma instructions');
      expect(readFileSync(file).includes(Buffer.from([0xfd, 0xaf, 0x01]))).toBe(true); // left as it was
      expect(spawnSync('node', [join(WASM_DIR, 'renumber-relaxed.mjs'), file, '1']).status).toBe(0);
      expect(readFileSync(file).includes(Buffer.from([0xfd, 0x85, 0x02]))).toBe(true);
    } finally {
      rmSync(copy, { recursive: true, force: true });
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
      for (const file of SCRIPTS) cpSync(join(WASM_DIR, file), join(copy, file));
      execFileSync('sh', [join(copy, 'build-kernels.sh')], { stdio: 'pipe' });
      for (const file of [...Object.keys(FILES), 'kernels.generated.ts']) {
        expect(readFileSync(join(copy, file)).equals(readFileSync(join(WASM_DIR, file))), `${file} is not what build-kernels.sh makes from kernels.c; rerun it and commit the outputs`).toBe(true);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
