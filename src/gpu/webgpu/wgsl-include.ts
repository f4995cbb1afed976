/**
 * The one preprocessor step of the WGSL kernels: a line `// #include "name.wgsl"` in a kernel is
 * replaced by the text of src/gpu/webgpu/kernels/include/name.wgsl when kernels.generated.ts is
 * written (test/gpu-node/kernels-generated.test.ts), so code that two kernels share (the draw of
 * sample_tokens and decode_steps) lives once. Includes do not nest; an unknown one is an error.
 * No file access here: the caller passes the include files' texts.
 */

/** An include line: `// #include "file.wgsl"` alone on its line. */
const INCLUDE_SOURCE = String.raw`^[ \t]*\/\/[ \t]*#include[ \t]+"([^"]*)"[ \t]*$`;

/** Returns `source` with every include line replaced by that include's text; throws naming the kernel and the file when an include is unknown or itself includes. */
export function resolveWgslIncludes(source: string, kernel: string, includes: Readonly<Record<string, string>>): string {
  return source.replace(new RegExp(INCLUDE_SOURCE, 'gm'), (_line, file: string) => {
    const text = Object.hasOwn(includes, file) ? includes[file] : undefined;
    if (text === undefined) {
      const known = Object.keys(includes).sort().join(', ') || 'none';
      throw new Error(`kernel ${kernel} includes "${file}", which is not in src/gpu/webgpu/kernels/include/ (there: ${known})`);
    }
    if (new RegExp(INCLUDE_SOURCE, 'm').test(text)) throw new Error(`kernel ${kernel}: include "${file}" itself has an #include line; includes do not nest`);
    return `// ---- begin include/${file} ----\n${text.trimEnd()}\n// ---- end include/${file} ----`;
  });
}
