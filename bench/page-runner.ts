/**
 * Runs one benchmark page headless in Chromium: serves the repository with Vite on 127.0.0.1 (HMR
 * off), opens the page with WebGPU (`findChromium()`, `CHROMIUM_ARGS`, no background throttling),
 * relays its log (the text of its #log element) to stderr and returns what the page sets as
 * `window.benchResult` (or throws what it sets as `window.benchError`). Shared by bench/kernels.ts
 * and bench/gpu.ts. Not a test.
 */
import { chromium } from 'playwright';
import { createServer } from 'vite';
import { CHROMIUM_ARGS, findChromium } from '../scripts/chromium.ts';

/** Opens `path` (e.g. "bench/kernels.html?quick") and waits up to `timeoutMs` for its result. */
export async function runBenchPage(path: string, timeoutMs: number): Promise<unknown> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found: set CHROMIUM_PATH or run: apt-get install -y chromium libvulkan1');
  const server = await createServer({
    root: new URL('..', import.meta.url).pathname,
    logLevel: 'error',
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
    optimizeDeps: { include: ['@jax-js/jax', '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-webgpu'] },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('the Vite server has no port');
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [...CHROMIUM_ARGS, '--disable-renderer-backgrounding', '--disable-background-timer-throttling'],
  });
  const started = Date.now();
  try {
    const page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') console.error(`[page] ${message.text()}`);
    });
    await page.goto(`http://127.0.0.1:${address.port}/${path}`);
    let lastLog = '';
    for (;;) {
      const state = await page.evaluate(() => {
        const w = window as unknown as { benchResult?: unknown; benchError?: string };
        return { result: w.benchResult, error: w.benchError, log: document.getElementById('log')?.textContent ?? '' };
      });
      if (state.log !== lastLog) {
        process.stderr.write(state.log.slice(lastLog.length).replace(/^\n/, '') + '\n');
        lastLog = state.log;
      }
      if (state.error) throw new Error(`benchmark page ${path} failed: ${state.error}`);
      if (state.result) return state.result;
      if (Date.now() - started > timeoutMs) throw new Error(`benchmark page ${path} timed out after ${Math.round(timeoutMs / 1000)} s`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await browser.close();
    await server.close();
  }
}
