/**
 * The GPU op wrappers: one function per op, named and ordered as its CPU reference in
 * src/gpu/reference (outputs, inputs, weights, sizes; backward accumulates), taking GPU tensors and
 * recording dispatches into a KernelPlan instead of computing. Nothing runs until the plan is
 * submitted. Shapes are element counts; GPU tensors are byte ranges (see kernels.ts).
 */
import { f32, ROPE_TABLE_POSITIONS, u32, type Dispatch, type GPUTensor, type KernelPlan } from './kernels.ts';

/** Workgroup shape of the register-tiled matmuls: WG_X threads over 4-column groups × WG_Y threads over 4-row groups. */
export const MATMUL_WORKGROUP = { WG_X: 16, WG_Y: 4 } as const;

function requireMultipleOf4(op: string, sizes: Record<string, number>): void {
  for (const [name, value] of Object.entries(sizes)) {
    if (value % 4 !== 0) throw new Error(`${op}: ${name} = ${value} must be a multiple of 4 (the matmul kernels load vec4)`);
  }
}

/** Options of the matmul wrappers: out = alpha·product (+ out when accumulate). */
export interface MatmulOptions {
  alpha?: number;
  accumulate?: boolean;
  /** matmulForward only: force the one-row-per-thread ('narrow') or the 4×4-tiled kernel (tests, benchmarks); by default N decides. */
  variant?: 'narrow' | 'tiled';
}

/** Rows below which matmulForward runs the one-row-per-thread kernel: one decoding sequence (at N = 1 it took half the time of the 4×4-tiled kernel on SwiftShader; at N = 2 they were even). */
export const MATMUL_NARROW_ROWS = 2;

/**
 * Records out(N,OC) = alpha·inp(N,IC)·weight(OC,IC)ᵀ + bias(OC) (+ out when accumulate); IC and OC
 * multiples of 4. An f16 weight (dtype 'f16') runs the *_f16w kernels. The kernel follows N: below
 * MATMUL_NARROW_ROWS one thread per (row, 4 columns), otherwise one per 4×4 block.
 */
export function matmulForward(
  plan: KernelPlan,
  out: GPUTensor,
  inp: GPUTensor,
  weight: GPUTensor,
  bias: GPUTensor | null,
  N: number,
  IC: number,
  OC: number,
  { alpha = 1, accumulate = false, variant = N < MATMUL_NARROW_ROWS ? 'narrow' : 'tiled' }: MatmulOptions = {},
): Dispatch {
  requireMultipleOf4('matmul_forward', { IC, OC });
  const kernels = plan.kernels;
  const f16 = weight.dtype === 'f16';
  if (variant === 'narrow') {
    const WG_X = 64;
    return plan.add(
      kernels.dispatch(
        f16 ? 'matmul_forward_narrow_f16w' : 'matmul_forward_narrow',
        { WG_X, HAS_BIAS: bias !== null, ACCUMULATE: accumulate },
        [out, inp, weight, bias ?? kernels.unusedTensor()],
        [u32(N), u32(IC), u32(OC), f32(alpha)],
        [Math.ceil(OC / 4 / WG_X), N, 1],
      ),
    );
  }
  const { WG_X, WG_Y } = MATMUL_WORKGROUP;
  return plan.add(
    kernels.dispatch(
      f16 ? 'matmul_forward_f16w' : 'matmul_forward',
      { WG_X, WG_Y, HAS_BIAS: bias !== null, ACCUMULATE: accumulate },
      [out, inp, weight, bias ?? kernels.unusedTensor()],
      [u32(N), u32(IC), u32(OC), f32(alpha)],
      [Math.ceil(OC / 4 / WG_X), Math.ceil(N / 4 / WG_Y), 1],
    ),
  );
}

/** Records dinp += alpha·dout·weight (or = when accumulate is false); the input-gradient half of matmulBackward. An f16 weight runs matmul_backward_dinp_f16w. */
export function matmulBackwardInput(
  plan: KernelPlan,
  dinp: GPUTensor,
  dout: GPUTensor,
  weight: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  { alpha = 1, accumulate = true }: MatmulOptions = {},
): Dispatch {
  requireMultipleOf4('matmul_backward_dinp', { IC, OC });
  const { WG_X, WG_Y } = MATMUL_WORKGROUP;
  return plan.add(
    plan.kernels.dispatch(
      weight.dtype === 'f16' ? 'matmul_backward_dinp_f16w' : 'matmul_backward_dinp',
      { WG_X, WG_Y, ACCUMULATE: accumulate },
      [dinp, dout, weight],
      [u32(N), u32(IC), u32(OC), f32(alpha)],
      [Math.ceil(IC / 4 / WG_X), Math.ceil(N / 4 / WG_Y), 1],
    ),
  );
}

/** Records dweight += alpha·doutᵀ·inp; the weight-gradient half of matmulBackward. */
export function matmulBackwardWeight(
  plan: KernelPlan,
  dweight: GPUTensor,
  dout: GPUTensor,
  inp: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  alpha = 1,
): Dispatch {
  requireMultipleOf4('matmul_backward_dweight', { IC, OC });
  const { WG_X, WG_Y } = MATMUL_WORKGROUP;
  return plan.add(
    plan.kernels.dispatch(
      'matmul_backward_dweight',
      { WG_X, WG_Y },
      [dweight, dout, inp],
      [u32(N), u32(IC), u32(OC), f32(alpha)],
      [Math.ceil(IC / 4 / WG_X), Math.ceil(OC / 4 / WG_Y), 1],
    ),
  );
}

/** Records dinp += dout·weight, dweight += doutᵀ·inp and dbias += Σ_n dout; any of the three may be null. */
export function matmulBackward(
  plan: KernelPlan,
  dinp: GPUTensor | null,
  dweight: GPUTensor | null,
  dbias: GPUTensor | null,
  dout: GPUTensor,
  inp: GPUTensor,
  weight: GPUTensor,
  N: number,
  IC: number,
  OC: number,
): void {
  if (dinp) matmulBackwardInput(plan, dinp, dout, weight, N, IC, OC);
  if (dweight) matmulBackwardWeight(plan, dweight, dout, inp, N, IC, OC);
  if (dbias) {
    plan.add(plan.kernels.dispatch('matmul_backward_dbias', {}, [dbias, dout], [u32(N), u32(OC)], plan.kernels.grid(OC)));
  }
}

/** Records out(N,C) = wte[ids[n], :]; an f16 table (dtype 'f16') runs embedding_forward_f16w. */
export function embeddingForward(plan: KernelPlan, out: GPUTensor, ids: GPUTensor, wte: GPUTensor, N: number, C: number): void {
  const name = wte.dtype === 'f16' ? 'embedding_forward_f16w' : 'embedding_forward';
  plan.add(plan.kernels.dispatch(name, {}, [out, ids, wte], [u32(N), u32(C)], plan.kernels.grid(N * C)));
}

/** Records dwte[ids[n], :] += dout[n, :] (one thread per channel, deterministic, no atomics). */
export function embeddingBackward(plan: KernelPlan, dwte: GPUTensor, dout: GPUTensor, ids: GPUTensor, N: number, C: number): void {
  plan.add(plan.kernels.dispatch('embedding_backward', {}, [dwte, dout, ids], [u32(N), u32(C)], plan.kernels.grid(C)));
}

/** Records out = inp·rstd·weight per row and saves rstd(N). */
export function rmsnormForward(
  plan: KernelPlan,
  out: GPUTensor,
  rstd: GPUTensor,
  inp: GPUTensor,
  weight: GPUTensor,
  N: number,
  C: number,
  eps: number,
): void {
  plan.add(plan.kernels.dispatch('rmsnorm_forward', {}, [out, rstd, inp, weight], [u32(N), u32(C), f32(eps)], plan.kernels.grid(N)));
}

/** Records the gradients of rmsnormForward into dinp and dweight (dweight may be null when frozen). */
export function rmsnormBackward(
  plan: KernelPlan,
  dinp: GPUTensor,
  dweight: GPUTensor | null,
  dout: GPUTensor,
  inp: GPUTensor,
  weight: GPUTensor,
  rstd: GPUTensor,
  N: number,
  C: number,
): void {
  const kernels = plan.kernels;
  plan.add(kernels.dispatch('rmsnorm_backward', {}, [dinp, dout, inp, weight, rstd], [u32(N), u32(C)], kernels.grid(N)));
  if (dweight) {
    plan.add(kernels.dispatch('rmsnorm_backward_dweight', {}, [dweight, dout, inp, rstd], [u32(N), u32(C)], kernels.grid(C)));
  }
}

/** Records rotate-half RoPE of inp(B,T,NH,HS) at positions(B*T) into out. */
export function ropeForward(
  plan: KernelPlan,
  out: GPUTensor,
  inp: GPUTensor,
  positions: GPUTensor,
  B: number,
  T: number,
  NH: number,
  HS: number,
  theta: number,
): void {
  const params = [u32(B * T), u32(NH), u32(HS), f32(theta), u32(ROPE_TABLE_POSITIONS)];
  const table = plan.kernels.ropeTable(HS, theta);
  plan.add(plan.kernels.dispatch('rope_forward', {}, [out, inp, positions, table], params, plan.kernels.grid((B * T * NH * HS) / 2)));
}

/** Records dinp += the inverse rotation of dout (the gradient of ropeForward). */
export function ropeBackward(
  plan: KernelPlan,
  dinp: GPUTensor,
  dout: GPUTensor,
  positions: GPUTensor,
  B: number,
  T: number,
  NH: number,
  HS: number,
  theta: number,
): void {
  const params = [u32(B * T), u32(NH), u32(HS), f32(theta), u32(ROPE_TABLE_POSITIONS)];
  const table = plan.kernels.ropeTable(HS, theta);
  plan.add(plan.kernels.dispatch('rope_backward', {}, [dinp, dout, positions, table], params, plan.kernels.grid((B * T * NH * HS) / 2)));
}

/** Records causal GQA attention: out(B,T,NH,HS) and the probabilities att(B,NH,T,T) from q, k, v. */
export function attentionForward(
  plan: KernelPlan,
  out: GPUTensor,
  att: GPUTensor,
  q: GPUTensor,
  k: GPUTensor,
  v: GPUTensor,
  B: number,
  T: number,
  NH: number,
  KVH: number,
  HS: number,
): void {
  const params = [u32(B), u32(T), u32(NH), u32(KVH), u32(HS)];
  plan.add(plan.kernels.dispatch('attention_forward', {}, [out, att, q, k, v], params, plan.kernels.grid(B * NH * T)));
}

/**
 * Records the gradients of attentionForward into dq, dk and dv; dscores (B,NH,T,T) is scratch the
 * GPU needs (the softmax gradient, passed from the dq kernel to the dk/dv kernel), overwritten.
 */
export function attentionBackward(
  plan: KernelPlan,
  dq: GPUTensor,
  dk: GPUTensor,
  dv: GPUTensor,
  dscores: GPUTensor,
  dout: GPUTensor,
  q: GPUTensor,
  k: GPUTensor,
  v: GPUTensor,
  att: GPUTensor,
  B: number,
  T: number,
  NH: number,
  KVH: number,
  HS: number,
): void {
  const kernels = plan.kernels;
  const params = [u32(B), u32(T), u32(NH), u32(KVH), u32(HS)];
  plan.add(kernels.dispatch('attention_backward_dq', {}, [dq, dscores, dout, k, v, att], params, kernels.grid(B * NH * T)));
  plan.add(kernels.dispatch('attention_backward_dkv', {}, [dk, dv, dout, q, att, dscores], params, kernels.grid(B * T * KVH * HS)));
}

/** Records out = silu(gate)·up over N elements. */
export function swigluForward(plan: KernelPlan, out: GPUTensor, gate: GPUTensor, up: GPUTensor, N: number): void {
  plan.add(plan.kernels.dispatch('swiglu_forward', {}, [out, gate, up], [u32(N)], plan.kernels.grid(N)));
}

/** Records the gradients of swigluForward into dgate and dup. */
export function swigluBackward(
  plan: KernelPlan,
  dgate: GPUTensor,
  dup: GPUTensor,
  dout: GPUTensor,
  gate: GPUTensor,
  up: GPUTensor,
  N: number,
): void {
  plan.add(plan.kernels.dispatch('swiglu_backward', {}, [dgate, dup, dout, gate, up], [u32(N)], plan.kernels.grid(N)));
}

/** Records out = a + b over N elements. */
export function residualForward(plan: KernelPlan, out: GPUTensor, a: GPUTensor, b: GPUTensor, N: number): void {
  plan.add(plan.kernels.dispatch('residual_forward', {}, [out, a, b], [u32(N)], plan.kernels.grid(N)));
}

/** Records da += dout and db += dout (da, db and dout must not overlap). */
export function residualBackward(plan: KernelPlan, da: GPUTensor, db: GPUTensor, dout: GPUTensor, N: number): void {
  plan.add(plan.kernels.dispatch('residual_backward', {}, [da, db, dout], [u32(N)], plan.kernels.grid(N)));
}

/** Records logprobs(N) = log_softmax(logits(N,V)/temperature) at targets(N); returns the dispatch (its params hold the temperature). */
export function logprobsForward(
  plan: KernelPlan,
  logprobs: GPUTensor,
  logits: GPUTensor,
  targets: GPUTensor,
  N: number,
  V: number,
  temperature: number,
): Dispatch {
  return plan.add(
    plan.kernels.dispatch('logprobs_forward', {}, [logprobs, logits, targets], [u32(N), u32(V), f32(temperature)], plan.kernels.grid(N)),
  );
}

/** Records dlogits += dlogprobs·(onehot(target) − softmax(logits/T))/T. */
export function logprobsBackward(
  plan: KernelPlan,
  dlogits: GPUTensor,
  dlogprobs: GPUTensor,
  logits: GPUTensor,
  targets: GPUTensor,
  N: number,
  V: number,
  temperature: number,
): Dispatch {
  const params = [u32(N), u32(V), f32(temperature)];
  return plan.add(plan.kernels.dispatch('logprobs_backward', {}, [dlogits, dlogprobs, logits, targets], params, plan.kernels.grid(N)));
}

/** Records losses(N) = −log_softmax(logits)[targets], the cross-entropy at temperature 1. */
export function crossEntropyForward(plan: KernelPlan, losses: GPUTensor, logits: GPUTensor, targets: GPUTensor, N: number, V: number): void {
  plan.add(plan.kernels.dispatch('cross_entropy_forward', {}, [losses, logits, targets], [u32(N), u32(V)], plan.kernels.grid(N)));
}

/** Records entropy(N) of softmax(logits/temperature). */
export function entropyForward(plan: KernelPlan, entropy: GPUTensor, logits: GPUTensor, N: number, V: number, temperature: number): void {
  plan.add(plan.kernels.dispatch('entropy_forward', {}, [entropy, logits], [u32(N), u32(V), f32(temperature)], plan.kernels.grid(N)));
}

/** AdamW hyperparameters of one step (as the reference's AdamWHyperparameters); step counts from 1. */
export interface AdamWSettings {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  step: number;
}

/** Returns the uniform fields of adamw_update for n parameters and these settings. */
export function adamwParams(n: number, { lr, beta1, beta2, eps, weightDecay, step }: AdamWSettings) {
  return [
    u32(n),
    f32(lr),
    f32(beta1),
    f32(beta2),
    f32(eps),
    f32(weightDecay),
    f32(1 - Math.pow(beta1, step)),
    f32(Math.sqrt(1 - Math.pow(beta2, step))),
  ];
}

/**
 * Records one AdamW step over n parameters, with grads multiplied by gradScale[0] (the clip factor
 * from globalGradNorm, or a tensor holding 1); returns the dispatch, whose params `writeParams`
 * updates each step with `adamwParams`.
 */
export function adamwUpdate(
  plan: KernelPlan,
  params: GPUTensor,
  grads: GPUTensor,
  m: GPUTensor,
  v: GPUTensor,
  gradScale: GPUTensor,
  n: number,
  settings: AdamWSettings,
): Dispatch {
  return plan.add(plan.kernels.dispatch('adamw_update', {}, [params, m, v, grads, gradScale], adamwParams(n, settings), plan.kernels.grid(n)));
}

/** Number of partial sums of the first stage of globalGradNorm. */
export const GRAD_NORM_PARTIALS = 4096;

/**
 * Records the global gradient norm of n values in two stages: result[0] = the clip factor for
 * maxNorm (1 when maxNorm ≤ 0; bind result as adamwUpdate's gradScale), result[1] = ‖grads‖;
 * partials (GRAD_NORM_PARTIALS floats) is scratch.
 * Returns the finalize dispatch, whose params hold maxNorm.
 */
export function globalGradNorm(
  plan: KernelPlan,
  result: GPUTensor,
  partials: GPUTensor,
  grads: GPUTensor,
  n: number,
  maxNorm = 0,
): Dispatch {
  const P = Math.min(GRAD_NORM_PARTIALS, Math.max(1, n));
  plan.add(plan.kernels.dispatch('global_grad_norm', {}, [partials, grads], [u32(n), u32(P)], plan.kernels.grid(P)));
  return plan.add(plan.kernels.dispatch('global_grad_norm_finalize', {}, [result, partials], [u32(P), f32(maxNorm)], [1, 1, 1]));
}

/** Records x *= factor over n values. */
export function scaleInPlace(plan: KernelPlan, x: GPUTensor, n: number, factor: number): Dispatch {
  return plan.add(plan.kernels.dispatch('scale_in_place', {}, [x], [u32(n), f32(factor)], plan.kernels.grid(n)));
}

/** Records out += (alpha/rank)·(inp·loraAᵀ)·loraBᵀ and saves hidden = inp·loraAᵀ (N, rank); rank a multiple of 4. */
export function loraForward(
  plan: KernelPlan,
  out: GPUTensor,
  hidden: GPUTensor,
  inp: GPUTensor,
  loraA: GPUTensor,
  loraB: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  rank: number,
  alpha: number,
): void {
  matmulForward(plan, hidden, inp, loraA, null, N, IC, rank);
  matmulForward(plan, out, hidden, loraB, null, N, rank, OC, { alpha: alpha / rank, accumulate: true });
}

/** Records the LoRA gradients into dloraA, dloraB and (when not null) dinp; dhidden (N, rank) is scratch, overwritten. */
export function loraBackward(
  plan: KernelPlan,
  dinp: GPUTensor | null,
  dloraA: GPUTensor,
  dloraB: GPUTensor,
  dhidden: GPUTensor,
  dout: GPUTensor,
  inp: GPUTensor,
  hidden: GPUTensor,
  loraA: GPUTensor,
  loraB: GPUTensor,
  N: number,
  IC: number,
  OC: number,
  rank: number,
  alpha: number,
): void {
  const scale = alpha / rank;
  matmulBackwardInput(plan, dhidden, dout, loraB, N, rank, OC, { alpha: scale, accumulate: false });
  matmulBackwardWeight(plan, dloraB, dout, hidden, N, rank, OC, scale);
  if (dinp) matmulBackwardInput(plan, dinp, dhidden, loraA, N, IC, rank);
  matmulBackwardWeight(plan, dloraA, dhidden, inp, N, IC, rank);
}
