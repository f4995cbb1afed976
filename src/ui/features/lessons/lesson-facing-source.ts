/**
 * A lesson source (src/ui/features/lessons/sources/) as the editor shows it: its relative imports of
 * the library rewritten to the module names an environment file uses. Text in, text out; it reads
 * no file, so scripts (bench/lesson7.ts) use it as the app does.
 */

/** Rewrites `../../../../envs/index.ts` (from any depth) to 'tabrl', `…/envs/studio/index.ts` to 'tabrl/studio' and `…/envs/builtin/x.ts` to 'tabrl/builtin/x'. */
export function toLessonFacingSource(source: string): string {
  return source.replace(/(from\s+)(['"])(?:\.\.\/)+envs\/([^'"]+)\2/g, (match, keyword: string, quote: string, path: string) => {
    if (path === 'index.ts') return `${keyword}${quote}tabrl${quote}`;
    if (path === 'studio/index.ts') return `${keyword}${quote}tabrl/studio${quote}`;
    if (path.startsWith('builtin/')) return `${keyword}${quote}tabrl/${path.replace(/\.ts$/, '')}${quote}`;
    return match;
  });
}
