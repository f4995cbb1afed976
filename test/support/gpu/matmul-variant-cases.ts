/**
 * Every matmul kernel variant (src/gpu/webgpu/matmul-variants.ts), forced, against the CPU reference:
 * the forward product (4×4, 8×16 and 16×16 tiles, workgroup-memory tile), the input gradient (4×4, 8×16,
 * 16×16) and the weight gradient (4×4, 8×16, 16×16, split-K), at sizes that are not multiples of any tile, with
 * bias, alpha and accumulation. Run by test/browser/gpu/kernels.test.ts (Chromium, SwiftShader) and
 * test/gpu-node/kernels.test.ts (Node + Dawn, SwiftShader), which also check that the timed trial picks a
 * valid choice and that a forced choice sticks; test/gpu-node/matmul-lavapipe.test.ts (Mesa's lavapipe)
 * runs one case per variant with every switch on.
 */
import * as ref from '../../../src/gpu/reference/index.ts';
import { createTensor, KernelPlan, readTensor, type Kernels } from '../../../src/gpu/webgpu/kernels.ts';
import { forceMatmul, tuneMatmul } from '../../../src/gpu/webgpu/matmul-tuning.ts';
import { FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS, type ForwardVariant, type InputGradVariant, type WeightGradVariant } from '../../../src/gpu/webgpu/matmul-variants.ts';
import * as gpu from '../../../src/gpu/webgpu/ops.ts';
import { expectClose, randomArray } from '../expect-close.ts';
import type { KernelCase } from './kernel-cases.ts';

const TOLERANCE = { atol: 2e-5, rtol: 1e-4 };

const FORWARD_KERNEL: Record<ForwardVariant, string> = {
  tile4x4: 'matmul_forward',
  tile8x16: 'matmul_forward_tile8x16',
  tile16x16: 'matmul_forward_tile16x16',
  workgroup: 'matmul_forward_workgroup',
};

/** Throws unless the dispatch ran the named kernel (the label is the pipeline key "name|CONST=..."). */
function expectKernel(label: string, kernel: string): void {
  if (!label.startsWith(`${kernel}|`)) throw new Error(`expected ${kernel}, dispatched ${label}`);
}

function forwardCase(variant: ForwardVariant, N: number, IC: number, OC: number, withBias: boolean, accumulate: boolean): KernelCase {
  return {
    name: `matmul forward ${variant} (${FORWARD_KERNEL[variant]}) matches reference (N=${N}, IC=${IC}, OC=${OC}${withBias ? ', bias' : ''}${accumulate ? ', alpha, accumulate' : ''})`,
    run: async (kernels) => {
      const alpha = accumulate ? 0.75 : 1;
      const inp = randomArray(N * IC, 11);
      const weight = randomArray(OC * IC, 12);
      const bias = withBias ? randomArray(OC, 13) : null;
      const out0 = accumulate ? randomArray(N * OC, 14) : new Float32Array(N * OC);
      const product = new Float32Array(N * OC);
      ref.matmulForward(product, inp, weight, null, N, IC, OC);
      const expected = out0.map((x, i) => x + alpha * product[i]! + (bias ? bias[i % OC]! : 0));
      const device = kernels.device;
      const plan = new KernelPlan(kernels);
      const out = createTensor(device, out0);
      const dispatch = gpu.matmulForward(plan, out, createTensor(device, inp), createTensor(device, weight), bias ? createTensor(device, bias) : null, N, IC, OC, { alpha, accumulate, variant });
      expectKernel(dispatch.label, FORWARD_KERNEL[variant]);
      plan.submit();
      expectClose(await readTensor(device, out, N * OC * 4), expected, { ...TOLERANCE, label: 'out' });
    },
  };
}

function inputGradCase(variant: InputGradVariant, N: number, IC: number, OC: number, accumulate: boolean): KernelCase {
  const kernel = variant === 'tile4x4' ? 'matmul_backward_dinp' : `matmul_backward_dinp_${variant}`;
  return {
    name: `matmul input gradient ${variant} (${kernel}) matches reference (N=${N}, IC=${IC}, OC=${OC}${accumulate ? ', alpha, accumulate' : ''})`,
    run: async (kernels) => {
      const alpha = accumulate ? 0.5 : 1;
      const dout = randomArray(N * OC, 21);
      const weight = randomArray(OC * IC, 22);
      const dinp0 = accumulate ? randomArray(N * IC, 23) : new Float32Array(N * IC);
      const product = new Float32Array(N * IC);
      ref.matmulBackward(product, null, null, dout, new Float32Array(N * IC), weight, N, IC, OC);
      const expected = dinp0.map((x, i) => x + alpha * product[i]!);
      const device = kernels.device;
      const plan = new KernelPlan(kernels);
      const dinp = createTensor(device, dinp0);
      const dispatch = gpu.matmulBackwardInput(plan, dinp, createTensor(device, dout), createTensor(device, weight), N, IC, OC, { alpha, accumulate, variant });
      expectKernel(dispatch.label, kernel);
      plan.submit();
      expectClose(await readTensor(device, dinp, N * IC * 4), expected, { ...TOLERANCE, label: 'dinp' });
    },
  };
}

function weightGradCase(variant: WeightGradVariant, N: number, IC: number, OC: number): KernelCase {
  const kernel = variant === 'tile4x4' ? 'matmul_backward_dweight' : variant === 'splitk' ? 'matmul_splitk_reduce' : `matmul_backward_dweight_${variant}`;
  return {
    name: `matmul weight gradient ${variant} (${kernel}) matches reference (N=${N}, IC=${IC}, OC=${OC}, alpha, accumulate)`,
    run: async (kernels) => {
      const alpha = 0.5;
      const dout = randomArray(N * OC, 31);
      const inp = randomArray(N * IC, 32);
      const dweight0 = randomArray(OC * IC, 33);
      const product = new Float32Array(OC * IC);
      ref.matmulBackward(null, product, null, dout, inp, new Float32Array(OC * IC), N, IC, OC);
      const expected = dweight0.map((x, i) => x + alpha * product[i]!);
      const device = kernels.device;
      const plan = new KernelPlan(kernels);
      const dweight = createTensor(device, dweight0);
      const dispatch = gpu.matmulBackwardWeight(plan, dweight, createTensor(device, dout), createTensor(device, inp), N, IC, OC, alpha, variant);
      expectKernel(dispatch.label, kernel);
      if (variant === 'splitk' && plan.commands.length !== 2) throw new Error(`split-K recorded ${plan.commands.length} dispatches, expected the split product and the reduction`);
      plan.submit();
      expectClose(await readTensor(device, dweight, OC * IC * 4), expected, { ...TOLERANCE, label: 'dweight' });
    },
  };
}

/** The weight gradient at two awkward shapes: both run the same pipeline (it is specialised on no switch), so the second costs no compilation. */
const WEIGHT_GRAD_CASES = WEIGHT_GRAD_VARIANTS.flatMap((variant) => [weightGradCase(variant, 37, 52, 68), weightGradCase(variant, 131, 20, 36)]);

/** Which kernel the 16×16 choice dispatches at shapes too small for it. */
const STEP_DOWN_CASE: KernelCase = {
  name: 'a device choosing the 16×16 tiles steps down to 8×16 for few rows, tokens or weight rows and to 4×4 for tiny outputs',
  run: async (kernels: Kernels) => {
    const [saved, savedTrial] = [kernels.matmul, kernels.matmulTrial];
    try {
      forceMatmul(kernels, { forward: 'tile16x16', inputGrad: 'tile16x16', weightGrad: 'tile16x16' });
      const plan = new KernelPlan(kernels);
      const t = createTensor(kernels.device, 64 * 576 * 4);
      const cases: Array<[string, string]> = [
        [gpu.matmulForward(plan, t, t, t, null, 64, 64, 64).label, 'matmul_forward_tile16x16'],
        [gpu.matmulForward(plan, t, t, t, null, 8, 576, 576).label, 'matmul_forward_tile8x16'],
        [gpu.matmulForward(plan, t, t, t, null, 64, 8, 8).label, 'matmul_forward'],
        [gpu.matmulBackwardInput(plan, t, t, t, 64, 64, 64).label, 'matmul_backward_dinp_tile16x16'],
        [gpu.matmulBackwardInput(plan, t, t, t, 8, 576, 576).label, 'matmul_backward_dinp_tile8x16'],
        [gpu.matmulBackwardWeight(plan, t, t, t, 64, 64, 64).label, 'matmul_backward_dweight_tile16x16'],
        [gpu.matmulBackwardWeight(plan, t, t, t, 8, 576, 576).label, 'matmul_backward_dweight_tile8x16'],
        [gpu.matmulBackwardWeight(plan, t, t, t, 64, 576, 16).label, 'matmul_backward_dweight_tile8x16'],
        [gpu.matmulBackwardWeight(plan, t, t, t, 64, 8, 8).label, 'matmul_backward_dweight'],
      ];
      plan.destroy();
      t.buffer.destroy();
      for (const [label, kernel] of cases) expectKernel(label, kernel);
    } finally {
      kernels.matmul = saved;
      kernels.matmulTrial = savedTrial;
    }
  },
};

/** The timed trial and forcing: logic above the kernels, so one adapter's run of it says what another's would. */
const TRIAL_CASE: KernelCase = {
  name: 'the timed trial picks a valid choice per product, and a forced choice sticks',
  run: async (kernels: Kernels) => {
    const choice = await tuneMatmul(kernels);
    if (!(FORWARD_VARIANTS as readonly string[]).includes(choice.forward)) throw new Error(`trial picked forward ${choice.forward}`);
    if (!(INPUT_GRAD_VARIANTS as readonly string[]).includes(choice.inputGrad)) throw new Error(`trial picked inputGrad ${choice.inputGrad}`);
    if (!(WEIGHT_GRAD_VARIANTS as readonly string[]).includes(choice.weightGrad)) throw new Error(`trial picked weightGrad ${choice.weightGrad}`);
    if (choice.source !== 'trial' && choice.source !== 'cached') throw new Error(`choice came from ${choice.source}, expected a trial`);
    const forced = forceMatmul(kernels, { forward: 'workgroup' });
    if (forced.forward !== 'workgroup' || forced.source !== 'forced') throw new Error('forceMatmul did not set the forward variant');
    const plan = new KernelPlan(kernels);
    const [out, inp, weight] = [0, 1, 2].map(() => createTensor(kernels.device, 8 * 8 * 4));
    expectKernel(gpu.matmulForward(plan, out!, inp!, weight!, null, 8, 8, 8).label, 'matmul_forward_workgroup');
    if ((await tuneMatmul(kernels)).forward !== 'workgroup') throw new Error('a later trial overrode the forced choice');
    plan.destroy();
  },
};

/** The forced-variant checks on SwiftShader: every variant of every product at two awkward shapes, each switch (bias, accumulate) on and off, and the trial. */
export const MATMUL_VARIANT_CASES: KernelCase[] = [
  ...FORWARD_VARIANTS.flatMap((variant) => [forwardCase(variant, 37, 52, 68, true, false), forwardCase(variant, 70, 132, 20, false, true)]),
  ...INPUT_GRAD_VARIANTS.flatMap((variant) => [inputGradCase(variant, 37, 68, 52, false), inputGradCase(variant, 19, 20, 132, true)]),
  ...WEIGHT_GRAD_CASES,
  STEP_DOWN_CASE,
  TRIAL_CASE,
];

/**
 * The same checks on a second adapter (lavapipe): every variant of every product at an awkward shape
 * with every switch on (bias, alpha, accumulate), so each variant compiles once. Mesa compiles each
 * specialisation of the unrolled tiles with LLVM for 10–35 s when its shader cache is cold (a fresh
 * machine), and the switches' off paths and the trial are adapter-independent and checked on SwiftShader.
 */
export const MATMUL_VARIANT_CASES_ONE_SHAPE: KernelCase[] = [
  ...FORWARD_VARIANTS.map((variant) => forwardCase(variant, 37, 52, 68, true, true)),
  ...INPUT_GRAD_VARIANTS.map((variant) => inputGradCase(variant, 37, 68, 52, true)),
  ...WEIGHT_GRAD_CASES,
  STEP_DOWN_CASE,
];
