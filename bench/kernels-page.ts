/**
 * The kernel benchmark's page (opened by bench/kernels.ts in headless Chromium): our matmul at the
 * model's shapes against the same product through jax-js and tfjs-webgpu on the same adapter, our
 * backward matmuls, forward and backward time per op for a small model config, and a whole training
 * step of that model. Times are wall-clock around a batch of back-to-back launches ending in one
 * sync (no readback), median of REPS, the three libraries interleaved within each repetition; each
 * result is first checked against a CPU product. It sets
 * `window.benchResult` when done. It is a measurement, not a test.
 */
import { init as initJax, numpy as np, blockUntilReady, defaultDevice, vjp, type Array as JaxArray } from '@jax-js/jax';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { requestGPUDevice, type GPUContext } from '../src/gpu/webgpu/device.ts';
import { createTensor, KernelPlan, kernelsFor, readTensor, type GPUTensor, type Kernels } from '../src/gpu/webgpu/kernels.ts';
import { forceMatmul, tuneMatmul } from '../src/gpu/webgpu/matmul-tuning.ts';
import { parseMatmulChoice } from '../src/gpu/webgpu/matmul-variants.ts';
import * as ops from '../src/gpu/webgpu/ops.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';

/** The page's options from its URL: `?quick` (fewer repetitions, no per-op table; for software adapters), `?matmul=forward=tile4x4,...` (force kernels). */
const QUERY = new URLSearchParams(location.search);
const QUICK = QUERY.has('quick');
/** Repetitions per measurement; the median is reported. */
const REPS = QUICK ? 3 : 7;
/** A batch of launches aims at this many floating-point operations (clamped to [2, 32] launches). */
const BATCH_FLOP = 0.15e9;

/** Matmul shapes M×K×N of the model: square, decode-skinny, LoRA-skinny, and a training projection. */
const MATMUL_SHAPES: Array<[string, number, number, number]> = [
  ['square 256', 256, 256, 256],
  ['square 512', 512, 512, 512],
  ['decode 8×576×576', 8, 576, 576],
  ['decode 8×576×1536', 8, 576, 1536],
  ['LoRA A 64×576×16', 64, 576, 16],
  ['LoRA B 64×16×576', 64, 16, 576],
  ['train 128×576×1536', 128, 576, 1536],
];

/** The small model the per-op times are for (SmolLM2-like widths, 2 layers, a 4k vocabulary). */
const MODEL: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  vocab_size: 4096,
  hidden_size: 256,
  intermediate_size: 768,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 64,
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: true,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
};
const [MODEL_B, MODEL_T] = [2, 64];

const log = (line: string): void => {
  const element = document.getElementById('log')!;
  element.textContent += `\n${line}`;
};

function seededArray(n: number, seed: number): Float32Array {
  let state = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (state / 4294967296) * 2 - 1;
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Returns ||c − ref||_F / ||ref||_F over the rows checked. */
function relativeError(c: Float32Array, reference: Float64Array): number {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < reference.length; i++) {
    diff += (c[i]! - reference[i]!) ** 2;
    norm += reference[i]! ** 2;
  }
  return Math.sqrt(diff / norm);
}

/** Times `batch` launches of `launch` ending in `sync`, REPS times after one warm-up batch; returns the median ms per launch. */
async function timeBatched(batch: number, launch: () => void, sync: () => Promise<void>): Promise<number> {
  for (let i = 0; i < batch; i++) launch();
  await sync();
  const times: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) launch();
    await sync();
    times.push((performance.now() - start) / batch);
  }
  return median(times);
}

/** One library's batch of launches ending in a sync. */
interface Runner {
  run: () => Promise<void>;
}

/** Times the runners interleaved (rotating order within each of REPS rounds, after one warm-up each) so that load changes hit all alike; returns median ms per run. */
async function timeInterleaved(runners: Runner[]): Promise<number[]> {
  for (const runner of runners) await runner.run();
  const times: number[][] = runners.map(() => []);
  for (let rep = 0; rep < REPS; rep++) {
    for (let j = 0; j < runners.length; j++) {
      const index = (rep + j) % runners.length;
      const start = performance.now();
      await runners[index]!.run();
      times[index]!.push(performance.now() - start);
    }
  }
  return times.map(median);
}

interface MatmulRow {
  shape: string;
  M: number;
  K: number;
  N: number;
  oursMs: number;
  jaxMs: number;
  tfjsMs: number;
  oursGflops: number;
  jaxGflops: number;
  tfjsGflops: number;
  relErr: { ours: number; jax: number; tfjs: number };
}

async function benchMatmul(kernels: Kernels, name: string, M: number, K: number, N: number): Promise<MatmulRow> {
  const a = seededArray(M * K, 1); // (M, K)
  const w = seededArray(N * K, 2); // (N, K): our nn.Linear layout
  const b = new Float32Array(K * N); // (K, N) = wᵀ: the peers' natural layout
  for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) b[k * N + n] = w[n * K + k]!;
  const reference = new Float64Array(M * N);
  for (let m = 0; m < M; m++) for (let n = 0; n < N; n++) {
    let sum = 0;
    for (let k = 0; k < K; k++) sum += a[m * K + k]! * w[n * K + k]!;
    reference[m * N + n] = sum;
  }
  const flop = 2 * M * K * N;
  const batch = Math.max(2, Math.min(32, Math.round(BATCH_FLOP / flop)));

  // ours: a plan of `batch` dispatches of one recorded matmul, submitted once
  const device = kernels.device;
  const out = createTensor(device, M * N * 4);
  const plan = new KernelPlan(kernels);
  const dispatch = ops.matmulForward(plan, out, createTensor(device, a), createTensor(device, w), null, M, K, N);
  plan.submit();
  const oursErr = relativeError(await readTensor(device, out, M * N * 4), reference);
  const batchPlan = new KernelPlan(kernels);
  for (let i = 0; i < batch; i++) batchPlan.add(dispatch);
  const ours: Runner = {
    run: async () => {
      batchPlan.submit();
      await device.queue.onSubmittedWorkDone();
    },
  };

  // jax-js: eager np.matmul, blockUntilReady on all outputs
  const ja = np.array(a, { shape: [M, K] });
  const jb = np.array(b, { shape: [K, N] });
  const first = np.matmul(ja.ref, jb.ref);
  const jaxErr = relativeError(new Float32Array((await first.data()) as Float32Array), reference);
  const jax: Runner = {
    run: async () => {
      const pending: JaxArray[] = [];
      for (let i = 0; i < batch; i++) pending.push(np.matmul(ja.ref, jb.ref));
      await blockUntilReady(pending);
      for (const x of pending) x.dispose();
    },
  };

  // tfjs-webgpu: tf.matMul, await the last output's data
  const ta = tf.tensor2d(a, [M, K]);
  const tb = tf.tensor2d(b, [K, N]);
  const tfFirst = tf.matMul(ta, tb);
  const tfjsErr = relativeError((await tfFirst.data()) as Float32Array, reference);
  tfFirst.dispose();
  const tfjs: Runner = {
    run: async () => {
      const pending: tf.Tensor[] = [];
      for (let i = 0; i < batch; i++) pending.push(tf.matMul(ta, tb));
      await pending[pending.length - 1]!.data();
      for (const x of pending) x.dispose();
    },
  };

  const [oursMs, jaxMs, tfjsMs] = (await timeInterleaved([ours, jax, tfjs])).map((ms) => ms / batch) as [number, number, number];
  ja.dispose();
  jb.dispose();
  ta.dispose();
  tb.dispose();

  const gflops = (ms: number): number => flop / ms / 1e6;
  const row = { shape: name, M, K, N, oursMs, jaxMs, tfjsMs, oursGflops: gflops(oursMs), jaxGflops: gflops(jaxMs), tfjsGflops: gflops(tfjsMs), relErr: { ours: oursErr, jax: jaxErr, tfjs: tfjsErr } };
  log(`${name}: ours ${row.oursGflops.toFixed(2)}  jax ${row.jaxGflops.toFixed(2)}  tfjs ${row.tfjsGflops.toFixed(2)} GFLOP/s`);
  return row;
}

/** One backward product of `x·Wᵀ` at M×K×N: ours (dinp = dout·W or dweight = doutᵀ·x) against jax-js's gradient of np.matmul (vjp) on the same adapter. */
interface BackwardRow {
  shape: string;
  product: 'dinp' | 'dweight';
  M: number;
  K: number;
  N: number;
  oursMs: number;
  jaxMs: number;
  oursGflops: number;
  jaxGflops: number;
  relErr: { ours: number; jax: number };
}

async function benchBackward(kernels: Kernels, name: string, M: number, K: number, N: number, product: 'dinp' | 'dweight'): Promise<BackwardRow> {
  const x = seededArray(M * K, 1); // (M, K)
  const w = seededArray(N * K, 2); // (N, K): ours
  const dout = seededArray(M * N, 3); // (M, N)
  const b = new Float32Array(K * N); // (K, N) = wᵀ: jax-js's layout
  for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) b[k * N + n] = w[n * K + k]!;
  // float64 references: dinp (M, K) = dout·W; dweight (N, K) = doutᵀ·x (jax-js's db is its transpose, (K, N))
  const reference = new Float64Array(product === 'dinp' ? M * K : N * K);
  const referenceT = new Float64Array(reference.length);
  if (product === 'dinp') {
    for (let m = 0; m < M; m++) for (let k = 0; k < K; k++) {
      let sum = 0;
      for (let n = 0; n < N; n++) sum += dout[m * N + n]! * w[n * K + k]!;
      reference[m * K + k] = sum;
      referenceT[m * K + k] = sum;
    }
  } else {
    for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) {
      let sum = 0;
      for (let m = 0; m < M; m++) sum += dout[m * N + n]! * x[m * K + k]!;
      reference[n * K + k] = sum;
      referenceT[k * N + n] = sum;
    }
  }
  const flop = 2 * M * K * N;
  const batch = Math.max(2, Math.min(32, Math.round(BATCH_FLOP / flop)));
  const device = kernels.device;
  const [xGpu, wGpu, doutGpu] = [createTensor(device, x), createTensor(device, w), createTensor(device, dout)];
  const out = createTensor(device, reference.length * 4);
  const record = (plan: KernelPlan): void => {
    if (product === 'dinp') ops.matmulBackwardInput(plan, out, doutGpu, wGpu, M, K, N, { accumulate: false });
    else ops.matmulBackwardWeight(plan, out, doutGpu, xGpu, M, K, N);
  };
  const first = new KernelPlan(kernels);
  record(first);
  first.submit();
  const oursErr = relativeError(await readTensor(device, out, reference.length * 4), reference);
  const batchPlan = new KernelPlan(kernels);
  for (let i = 0; i < batch; i++) record(batchPlan);
  const ours: Runner = {
    run: async () => {
      batchPlan.submit();
      await device.queue.onSubmittedWorkDone();
    },
  };

  // jax-js: the vector-Jacobian product of np.matmul with respect to one operand, applied to dout
  const ja = np.array(x, { shape: [M, K] });
  const jb = np.array(b, { shape: [K, N] });
  const jdout = np.array(dout, { shape: [M, N] });
  const [primal, pullback] = product === 'dinp' ? vjp((a: JaxArray) => np.matmul(a, jb.ref), [ja.ref]) : vjp((bb: JaxArray) => np.matmul(ja.ref, bb), [jb.ref]);
  primal.dispose();
  const cotangent = (): JaxArray => (pullback(jdout.ref) as unknown as JaxArray[])[0]!;
  const jaxFirst = cotangent();
  const jaxErr = relativeError(new Float32Array((await jaxFirst.data()) as Float32Array), referenceT);
  const jax: Runner = {
    run: async () => {
      const pending: JaxArray[] = [];
      for (let i = 0; i < batch; i++) pending.push(cotangent());
      await blockUntilReady(pending);
      for (const result of pending) result.dispose();
    },
  };
  const [oursMs, jaxMs] = (await timeInterleaved([ours, jax])).map((ms) => ms / batch) as [number, number];
  pullback.dispose();
  ja.dispose();
  jb.dispose();
  jdout.dispose();
  batchPlan.destroy();
  first.destroy();
  for (const tensor of [xGpu, wGpu, doutGpu, out]) tensor.buffer.destroy();
  const gflops = (ms: number): number => flop / ms / 1e6;
  const row = { shape: name, product, M, K, N, oursMs, jaxMs, oursGflops: gflops(oursMs), jaxGflops: gflops(jaxMs), relErr: { ours: oursErr, jax: jaxErr } };
  log(`${name} ${product}: ours ${row.oursGflops.toFixed(2)}  jax ${row.jaxGflops.toFixed(2)} GFLOP/s`);
  return row;
}

/** Times a plan (median ms per submit) on our device. */
async function timePlan(kernels: Kernels, plan: KernelPlan): Promise<number> {
  return timeBatched(1, () => plan.submit(), () => kernels.device.queue.onSubmittedWorkDone());
}

/** Returns the GPU time of a plan's dispatches in ms (median of REPS), from timestamp queries around one compute pass; null without timestamp-query. */
async function gpuTimePlan(context: GPUContext, plan: KernelPlan): Promise<number | null> {
  if (!context.features.timestampQuery) return null;
  const device = context.device;
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const times: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
    for (const command of plan.commands) {
      if ('clear' in command) throw new Error('gpuTimePlan: plans with clears are not timed');
      pass.setPipeline(command.pipeline);
      pass.setBindGroup(0, command.bindGroup);
      pass.dispatchWorkgroups(...command.workgroups);
    }
    pass.end();
    encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, readback, 0, 16);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const [begin, end] = new BigUint64Array(readback.getMappedRange().slice(0));
    readback.unmap();
    times.push(Number(end! - begin!) / 1e6);
  }
  querySet.destroy();
  resolve.destroy();
  readback.destroy();
  return median(times);
}

interface OpRow {
  op: string;
  shape: string;
  forwardMs: number;
  backwardMs: number | null;
  /** Kernel time from timestamp queries (null without timestamp-query). */
  forwardGpuMs: number | null;
  backwardGpuMs: number | null;
}

/** Forward and backward time of each op at the small model's shapes (one layer's worth, N = B·T tokens). */
async function benchOps(context: GPUContext, kernels: Kernels): Promise<OpRow[]> {
  const device = kernels.device;
  const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, num_key_value_heads: KVH, head_dim: HS, vocab_size: V } = MODEL;
  const [B, T] = [MODEL_B, MODEL_T];
  const N = B * T;
  const t = (floats: number, seed = 0): GPUTensor => (seed ? createTensor(device, seededArray(floats, seed)) : createTensor(device, floats * 4));
  const ids = createTensor(device, Int32Array.from({ length: N }, (_, i) => (i * 31) % V));
  const positions = createTensor(device, Int32Array.from({ length: N }, (_, i) => i % T));
  const rows: OpRow[] = [];
  const measure = async (op: string, shape: string, forward: (plan: KernelPlan) => void, backward: ((plan: KernelPlan) => void) | null): Promise<void> => {
    const forwardPlan = new KernelPlan(kernels);
    forward(forwardPlan);
    const forwardMs = await timePlan(kernels, forwardPlan);
    const forwardGpuMs = await gpuTimePlan(context, forwardPlan);
    let backwardMs: number | null = null;
    let backwardGpuMs: number | null = null;
    if (backward) {
      const backwardPlan = new KernelPlan(kernels);
      backward(backwardPlan);
      backwardMs = await timePlan(kernels, backwardPlan);
      backwardGpuMs = await gpuTimePlan(context, backwardPlan);
    }
    rows.push({ op, shape, forwardMs, backwardMs, forwardGpuMs, backwardGpuMs });
    log(`${op} ${shape}: forward ${forwardMs.toFixed(2)} ms (GPU ${forwardGpuMs?.toFixed(2) ?? '-'}), backward ${backwardMs?.toFixed(2) ?? '-'} ms (GPU ${backwardGpuMs?.toFixed(2) ?? '-'})`);
  };
  const wte = t(V * C, 1);
  await measure('embedding', `N=${N} C=${C}`, (p) => ops.embeddingForward(p, t(N * C), ids, wte, N, C), (p) => ops.embeddingBackward(p, t(V * C), t(N * C, 2), ids, N, C));
  const x = t(N * C, 3);
  const rstd = t(N);
  const norm = t(C, 4);
  await measure('rmsnorm', `N=${N} C=${C}`, (p) => ops.rmsnormForward(p, t(N * C), rstd, x, norm, N, C, 1e-5), (p) => ops.rmsnormBackward(p, t(N * C), t(C), t(N * C, 5), x, norm, rstd, N, C));
  for (const [name, IC, OC] of [['q_proj', C, NH * HS], ['gate_proj', C, I], ['down_proj', I, C], ['lm_head', C, V]] as Array<[string, number, number]>) {
    const inp = t(N * IC, 6);
    const weight = t(OC * IC, 7);
    await measure(`matmul ${name}`, `${N}×${IC}×${OC}`, (p) => ops.matmulForward(p, t(N * OC), inp, weight, null, N, IC, OC), (p) => ops.matmulBackward(p, t(N * IC), t(OC * IC), null, t(N * OC, 8), inp, weight, N, IC, OC));
  }
  const q = t(N * NH * HS, 9);
  await measure('rope', `B=${B} T=${T} NH=${NH} HS=${HS}`, (p) => ops.ropeForward(p, t(N * NH * HS), q, positions, B, T, NH, HS, 10000), (p) => ops.ropeBackward(p, t(N * NH * HS), q, positions, B, T, NH, HS, 10000));
  const [k, v, att] = [t(N * KVH * HS, 10), t(N * KVH * HS, 11), t(B * NH * T * T)];
  await measure(
    'attention',
    `B=${B} T=${T} NH=${NH} KVH=${KVH} HS=${HS}`,
    (p) => ops.attentionForward(p, t(N * NH * HS), att, q, k, v, B, T, NH, KVH, HS),
    (p) => ops.attentionBackward(p, t(N * NH * HS), t(N * KVH * HS), t(N * KVH * HS), t(B * NH * T * T), t(N * NH * HS, 12), q, k, v, att, B, T, NH, KVH, HS),
  );
  const [gate, up] = [t(N * I, 13), t(N * I, 14)];
  await measure('swiglu', `N=${N * I}`, (p) => ops.swigluForward(p, t(N * I), gate, up, N * I), (p) => ops.swigluBackward(p, t(N * I), t(N * I), t(N * I, 15), gate, up, N * I));
  await measure('residual', `N=${N * C}`, (p) => ops.residualForward(p, t(N * C), x, t(N * C, 16), N * C), (p) => ops.residualBackward(p, t(N * C), t(N * C), x, N * C));
  const logits = t(N * V, 17);
  await measure('logprobs', `N=${N} V=${V}`, (p) => ops.logprobsForward(p, t(N), logits, ids, N, V, 1), (p) => ops.logprobsBackward(p, t(N * V), t(N, 18), logits, ids, N, V, 1));
  const n = 1_000_000;
  const grads = t(n, 19);
  await measure('grad norm + AdamW', `n=${n}`, (p) => {
    const result = t(4);
    ops.globalGradNorm(p, result, t(ops.GRAD_NORM_PARTIALS), grads, n, 1);
    ops.adamwUpdate(p, t(n, 20), grads, t(n), t(n), result, n, { lr: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, step: 1 });
  }, null);
  return rows;
}

/** Whole-model times through the WebGPU backend: forward to logits, and backward + AdamW step. */
async function benchModel(context: GPUContext): Promise<{ forwardMs: number; trainStepMs: number }> {
  const [B, T] = [MODEL_B, MODEL_T];
  const N = B * T;
  const backend = await createWebGPUBackend(context, MODEL, { seed: 1 });
  const ids = Int32Array.from({ length: N }, (_, i) => (i * 7) % MODEL.vocab_size);
  const targets = Int32Array.from({ length: N }, (_, i) => (i * 7 + 1) % MODEL.vocab_size);
  const weights = new Float32Array(N).fill(-1 / N);
  const forwardTimes: number[] = [];
  const stepTimes: number[] = [];
  await backend.forward(ids, B, T);
  for (let rep = 0; rep < REPS; rep++) {
    let start = performance.now();
    await backend.logprobs(ids, targets, B, T, 1);
    forwardTimes.push(performance.now() - start);
    start = performance.now();
    await backend.zeroGrad();
    await backend.backward(ids, targets, weights, B, T, 1);
    await backend.step({ lr: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
    stepTimes.push(performance.now() - start);
  }
  backend.dispose();
  return { forwardMs: median(forwardTimes), trainStepMs: median(stepTimes) };
}

async function main(): Promise<unknown> {
  const context = await requestGPUDevice({ label: 'bench' });
  const kernels = kernelsFor(context);
  const forced = QUERY.get('matmul');
  const choice = forced ? forceMatmul(kernels, parseMatmulChoice(forced)) : await tuneMatmul(kernels);
  log(`adapter ${JSON.stringify(context.adapter)}; matmul kernels ${JSON.stringify(choice)}`);
  await initJax('webgpu');
  defaultDevice('webgpu');
  await tf.setBackend('webgpu');
  await tf.ready();

  const matmul: MatmulRow[] = [];
  const backward: BackwardRow[] = [];
  for (const [name, M, K, N] of MATMUL_SHAPES) {
    matmul.push(await benchMatmul(kernels, name, M, K, N));
    backward.push(await benchBackward(kernels, name, M, K, N, 'dinp'));
    backward.push(await benchBackward(kernels, name, M, K, N, 'dweight'));
  }

  const opRows = QUICK ? [] : await benchOps(context, kernels);
  const model = await benchModel(context);
  log(`model forward ${model.forwardMs.toFixed(1)} ms, train step ${model.trainStepMs.toFixed(1)} ms`);
  return {
    adapter: context.adapter,
    features: context.features,
    limits: { maxComputeInvocationsPerWorkgroup: context.device.limits.maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupStorageSize: context.device.limits.maxComputeWorkgroupStorageSize },
    matmulChoice: choice,
    quick: QUICK,
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    matmul,
    backward,
    ops: opRows,
    model: { config: MODEL, B: MODEL_B, T: MODEL_T, ...model },
  };
}

const target = window as unknown as { benchResult?: unknown; benchError?: string };
main().then(
  (result) => {
    target.benchResult = result;
    log('done');
  },
  (error: unknown) => {
    target.benchError = error instanceof Error ? `${error.message}\n${error.stack}` : String(error);
    log(`failed: ${target.benchError}`);
  },
);
