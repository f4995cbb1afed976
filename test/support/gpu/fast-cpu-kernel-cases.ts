/**
 * The fast CPU backend's WASM SIMD kernels (through createFastCpuOps) against the references
 * (src/gpu/reference/) on seeded random inputs, written once and run by two test files:
 * test/unit/gpu/fast-cpu/fast-kernels.test.ts (Node, worker threads) and
 * test/browser/fast-cpu/fast-cpu-kernels.test.ts (Chromium, Web Workers sharing the page's memory).
 * Matmuls at sizes that are multiples of none of the gemm's blocks (MR 4, NR 8, MC 64, KC 256, NC 256):
 * forward with and without bias (the backend's, and the decoder's dot-product and packed linears, each
 * row of which must be the same bits as the row alone), backward accumulating into non-zero gradients, with dweight and dbias
 * switched off. Attention (gemms over blocks of 32 query rows) with grouped heads, T and HS off the SIMD
 * width and off the block: outputs, saved probabilities, and the accumulated dq, dk, dv, also for a head
 * wider than the gemm's blocks and a sequence so long that a block holds fewer rows. SwiGLU over
 * lengths off the SIMD width, with gates far into both tails. Each case throws on mismatch (expectClose).
 */
import type { CpuBackendOps } from '../../../src/gpu/model/cpu-backend.ts';
import { attentionBackward, attentionForward } from '../../../src/gpu/reference/attention.ts';
import { matmulBackward, matmulForward } from '../../../src/gpu/reference/matmul.ts';
import { swigluBackward, swigluForward } from '../../../src/gpu/reference/swiglu.ts';
import { expectClose, randomArray } from '../expect-close.ts';

/** One fast-kernel check: a name for the test and a body that throws on mismatch. */
export interface FastCpuKernelCase {
  name: string;
  run: (ops: CpuBackendOps) => void;
}

// f32 sums against the reference's f64: |error| grows with √K·|terms|; inputs are in [-1, 1).
const TOLERANCE = { atol: 2e-4, rtol: 1e-4 };
const MATMUL_SHAPES: [N: number, IC: number, OC: number][] = [
  [1, 7, 5], // one token, as decoding runs
  [4, 33, 19], // the most rows forward takes by dot products instead of packing
  [13, 29, 11],
  [67, 261, 263], // K and Ncols past one block
  [130, 300, 70], // big enough to be split over threads
];
const INVARIANCE_SHAPES: [N: number, IC: number, OC: number][] = [
  [9, 33, 19], // a decode step of nine sequences, columns off the dot kernel's width of 4
  [130, 300, 70], // split over threads (by columns for dot products, by rows for packed blocks); alone, one thread
];
const SWIGLU_LENGTHS = [1, 7, 1001, 200003];
const ATTENTION_SHAPES: [B: number, T: number, NH: number, KVH: number, HS: number][] = [
  [1, 1, 1, 1, 3], // one token
  [2, 13, 4, 2, 6],
  [3, 70, 6, 2, 20], // big enough to be split over threads; blocks of 32, 32 and 6 rows
  [1, 81, 1, 1, 1023], // a head wider than the gemm's KC and NC blocks
  [1, 2100, 1, 1, 2], // 31 rows per block: 32 rows of 2100 probability gradients do not fit the scratch
];

function matmulForwardCase(N: number, IC: number, OC: number): FastCpuKernelCase {
  return {
    name: `matmul_forward matches reference at N=${N} IC=${IC} OC=${OC}, with and without bias`,
    run: (ops) => {
      const inp = randomArray(N * IC, 1);
      const weight = randomArray(OC * IC, 2);
      const bias = randomArray(OC, 3);
      for (const b of [bias, null]) {
        const expected = new Float32Array(N * OC);
        matmulForward(expected, inp, weight, b, N, IC, OC);
        for (const op of ['matmulForward', 'matmulForwardDot', 'matmulForwardPacked'] as const) {
          const actual = new Float32Array(N * OC).fill(Number.NaN); // forward overwrites whatever was there
          ops[op](actual, inp, weight, b, N, IC, OC);
          expectClose(actual, expected, { ...TOLERANCE, label: `${op} out (bias ${b === null ? 'off' : 'on'})` });
        }
      }
    },
  };
}

/**
 * The decoder's two linears are batch-invariant: each row of an N-row product is the same bits as
 * that row computed alone (dot products on one thread there, threads splitting the columns or the
 * rows here when the product is big enough).
 */
function matmulRowInvarianceCase(N: number, IC: number, OC: number): FastCpuKernelCase {
  return {
    name: `matmulForwardDot and matmulForwardPacked give each of N=${N} rows the bits it gets alone (IC=${IC} OC=${OC})`,
    run: (ops) => {
      const inp = randomArray(N * IC, 21);
      const weight = randomArray(OC * IC, 22);
      const bias = randomArray(OC, 23);
      for (const op of ['matmulForwardDot', 'matmulForwardPacked'] as const) {
        const together = new Float32Array(N * OC);
        ops[op](together, inp, weight, bias, N, IC, OC);
        for (const row of [0, Math.floor(N / 2), N - 1]) {
          const alone = new Float32Array(OC);
          ops[op](alone, inp.subarray(row * IC, (row + 1) * IC), weight, bias, 1, IC, OC);
          const bits = together.subarray(row * OC, (row + 1) * OC);
          const first = bits.findIndex((value, i) => !Object.is(value, alone[i]));
          if (first !== -1) throw new Error(`${op}: row ${row} of ${N} differs from the row alone at column ${first}: ${bits[first]} vs ${alone[first]}`);
        }
      }
    },
  };
}

function matmulBackwardCase(N: number, IC: number, OC: number): FastCpuKernelCase {
  return {
    name: `matmul_backward accumulates like the reference at N=${N} IC=${IC} OC=${OC}`,
    run: (ops) => {
      const inp = randomArray(N * IC, 4);
      const weight = randomArray(OC * IC, 5);
      const dout = randomArray(N * OC, 6);
      const start = { dinp: randomArray(N * IC, 7), dweight: randomArray(OC * IC, 8), dbias: randomArray(OC, 9) };
      const expected = { dinp: start.dinp.slice(), dweight: start.dweight.slice(), dbias: start.dbias.slice() };
      const actual = { dinp: start.dinp.slice(), dweight: start.dweight.slice(), dbias: start.dbias.slice() };
      matmulBackward(expected.dinp, expected.dweight, expected.dbias, dout, inp, weight, N, IC, OC);
      ops.matmulBackward(actual.dinp, actual.dweight, actual.dbias, dout, inp, weight, N, IC, OC);
      expectClose(actual.dinp, expected.dinp, { ...TOLERANCE, label: 'dinp' });
      expectClose(actual.dweight, expected.dweight, { ...TOLERANCE, label: 'dweight' });
      expectClose(actual.dbias, expected.dbias, { ...TOLERANCE, label: 'dbias' });

      // a frozen weight (LoRA's base): dinp only, dweight untouched
      const onlyDinp = start.dinp.slice();
      ops.matmulBackward(onlyDinp, null, null, dout, inp, weight, N, IC, OC);
      expectClose(onlyDinp, expected.dinp, { ...TOLERANCE, label: 'dinp without dweight' });
    },
  };
}

function swigluCase(N: number): FastCpuKernelCase {
  return {
    name: `swiglu_forward and swiglu_backward match reference over ${N} values`,
    run: (ops) => {
      const gate = randomArray(N, 18, 12); // sigmoid's saturated tails included
      const up = randomArray(N, 19);
      const expected = new Float32Array(N);
      const actual = new Float32Array(N).fill(Number.NaN);
      swigluForward(expected, gate, up, N);
      ops.swigluForward(actual, gate, up, N);
      expectClose(actual, expected, { atol: 1e-6, rtol: 1e-5, label: 'out' });
      const dout = randomArray(N, 20);
      const start = [randomArray(N, 21), randomArray(N, 22)] as const;
      const expectedGrads = start.map((x) => x.slice());
      const actualGrads = start.map((x) => x.slice());
      swigluBackward(expectedGrads[0]!, expectedGrads[1]!, dout, gate, up, N);
      ops.swigluBackward(actualGrads[0]!, actualGrads[1]!, dout, gate, up, N);
      expectClose(actualGrads[0]!, expectedGrads[0]!, { atol: 1e-6, rtol: 1e-5, label: 'dgate' });
      expectClose(actualGrads[1]!, expectedGrads[1]!, { atol: 1e-6, rtol: 1e-5, label: 'dup' });
    },
  };
}

function attentionCase(B: number, T: number, NH: number, KVH: number, HS: number): FastCpuKernelCase {
  return {
    name: `attention_forward and attention_backward match reference at B=${B} T=${T} NH=${NH} KVH=${KVH} HS=${HS}`,
    run: (ops) => {
      const q = randomArray(B * T * NH * HS, 11);
      const k = randomArray(B * T * KVH * HS, 12);
      const v = randomArray(B * T * KVH * HS, 13);
      const expectedOut = new Float32Array(B * T * NH * HS);
      const expectedAtt = new Float32Array(B * NH * T * T);
      const actualOut = new Float32Array(B * T * NH * HS).fill(Number.NaN);
      const actualAtt = new Float32Array(B * NH * T * T).fill(Number.NaN); // forward writes every probability, zeros included
      attentionForward(expectedOut, expectedAtt, q, k, v, B, T, NH, KVH, HS);
      ops.attentionForward(actualOut, actualAtt, q, k, v, B, T, NH, KVH, HS);
      expectClose(actualAtt, expectedAtt, { atol: 1e-6, rtol: 1e-5, label: 'att' });
      expectClose(actualOut, expectedOut, { atol: 1e-5, rtol: 1e-4, label: 'out' });

      const dout = randomArray(B * T * NH * HS, 14);
      const start = [randomArray(B * T * NH * HS, 15), randomArray(B * T * KVH * HS, 16), randomArray(B * T * KVH * HS, 17)] as const;
      const expected = start.map((x) => x.slice());
      const actual = start.map((x) => x.slice());
      attentionBackward(expected[0]!, expected[1]!, expected[2]!, dout, q, k, v, expectedAtt, B, T, NH, KVH, HS);
      ops.attentionBackward(actual[0]!, actual[1]!, actual[2]!, dout, q, k, v, expectedAtt, B, T, NH, KVH, HS);
      ['dq', 'dk', 'dv'].forEach((label, i) => expectClose(actual[i]!, expected[i]!, { atol: 1e-4, rtol: 1e-4, label }));
    },
  };
}

/** Every fast-kernel check: matmul forward and backward, SwiGLU, attention, at the shapes above. */
export const FAST_CPU_KERNEL_CASES: readonly FastCpuKernelCase[] = [
  ...MATMUL_SHAPES.map(([N, IC, OC]) => matmulForwardCase(N, IC, OC)),
  ...INVARIANCE_SHAPES.map(([N, IC, OC]) => matmulRowInvarianceCase(N, IC, OC)),
  ...MATMUL_SHAPES.map(([N, IC, OC]) => matmulBackwardCase(N, IC, OC)),
  ...SWIGLU_LENGTHS.map((N) => swigluCase(N)),
  ...ATTENTION_SHAPES.map(([B, T, NH, KVH, HS]) => attentionCase(B, T, NH, KVH, HS)),
];
