/**
 * Builds the playground once (into test-results/e2e-dist, so a `dist/` someone is serving is left
 * alone) and serves it with Vite's preview server on 127.0.0.1, which also sends the sandbox
 * frame's CSP header, plus a trap URL that counts requests environment code should never make. Set TABRL_E2E_REUSE_BUILD=1 to skip the build when that folder exists.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, preview } from 'vite';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT_DIR = 'test-results/e2e-dist';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL the built playground is served at, ending in '/'. */
    appUrl: string;
  }
}

/** Builds and serves the app; returns the teardown that stops the server. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const configFile = `${ROOT}/vite.config.ts`;
  if (!(process.env.TABRL_E2E_REUSE_BUILD && existsSync(`${ROOT}/${OUT_DIR}/index.html`))) {
    await build({ root: ROOT, configFile, logLevel: 'warn', build: { outDir: OUT_DIR, emptyOutDir: true, sourcemap: false } });
  }
  let exfiltrationAttempts = 0;
  const server = await preview({
    root: ROOT,
    configFile,
    logLevel: 'warn',
    build: { outDir: OUT_DIR },
    preview: { host: '127.0.0.1', port: 4319, strictPort: false, open: false },
    plugins: [{
      // A trap for the isolation test: environment code tries to fetch /__e2e/exfiltrate; the test reads the count.
      name: 'e2e-exfiltration-trap',
      configurePreviewServer(previewServer) {
        previewServer.middlewares.use('/__e2e/exfiltrate-count', (_request, response) => response.end(String(exfiltrationAttempts)));
        previewServer.middlewares.use('/__e2e/exfiltrate', (_request, response) => {
          exfiltrationAttempts += 1;
          response.setHeader('access-control-allow-origin', '*');
          response.end('caught');
        });
      },
    }],
  });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error('the preview server did not report its URL');
  project.provide('appUrl', url);
  return async () => {
    await server.close();
  };
}
