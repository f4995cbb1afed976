/**
 * The worker of `npm run bench:cpu-web`: one training step of nano (zeroGrad, forward + backward,
 * clip, AdamW; batch 12 × 128, the shape of bench/cpu.ts) on the fast CPU backend at 1 and 2
 * threads (Web Workers sharing memory) and on the reference backend, all from the same weights and
 * batch, interleaved in one run; the first step's losses must agree within 1e-4. Posts its log
 * lines and then its result. Not a test.
 */
import { createFastCpuBackend } from '../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createBrowserWasmKernels, fastCpuLabel } from '../src/gpu/fast-cpu/web-kernel-threads.ts';
import type { ModelBackend, OptimizerStepOptions } from '../src/gpu/model/backend.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { createCpuBackend } from '../src/gpu/model/cpu-backend.ts';
import { seededUniform } from '../src/gpu/model/init.ts';

// bench/ is type-checked with the DOM library, which has no worker scope type.
const scope = self as unknown as { postMessage: (message: unknown) => void; crossOriginIsolated: boolean };

const REPS = 5; // fast-backend steps per thread count after one warm-up
const REFERENCE_REPS = 2;
const B = 12;
const T = 128;
const THREADS = [1, 2];
const OPTIMIZER: OptimizerStepOptions = { lr: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 };
const NANO: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: true,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
  vocab_size: 264,
  hidden_size: 96,
  intermediate_size: 256,
  num_hidden_layers: 3,
  num_attention_heads: 3,
  num_key_value_heads: 1,
  head_dim: 32,
};

/** What the page hands back to bench/cpu-web.ts. */
export interface CpuWebResult {
  crossOriginIsolated: boolean;
  hardwareConcurrency: number;
  userAgent: string;
  rows: Array<{ backend: string; threads: number; ms: number[]; firstLoss: number }>;
}

const log = (line: string): void => scope.postMessage({ log: line });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One training step and its time; weights of −1/N make backward's sum, the loss, the mean cross-entropy. */
async function trainStep(backend: ModelBackend, ids: Int32Array, targets: Int32Array, weights: Float32Array): Promise<{ ms: number; loss: number }> {
  const start = performance.now();
  await backend.zeroGrad();
  const loss = await backend.backward(ids, targets, weights, B, T, 1);
  await backend.step(OPTIMIZER);
  return { ms: performance.now() - start, loss };
}

async function main(): Promise<CpuWebResult> {
  const N = B * T;
  const uniform = seededUniform(7);
  const ids = Int32Array.from({ length: N }, () => Math.floor(uniform() * NANO.vocab_size));
  const targets = Int32Array.from({ length: N }, () => Math.floor(uniform() * NANO.vocab_size));
  const weights = new Float32Array(N).fill(-1 / N);
  const reference = await createCpuBackend(NANO, { seed: 1 });
  const tensors = await reference.getParameters();
  const fast: Array<{ threads: number; label: string; backend: ModelBackend }> = [];
  for (const threads of THREADS) {
    const browserKernels = await createBrowserWasmKernels(threads);
    fast.push({ threads, label: fastCpuLabel(browserKernels), backend: await createFastCpuBackend(NANO, { tensors }, {}, browserKernels.kernels) });
    log(`fast backend ready: ${fastCpuLabel(browserKernels)}`);
  }
  const rows: CpuWebResult['rows'] = [
    ...fast.map((entry) => ({ backend: entry.label, threads: entry.threads, ms: [] as number[], firstLoss: Number.NaN })),
    { backend: 'CPU (reference TypeScript, 1 thread)', threads: 1, ms: [], firstLoss: Number.NaN },
  ];
  // rep 0 is the warm-up, from identical weights: its losses are the equality check
  for (let rep = 0; rep <= REPS; rep++) {
    for (const [i, entry] of fast.entries()) {
      const step = await trainStep(entry.backend, ids, targets, weights);
      if (rep === 0) rows[i]!.firstLoss = step.loss;
      else rows[i]!.ms.push(step.ms);
    }
    if (rep <= REFERENCE_REPS) {
      const step = await trainStep(reference, ids, targets, weights);
      const row = rows[rows.length - 1]!;
      if (rep === 0) row.firstLoss = step.loss;
      else row.ms.push(step.ms);
    }
    log(`rep ${rep}: ${rows.map((row) => `${row.backend} ${row.ms.length > 0 ? median(row.ms).toFixed(0) : '–'} ms`).join(', ')}`);
  }
  return { crossOriginIsolated: scope.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency, userAgent: navigator.userAgent, rows };
}

main().then(
  (result) => scope.postMessage({ result }),
  (error: unknown) => scope.postMessage({ error: error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error) }),
);
