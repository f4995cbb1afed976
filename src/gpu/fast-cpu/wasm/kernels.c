/*
 * WebAssembly SIMD (f32x4) kernels of TabRL's fast CPU backend, compiled by build-kernels.sh.
 *
 * gemm: C (M, Ncols) = or += A (M, K) · B (K, Ncols), every operand given by a base pointer and a
 * row and a column stride, so one kernel serves the three matmuls of a linear layer:
 *   forward  out  (N, OC) = inp (N, IC) · weightᵀ  (B(k, n) = weight[n*IC + k])
 *   backward dinp (N, IC) += dout (N, OC) · weight  (B(k, n) = weight[k*IC + n])
 *   backward dweight (OC, IC) += doutᵀ · inp        (A(m, k) = dout[k*OC + m])
 * Goto-style blocking: for each NC-column block and KC-deep slice, B is packed into NR-wide panels
 * (KC·NC floats, meant for L2), then each MC-row block of A into MR-high panels (meant for L1), and a
 * MR×NR register tile accumulates one panel pair. Edges are zero-padded in the packs; a partial tile
 * is written through a scratch tile. Sums are f32 in K order within a slice (not the reference's f64).
 *
 * No libc and no shadow stack: every buffer, scratch included, comes from the caller, so several
 * threads may run gemm at once on one shared memory, each over its own rows of C with its own work.
 */
#include <wasm_simd128.h>

#define MR 4
#define NR 8
#define MC 64
#define KC 256
#define NC 256

/* Floats of work one gemm call needs: the packed A block, the packed B block and one scratch tile. */
int gemm_work_floats(void) { return MC * KC + KC * NC + MR * NR; }

/* Packs A rows [m0, m0+mc) × columns [k0, k0+kc) into MR-high panels: panel p holds, for each k, MR values. */
static void pack_a(float *restrict dst, const float *a, int ars, int acs, int m0, int mc, int k0, int kc) {
  for (int p = 0; p < mc; p += MR) {
    int rows = mc - p < MR ? mc - p : MR;
    for (int k = 0; k < kc; k++) {
      const float *src = a + (long)(m0 + p) * ars + (long)(k0 + k) * acs;
      int r = 0;
      for (; r < rows; r++) dst[r] = src[(long)r * ars];
      for (; r < MR; r++) dst[r] = 0.0f;
      dst += MR;
    }
  }
}

/* Packs B rows [k0, k0+kc) × columns [n0, n0+nc) into NR-wide panels: panel p holds, for each k, NR values. */
static void pack_b(float *restrict dst, const float *b, int brs, int bcs, int k0, int kc, int n0, int nc) {
  for (int p = 0; p < nc; p += NR) {
    int cols = nc - p < NR ? nc - p : NR;
    if (cols == NR && bcs == 1) {
      for (int k = 0; k < kc; k++) {
        const float *src = b + (long)(k0 + k) * brs + (n0 + p);
        wasm_v128_store(dst, wasm_v128_load(src));
        wasm_v128_store(dst + 4, wasm_v128_load(src + 4));
        dst += NR;
      }
    } else {
      for (int k = 0; k < kc; k++) {
        const float *src = b + (long)(k0 + k) * brs + (long)(n0 + p) * bcs;
        int c = 0;
        for (; c < cols; c++) dst[c] = src[(long)c * bcs];
        for (; c < NR; c++) dst[c] = 0.0f;
        dst += NR;
      }
    }
  }
}

/* One MR×NR tile: t (ldt) = or += Σ_k apanel[k]·bpanel[k] over kc steps. */
static void micro_kernel(int kc, const float *restrict ap, const float *restrict bp, float *t, int ldt, int accumulate) {
  v128_t c00 = wasm_f32x4_splat(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (int k = 0; k < kc; k++) {
    v128_t b0 = wasm_v128_load(bp);
    v128_t b1 = wasm_v128_load(bp + 4);
    v128_t a0 = wasm_v128_load32_splat(ap);
    v128_t a1 = wasm_v128_load32_splat(ap + 1);
    v128_t a2 = wasm_v128_load32_splat(ap + 2);
    v128_t a3 = wasm_v128_load32_splat(ap + 3);
    c00 = wasm_f32x4_add(c00, wasm_f32x4_mul(a0, b0));
    c01 = wasm_f32x4_add(c01, wasm_f32x4_mul(a0, b1));
    c10 = wasm_f32x4_add(c10, wasm_f32x4_mul(a1, b0));
    c11 = wasm_f32x4_add(c11, wasm_f32x4_mul(a1, b1));
    c20 = wasm_f32x4_add(c20, wasm_f32x4_mul(a2, b0));
    c21 = wasm_f32x4_add(c21, wasm_f32x4_mul(a2, b1));
    c30 = wasm_f32x4_add(c30, wasm_f32x4_mul(a3, b0));
    c31 = wasm_f32x4_add(c31, wasm_f32x4_mul(a3, b1));
    ap += MR;
    bp += NR;
  }
  if (accumulate) {
    c00 = wasm_f32x4_add(c00, wasm_v128_load(t));
    c01 = wasm_f32x4_add(c01, wasm_v128_load(t + 4));
    c10 = wasm_f32x4_add(c10, wasm_v128_load(t + ldt));
    c11 = wasm_f32x4_add(c11, wasm_v128_load(t + ldt + 4));
    c20 = wasm_f32x4_add(c20, wasm_v128_load(t + 2 * ldt));
    c21 = wasm_f32x4_add(c21, wasm_v128_load(t + 2 * ldt + 4));
    c30 = wasm_f32x4_add(c30, wasm_v128_load(t + 3 * ldt));
    c31 = wasm_f32x4_add(c31, wasm_v128_load(t + 3 * ldt + 4));
  }
  wasm_v128_store(t, c00);
  wasm_v128_store(t + 4, c01);
  wasm_v128_store(t + ldt, c10);
  wasm_v128_store(t + ldt + 4, c11);
  wasm_v128_store(t + 2 * ldt, c20);
  wasm_v128_store(t + 2 * ldt + 4, c21);
  wasm_v128_store(t + 3 * ldt, c30);
  wasm_v128_store(t + 3 * ldt + 4, c31);
}

/*
 * C rows [m0, m1) of C (M, Ncols) (ldc) = or += A·B, then + bias (Ncols) when bias is not null.
 * accumulate = 0 overwrites C, 1 adds to it. work holds gemm_work_floats() floats of this caller's own.
 */
void gemm(float *c, int ldc, const float *a, int ars, int acs, const float *b, int brs, int bcs, const float *bias,
          int m0, int m1, int Ncols, int K, int accumulate, float *work) {
  float *apack = work;
  float *bpack = work + MC * KC;
  float *tile = bpack + KC * NC; /* MR×NR, row stride NR */
  if (K == 0 && !accumulate) {
    for (int m = m0; m < m1; m++) for (int n = 0; n < Ncols; n++) c[(long)m * ldc + n] = 0.0f;
  }
  for (int jc = 0; jc < Ncols; jc += NC) {
    int nc = Ncols - jc < NC ? Ncols - jc : NC;
    for (int pc = 0; pc < K; pc += KC) {
      int kc = K - pc < KC ? K - pc : KC;
      int add = accumulate || pc > 0;
      pack_b(bpack, b, brs, bcs, pc, kc, jc, nc);
      for (int ic = m0; ic < m1; ic += MC) {
        int mc = m1 - ic < MC ? m1 - ic : MC;
        pack_a(apack, a, ars, acs, ic, mc, pc, kc);
        for (int jr = 0; jr < nc; jr += NR) {
          int cols = nc - jr < NR ? nc - jr : NR;
          const float *bp = bpack + (long)jr * kc;
          for (int ir = 0; ir < mc; ir += MR) {
            int rows = mc - ir < MR ? mc - ir : MR;
            const float *ap = apack + (long)ir * kc;
            float *ct = c + (long)(ic + ir) * ldc + (jc + jr);
            if (rows == MR && cols == NR) {
              micro_kernel(kc, ap, bp, ct, ldc, add);
            } else {
              micro_kernel(kc, ap, bp, tile, NR, 0);
              for (int r = 0; r < rows; r++)
                for (int q = 0; q < cols; q++) {
                  float v = tile[r * NR + q];
                  ct[(long)r * ldc + q] = add ? ct[(long)r * ldc + q] + v : v;
                }
            }
          }
        }
      }
    }
  }
  if (bias) {
    for (int m = m0; m < m1; m++)
      for (int n = 0; n < Ncols; n++) c[(long)m * ldc + n] += bias[n];
  }
}
