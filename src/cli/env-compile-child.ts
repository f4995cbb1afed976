/**
 * The process that type-checks and bundles an environment file (src/cli/env-compile-process.ts
 * starts it with an empty environment, so neither the TypeScript compiler nor esbuild's service,
 * which inherits this process's environment, holds the user's API keys while it reads the file).
 * It takes one request as its only argument — `{ path, format, typecheck }` as JSON — and writes one
 * result line to stdout: `{ diagnostics, bundle?, compileError?, environmentNames }`, where
 * `environmentNames` lists the variables this process saw, for the host to check. Nothing else
 * crosses: no IPC channel, no stdin.
 *
 * It runs no environment code: bundling and type-checking only read files.
 */
import { bundleEnvironmentFile, EnvFileCompileError } from './compile-env-file.ts';
import type { CompileRequest, CompileResult } from './env-compile-process.ts';

async function compile(request: CompileRequest): Promise<CompileResult> {
  const environmentNames = Object.keys(process.env);
  // The TypeScript compiler is loaded only when asked for: it is most of this process's start-up.
  const diagnostics = request.typecheck ? (await import('./typecheck-env.ts')).typecheckEnvironmentFile(request.path) : [];
  if (diagnostics.length > 0) return { diagnostics, environmentNames };
  try {
    return { diagnostics, bundle: await bundleEnvironmentFile(request.path, request.format), environmentNames };
  } catch (error) {
    if (error instanceof EnvFileCompileError) return { diagnostics, compileError: error.message, environmentNames };
    throw error;
  }
}

const result = await compile(JSON.parse(process.argv[2] ?? '{}') as CompileRequest);
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
