// Renumbers clang 14's prototype relaxed-SIMD multiply-add (f32x4.fma, 0xfd 0xaf 0x01) to the
// standard's f32x4.relaxed_madd (0xfd 0x85 0x02, the same length) in a .wasm file, in place (run by
// build-kernels.sh). The pattern's count must equal the instruction count the disassembler reports
// (given as the second argument), so no immediate or other byte that happens to match is touched.
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';

const [file, expectedText] = process.argv.slice(2);
const expected = Number(expectedText);
if (file === undefined || !Number.isInteger(expected)) throw new Error('usage: node renumber-relaxed.mjs FILE.wasm COUNT (COUNT: the f32x4.fma instructions llvm-objdump lists)');
const bytes = readFileSync(file);
const at = [];
for (let i = 0; i + 2 < bytes.length; i++) if (bytes[i] === 0xfd && bytes[i + 1] === 0xaf && bytes[i + 2] === 0x01) at.push(i);
if (at.length !== expected) {
  process.stderr.write(`renumber-relaxed.mjs: ${file} has ${at.length} byte runs fd af 01 but ${expected} f32x4.fma instructions; refusing to guess which are instructions\n`);
  process.exit(1);
}
for (const i of at) {
  bytes[i + 1] = 0x85;
  bytes[i + 2] = 0x02;
}
writeFileSync(file, bytes);
