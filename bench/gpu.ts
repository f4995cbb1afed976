/**
 * `npm run bench:gpu`: the kernel, sampling and training benchmarks in one command, headless in
 * Chromium on its WebGPU adapter: bench/kernels.html (matmuls against jax-js and tfjs-webgpu, both
 * backward products against jax-js's vjp; per-op times), then bench/gpu.html (the WebGPU decoder
 * against the CPU decoder, the training step against the jax-js peer, GPU memory of a
 * SmolLM2-135M-shaped LoRA GRPO step from buffer accounting). Prints one JSON line per benchmark and
 * a summary table with the adapter and the matmul's share of the f32 peak where known or estimable.
 * Sized for under 8 minutes on a real GPU; `--quick` shrinks every case for a software adapter.
 * `--matmul forward=tile4x4,...` forces matmul kernels in the kernel page. Not a test.
 */
import { parseArgs } from 'node:util';
import { kernelsPagePath, reportKernels, type KernelBenchResult } from './kernels-report.ts';
import type { BufferItem } from './memory-accounting.ts';
import { runBenchPage } from './page-runner.ts';
import type { PeakEstimate } from './peak.ts';
import type { TrainPeerResult } from './train-peer.ts';

/** What bench/gpu-page.ts returns. */
interface GpuPageResult {
  adapter: KernelBenchResult['adapter'];
  software: boolean;
  hardwareConcurrency: number;
  peak: PeakEstimate | null;
  sample: Array<{ model: string; B: number; prompt: number; steps: number; webgpu: { prefill: number; decode: number }; cpu: { prefill: number; decode: number } | null; decodeRatio: number | null }>;
  trainPeer: TrainPeerResult;
  memory: { model: string; items: BufferItem[]; totalBytes: number; largestBufferBytes: number; check: { model: string; listedBytes: number; trackedPeakBytes: number; trackedLargestBufferBytes: number } };
}

const PAGE_TIMEOUT_MS = 20 * 60_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, matmul: { type: 'string' } } });
  const started = Date.now();
  const kernelResult = (await runBenchPage(kernelsPagePath(values), PAGE_TIMEOUT_MS)) as KernelBenchResult;
  const kernels = reportKernels(kernelResult, Date.now() - started);
  const pageStarted = Date.now();
  const page = (await runBenchPage(`bench/gpu.html${values.quick ? '?quick=1' : ''}`, PAGE_TIMEOUT_MS)) as GpuPageResult;
  const wallSeconds = Math.round((Date.now() - started) / 1000);

  const bestForward = Math.max(...kernelResult.matmul.map((row) => row.oursGflops));
  const peakShare = page.peak ? bestForward / page.peak.gflops : null;
  const MiB = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
  console.log(kernels.table);
  console.log('\n| sampling: model | B | webgpu decode tok/s | cpu decode tok/s | ratio | webgpu prefill tok/s |');
  console.log('|---|---|---|---|---|---|');
  for (const row of page.sample) {
    console.log(`| ${row.model} | ${row.B} | ${row.webgpu.decode.toFixed(1)} | ${row.cpu?.decode.toFixed(1) ?? '–'} | ${row.decodeRatio?.toFixed(2) ?? '–'} | ${row.webgpu.prefill.toFixed(0)} |`);
  }
  const t = page.trainPeer;
  console.log(`\n| training step | B × T | ours ms | jax-js ms | jax-js / ours | objective ours / jax-js |\n|---|---|---|---|---|---|\n| ${t.model} | ${t.B} × ${t.T} | ${t.oursMs.toFixed(1)} | ${t.jaxMs.toFixed(1)} | ${t.speedup.toFixed(2)} | ${t.objective.ours.toFixed(6)} / ${t.objective.jax.toFixed(6)} |`);
  console.log(`\n| GPU memory: ${page.memory.model} | MiB |\n|---|---|`);
  for (const item of page.memory.items) console.log(`| ${item.what} | ${MiB(item.bytes)} |`);
  console.log(`| **total** | **${MiB(page.memory.totalBytes)}** |`);
  console.log(`| largest single buffer | ${MiB(page.memory.largestBufferBytes)} |`);
  console.log(`\nlisting checked on ${page.memory.check.model}: listed ${MiB(page.memory.check.listedBytes)} MiB, tracked peak of real allocations ${MiB(page.memory.check.trackedPeakBytes)} MiB, largest buffer ${MiB(page.memory.check.trackedLargestBufferBytes)} MiB`);
  console.log(
    `\nsummary: adapter ${kernelResult.adapter.vendor} ${kernelResult.adapter.architecture}${page.software ? ' (software)' : ''}; ` +
      `best matmul ${bestForward.toFixed(2)} GFLOP/s${page.peak ? ` = ${(100 * peakShare!).toFixed(2)} % of the f32 peak ${page.peak.gflops} GFLOP/s (${page.peak.basis})` : ' (f32 peak unknown)'}; ` +
      `min ours/jax-js over matmul rows ${(kernels.json.minOursOverJax as number).toFixed(2)}; training step jax-js/ours ${t.speedup.toFixed(2)}; wall ${wallSeconds} s`,
  );
  console.log(JSON.stringify(kernels.json));
  console.log(JSON.stringify({ bench: 'sample', adapter: page.adapter, quick: values.quick, results: page.sample }));
  console.log(JSON.stringify({ bench: 'train-peer', adapter: page.adapter, ...t }));
  console.log(JSON.stringify({ bench: 'memory', adapter: page.adapter, ...page.memory }));
  console.log(JSON.stringify({ bench: 'gpu', date: new Date().toISOString(), quick: values.quick, wallSeconds, pageSeconds: Math.round((Date.now() - pageStarted) / 1000), adapter: page.adapter, hardwareConcurrency: page.hardwareConcurrency, peak: page.peak, bestMatmulGflops: bestForward, peakShare }));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
