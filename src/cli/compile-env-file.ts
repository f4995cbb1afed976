/**
 * Compiles a user's environment file for Node: esbuild bundles it (with its own relative imports
 * and packages) into one ES module in a temporary folder, with `import ... from 'tabrl'` pointing at
 * this checkout's library. Bundling makes the file an ES module whatever package.json sits beside
 * it, and esbuild reports syntax errors with file, line and column.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Message, type Plugin } from 'esbuild';

const LIBRARY_PATH = fileURLToPath(new URL('../envs/index.ts', import.meta.url));

/** Maps the bare specifier 'tabrl' to the library, left as an external import so one copy is shared. */
const tabrlPlugin: Plugin = {
  name: 'tabrl',
  setup(builder) {
    builder.onResolve({ filter: /^tabrl$/ }, () => ({ path: pathToFileURL(LIBRARY_PATH).href, external: true }));
  },
};

/** Thrown when the file does not compile; the message lists `file:line:col: text` per error. */
export class EnvFileCompileError extends Error {
  override readonly name = 'EnvFileCompileError';
}

/** Bundles `path` and imports the result; returns the module's exports. */
export async function importEnvironmentFile(path: string): Promise<Record<string, unknown>> {
  const outDir = mkdtempSync(join(tmpdir(), 'tabrl-env-'));
  const outFile = join(outDir, 'env.mjs');
  try {
    try {
      await build({
        entryPoints: [path],
        outfile: outFile,
        bundle: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        sourcemap: 'inline',
        logLevel: 'silent',
        plugins: [tabrlPlugin],
      });
    } catch (error) {
      const messages = (error as { errors?: Message[] }).errors ?? [];
      if (messages.length === 0) throw error;
      throw new EnvFileCompileError(messages.map(formatMessage).join('\n'));
    }
    return (await import(pathToFileURL(outFile).href)) as Record<string, unknown>;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

function formatMessage(message: Message): string {
  const location = message.location;
  return location ? `${location.file}:${location.line}:${location.column + 1}: ${message.text}` : message.text;
}
