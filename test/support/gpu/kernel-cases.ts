/**
 * Every WGSL kernel against its CPU reference on random inputs, with sizes that are not multiples
 * of the workgroup size (nor, where the kernel allows it, of the 4×4 matmul tile). Written once and
 * run by two test files: test/browser/gpu/kernels.test.ts (Chromium) and test/gpu-node/kernels.test.ts
 * (Node + Dawn). Each case builds a plan, submits it once and compares what it reads back.
 */
import * as ref from '../../../src/gpu/reference/index.ts';
import { createTensor, KernelPlan, readTensor, type GPUTensor, type Kernels } from '../../../src/gpu/webgpu/kernels.ts';
import { logprobsBackwardInPlace } from '../../../src/gpu/webgpu/lm-head.ts';
import * as gpu from '../../../src/gpu/webgpu/ops.ts';
import { decodeF16, encodeF16 } from '../../../src/gpu/io/half.ts';
import { expectClose, randomArray, randomInts, seededUniform } from '../expect-close.ts';

/** One kernel check: a name for the test and a body that throws on mismatch. */
export interface KernelCase {
  name: string;
  run: (kernels: Kernels) => Promise<void>;
}

const TOLERANCE = { atol: 2e-5, rtol: 1e-4 };

function upload(kernels: Kernels, data: Float32Array | Int32Array): GPUTensor {
  return createTensor(kernels.device, data);
}

async function download(kernels: Kernels, tensor: GPUTensor, n: number): Promise<Float32Array> {
  return readTensor(kernels.device, tensor, n * 4);
}

/** Submits the plan, then reads each [tensor, expected] pair back and compares it. */
async function submitAndCompare(
  plan: KernelPlan,
  pairs: Array<[string, GPUTensor, Float32Array]>,
  tolerance = TOLERANCE,
): Promise<void> {
  plan.submit();
  for (const [label, tensor, expected] of pairs) {
    expectClose(await download(plan.kernels, tensor, expected.length), expected, { ...tolerance, label });
  }
}

/** matmul_forward (forced: the 4×4 tile), or matmul_forward_narrow (N below MATMUL_NARROW_ROWS, or forced); with accumulate, out starts random and alpha is 0.75. The other variants: matmul-variant-cases.ts. */
function matmulCase(N: number, IC: number, OC: number, withBias: boolean, accumulate = false, forced?: 'narrow'): KernelCase {
  const narrow = forced === 'narrow' || N < gpu.MATMUL_NARROW_ROWS;
  const kernel = narrow ? 'matmul_forward_narrow' : 'matmul_forward';
  const variant = narrow ? forced : 'tile4x4';
  return {
    name: `${kernel} matches reference (N=${N}, IC=${IC}, OC=${OC}${withBias ? ', bias' : ''}${accumulate ? ', alpha, accumulate' : ''})`,
    run: async (kernels) => {
      const alpha = accumulate ? 0.75 : 1;
      const inp = randomArray(N * IC, 1);
      const weight = randomArray(OC * IC, 2);
      const bias = withBias ? randomArray(OC, 3) : null;
      const out0 = accumulate ? randomArray(N * OC, 4) : new Float32Array(N * OC);
      const product = new Float32Array(N * OC);
      ref.matmulForward(product, inp, weight, null, N, IC, OC);
      const expected = out0.map((x, i) => x + alpha * product[i]! + (bias ? bias[i % OC]! : 0));
      const plan = new KernelPlan(kernels);
      const out = upload(kernels, out0);
      const biasTensor = bias ? upload(kernels, bias) : null;
      const dispatch = gpu.matmulForward(plan, out, upload(kernels, inp), upload(kernels, weight), biasTensor, N, IC, OC, { alpha, accumulate, ...(variant ? { variant } : {}) });
      if (!dispatch.label.startsWith(`${kernel}|`)) throw new Error(`expected ${kernel}, dispatched ${dispatch.label}`);
      await submitAndCompare(plan, [['out', out, expected]]);
    },
  };
}

/** Throws unless every named kernel is among the plan's dispatches. */
function expectDispatched(plan: KernelPlan, kernels: readonly string[]): void {
  const names = plan.commands.map((command) => ('clear' in command ? 'clear' : command.label.split('|')[0]!));
  for (const kernel of kernels) if (!names.includes(kernel)) throw new Error(`expected ${kernel} among ${names.join(', ')}`);
}

/** attention forward and backward against the reference; HS a multiple of 4 runs the *_vec4 kernels, otherwise the scalar ones. */
function attentionCase(HS: number): KernelCase {
  const kernel = HS % 4 === 0 ? 'attention_*_vec4' : 'attention_forward, attention_backward_dq/dkv';
  return {
    name: `attention forward and backward (${kernel}) match reference (causal, GQA, HS=${HS})`,
    run: async (kernels) => {
      const [B, T, NH, KVH] = [2, 11, 4, 2];
      const [nq, nkv, natt] = [B * T * NH * HS, B * T * KVH * HS, B * NH * T * T];
      const [q, k, v, dout] = [randomArray(nq, 1), randomArray(nkv, 2), randomArray(nkv, 3), randomArray(nq, 4)];
      const [dq0, dk0, dv0] = [randomArray(nq, 5), randomArray(nkv, 6), randomArray(nkv, 7)];
      const out = new Float32Array(nq);
      const att = new Float32Array(natt);
      ref.attentionForward(out, att, q, k, v, B, T, NH, KVH, HS);
      const [dq, dk, dv] = [dq0.slice(), dk0.slice(), dv0.slice()];
      ref.attentionBackward(dq, dk, dv, dout, q, k, v, att, B, T, NH, KVH, HS);
      const plan = new KernelPlan(kernels);
      const [outGpu, attGpu, dscores] = [createTensor(kernels.device, nq * 4), createTensor(kernels.device, natt * 4), createTensor(kernels.device, natt * 4)];
      const [qGpu, kGpu, vGpu] = [upload(kernels, q), upload(kernels, k), upload(kernels, v)];
      const [dqGpu, dkGpu, dvGpu] = [upload(kernels, dq0), upload(kernels, dk0), upload(kernels, dv0)];
      gpu.attentionForward(plan, outGpu, attGpu, qGpu, kGpu, vGpu, B, T, NH, KVH, HS);
      gpu.attentionBackward(plan, dqGpu, dkGpu, dvGpu, dscores, upload(kernels, dout), qGpu, kGpu, vGpu, attGpu, B, T, NH, KVH, HS);
      const names = plan.commands.map((command) => ('clear' in command ? 'clear' : command.label.split('|')[0]));
      const expected = HS % 4 === 0 ? ['attention_forward_vec4', 'attention_backward_dq_vec4', 'attention_backward_dkv_vec4'] : ['attention_forward', 'attention_backward_dq', 'attention_backward_dkv'];
      if (names.join() !== expected.join()) throw new Error(`dispatched ${names.join(', ')}, expected ${expected.join(', ')}`);
      await submitAndCompare(plan, [['out', outGpu, out], ['att', attGpu, att], ['dq', dqGpu, dq], ['dk', dkGpu, dk], ['dv', dvGpu, dv]]);
    },
  };
}

/** The attention checks: the vec4 kernels (HS = 8) and the scalar ones (HS = 6); also run on lavapipe (test/gpu-node/train-kernels-lavapipe.test.ts). */
export const ATTENTION_CASES: KernelCase[] = [8, 6].map((HS) => attentionCase(HS));

/** swiglu and residual forward and backward (the vec4 backward kernels at N = 1000, the scalar ones at N = 1001). */
export const SWIGLU_RESIDUAL_CASES: KernelCase[] = [1000, 1001].map((N) => ({
  name: `swiglu_forward, swiglu_backward${N % 4 === 0 ? '_vec4' : ''}, residual_forward and residual_backward${N % 4 === 0 ? '_vec4' : ''} match reference (N=${N})`,
  run: async (kernels: Kernels) => {
    const [gate, up, dout] = [randomArray(N, 1, 4), randomArray(N, 2), randomArray(N, 3)];
    const [dgate0, dup0] = [randomArray(N, 4), randomArray(N, 5)];
    const out = new Float32Array(N);
    ref.swigluForward(out, gate, up, N);
    const [dgate, dup] = [dgate0.slice(), dup0.slice()];
    ref.swigluBackward(dgate, dup, dout, gate, up, N);
    const sum = new Float32Array(N);
    ref.residualForward(sum, gate, up, N);
    const [da, db] = [dgate0.slice(), dup0.slice()];
    ref.residualBackward(da, db, dout, N);
    const plan = new KernelPlan(kernels);
    const [gateGpu, upGpu, doutGpu] = [upload(kernels, gate), upload(kernels, up), upload(kernels, dout)];
    const [outGpu, sumGpu] = [createTensor(kernels.device, N * 4), createTensor(kernels.device, N * 4)];
    const [dgateGpu, dupGpu, daGpu, dbGpu] = [upload(kernels, dgate0), upload(kernels, dup0), upload(kernels, dgate0), upload(kernels, dup0)];
    gpu.swigluForward(plan, outGpu, gateGpu, upGpu, N);
    gpu.swigluBackward(plan, dgateGpu, dupGpu, doutGpu, gateGpu, upGpu, N);
    gpu.residualForward(plan, sumGpu, gateGpu, upGpu, N);
    gpu.residualBackward(plan, daGpu, dbGpu, doutGpu, N);
    expectDispatched(plan, N % 4 === 0 ? ['swiglu_backward_vec4', 'residual_backward_vec4'] : ['swiglu_backward', 'residual_backward']);
    await submitAndCompare(plan, [['swiglu out', outGpu, out], ['dgate', dgateGpu, dgate], ['dup', dupGpu, dup], ['residual out', sumGpu, sum], ['da', daGpu, da], ['db', dbGpu, db]]);
  },
}));

/** grad norm, clipping and AdamW (adamw_update_vec4 at n = 5004, adamw_update at n = 5003). */
export const ADAMW_CASES: KernelCase[] = [5003, 5004].map((n) => ({
  name: `global_grad_norm, scale_in_place and adamw_update${n % 4 === 0 ? '_vec4' : ''} match reference (with clipping, n=${n})`,
  run: async (kernels: Kernels) => {
    const [params0, grads, m0, v0] = [randomArray(n, 1), randomArray(n, 2), randomArray(n, 3, 0.1), randomArray(n, 4, 0.1).map(Math.abs)];
    const maxNorm = 10;
    const norm = ref.globalGradNorm(grads, n);
    const factor = ref.clipFactor(norm, maxNorm);
    const clipped = grads.slice();
    ref.scaleInPlace(clipped, n, factor);
    const settings = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step: 3 };
    const [params, m, v] = [params0.slice(), m0.slice(), v0.slice()];
    ref.adamwUpdate(params, clipped, m, v, n, settings);
    const plan = new KernelPlan(kernels);
    const [paramsGpu, gradsGpu, mGpu, vGpu] = [upload(kernels, params0), upload(kernels, grads), upload(kernels, m0), upload(kernels, v0)];
    const result = createTensor(kernels.device, 8);
    const partials = createTensor(kernels.device, gpu.GRAD_NORM_PARTIALS * 4);
    const scaled = upload(kernels, grads);
    gpu.globalGradNorm(plan, result, partials, gradsGpu, n, maxNorm);
    gpu.adamwUpdate(plan, paramsGpu, gradsGpu, mGpu, vGpu, result, n, settings);
    gpu.scaleInPlace(plan, scaled, n, factor);
    expectDispatched(plan, [n % 4 === 0 ? 'adamw_update_vec4' : 'adamw_update']);
    await submitAndCompare(plan, [
      ['clip factor and norm', result, Float32Array.of(factor, norm)],
      ['scaled grads', scaled, clipped],
      ['params', paramsGpu, params],
      ['m', mGpu, m],
      ['v', vGpu, v],
    ], { atol: 1e-6, rtol: 1e-5 });
  },
}));

/** All kernel cases, in the order of the ops in src/gpu/reference. */
export const KERNEL_CASES: KernelCase[] = [
  {
    name: 'embedding_forward and embedding_backward match reference (repeated ids)',
    run: async (kernels) => {
      const [N, C, V] = [67, 37, 11];
      const ids = randomInts(N, 1, V);
      const wte = randomArray(V * C, 2);
      const dout = randomArray(N * C, 3);
      const dwte0 = randomArray(V * C, 4);
      const out = new Float32Array(N * C);
      ref.embeddingForward(out, ids, wte, N, C);
      const dwte = dwte0.slice();
      ref.embeddingBackward(dwte, dout, ids, N, C);
      const plan = new KernelPlan(kernels);
      const outGpu = createTensor(kernels.device, N * C * 4);
      const dwteGpu = upload(kernels, dwte0);
      const idsGpu = upload(kernels, ids);
      gpu.embeddingForward(plan, outGpu, idsGpu, upload(kernels, wte), N, C);
      gpu.embeddingBackward(plan, dwteGpu, upload(kernels, dout), idsGpu, N, C);
      await submitAndCompare(plan, [['out', outGpu, out], ['dwte', dwteGpu, dwte]]);
    },
  },
  {
    name: 'embedding_forward over a table in row chunks (one dispatch per chunk, each writing its own ids) matches reference',
    run: async (kernels) => {
      const [N, C, V] = [53, 37, 23];
      const ids = randomInts(N, 5, V);
      ids[0] = 0;
      ids[1] = V - 1;
      ids[2] = 12; // the first row of the second chunk
      ids[3] = 11; // the last row of the first
      const wte = randomArray(V * C, 6);
      const out = new Float32Array(N * C);
      ref.embeddingForward(out, ids, wte, N, C);
      const plan = new KernelPlan(kernels);
      const outGpu = createTensor(kernels.device, N * C * 4);
      const idsGpu = upload(kernels, ids);
      for (const [firstRow, rows] of [[0, 12], [12, V - 12]] as const) {
        gpu.embeddingForward(plan, outGpu, idsGpu, upload(kernels, wte.slice(firstRow * C, (firstRow + rows) * C)), N, C, { firstRow, rows });
      }
      await submitAndCompare(plan, [['out', outGpu, out]]);
    },
  },
  {
    name: 'copy_columns moves a block of columns into and out of a wider matrix, leaving the rest',
    run: async (kernels) => {
      const [N, width, wide, column] = [19, 7, 29, 13];
      const block = randomArray(N * width, 7);
      const matrix = randomArray(N * wide, 8);
      const expectedMatrix = matrix.slice();
      for (let n = 0; n < N; n++) for (let j = 0; j < width; j++) expectedMatrix[n * wide + column + j] = block[n * width + j]!;
      const plan = new KernelPlan(kernels);
      const matrixGpu = upload(kernels, matrix);
      const back = createTensor(kernels.device, N * width * 4);
      gpu.copyColumns(plan, matrixGpu, upload(kernels, block), N, width, { width, column: 0 }, { width: wide, column });
      gpu.copyColumns(plan, back, matrixGpu, N, width, { width: wide, column }, { width, column: 0 });
      await submitAndCompare(plan, [['matrix', matrixGpu, expectedMatrix], ['block read back', back, block]], { atol: 0, rtol: 0 });
    },
  },
  {
    name: 'rmsnorm_forward and rmsnorm_backward match reference',
    run: async (kernels) => {
      const [N, C, eps] = [71, 45, 1e-5];
      const inp = randomArray(N * C, 1);
      const weight = randomArray(C, 2);
      const dout = randomArray(N * C, 3);
      const dinp0 = randomArray(N * C, 4);
      const dweight0 = randomArray(C, 5);
      const out = new Float32Array(N * C);
      const rstd = new Float32Array(N);
      ref.rmsnormForward(out, rstd, inp, weight, N, C, eps);
      const [dinp, dweight] = [dinp0.slice(), dweight0.slice()];
      ref.rmsnormBackward(dinp, dweight, dout, inp, weight, rstd, N, C);
      const plan = new KernelPlan(kernels);
      const [outGpu, rstdGpu] = [createTensor(kernels.device, N * C * 4), createTensor(kernels.device, N * 4)];
      const [inpGpu, weightGpu] = [upload(kernels, inp), upload(kernels, weight)];
      const [dinpGpu, dweightGpu] = [upload(kernels, dinp0), upload(kernels, dweight0)];
      gpu.rmsnormForward(plan, outGpu, rstdGpu, inpGpu, weightGpu, N, C, eps);
      gpu.rmsnormBackward(plan, dinpGpu, dweightGpu, upload(kernels, dout), inpGpu, weightGpu, rstdGpu, N, C);
      await submitAndCompare(plan, [['out', outGpu, out], ['rstd', rstdGpu, rstd], ['dinp', dinpGpu, dinp], ['dweight', dweightGpu, dweight]]);
    },
  },
  matmulCase(37, 52, 68, true),
  matmulCase(5, 8, 4, false),
  matmulCase(11, 52, 68, true, true),
  matmulCase(1, 52, 260, true),
  matmulCase(3, 36, 20, false, true, 'narrow'),
  {
    name: 'matmul_backward matches reference (dinp, dweight, dbias accumulate)',
    run: async (kernels) => {
      const [N, IC, OC] = [37, 52, 68];
      const dout = randomArray(N * OC, 1);
      const inp = randomArray(N * IC, 2);
      const weight = randomArray(OC * IC, 3);
      const [dinp0, dweight0, dbias0] = [randomArray(N * IC, 4), randomArray(OC * IC, 5), randomArray(OC, 6)];
      const [dinp, dweight, dbias] = [dinp0.slice(), dweight0.slice(), dbias0.slice()];
      ref.matmulBackward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC);
      const plan = new KernelPlan(kernels);
      const [dinpGpu, dweightGpu, dbiasGpu] = [upload(kernels, dinp0), upload(kernels, dweight0), upload(kernels, dbias0)];
      gpu.matmulBackward(plan, dinpGpu, dweightGpu, dbiasGpu, upload(kernels, dout), upload(kernels, inp), upload(kernels, weight), N, IC, OC);
      await submitAndCompare(plan, [['dinp', dinpGpu, dinp], ['dweight', dweightGpu, dweight], ['dbias', dbiasGpu, dbias]]);
    },
  },
  {
    name: 'rope_forward and rope_backward match reference',
    run: async (kernels) => {
      const [B, T, NH, HS, theta] = [2, 13, 3, 8, 10000];
      const n = B * T * NH * HS;
      const inp = randomArray(n, 1);
      const dout = randomArray(n, 2);
      const dinp0 = randomArray(n, 3);
      const positions = Int32Array.from({ length: B * T }, (_, i) => (i % T) + 3 * Math.floor(i / T));
      const out = new Float32Array(n);
      ref.ropeForward(out, inp, positions, B, T, NH, HS, theta);
      const dinp = dinp0.slice();
      ref.ropeBackward(dinp, dout, positions, B, T, NH, HS, theta);
      const plan = new KernelPlan(kernels);
      const outGpu = createTensor(kernels.device, n * 4);
      const dinpGpu = upload(kernels, dinp0);
      const positionsGpu = upload(kernels, positions);
      gpu.ropeForward(plan, outGpu, upload(kernels, inp), positionsGpu, B, T, NH, HS, theta);
      gpu.ropeBackward(plan, dinpGpu, upload(kernels, dout), positionsGpu, B, T, NH, HS, theta);
      await submitAndCompare(plan, [['out', outGpu, out], ['dinp', dinpGpu, dinp]]);
    },
  },
  ...ATTENTION_CASES,
  ...SWIGLU_RESIDUAL_CASES,
  {
    name: 'logprobs_forward, logprobs_backward, cross_entropy_forward and entropy_forward match reference',
    run: async (kernels) => {
      const [N, V, temperature] = [67, 259, 0.7];
      const logits = randomArray(N * V, 1, 6);
      const targets = randomInts(N, 2, V);
      const dlogprobs = randomArray(N, 3);
      dlogprobs[5] = 0; // a masked token
      const dlogits0 = randomArray(N * V, 4);
      const [logprobs, losses, entropy] = [new Float32Array(N), new Float32Array(N), new Float32Array(N)];
      ref.logprobsForward(logprobs, logits, targets, N, V, temperature);
      const dlogits = dlogits0.slice();
      ref.logprobsBackward(dlogits, dlogprobs, logits, targets, N, V, temperature);
      ref.crossEntropyForward(losses, logits, targets, N, V);
      ref.entropyForward(entropy, logits, N, V, temperature);
      const plan = new KernelPlan(kernels);
      const [logitsGpu, targetsGpu] = [upload(kernels, logits), upload(kernels, targets)];
      const [logprobsGpu, lossesGpu, entropyGpu] = [0, 1, 2].map(() => createTensor(kernels.device, N * 4)) as [GPUTensor, GPUTensor, GPUTensor];
      const dlogitsGpu = upload(kernels, dlogits0);
      gpu.logprobsForward(plan, logprobsGpu, logitsGpu, targetsGpu, N, V, temperature);
      gpu.logprobsBackward(plan, dlogitsGpu, upload(kernels, dlogprobs), logitsGpu, targetsGpu, N, V, temperature);
      gpu.crossEntropyForward(plan, lossesGpu, logitsGpu, targetsGpu, N, V);
      gpu.entropyForward(plan, entropyGpu, logitsGpu, N, V, temperature);
      await submitAndCompare(plan, [['logprobs', logprobsGpu, logprobs], ['dlogits', dlogitsGpu, dlogits], ['losses', lossesGpu, losses], ['entropy', entropyGpu, entropy]], { atol: 5e-5, rtol: 1e-4 });
    },
  },
  {
    name: 'logprobs_backward_in_place matches reference (the logits of a chunk become their gradient; a masked row becomes zeros)',
    run: async (kernels) => {
      const [N, V, temperature] = [67, 1037, 0.8];
      const logits = randomArray(N * V, 11, 8);
      const targets = randomInts(N, 12, V);
      const dlogprobs = randomArray(N, 13);
      dlogprobs[3] = 0; // a masked token
      const [logprobs, entropy, dlogits] = [new Float32Array(N), new Float32Array(N), logits.slice()];
      ref.logprobsBackwardInPlace(dlogits, logprobs, entropy, dlogprobs, targets, N, V, temperature);
      if (dlogits.subarray(3 * V, 4 * V).some((value) => value !== 0)) throw new Error('the reference left a masked row non-zero');
      const plan = new KernelPlan(kernels);
      const logitsGpu = upload(kernels, logits);
      const [logprobsGpu, entropyGpu] = [createTensor(kernels.device, N * 4), createTensor(kernels.device, N * 4)];
      logprobsBackwardInPlace(plan, logitsGpu, logprobsGpu, entropyGpu, upload(kernels, dlogprobs), upload(kernels, targets), N, V, temperature);
      await submitAndCompare(plan, [['logprobs', logprobsGpu, logprobs], ['entropy', entropyGpu, entropy], ['dlogits', logitsGpu, dlogits]], { atol: 5e-5, rtol: 1e-4 });
    },
  },
  ...ADAMW_CASES,
  {
    name: 'scale_in_place covers more threads than one grid dimension holds (2-D grid)',
    run: async (kernels) => {
      const n = kernels.device.limits.maxComputeWorkgroupsPerDimension * 64 + 1000;
      const x = randomArray(n, 1);
      const plan = new KernelPlan(kernels);
      const xGpu = upload(kernels, x);
      const workgroups = kernels.grid(n);
      if (workgroups[1] < 2) throw new Error(`expected a folded grid for ${n} threads, got ${workgroups}`);
      gpu.scaleInPlace(plan, xGpu, n, -0.5);
      await submitAndCompare(plan, [['x', xGpu, x.map((value) => value * -0.5)]]);
    },
  },
  {
    name: 'convert_f32_to_f16 and convert_f16_to_f32 match the CPU codec bit for bit (ties to even, subnormals, overflow to Infinity, NaN)',
    run: async (kernels) => {
      // values over 20 orders of magnitude (f16's normals, subnormals, values that underflow to 0 or
      // overflow to Infinity), then the edges: ties, the largest half and just past it, signed zero
      const n = 4 * 67;
      const random = seededUniform(21);
      const values = Float32Array.from({ length: n }, () => (random() < 0.5 ? -1 : 1) * 10 ** (random() * 20 - 12) * (1 + random()));
      const edges = [0, -0, 1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -24, 3 * 2 ** -25, 2 ** -26, 65504, 65519, 65520, -70000, Infinity, -Infinity, NaN, 2 ** -14 - 2 ** -25];
      values.set(edges);
      const bits = encodeF16(values); // the CPU reference
      const plan = new KernelPlan(kernels);
      const halves = { ...createTensor(kernels.device, n * 2, 'f16 activations'), dtype: 'f16' as const };
      const widened = createTensor(kernels.device, n * 4);
      gpu.convertF32ToF16(plan, halves, upload(kernels, values), n);
      gpu.convertF16ToF32(plan, widened, halves, n);
      plan.submit();
      const gpuBits = new Uint16Array((await readTensor(kernels.device, halves, n * 2)).buffer);
      expectClose(gpuBits, bits, { atol: 0, rtol: 0, label: 'f16 bits' });
      const expected = decodeF16(bits);
      const back = await download(kernels, widened, n);
      const backBits = new Uint32Array(back.buffer);
      const expectedBits = new Uint32Array(expected.buffer);
      for (let i = 0; i < n; i++) {
        if (Number.isNaN(expected[i]!) ? !Number.isNaN(back[i]!) : backBits[i] !== expectedBits[i]) throw new Error(`widened value ${i}: ${back[i]} (bits ${backBits[i]}), expected ${expected[i]} (bits ${expectedBits[i]})`);
      }
      if (!(gpuBits[10] === 0x7c00 && gpuBits[9] === 0x7bff && gpuBits[8] === 0x7bff)) throw new Error('65520 must overflow to Infinity, 65504 and 65519 round to 65504');
    },
  },
  {
    name: 'lora_forward and lora_backward match reference',
    run: async (kernels) => {
      const [N, IC, OC, rank, alpha] = [29, 36, 44, 8, 16];
      const [inp, loraA, loraB, dout] = [randomArray(N * IC, 1), randomArray(rank * IC, 2), randomArray(OC * rank, 3), randomArray(N * OC, 4)];
      const [out0, dinp0, dA0, dB0] = [randomArray(N * OC, 5), randomArray(N * IC, 6), randomArray(rank * IC, 7), randomArray(OC * rank, 8)];
      const out = out0.slice();
      const hidden = new Float32Array(N * rank);
      ref.loraForward(out, hidden, inp, loraA, loraB, N, IC, OC, rank, alpha);
      const [dinp, dA, dB] = [dinp0.slice(), dA0.slice(), dB0.slice()];
      ref.loraBackward(dinp, dA, dB, new Float32Array(N * rank), dout, inp, hidden, loraA, loraB, N, IC, OC, rank, alpha);
      const plan = new KernelPlan(kernels);
      const [inpGpu, aGpu, bGpu] = [upload(kernels, inp), upload(kernels, loraA), upload(kernels, loraB)];
      const [outGpu, hiddenGpu, dhidden] = [upload(kernels, out0), createTensor(kernels.device, N * rank * 4), createTensor(kernels.device, N * rank * 4)];
      const [dinpGpu, dAGpu, dBGpu] = [upload(kernels, dinp0), upload(kernels, dA0), upload(kernels, dB0)];
      gpu.loraForward(plan, outGpu, hiddenGpu, inpGpu, aGpu, bGpu, N, IC, OC, rank, alpha);
      gpu.loraBackward(plan, dinpGpu, dAGpu, dBGpu, dhidden, upload(kernels, dout), inpGpu, hiddenGpu, aGpu, bGpu, N, IC, OC, rank, alpha);
      await submitAndCompare(plan, [['out', outGpu, out], ['hidden', hiddenGpu, hidden], ['dinp', dinpGpu, dinp], ['dloraA', dAGpu, dA], ['dloraB', dBGpu, dB]], { atol: 1e-4, rtol: 1e-4 });
    },
  },
];
