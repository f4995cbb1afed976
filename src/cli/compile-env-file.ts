/**
 * Compiles a user's environment file for its isolated process: esbuild bundles it (with its own
 * relative imports and packages) into one CommonJS text whose `require('tabrl')` the child process
 * answers with the library, and bundles that child's runtime (src/cli/isolated-env-child.ts with
 * src/envs) into one ES module. Bundling makes the file a module whatever package.json sits beside
 * it, and esbuild reports syntax errors with file, line and column. Nothing here runs the file.
 */
import { fileURLToPath } from 'node:url';
import { build, type Message } from 'esbuild';

const CHILD_RUNTIME_ENTRY = fileURLToPath(new URL('./isolated-env-child.ts', import.meta.url));

/** Thrown when the file does not compile; the message lists `file:line:col: text` per error. */
export class EnvFileCompileError extends Error {
  override readonly name = 'EnvFileCompileError';
}

/** Bundles the environment file at `path` into CommonJS text ('tabrl' and Node built-ins left as `require` calls). */
export async function bundleEnvironmentFile(path: string): Promise<string> {
  try {
    const result = await build({
      entryPoints: [path],
      write: false,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      sourcemap: 'inline',
      logLevel: 'silent',
      external: ['tabrl', 'tabrl/*'],
    });
    return result.outputFiles[0]!.text;
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors ?? [];
    if (messages.length === 0) throw error;
    throw new EnvFileCompileError(messages.map(formatMessage).join('\n'));
  }
}

/** Bundles the child process's runtime into one ES module at `outFile`. */
export async function bundleChildRuntime(outFile: string): Promise<void> {
  await build({ entryPoints: [CHILD_RUNTIME_ENTRY], outfile: outFile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'silent' });
}

function formatMessage(message: Message): string {
  const location = message.location;
  return location ? `${location.file}:${location.line}:${location.column + 1}: ${message.text}` : message.text;
}
