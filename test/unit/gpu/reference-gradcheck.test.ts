/**
 * Finite-difference gradient checks of every reference backward, on tiny
 * shapes. Each check projects the op's output on a random direction r, L = Σ r·out (summed in
 * float64), compares the backward's gradient for dout = r with central differences of L, and
 * pre-fills the gradient buffers so that it also checks that backward functions accumulate (+=).
 */
import { describe, expect, it } from 'vitest';
import {
  adamwUpdate,
  attentionBackward,
  attentionForward,
  clipFactor,
  crossEntropyForward,
  embeddingBackward,
  embeddingForward,
  entropyForward,
  globalGradNorm,
  logprobsBackward,
  logprobsForward,
  loraBackward,
  loraForward,
  matmulBackward,
  matmulForward,
  residualBackward,
  residualForward,
  rmsnormBackward,
  rmsnormForward,
  ropeBackward,
  ropeForward,
  scaleInPlace,
  swigluBackward,
  swigluForward,
} from '../../../src/gpu/reference/index.ts';
import { expectClose, randomArray } from '../../support/expect-close.ts';

const EPS = 1e-3; // perturbation; the step actually taken is measured after rounding to f32
const RTOL = 2e-2; // f32 forward passes: central differences are good to about 1e-3 relative here
const ATOL = 2e-3;
const PREFILL = 0.25; // value every gradient buffer holds before backward, subtracted afterwards

type Tensors = Record<string, Float32Array>;

/** Returns Σ r·out in float64. */
function project(out: Float32Array, r: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < out.length; i++) sum += out[i]! * r[i]!;
  return sum;
}

/**
 * Checks backward against central differences of forward for every tensor in inputs; forward reads
 * inputs (perturbed in place) and returns the output, backward receives dout and prefilled grads.
 */
function gradcheck(
  label: string,
  inputs: Tensors,
  forward: () => Float32Array,
  backward: (dout: Float32Array, grads: Tensors) => void,
): void {
  const outSize = forward().length;
  const r = randomArray(outSize, 999, 1);
  const grads: Tensors = {};
  for (const [name, x] of Object.entries(inputs)) grads[name] = new Float32Array(x.length).fill(PREFILL);
  backward(r, grads);
  for (const [name, x] of Object.entries(inputs)) {
    const analytic = Array.from(grads[name]!, (g) => g - PREFILL);
    const numeric: number[] = [];
    for (let i = 0; i < x.length; i++) {
      const original = x[i]!;
      x[i] = original + EPS;
      const plusStep = x[i]!;
      const lossPlus = project(forward(), r);
      x[i] = original - EPS;
      const minusStep = x[i]!;
      const lossMinus = project(forward(), r);
      x[i] = original;
      numeric.push((lossPlus - lossMinus) / (plusStep - minusStep));
    }
    expectClose(analytic, numeric, { atol: ATOL, rtol: RTOL, label: `${label} d${name}` });
    // the gradient must not be trivially zero, or the check proves nothing
    expect(Math.max(...numeric.map(Math.abs)), `${label} d${name} is not all zero`).toBeGreaterThan(1e-3);
  }
}

describe('reference backward passes a finite-difference check', () => {
  it('embedding_backward (scatter-add with repeated ids)', () => {
    const N = 5, C = 3, V = 4;
    const ids = Int32Array.from([1, 3, 1, 0, 1]);
    const wte = randomArray(V * C, 1);
    const out = new Float32Array(N * C);
    gradcheck(
      'embedding',
      { wte },
      () => (embeddingForward(out, ids, wte, N, C), out.slice()),
      (dout, g) => embeddingBackward(g.wte!, dout, ids, N, C),
    );
  });

  it('rmsnorm_backward', () => {
    const N = 3, C = 6;
    const inp = randomArray(N * C, 2);
    const weight = randomArray(C, 3, 1);
    const out = new Float32Array(N * C);
    const rstd = new Float32Array(N);
    gradcheck(
      'rmsnorm',
      { inp, weight },
      () => (rmsnormForward(out, rstd, inp, weight, N, C, 1e-5), out.slice()),
      (dout, g) => {
        rmsnormForward(out, rstd, inp, weight, N, C, 1e-5);
        rmsnormBackward(g.inp!, g.weight!, dout, inp, weight, rstd, N, C);
      },
    );
  });

  it('matmul_backward (with bias)', () => {
    const N = 3, IC = 4, OC = 5;
    const inp = randomArray(N * IC, 4);
    const weight = randomArray(OC * IC, 5);
    const bias = randomArray(OC, 6);
    const out = new Float32Array(N * OC);
    gradcheck(
      'matmul',
      { inp, weight, bias },
      () => (matmulForward(out, inp, weight, bias, N, IC, OC), out.slice()),
      (dout, g) => matmulBackward(g.inp!, g.weight!, g.bias!, dout, inp, weight, N, IC, OC),
    );
  });

  it('matmul_backward with frozen weight (null dweight, null dbias) still gives dinp', () => {
    const N = 3, IC = 4, OC = 5;
    const inp = randomArray(N * IC, 4);
    const weight = randomArray(OC * IC, 5);
    const dout = randomArray(N * OC, 7);
    const full = new Float32Array(N * IC);
    const frozen = new Float32Array(N * IC);
    matmulBackward(full, new Float32Array(OC * IC), new Float32Array(OC), dout, inp, weight, N, IC, OC);
    matmulBackward(frozen, null, null, dout, inp, weight, N, IC, OC);
    expectClose(frozen, full, { atol: 0, rtol: 0, label: 'dinp' });
  });

  it('rope_backward', () => {
    const B = 2, T = 3, NH = 2, HS = 6;
    const positions = Int32Array.from([0, 1, 2, 5, 6, 7]);
    const inp = randomArray(B * T * NH * HS, 8);
    const out = new Float32Array(inp.length);
    gradcheck(
      'rope',
      { inp },
      () => (ropeForward(out, inp, positions, B, T, NH, HS, 10000), out.slice()),
      (dout, g) => ropeBackward(g.inp!, dout, positions, B, T, NH, HS, 10000),
    );
  });

  it('rope_forward uses the rotate-half pairs (x[i], x[i+HS/2]) and keeps position 0 fixed', () => {
    const HS = 4, theta = 100;
    const inp = Float32Array.from([1, 2, 3, 4, 1, 2, 3, 4]);
    const out = new Float32Array(8);
    ropeForward(out, inp, Int32Array.from([0, 3]), 1, 2, 1, HS, theta);
    expectClose(out.subarray(0, 4), [1, 2, 3, 4], { atol: 0, rtol: 0, label: 'position 0' });
    // pair i = 1 (x2 = 2, x4 = 4) rotates by 3·theta^(-2/4) = 0.3 radians
    const angle = 3 * Math.pow(theta, -0.5);
    expectClose([out[5]!, out[7]!], [2 * Math.cos(angle) - 4 * Math.sin(angle), 4 * Math.cos(angle) + 2 * Math.sin(angle)], {
      atol: 1e-6,
      rtol: 1e-6,
      label: 'pair 1',
    });
  });

  for (const [NH, KVH] of [[4, 2], [2, 2], [3, 1]] as const) {
    it(`attention_backward (NH=${NH}, KVH=${KVH})`, () => {
      const B = 2, T = 4, HS = 3;
      const q = randomArray(B * T * NH * HS, 10);
      const k = randomArray(B * T * KVH * HS, 11);
      const v = randomArray(B * T * KVH * HS, 12);
      const out = new Float32Array(B * T * NH * HS);
      const att = new Float32Array(B * NH * T * T);
      gradcheck(
        'attention',
        { q, k, v },
        () => (attentionForward(out, att, q, k, v, B, T, NH, KVH, HS), out.slice()),
        (dout, g) => {
          attentionForward(out, att, q, k, v, B, T, NH, KVH, HS);
          attentionBackward(g.q!, g.k!, g.v!, dout, q, k, v, att, B, T, NH, KVH, HS);
        },
      );
    });
  }

  it('attention_forward is causal: the first token attends only to itself', () => {
    const B = 1, T = 3, NH = 1, KVH = 1, HS = 2;
    const q = randomArray(6, 13);
    const k = randomArray(6, 14);
    const v = randomArray(6, 15);
    const out = new Float32Array(6);
    const att = new Float32Array(9);
    attentionForward(out, att, q, k, v, B, T, NH, KVH, HS);
    expectClose(out.subarray(0, 2), v.subarray(0, 2), { atol: 1e-7, label: 'out[0]' });
    expectClose(att, [1, 0, 0, att[3]!, att[4]!, 0, att[6]!, att[7]!, att[8]!], { atol: 0, label: 'att mask' });
    expectClose(att[3]! + att[4]!, 1, { atol: 1e-6, label: 'row 1 sums to 1' });
  });

  it('swiglu_backward', () => {
    const N = 7;
    const gate = randomArray(N, 16, 3);
    const up = randomArray(N, 17);
    const out = new Float32Array(N);
    gradcheck(
      'swiglu',
      { gate, up },
      () => (swigluForward(out, gate, up, N), out.slice()),
      (dout, g) => swigluBackward(g.gate!, g.up!, dout, gate, up, N),
    );
  });

  it('residual_backward', () => {
    const N = 5;
    const a = randomArray(N, 18);
    const b = randomArray(N, 19);
    const out = new Float32Array(N);
    gradcheck(
      'residual',
      { a, b },
      () => (residualForward(out, a, b, N), out.slice()),
      (dout, g) => residualBackward(g.a!, g.b!, dout, N),
    );
  });

  for (const temperature of [1, 0.7]) {
    it(`logprobs_backward (temperature ${temperature})`, () => {
      const N = 3, V = 5;
      const logits = randomArray(N * V, 20, 2);
      const targets = Int32Array.from([0, 4, 2]);
      const logprobs = new Float32Array(N);
      gradcheck(
        'logprobs',
        { logits },
        () => (logprobsForward(logprobs, logits, targets, N, V, temperature), logprobs.slice()),
        (dout, g) => logprobsBackward(g.logits!, dout, logits, targets, N, V, temperature),
      );
    });
  }

  it('cross_entropy_forward is −logprob at temperature 1; entropy_forward is −Σ p log p', () => {
    const N = 3, V = 5, temperature = 0.8;
    const logits = randomArray(N * V, 21, 2);
    const targets = Int32Array.from([1, 1, 3]);
    const logprobs = new Float32Array(N);
    const losses = new Float32Array(N);
    logprobsForward(logprobs, logits, targets, N, V, 1);
    crossEntropyForward(losses, logits, targets, N, V);
    expectClose(losses, Array.from(logprobs, (x) => -x), { atol: 1e-6, label: 'cross-entropy' });
    const entropy = new Float32Array(N);
    entropyForward(entropy, logits, N, V, temperature);
    const expected = [];
    for (let n = 0; n < N; n++) {
      const z = Array.from(logits.subarray(n * V, n * V + V), (x) => x / temperature);
      const total = z.reduce((s, x) => s + Math.exp(x), 0);
      expected.push(-z.reduce((s, x) => s + (Math.exp(x) / total) * (x - Math.log(total)), 0));
    }
    expectClose(entropy, expected, { atol: 1e-6, label: 'entropy' });
  });

  it('lora_backward', () => {
    const N = 3, IC = 4, OC = 5, rank = 2, alpha = 4;
    const inp = randomArray(N * IC, 22);
    const loraA = randomArray(rank * IC, 23);
    const loraB = randomArray(OC * rank, 24);
    const base = randomArray(N * OC, 25);
    const out = new Float32Array(N * OC);
    const hidden = new Float32Array(N * rank);
    gradcheck(
      'lora',
      { inp, loraA, loraB },
      () => (out.set(base), loraForward(out, hidden, inp, loraA, loraB, N, IC, OC, rank, alpha), out.slice()),
      (dout, g) => {
        loraForward(out, hidden, inp, loraA, loraB, N, IC, OC, rank, alpha);
        loraBackward(g.inp!, g.loraA!, g.loraB!, new Float32Array(N * rank), dout, inp, hidden, loraA, loraB, N, IC, OC, rank, alpha);
      },
    );
  });
});

describe('optimizer reference', () => {
  it('adamw_update matches torch.optim.AdamW worked by hand', () => {
    // step 1: decay 1 → 0.999; m = 0.05, v = 0.00025; bias-corrected m̂/√v̂ = 0.5/0.5 = 1; so 0.999 − 0.1
    const params = Float32Array.from([1, -2]);
    const grads = Float32Array.from([0.5, 0]);
    const m = new Float32Array(2);
    const v = new Float32Array(2);
    adamwUpdate(params, grads, m, v, 2, { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, step: 1 });
    expectClose(params, [0.899, -2 * 0.999], { atol: 1e-6, label: 'params after step 1' });
    expectClose(m, [0.05, 0], { atol: 1e-8, label: 'm' });
    expectClose(v, [0.00025, 0], { atol: 1e-9, label: 'v' });
    // step 2 with the same gradient: m = 0.095, v = 0.00049975, m̂ = 0.5, v̂ = 0.25, still a step of lr
    adamwUpdate(params, grads, m, v, 2, { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, step: 2 });
    expectClose(params[0]!, 0.899 * 0.999 - 0.1, { atol: 1e-6, label: 'params after step 2' });
  });

  it('global_grad_norm, scale_in_place and the clip factor of clip_grad_norm_', () => {
    const grads = Float32Array.from([3, 4, 12]);
    expect(globalGradNorm(grads, 2)).toBe(5);
    expect(globalGradNorm(grads, 3)).toBe(13);
    scaleInPlace(grads, 2, 0.5);
    expectClose(grads, [1.5, 2, 12], { atol: 0, label: 'scaled' });
    expect(clipFactor(13, 1)).toBeCloseTo(1 / 13, 6);
    expect(clipFactor(0.5, 1)).toBe(1);
    expect(clipFactor(100, 0)).toBe(1);
  });
});

describe('expectClose', () => {
  it('reports the max difference, the first bad index and the pairs', () => {
    expect(() => expectClose([1, 2, 3.5], [1, 2, 3], { atol: 0.1, rtol: 0, label: 'demo' })).toThrow(
      /demo: 1 of 3 differ.*max \|diff\| 0\.5 at index 2; first bad index 2.*\[2\] 3\.5 vs 3/,
    );
    expect(() => expectClose([NaN], [1], { label: 'nan' })).toThrow(/nan: 1 of 1/);
    expect(() => expectClose([1], [1, 2])).toThrow(/length/);
    expectClose([Infinity, 1], [Infinity, 1 + 1e-7]);
  });
});
