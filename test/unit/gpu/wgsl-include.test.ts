/** The `// #include "file.wgsl"` step of the kernel generator (src/gpu/webgpu/wgsl-include.ts). */
import { expect, test } from 'vitest';
import { resolveWgslIncludes } from '../../../src/gpu/webgpu/wgsl-include.ts';

const includes = { 'shared.wgsl': 'fn shared() -> u32 {\n  return 7u;\n}\n' };

test('an include line is replaced by the include text, marked where it begins and ends; other lines stay', () => {
  const source = 'override WG: u32 = 4;\n  // #include "shared.wgsl"\nfn main() {}\n';
  expect(resolveWgslIncludes(source, 'k', includes)).toBe(
    'override WG: u32 = 4;\n// ---- begin include/shared.wgsl ----\nfn shared() -> u32 {\n  return 7u;\n}\n// ---- end include/shared.wgsl ----\nfn main() {}\n',
  );
});

test('only a line holding nothing but the directive includes: a mention inside another line does not', () => {
  const source = 'let x = 1u; // #include "shared.wgsl"\n// see #include "shared.wgsl" above\n';
  expect(resolveWgslIncludes(source, 'k', includes)).toBe(source);
});

test('an unknown include fails loudly, naming the kernel, the file and the known includes', () => {
  expect(() => resolveWgslIncludes('// #include "missing.wgsl"\n', 'decode_steps', includes)).toThrow(
    'kernel decode_steps includes "missing.wgsl", which is not in src/gpu/webgpu/kernels/include/ (there: shared.wgsl)',
  );
  expect(() => resolveWgslIncludes('// #include "toString"\n', 'k', includes)).toThrow(/includes "toString"/);
});

test('an include that itself includes is refused (includes do not nest)', () => {
  expect(() => resolveWgslIncludes('// #include "a.wgsl"\n', 'k', { 'a.wgsl': '// #include "shared.wgsl"\n', ...includes })).toThrow(/do not nest/);
});
