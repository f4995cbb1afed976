/**
 * Type-checks a user's environment file with the TypeScript compiler before it runs, so a broken
 * file is reported with its file, line and column rather than failing halfway through a run.
 * `import ... from 'tabrl'` is checked against this checkout's environment library, and
 * 'tabrl/builtin/<module>' against its built-in module (src/cli/env-modules.ts, the playground's names).
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { LIBRARY_ENTRY, STUDIO_ENTRY, builtinModuleFiles, isTabrlSpecifier, unknownTabrlModuleMessage } from './env-modules.ts';

/** TypeScript's "Cannot find module" diagnostics (2307; 2792 when it suggests another resolution mode). */
const MODULE_NOT_FOUND_CODES = new Set([2307, 2792]);

/** Compiler options for environment files: strict, modern, with 'tabrl', 'tabrl/studio' and each 'tabrl/builtin/...' name mapped to its file. */
const envCompilerOptions = (): ts.CompilerOptions => ({
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
  paths: { tabrl: [LIBRARY_ENTRY], 'tabrl/studio': [STUDIO_ENTRY], ...Object.fromEntries([...builtinModuleFiles()].map(([name, file]) => [name, [file]])) },
});

/** Returns the type errors of an environment file (and files it imports, outside the library) as `file:line:col message` lines. */
export function typecheckEnvironmentFile(path: string): string[] {
  const program = ts.createProgram([path], envCompilerOptions());
  const libraryDir = fileURLToPath(new URL('../', import.meta.url));
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error)
    .filter((diagnostic) => !diagnostic.file || !diagnostic.file.fileName.startsWith(libraryDir))
    .map(formatDiagnostic);
}

function formatDiagnostic(diagnostic: ts.Diagnostic): string {
  const message = explainMissingModule(diagnostic) ?? ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (!diagnostic.file || diagnostic.start === undefined) return `error TS${diagnostic.code}: ${message}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${diagnostic.file.fileName}:${line + 1}:${character + 1} - error TS${diagnostic.code}: ${message}`;
}

/** For a 'tabrl/...' name that does not resolve, the message that says which names exist; undefined for any other diagnostic. */
function explainMissingModule(diagnostic: ts.Diagnostic): string | undefined {
  if (!MODULE_NOT_FOUND_CODES.has(diagnostic.code)) return undefined;
  const specifier = /'([^']+)'/.exec(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))?.[1];
  return specifier !== undefined && isTabrlSpecifier(specifier) ? unknownTabrlModuleMessage(specifier) : undefined;
}
