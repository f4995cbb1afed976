/**
 * The fast CPU backend's ops on the WASM kernels, with the signatures of the references in
 * src/gpu/reference/ (outputs, inputs, weights, sizes; backward accumulates), so the backend swaps
 * them in one for one: the linear layer's matmuls, causal attention, SwiGLU, RMSNorm, the residual add
 * and AdamW (f32 sums instead of the references' f64), log-softmax of the targets (its exponentials
 * summed in f64), and RoPE from a table of its angles (rope-table.ts). The backend's buffers come from
 * the kernels' memory when it can hold them, so the kernels use them in place instead of copying.
 */
import type { CpuBackendOps } from '../model/cpu-backend.ts';
import { createTableRope } from './rope-table.ts';
import type { WasmKernels } from './wasm-kernels.ts';

/** Returns the CpuBackendOps running on `kernels`. */
export function createFastCpuOps(kernels: WasmKernels): CpuBackendOps {
  return {
    ...createTableRope(),
    matmulForward(out, inp, weight, bias, N, IC, OC) {
      // out (N, OC) = inp (N, IC) · weightᵀ, B(k, o) = weight[o*IC + k]
      kernels.gemm(out, inp, IC, 1, weight, 1, IC, bias, N, OC, IC, false);
    },
    matmulForwardDot(out, inp, weight, bias, N, IC, OC) {
      kernels.gemmDot(out, inp, IC, weight, IC, bias, N, OC, IC, false);
    },
    matmulForwardPacked(out, inp, weight, bias, N, IC, OC) {
      kernels.gemmPacked(out, inp, IC, 1, weight, 1, IC, bias, N, OC, IC, false);
    },
    matmulBackward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC) {
      // dinp (N, IC) += dout (N, OC) · weight (OC, IC)
      if (dinp !== null) kernels.gemm(dinp, dout, OC, 1, weight, IC, 1, null, N, IC, OC, true);
      // dweight (OC, IC) += doutᵀ (OC, N) · inp (N, IC), A(o, n) = dout[n*OC + o]
      if (dweight !== null) kernels.gemm(dweight, dout, 1, OC, inp, IC, 1, null, OC, IC, N, true);
      if (dbias !== null) {
        for (let o = 0; o < OC; o++) {
          let sum = 0;
          for (let n = 0; n < N; n++) sum += dout[n * OC + o]!;
          dbias[o]! += sum;
        }
      }
    },
    attentionForward(out, att, q, k, v, B, T, NH, KVH, HS) {
      kernels.attentionForward(out, att, q, k, v, B, T, NH, KVH, HS);
    },
    attentionBackward(dq, dk, dv, dout, q, k, v, att, B, T, NH, KVH, HS) {
      kernels.attentionBackward(dq, dk, dv, dout, q, k, v, att, B, T, NH, KVH, HS);
    },
    swigluForward(out, gate, up, N) {
      kernels.swigluForward(out, gate, up, N);
    },
    swigluBackward(dgate, dup, dout, gate, up, N) {
      kernels.swigluBackward(dgate, dup, dout, gate, up, N);
    },
    rmsnormForward(out, rstd, inp, weight, N, C, eps) {
      kernels.rmsnormForward(out, rstd, inp, weight, N, C, eps);
    },
    rmsnormBackward(dinp, dweight, dout, inp, weight, rstd, N, C) {
      kernels.rmsnormBackward(dinp, dweight, dout, inp, weight, rstd, N, C);
    },
    logprobsForward(logprobs, logits, targets, N, V, temperature) {
      kernels.logprobsForward(logprobs, logits, targets, N, V, temperature);
    },
    logprobsBackward(dlogits, dlogprobs, logits, targets, N, V, temperature) {
      kernels.logprobsBackward(dlogits, dlogprobs, logits, targets, N, V, temperature);
    },
    residualForward(out, a, b, N) {
      kernels.residualForward(out, a, b, N);
    },
    residualBackward(da, db, dout, N) {
      kernels.residualBackward(da, db, dout, N);
    },
    adamwUpdate(params, grads, m, v, n, hyperparameters) {
      kernels.adamwUpdate(params, grads, m, v, n, hyperparameters);
    },
    allocate(length) {
      return kernels.allocate(length) ?? new Float32Array(length);
    },
    release(buffer) {
      kernels.release(buffer);
    },
  };
}
