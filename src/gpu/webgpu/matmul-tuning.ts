/**
 * The short timed trial that picks each matmul product's kernel on a device (matmul-variants.ts lists
 * the variants): every candidate runs a representative product a few times and the fastest wins. The
 * choice is remembered per adapter (matmul-choice-cache.ts): in the process, so later devices on the
 * same adapter skip the trial, and in the context's `tuningStore` where the host supplies one (the
 * engine worker: IndexedDB), so later visits skip it too. A forced choice (`forceMatmul`) is never overridden.
 */
import { isSoftwareAdapter } from './device.ts';
import { createTensor, KernelPlan, type Kernels } from './kernels.ts';
import { resolveMatmulChoice } from './matmul-choice-cache.ts';
import {
  defaultMatmulChoice,
  FORWARD_VARIANTS,
  INPUT_GRAD_VARIANTS,
  WEIGHT_GRAD_VARIANTS,
  type ForwardVariant,
  type InputGradVariant,
  type MatmulChoice,
  type WeightGradVariant,
} from './matmul-variants.ts';
import * as ops from './ops.ts';

/** Forces the matmul kernels of a device (any subset of the three products); later trials leave them alone. */
export function forceMatmul(kernels: Kernels, choice: Partial<Omit<MatmulChoice, 'source'>>): MatmulChoice {
  kernels.matmul = { ...kernels.matmul, ...choice, source: 'forced' };
  kernels.matmulTrial = Promise.resolve(kernels.matmul);
  return kernels.matmul;
}

/** Sizes of the trial's products: M tokens, K inputs, N outputs (the weight gradient reduces over M). */
interface TrialShape {
  M: number;
  K: number;
  N: number;
  /** Launches per timed batch. */
  launches: number;
}

/** Software adapters run ~1–5 GFLOP/s: 128×256×512 (34 MFLOP) takes ~10–30 ms. Real GPUs: 2048×1024×1024 (4.3 GFLOP) ~0.1–2 ms, batched. */
function trialShape(software: boolean): TrialShape {
  return software ? { M: 128, K: 256, N: 512, launches: 1 } : { M: 2048, K: 1024, N: 1024, launches: 8 };
}

/**
 * Runs the trial once per device (later calls return the same promise) unless the choice is forced or
 * remembered for this adapter, and sets `kernels.matmul`. On a software adapter the workgroup-memory
 * forward is not tried (its barriers made it 10× slower on SwiftShader), nor split-K (no idle cores to
 * fill). Costs about 3.7 s of CPU on SwiftShader (compiling 9 candidates, then a warm-up and 5 rounds
 * each; 6–8 s of wall time on a loaded 2-core machine, Node + Dawn, 2026-12-04), which is why the
 * choice is remembered; errors leave the default choice in place.
 */
export function tuneMatmul(kernels: Kernels): Promise<MatmulChoice> {
  kernels.matmulTrial ??= resolveMatmulChoice(kernels.gpu.adapter, kernels.gpu.tuningStore, () => runTrial(kernels))
    .then((choice) => {
      if (kernels.matmul.source !== 'forced') kernels.matmul = choice;
      return kernels.matmul;
    })
    .catch(() => kernels.matmul);
  return kernels.matmulTrial;
}

/** Times the candidates of each product on this device and returns the choice (source 'trial'). */
async function runTrial(kernels: Kernels): Promise<MatmulChoice> {
  const adapter = kernels.gpu.adapter;
  const software = isSoftwareAdapter(adapter);
  const shape = trialShape(software);
  const { M, K, N } = shape;
  const device = kernels.device;
  const buffers = [createTensor(device, M * K * 4, 'trial x'), createTensor(device, N * K * 4, 'trial w'), createTensor(device, M * N * 4, 'trial y')];
  const [x, w, y] = buffers as [(typeof buffers)[0], (typeof buffers)[0], (typeof buffers)[0]];
  const dx = createTensor(device, M * K * 4, 'trial dx');
  const dw = createTensor(device, N * K * 4, 'trial dw');
  try {
    const forwardCandidates = FORWARD_VARIANTS.filter((v) => !(software && v === 'workgroup'));
    const weightCandidates = WEIGHT_GRAD_VARIANTS.filter((v) => !(software && v === 'splitk'));
    const defaults = defaultMatmulChoice(adapter);
    const forward = await fastest<ForwardVariant>(kernels, shape, forwardCandidates, defaults.forward, (plan, v) => ops.matmulForward(plan, y, x, w, null, M, K, N, { variant: v }));
    const inputGrad = await fastest<InputGradVariant>(kernels, shape, INPUT_GRAD_VARIANTS, defaults.inputGrad, (plan, v) => ops.matmulBackwardInput(plan, dx, y, w, M, K, N, { variant: v }));
    const weightGrad = await fastest<WeightGradVariant>(kernels, shape, weightCandidates, defaults.weightGrad, (plan, v) => ops.matmulBackwardWeight(plan, dw, y, x, M, K, N, 1, v));
    return { forward, inputGrad, weightGrad, source: 'trial' };
  } finally {
    for (const tensor of [...buffers, dx, dw]) tensor.buffer.destroy();
  }
}

/** Rounds of the trial: every candidate runs once per round, in rotating order, and keeps its best time (a loaded machine slows some rounds, not a candidate). */
const TRIAL_ROUNDS = 5;

/**
 * Another candidate replaces the adapter's default only when its best time is at least this much shorter:
 * on a loaded 2-core machine single rounds of one kernel vary by ±20 %, and trials there picked the 8×16
 * weight gradient over the 16×16 one (twice with a 10 % margin) although the 16×16 one measured 1.1–1.6×
 * faster in CPU time at the model's shapes.
 */
const TRIAL_MARGIN = 0.2;

/** Times each candidate (one untimed run each, then TRIAL_ROUNDS interleaved rounds, best time per candidate) and returns the fastest, keeping `preferred` unless another beats it by TRIAL_MARGIN. */
async function fastest<V extends string>(kernels: Kernels, shape: TrialShape, candidates: readonly V[], preferred: V, record: (plan: KernelPlan, variant: V) => void): Promise<V> {
  const plans = candidates.map((candidate) => {
    const plan = new KernelPlan(kernels);
    for (let i = 0; i < shape.launches; i++) record(plan, candidate);
    return plan;
  });
  const best = candidates.map(() => Infinity);
  try {
    for (const plan of plans) await run(kernels, plan);
    for (let round = 0; round < TRIAL_ROUNDS; round++) {
      for (let j = 0; j < plans.length; j++) {
        const index = (round + j) % plans.length;
        const start = performance.now();
        await run(kernels, plans[index]!);
        best[index] = Math.min(best[index]!, performance.now() - start);
      }
    }
  } finally {
    for (const plan of plans) plan.destroy();
  }
  const winner = candidates[best.indexOf(Math.min(...best))]!;
  const preferredIndex = candidates.indexOf(preferred);
  if (preferredIndex < 0 || winner === preferred) return winner;
  return Math.min(...best) < best[preferredIndex]! * (1 - TRIAL_MARGIN) ? winner : preferred;
}

async function run(kernels: Kernels, plan: KernelPlan): Promise<void> {
  plan.submit();
  await kernels.device.queue.onSubmittedWorkDone();
}
