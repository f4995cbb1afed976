/**
 * The fast CPU backend's linear-layer matmuls on the WASM gemm, with the signatures of the
 * references in src/gpu/reference/matmul.ts (outputs, inputs, weights, sizes; backward accumulates),
 * so the backend swaps them in one for one. f32 sums instead of the reference's f64.
 */
import type { WasmGemm } from './wasm-gemm.ts';

/** The matmul ops a CpuBackend runs: the references, or these. */
export interface MatmulOps {
  matmulForward(out: Float32Array, inp: Float32Array, weight: Float32Array, bias: Float32Array | null, N: number, IC: number, OC: number): void;
  matmulBackward(dinp: Float32Array | null, dweight: Float32Array | null, dbias: Float32Array | null, dout: Float32Array, inp: Float32Array, weight: Float32Array, N: number, IC: number, OC: number): void;
}

/** Returns matmulForward and matmulBackward running on `gemm`. */
export function createFastMatmulOps(gemm: WasmGemm): MatmulOps {
  return {
    matmulForward(out, inp, weight, bias, N, IC, OC) {
      // out (N, OC) = inp (N, IC) · weightᵀ, B(k, o) = weight[o*IC + k]
      gemm.gemm(out, inp, IC, 1, weight, 1, IC, bias, N, OC, IC, false);
    },
    matmulBackward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC) {
      // dinp (N, IC) += dout (N, OC) · weight (OC, IC)
      if (dinp !== null) gemm.gemm(dinp, dout, OC, 1, weight, IC, 1, null, N, IC, OC, true);
      // dweight (OC, IC) += doutᵀ (OC, N) · inp (N, IC), A(o, n) = dout[n*OC + o]
      if (dweight !== null) gemm.gemm(dweight, dout, 1, OC, inp, IC, 1, null, OC, IC, N, true);
      if (dbias !== null) {
        for (let o = 0; o < OC; o++) {
          let sum = 0;
          for (let n = 0; n < N; n++) sum += dout[n * OC + o]!;
          dbias[o]! += sum;
        }
      }
    },
  };
}
