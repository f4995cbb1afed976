/**
 * Lists the exports of src/** that no other file references (DEAD: not even a test), and those only
 * tests use (TESTONLY), through the TypeScript language service's find-references, so a maintainer
 * can remove dead code. Index files (public entry points) are not listed; a re-export counts as a
 * use. Exported types in exported signatures and error classes are often worth keeping: judge each.
 * Run with `npx tsx scripts/dead-exports.ts` (about a minute and a half on 2 cores); not part of lint.
 */
import ts from 'typescript';
import path from 'node:path';
import fs from 'node:fs';
const root = process.cwd();
const configPath = path.join(root, 'tsconfig.json');
const cfg = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
if (!cfg) throw new Error(`cannot read ${configPath}`);
const files = new Set(cfg.fileNames.map((f) => path.resolve(f)));
for (const extra of ['vite.config.ts', 'vitest.config.ts']) if (fs.existsSync(extra)) files.add(path.resolve(extra));
const walk = (dir: string) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.(ts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts')) files.add(path.resolve(p));
  }
};
for (const d of ['src', 'test', 'bench', 'scripts']) if (fs.existsSync(d)) walk(d);
const names = [...files];
const versions = new Map(names.map((n) => [n, '0']));
const host: ts.LanguageServiceHost = {
  getScriptFileNames: () => names,
  getScriptVersion: (f) => versions.get(f) ?? '0',
  getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, 'utf8')) : undefined),
  getCurrentDirectory: () => root,
  getCompilationSettings: () => ({ ...cfg.options, allowImportingTsExtensions: true, noEmit: true }),
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const ls = ts.createLanguageService(host);
const program = ls.getProgram()!;
for (const file of names.filter((n) => n.startsWith(path.join(root, 'src')) && !/index\.ts$/.test(n))) {
  const sf = program.getSourceFile(file);
  if (!sf) continue;
  const check = (nameNode: ts.Node, name: string) => {
    const refs = ls.findReferences(file, nameNode.getStart(sf)) ?? [];
    const others = refs.flatMap((r) => r.references).filter((r) => path.resolve(r.fileName) !== file);
    const inSrc = others.filter((r) => !path.resolve(r.fileName).includes(`${path.sep}test${path.sep}`));
    if (others.length === 0) console.log(`DEAD ${path.relative(root, file)}:${sf.getLineAndCharacterOfPosition(nameNode.getStart(sf)).line + 1} ${name}`);
    else if (inSrc.length === 0) console.log(`TESTONLY ${path.relative(root, file)}:${sf.getLineAndCharacterOfPosition(nameNode.getStart(sf)).line + 1} ${name}`);
  };
  for (const st of sf.statements) {
    const mods = ts.canHaveModifiers(st) ? ts.getModifiers(st) : undefined;
    if (!mods?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) || mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) continue;
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations) {
        if (ts.isIdentifier(d.name)) check(d.name, d.name.text);
      }
    else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEnumDeclaration(st)) && st.name)
      check(st.name, st.name.text);
  }
}
