/**
 * `npm run bench:kernels`: serves bench/kernels.html with Vite on 127.0.0.1, opens it in headless
 * Chromium (scripts/chromium.ts) with WebGPU, waits for the page's measurements and prints a table
 * and one JSON line. On a machine without a GPU the adapter is SwiftShader, where only the ratios
 * to the peers (jax-js, tfjs-webgpu, measured in the same run) mean anything. Not a test.
 */
import { parseArgs } from 'node:util';
import { kernelsPagePath, reportKernels, type KernelBenchResult } from './kernels-report.ts';
import { runBenchPage } from './page-runner.ts';

/** How long the page may take, in ms. */
const PAGE_TIMEOUT_MS = 15 * 60_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, matmul: { type: 'string' } } });
  const started = Date.now();
  const result = (await runBenchPage(kernelsPagePath(values), PAGE_TIMEOUT_MS)) as KernelBenchResult;
  const { table, json } = reportKernels(result, Date.now() - started);
  console.log(table);
  console.log(JSON.stringify(json));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
