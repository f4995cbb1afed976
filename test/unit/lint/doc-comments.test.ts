/** Every export of src/** carries a doc comment (`/** ... *\/`), as CONTRIBUTING.md asks: the rule is checked here, not left to review. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The exported declarations of one source file that have no JSDoc comment, as "line name". */
function undocumentedExports(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const missing: string[] = [];
  for (const statement of source.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
    if (!modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) continue; // `export { a } from` re-exports are documented where declared
    if (ts.getJSDocCommentsAndTags(statement).length > 0) continue;
    const line = source.getLineAndCharacterOfPosition(statement.getStart()).line + 1;
    const name = ts.isVariableStatement(statement) ? statement.declarationList.declarations.map((declaration) => declaration.name.getText()).join(', ') : ((statement as ts.DeclarationStatement).name?.getText() ?? 'default');
    missing.push(`${line} ${name}`);
  }
  return missing;
}

/** The TypeScript sources under `dir`, generated files excluded (their generator is documented). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.generated.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('doc comments on exports', () => {
  test('the check finds an export without one, and accepts documented ones', () => {
    const text = ['/** Documented. */', 'export function a() {}', 'export const b = 1, c = 2;', '// a line comment is not a doc comment', 'export interface D {}', '/** Documented. */', 'export class E {}', 'export { a as f };'].join('\n');
    expect(undocumentedExports('x.ts', text)).toEqual(['3 b, c', '5 D']);
  });

  test('every export in src/ has one', () => {
    const files = sourceFiles(join(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(200);
    const missing = files.flatMap((file) => undocumentedExports(file, readFileSync(file, 'utf8')).map((entry) => `${relative(ROOT, file)}:${entry}`));
    expect(missing).toEqual([]);
  });
});
