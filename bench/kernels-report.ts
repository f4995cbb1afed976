/**
 * The kernel benchmark's result (what bench/kernels-page.ts returns), its page URL and its report
 * (markdown tables and one JSON line); shared by bench/kernels.ts and bench/gpu.ts.
 */
/** One forward row. */
export interface MatmulRow {
  shape: string;
  oursGflops: number;
  jaxGflops: number;
  tfjsGflops: number;
  oursMs: number;
  relErr: { ours: number; jax: number; tfjs: number };
}

/** One backward row. */
export interface BackwardRow {
  shape: string;
  product: 'dinp' | 'dweight';
  oursGflops: number;
  jaxGflops: number;
  oursMs: number;
  relErr: { ours: number; jax: number };
}

/** What bench/kernels-page.ts sets as window.benchResult. */
export interface KernelBenchResult {
  adapter: { vendor: string; architecture: string; description: string; isFallbackAdapter: boolean };
  matmulChoice: { forward: string; inputGrad: string; weightGrad: string; source: string };
  userAgent: string;
  matmul: MatmulRow[];
  backward: BackwardRow[];
  ops: Array<{ op: string; shape: string; forwardMs: number; backwardMs: number | null; forwardGpuMs: number | null; backwardGpuMs: number | null }>;
  model: { forwardMs: number; trainStepMs: number; B: number; T: number };
}

/** The page's URL for these options: `quick` (fewer repetitions, no per-op table), `matmul` (forced kernels, e.g. "forward=tile4x4"). */
export function kernelsPagePath(options: { quick?: boolean; matmul?: string }): string {
  const query = new URLSearchParams();
  if (options.quick) query.set('quick', '1');
  if (options.matmul) query.set('matmul', options.matmul);
  const text = query.toString();
  return `bench/kernels.html${text ? `?${text}` : ''}`;
}

/** The markdown tables and the JSON line of a kernel benchmark result. */
export function reportKernels(result: KernelBenchResult, wallMs: number): { table: string; json: Record<string, unknown> } {
  const fixed = (x: number, digits = 2): string => x.toFixed(digits);
  const lines = [
    `adapter: ${result.adapter.vendor} ${result.adapter.architecture} ${result.adapter.description} (fallback ${result.adapter.isFallbackAdapter}); ` +
      `matmul kernels: forward ${result.matmulChoice.forward}, input grad ${result.matmulChoice.inputGrad}, weight grad ${result.matmulChoice.weightGrad} (${result.matmulChoice.source})`,
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
    '| backward M×K×N | product | ours GFLOP/s | jax-js vjp GFLOP/s | ours/jax | relErr ours / jax |',
    '|---|---|---|---|---|---|',
    ...result.backward.map(
      (row) =>
        `| ${row.shape} | ${row.product === 'dinp' ? 'dinp = dout·W' : 'dweight = doutᵀ·x'} | ${fixed(row.oursGflops)} (${fixed(row.oursMs)} ms) | ${fixed(row.jaxGflops)} | ` +
        `${fixed(row.oursGflops / row.jaxGflops)} | ${row.relErr.ours.toExponential(1)} / ${row.relErr.jax.toExponential(1)} |`,
    ),
  ];
  if (result.ops.length > 0) {
    lines.push(
      '',
      '| op | shape | forward ms (GPU ms) | backward ms (GPU ms) |',
      '|---|---|---|---|',
      ...result.ops.map((row) => {
        const cell = (wall: number | null, gpu: number | null): string => (wall === null ? '-' : `${fixed(wall)} (${gpu === null ? '-' : fixed(gpu)})`);
        return `| ${row.op} | ${row.shape} | ${cell(row.forwardMs, row.forwardGpuMs)} | ${cell(row.backwardMs, row.backwardGpuMs)} |`;
      }),
    );
  }
  lines.push(
    '',
    `model (B=${result.model.B}, T=${result.model.T}): forward + logprobs ${fixed(result.model.forwardMs, 1)} ms, ` +
      `zeroGrad + forward + backward + AdamW step ${fixed(result.model.trainStepMs, 1)} ms`,
  );
  const ratios = result.matmul.map((row) => ({ shape: row.shape, ours: row.oursGflops, jax: row.jaxGflops, tfjs: row.tfjsGflops, oursOverJax: row.oursGflops / row.jaxGflops, oursOverTfjs: row.oursGflops / row.tfjsGflops }));
  const backward = result.backward.map((row) => ({ shape: row.shape, product: row.product, ours: row.oursGflops, jax: row.jaxGflops, oursOverJax: row.oursGflops / row.jaxGflops }));
  const ratiosAll = [...ratios.map((r) => r.oursOverJax), ...backward.map((r) => r.oursOverJax)];
  return {
    table: lines.join('\n'),
    json: {
      bench: 'kernels',
      date: new Date().toISOString(),
      wallSeconds: Math.round(wallMs / 1000),
      adapter: result.adapter,
      matmulChoice: result.matmulChoice,
      userAgent: result.userAgent,
      minOursOverJax: Math.min(...ratiosAll),
      matmulGflops: ratios,
      backwardGflops: backward,
      ops: result.ops,
      model: result.model,
    },
  };
}

