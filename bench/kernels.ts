/**
 * `npm run bench:kernels`: serves bench/kernels.html with Vite on 127.0.0.1, opens it in headless
 * Chromium (scripts/chromium.ts) with WebGPU, waits for the page's measurements and prints a table
 * and one JSON line. On a machine without a GPU the adapter is SwiftShader, where only the ratios
 * to the peers (jax-js, tfjs-webgpu, measured in the same run) mean anything. Not a test.
 */
import { chromium } from 'playwright';
import { createServer } from 'vite';
import { CHROMIUM_ARGS, findChromium } from '../scripts/chromium.ts';

/** How long the page may take, in ms. */
const PAGE_TIMEOUT_MS = 15 * 60_000;

interface MatmulRow {
  shape: string;
  oursGflops: number;
  jaxGflops: number;
  tfjsGflops: number;
  oursMs: number;
  relErr: { ours: number; jax: number; tfjs: number };
}

interface BenchResult {
  adapter: { vendor: string; architecture: string; description: string; isFallbackAdapter: boolean };
  userAgent: string;
  matmul: MatmulRow[];
  backwardMatmul: { shape: string; kernels: Array<{ kernel: string; gflops: number; ms: number }> };
  ops: Array<{ op: string; shape: string; forwardMs: number; backwardMs: number | null; forwardGpuMs: number | null; backwardGpuMs: number | null }>;
  model: { forwardMs: number; trainStepMs: number; B: number; T: number };
}

async function main(): Promise<void> {
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
    await page.goto(`http://127.0.0.1:${address.port}/bench/kernels.html`);
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
      if (state.error) throw new Error(`benchmark page failed: ${state.error}`);
      if (state.result) {
        report(state.result as BenchResult, Date.now() - started);
        return;
      }
      if (Date.now() - started > PAGE_TIMEOUT_MS) throw new Error('benchmark page timed out');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

function report(result: BenchResult, wallMs: number): void {
  const fixed = (x: number, digits = 2): string => x.toFixed(digits);
  const lines = [
    `adapter: ${result.adapter.vendor} ${result.adapter.architecture} ${result.adapter.description} (fallback ${result.adapter.isFallbackAdapter})`,
    '',
    '| matmul M×K×N | ours GFLOP/s | jax-js | tfjs-webgpu | ours/jax | ours/tfjs | relErr ours / jax / tfjs |',
    '|---|---|---|---|---|---|---|',
    ...result.matmul.map(
      (row) =>
        `| ${row.shape} | ${fixed(row.oursGflops)} (${fixed(row.oursMs)} ms) | ${fixed(row.jaxGflops)} | ${fixed(row.tfjsGflops)} | ` +
        `${fixed(row.oursGflops / row.jaxGflops)} | ${fixed(row.oursGflops / row.tfjsGflops)} | ` +
        `${row.relErr.ours.toExponential(1)} / ${row.relErr.jax.toExponential(1)} / ${row.relErr.tfjs.toExponential(1)} |`,
    ),
    '',
    `| backward matmul ${result.backwardMatmul.shape} | GFLOP/s | ms |`,
    '|---|---|---|',
    ...result.backwardMatmul.kernels.map((row) => `| ${row.kernel} | ${fixed(row.gflops)} | ${fixed(row.ms)} |`),
    '',
    '| op | shape | forward ms (GPU ms) | backward ms (GPU ms) |',
    '|---|---|---|---|',
    ...result.ops.map((row) => {
      const cell = (wall: number | null, gpu: number | null): string => (wall === null ? '-' : `${fixed(wall)} (${gpu === null ? '-' : fixed(gpu)})`);
      return `| ${row.op} | ${row.shape} | ${cell(row.forwardMs, row.forwardGpuMs)} | ${cell(row.backwardMs, row.backwardGpuMs)} |`;
    }),
    '',
    `model (B=${result.model.B}, T=${result.model.T}): forward + logprobs ${fixed(result.model.forwardMs, 1)} ms, ` +
      `zeroGrad + forward + backward + AdamW step ${fixed(result.model.trainStepMs, 1)} ms`,
  ];
  console.log(lines.join('\n'));
  const ratios = result.matmul.map((row) => ({ shape: row.shape, ours: row.oursGflops, jax: row.jaxGflops, tfjs: row.tfjsGflops, oursOverJax: row.oursGflops / row.jaxGflops, oursOverTfjs: row.oursGflops / row.tfjsGflops }));
  console.log(JSON.stringify({ bench: 'kernels', date: new Date().toISOString(), wallSeconds: Math.round(wallMs / 1000), adapter: result.adapter, userAgent: result.userAgent, matmulGflops: ratios, backwardMatmul: result.backwardMatmul, ops: result.ops, model: result.model }));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
