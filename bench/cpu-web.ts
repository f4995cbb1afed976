/**
 * `npm run bench:cpu-web`: one training step of nano (batch 12 × 128, as bench/cpu.ts) in headless
 * Chromium, in a module worker as the app's engine runs it, on the fast CPU backend at 1 and 2
 * threads (Web Workers sharing one WebAssembly.Memory; the page is served cross-origin isolated by
 * vite.config.ts) and on the reference backend, interleaved in one page run from the same weights
 * and batch. Prints a table and one JSON line
 * `{"bench":"cpu-web","rows":[{"backend":...,"threads":...,"ms":...,"overReference":...}]}`
 * (overReference = reference time / this time). Not a test.
 */
import { loadavg } from 'node:os';
import type { CpuWebResult } from './cpu-web.worker.ts';
import { runBenchPage } from './page-runner.ts';

const PAGE_TIMEOUT_MS = 10 * 60_000;
const LOSS_TOLERANCE = 1e-4;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');

console.log(`bench:cpu-web; load average at start ${load()}`);
const result = (await runBenchPage('bench/cpu-web.html', PAGE_TIMEOUT_MS)) as CpuWebResult;
const reference = result.rows.find((row) => row.backend.includes('reference'))!;
const referenceMs = median(reference.ms);
const rows = result.rows.map((row) => ({ backend: row.backend, threads: row.threads, ms: median(row.ms), overReference: referenceMs / median(row.ms), lossDiff: Math.abs(row.firstLoss - reference.firstLoss), steps: row.ms.length }));
console.log(`\nChromium (${result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? result.userAgent}), crossOriginIsolated ${result.crossOriginIsolated}, hardwareConcurrency ${result.hardwareConcurrency}`);
console.log('nano training step, batch 12 × 128 (median of interleaved steps after one warm-up)');
console.log('| backend | threads | ms | reference / this | steps | first-step |Δloss| vs reference |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.backend} | ${row.threads} | ${row.ms.toFixed(0)} | ${row.overReference.toFixed(2)} | ${row.steps} | ${row.lossDiff.toExponential(1)}${row.lossDiff <= LOSS_TOLERANCE ? '' : ' ✗'} |`);
console.log(`load average at end ${load()}`);
const round = (x: number, digits: number): number => Number(x.toFixed(digits));
console.log(JSON.stringify({ bench: 'cpu-web', crossOriginIsolated: result.crossOriginIsolated, rows: rows.map((row) => ({ backend: row.backend, threads: row.threads, ms: round(row.ms, 1), overReference: round(row.overReference, 2), lossDiff: row.lossDiff })) }));
if (rows.some((row) => row.lossDiff > LOSS_TOLERANCE)) {
  console.error(`first-step losses differ from the reference's by more than ${LOSS_TOLERANCE}`);
  process.exitCode = 1;
}
