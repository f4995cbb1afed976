/**
 * Type-checks a user's environment file with the TypeScript compiler before it runs, so a broken
 * file is reported with its file, line and column rather than failing halfway through a run.
 * `import ... from 'tabrl'` is checked against this checkout's environment library.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const LIBRARY_ENTRY = fileURLToPath(new URL('../envs/index.ts', import.meta.url));

/** Compiler options for environment files: strict, modern, with 'tabrl' mapped to the library. */
const ENV_COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowImportingTsExtensions: true,
  noEmit: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: [],
  paths: { tabrl: [LIBRARY_ENTRY] },
};

/** Returns the type errors of an environment file (and files it imports, outside the library) as `file:line:col message` lines. */
export function typecheckEnvironmentFile(path: string): string[] {
  const program = ts.createProgram([path], ENV_COMPILER_OPTIONS);
  const libraryDir = fileURLToPath(new URL('../', import.meta.url));
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error)
    .filter((diagnostic) => !diagnostic.file || !diagnostic.file.fileName.startsWith(libraryDir))
    .map(formatDiagnostic);
}

function formatDiagnostic(diagnostic: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (!diagnostic.file || diagnostic.start === undefined) return `error TS${diagnostic.code}: ${message}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${diagnostic.file.fileName}:${line + 1}:${character + 1} - error TS${diagnostic.code}: ${message}`;
}
