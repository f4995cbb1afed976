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
 * gemm_dot: the same product for a few rows by dot products, its threads splitting the columns.
 * Neither makes a row's arithmetic depend on the other rows, so decoding is batch-invariant as long
 * as the caller picks the kernel per row, not by the batch's size (the CPU decoder does).
 *
 * No libc and no shadow stack: every buffer, scratch included, comes from the caller, so several
 * threads may run gemm at once on one shared memory, each over its own rows of C with its own work.
 */
#include <wasm_simd128.h>

/*
 * madd(a, b, c) = a·b + c per lane. The relaxed build (-DRELAXED_SIMD) uses relaxed SIMD's
 * f32x4.relaxed_madd, one fused multiply-add where the CPU has FMA (rounded once, so its results
 * differ from the plain build's in the last bits); clang 14 knows it only by its prototype name and
 * opcode (f32x4.fma, 0xfd 0xaf), which build-kernels.sh renumbers to the standard's (0xfd 0x105).
 */
#ifdef RELAXED_SIMD
#define madd(a, b, c) __builtin_wasm_fma_f32x4(a, b, c)
#else
#define madd(a, b, c) wasm_f32x4_add(wasm_f32x4_mul(a, b), c)
#endif

/* 1 in the relaxed build, 0 in the plain one: the module says which it is. */
int kernels_relaxed_simd(void) {
#ifdef RELAXED_SIMD
  return 1;
#else
  return 0;
#endif
}

#define MR 4
#define NR 8
#define MC 64
#define KC 256
#define NC 256


/* Transposes the 4×4 block held in rows a, b, c, d in place (each becomes a column). */
#define TRANSPOSE4(a, b, c, d)                                                                                   \
  do {                                                                                                           \
    v128_t t0_ = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), t1_ = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);               \
    v128_t t2_ = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), t3_ = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);               \
    a = wasm_i32x4_shuffle(t0_, t2_, 0, 1, 4, 5);                                                                \
    b = wasm_i32x4_shuffle(t0_, t2_, 2, 3, 6, 7);                                                                \
    c = wasm_i32x4_shuffle(t1_, t3_, 0, 1, 4, 5);                                                                \
    d = wasm_i32x4_shuffle(t1_, t3_, 2, 3, 6, 7);                                                                \
  } while (0)

/*
 * Packs A rows [m0, m0+mc) × columns [k0, k0+kc) into MR-high panels: panel p holds, for each k, MR
 * values. A full panel is copied by vectors: four k at a time through a 4×4 transpose when A's rows
 * are contiguous (acs = 1), one vector per k when its columns are (ars = 1, A transposed).
 */
static void pack_a(float *restrict dst, const float *a, int ars, int acs, int m0, int mc, int k0, int kc) {
  for (int p = 0; p < mc; p += MR) {
    int rows = mc - p < MR ? mc - p : MR;
    const float *panel = a + (long)(m0 + p) * ars + (long)k0 * acs;
    int k = 0;
    if (rows == MR && acs == 1) {
      for (; k + 4 <= kc; k += 4) {
        v128_t r0 = wasm_v128_load(panel + k), r1 = wasm_v128_load(panel + ars + k);
        v128_t r2 = wasm_v128_load(panel + 2 * (long)ars + k), r3 = wasm_v128_load(panel + 3 * (long)ars + k);
        TRANSPOSE4(r0, r1, r2, r3);
        wasm_v128_store(dst, r0);
        wasm_v128_store(dst + 4, r1);
        wasm_v128_store(dst + 8, r2);
        wasm_v128_store(dst + 12, r3);
        dst += 4 * MR;
      }
    } else if (rows == MR && ars == 1) {
      for (; k < kc; k++, dst += MR) wasm_v128_store(dst, wasm_v128_load(panel + (long)k * acs));
    }
    for (; k < kc; k++) {
      const float *src = panel + (long)k * acs;
      int r = 0;
      for (; r < rows; r++) dst[r] = src[(long)r * ars];
      for (; r < MR; r++) dst[r] = 0.0f;
      dst += MR;
    }
  }
}

/*
 * Packs B rows [k0, k0+kc) × columns [n0, n0+nc) into NR-wide panels: panel p holds, for each k, NR
 * values. A full panel is copied by vectors: two per k when B's rows are contiguous (bcs = 1), four k
 * at a time through two 4×4 transposes when its columns are (brs = 1, B transposed: a weight, keys).
 */
static void pack_b(float *restrict dst, const float *b, int brs, int bcs, int k0, int kc, int n0, int nc) {
  for (int p = 0; p < nc; p += NR) {
    int cols = nc - p < NR ? nc - p : NR;
    const float *panel = b + (long)k0 * brs + (long)(n0 + p) * bcs;
    int k = 0;
    if (cols == NR && bcs == 1) {
      for (; k < kc; k++, dst += NR) {
        const float *src = panel + (long)k * brs;
        wasm_v128_store(dst, wasm_v128_load(src));
        wasm_v128_store(dst + 4, wasm_v128_load(src + 4));
      }
    } else if (cols == NR && brs == 1) {
      for (; k + 4 <= kc; k += 4) {
        const float *src = panel + k;
        v128_t c0 = wasm_v128_load(src), c1 = wasm_v128_load(src + bcs), c2 = wasm_v128_load(src + 2 * (long)bcs), c3 = wasm_v128_load(src + 3 * (long)bcs);
        v128_t c4 = wasm_v128_load(src + 4 * (long)bcs), c5 = wasm_v128_load(src + 5 * (long)bcs), c6 = wasm_v128_load(src + 6 * (long)bcs),
               c7 = wasm_v128_load(src + 7 * (long)bcs);
        TRANSPOSE4(c0, c1, c2, c3);
        TRANSPOSE4(c4, c5, c6, c7);
        wasm_v128_store(dst, c0);
        wasm_v128_store(dst + 4, c4);
        wasm_v128_store(dst + 8, c1);
        wasm_v128_store(dst + 12, c5);
        wasm_v128_store(dst + 16, c2);
        wasm_v128_store(dst + 20, c6);
        wasm_v128_store(dst + 24, c3);
        wasm_v128_store(dst + 28, c7);
        dst += 4 * NR;
      }
    }
    for (; k < kc; k++) {
      const float *src = panel + (long)k * brs;
      int c = 0;
      for (; c < cols; c++) dst[c] = src[(long)c * bcs];
      for (; c < NR; c++) dst[c] = 0.0f;
      dst += NR;
    }
  }
}

static float dot(const float *x, const float *y, int n);

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
    c00 = madd(a0, b0, c00);
    c01 = madd(a0, b1, c01);
    c10 = madd(a1, b0, c10);
    c11 = madd(a1, b1, c11);
    c20 = madd(a2, b0, c20);
    c21 = madd(a2, b1, c21);
    c30 = madd(a3, b0, c30);
    c31 = madd(a3, b1, c31);
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
/*
 * C columns [n0, n1) of every row = or += A·B (+ bias) by one dot product per element, for A rows
 * and B columns contiguous along k (acs = brs = 1: a linear layer's forward, B(k, n) =
 * weight[n*IC + k]): a few rows, as when decoding, where packing B would cost as much as using it
 * once. Four columns at a time, each block of B read once and used by every row while it is in cache.
 * An element's arithmetic depends only on its own row, its column and K, never on M or on how
 * threads split the columns (n0 is a multiple of 4 and only the last range ends off a multiple of 4,
 * at the product's last column), so a row decoded alone or beside others gets the same bits.
 */
/* Lane j of the result is the sum of s_j's four lanes (a transpose and two adds). */
static inline v128_t horizontal_sums(v128_t s0, v128_t s1, v128_t s2, v128_t s3) {
  v128_t t01lo = wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), t01hi = wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7);
  v128_t t23lo = wasm_i32x4_shuffle(s2, s3, 0, 4, 1, 5), t23hi = wasm_i32x4_shuffle(s2, s3, 2, 6, 3, 7);
  v128_t u01 = wasm_f32x4_add(t01lo, t01hi), u23 = wasm_f32x4_add(t23lo, t23hi); /* (s0a, s1a, s0b, s1b), (s2a, s3a, s2b, s3b) */
  return wasm_f32x4_add(wasm_i32x4_shuffle(u01, u23, 0, 1, 4, 5), wasm_i32x4_shuffle(u01, u23, 2, 3, 6, 7));
}

/* Finishes one row's four sums of gemm_dot: the k tail past the last multiple of 4, accumulate, bias, store. */
static inline void dot_row_store(v128_t sums, const float *arow, const float *b0, const float *b1, const float *b2, const float *b3, int k, int K,
                                 float *cn, const float *biasn, int accumulate) {
  for (; k < K; k++) {
    float x = arow[k];
    sums = wasm_f32x4_add(sums, wasm_f32x4_make(x * b0[k], x * b1[k], x * b2[k], x * b3[k]));
  }
  if (accumulate) sums = wasm_f32x4_add(sums, wasm_v128_load(cn));
  if (biasn) sums = wasm_f32x4_add(sums, wasm_v128_load(biasn));
  wasm_v128_store(cn, sums);
}

void gemm_dot(float *c, int ldc, const float *a, int ars, const float *b, int bcs, const float *bias, int M, int K, int accumulate, int n0,
              int n1, float *work) {
  (void)work;
  int n = n0;
  int K4 = K & ~3;
  for (; n + 4 <= n1; n += 4) {
    const float *b0 = b + (long)n * bcs, *b1 = b0 + bcs, *b2 = b1 + bcs, *b3 = b2 + bcs;
    const float *biasn = bias ? bias + n : 0;
    int m = 0;
    /* Two rows at a time share the loads of B; each element's sums are the one-row loop's, in the same order. */
    for (; m + 2 <= M; m += 2) {
      const float *ar0 = a + (long)m * ars, *ar1 = ar0 + ars;
      v128_t s0 = wasm_f32x4_splat(0), s1 = s0, s2 = s0, s3 = s0, r0 = s0, r1 = s0, r2 = s0, r3 = s0;
      for (int k = 0; k < K4; k += 4) {
        v128_t x = wasm_v128_load(ar0 + k), y = wasm_v128_load(ar1 + k);
        v128_t w0 = wasm_v128_load(b0 + k), w1 = wasm_v128_load(b1 + k), w2 = wasm_v128_load(b2 + k), w3 = wasm_v128_load(b3 + k);
        s0 = madd(x, w0, s0);
        s1 = madd(x, w1, s1);
        s2 = madd(x, w2, s2);
        s3 = madd(x, w3, s3);
        r0 = madd(y, w0, r0);
        r1 = madd(y, w1, r1);
        r2 = madd(y, w2, r2);
        r3 = madd(y, w3, r3);
      }
      dot_row_store(horizontal_sums(s0, s1, s2, s3), ar0, b0, b1, b2, b3, K4, K, c + (long)m * ldc + n, biasn, accumulate);
      dot_row_store(horizontal_sums(r0, r1, r2, r3), ar1, b0, b1, b2, b3, K4, K, c + (long)(m + 1) * ldc + n, biasn, accumulate);
    }
    for (; m < M; m++) {
      const float *arow = a + (long)m * ars;
      v128_t s0 = wasm_f32x4_splat(0), s1 = s0, s2 = s0, s3 = s0;
      for (int k = 0; k < K4; k += 4) {
        v128_t x = wasm_v128_load(arow + k);
        s0 = madd(x, wasm_v128_load(b0 + k), s0);
        s1 = madd(x, wasm_v128_load(b1 + k), s1);
        s2 = madd(x, wasm_v128_load(b2 + k), s2);
        s3 = madd(x, wasm_v128_load(b3 + k), s3);
      }
      dot_row_store(horizontal_sums(s0, s1, s2, s3), arow, b0, b1, b2, b3, K4, K, c + (long)m * ldc + n, biasn, accumulate);
    }
  }
  for (; n < n1; n++) {
    for (int m = 0; m < M; m++) {
      const float *arow = a + (long)m * ars;
      float *crow = c + (long)m * ldc;
      float sum = dot(arow, b + (long)n * bcs, K);
      if (accumulate) sum += crow[n];
      if (bias) sum += bias[n];
      crow[n] = sum;
    }
  }
}

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

/*
 * Causal grouped-query attention, as src/gpu/reference/attention.ts: q (B, T, NH, HS), k and v
 * (B, T, KVH, HS), att (B, NH, T, T) the saved probabilities (zero above the diagonal), out
 * (B, T, NH, HS). Work is split by units u = b*KVH + kvh, [u0, u1): a unit is every query head of
 * one key/value head in one sequence, so dk and dv of a unit are written by one caller only.
 * Every product is the gemm above on strided views, one head at a time, in blocks of ATT_ROWS query
 * rows, each over only the keys up to its last row (causality): scores Q·Kᵀ straight into att, then
 * att·V; backward the gradient of a block of probabilities (dout·Vᵀ) in the work area beyond the
 * gemm's packs, then dq += dS·K, dk += dSᵀ·Q, dv += attᵀ·dout. Sums and exponentials are f32.
 */

/*
 * exp(x) per lane for x in [-87, 88] (clamped outside): 2^n·p(r), r = x − n·ln2, |r| ≤ ln2/2, degree-6
 * Taylor (rel. error < 2e-7). n = round(x·log2 e) by adding 1.5·2^23, which leaves n in the low
 * mantissa bits (no nearest and no saturating conversion, both several instructions in V8).
 */
#define ROUNDING_MAGIC 12582912.0f /* 1.5·2^23 */
static v128_t exp_f32x4(v128_t x) {
  x = wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-87.0f)), wasm_f32x4_splat(88.0f)); /* pmin/pmax: one instruction each */
  v128_t shifted = madd(x, wasm_f32x4_splat(1.44269504088896341f), wasm_f32x4_splat(ROUNDING_MAGIC));
  v128_t n = wasm_f32x4_sub(shifted, wasm_f32x4_splat(ROUNDING_MAGIC));
  v128_t r = madd(n, wasm_f32x4_splat(-0.693359375f), x);
  r = madd(n, wasm_f32x4_splat(2.12194440e-4f), r);
  v128_t p = wasm_f32x4_splat(1.0f / 720.0f);
  p = madd(p, r, wasm_f32x4_splat(1.0f / 120.0f));
  p = madd(p, r, wasm_f32x4_splat(1.0f / 24.0f));
  p = madd(p, r, wasm_f32x4_splat(1.0f / 6.0f));
  p = madd(p, r, wasm_f32x4_splat(0.5f));
  p = madd(p, r, wasm_f32x4_splat(1.0f));
  p = madd(p, r, wasm_f32x4_splat(1.0f));
  /* the bits of shifted are those of ROUNDING_MAGIC plus n */
  v128_t scale = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_sub(shifted, wasm_f32x4_splat(ROUNDING_MAGIC)), wasm_i32x4_splat(127)), 23);
  return wasm_f32x4_mul(p, scale);
}

/* Σ_i x[i]·y[i] over n values. */
static float dot(const float *x, const float *y, int n) {
  v128_t acc = wasm_f32x4_splat(0);
  int i = 0;
  for (; i + 4 <= n; i += 4) acc = madd(wasm_v128_load(x + i), wasm_v128_load(y + i), acc);
  float sum = wasm_f32x4_extract_lane(acc, 0) + wasm_f32x4_extract_lane(acc, 1) + wasm_f32x4_extract_lane(acc, 2) + wasm_f32x4_extract_lane(acc, 3);
  for (; i < n; i++) sum += x[i] * y[i];
  return sum;
}

#define GEMM_WORK_FLOATS (MC * KC + KC * NC + MR * NR)
#define ATT_ROWS 32             /* query rows per block */
#define ATT_SCRATCH_FLOATS 65536 /* backward's block of probability gradients: ATT_ROWS × T at most */

/* Floats of work one caller needs: the gemm's packs and tile, then attention backward's block. */
int gemm_work_floats(void) { return GEMM_WORK_FLOATS + ATT_SCRATCH_FLOATS; }

/* The longest sequence the attention kernels take: one row of probability gradients must fit the scratch. */
int attention_max_tokens(void) { return ATT_SCRATCH_FLOATS; }

/* Query rows per block for T tokens: ATT_ROWS, fewer when ATT_ROWS rows of T do not fit the scratch. */
static int attention_block_rows(int T) {
  int rows = ATT_SCRATCH_FLOATS / T;
  return rows < ATT_ROWS ? rows : ATT_ROWS;
}

/* Max of the first n values of a row. */
static float row_max(const float *x, int n) {
  v128_t vmax = wasm_f32x4_splat(-3.4e38f);
  int i = 0;
  for (; i + 4 <= n; i += 4) vmax = wasm_f32x4_pmax(vmax, wasm_v128_load(x + i));
  float m = wasm_f32x4_extract_lane(vmax, 0);
  m = wasm_f32x4_extract_lane(vmax, 1) > m ? wasm_f32x4_extract_lane(vmax, 1) : m;
  m = wasm_f32x4_extract_lane(vmax, 2) > m ? wasm_f32x4_extract_lane(vmax, 2) : m;
  m = wasm_f32x4_extract_lane(vmax, 3) > m ? wasm_f32x4_extract_lane(vmax, 3) : m;
  for (; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

static v128_t load_partial(const float *p, int count);
static void store_partial(float *p, v128_t v, int count);

/*
 * row[0..n) = softmax(row[0..n)·scale) (n ≥ 1, scale > 0), row[n..T) = 0: one causal row of
 * probabilities, in place. The scale rides in the exponent: exp(row·scale − max·scale).
 */
static void softmax_row(float *row, int n, int T, float scale) {
  v128_t vscale = wasm_f32x4_splat(scale), vshift = wasm_f32x4_splat(-row_max(row, n) * scale);
  v128_t vsum = wasm_f32x4_splat(0);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t e = exp_f32x4(madd(wasm_v128_load(row + i), vscale, vshift));
    wasm_v128_store(row + i, e);
    vsum = wasm_f32x4_add(vsum, e);
  }
  float sum = wasm_f32x4_extract_lane(vsum, 0) + wasm_f32x4_extract_lane(vsum, 1) + wasm_f32x4_extract_lane(vsum, 2) + wasm_f32x4_extract_lane(vsum, 3);
  if (i < n) {
    v128_t e = exp_f32x4(madd(load_partial(row + i, n - i), vscale, vshift));
    store_partial(row + i, e, n - i);
    for (int j = i; j < n; j++) sum += row[j];
  }
  v128_t vinv = wasm_f32x4_splat(1.0f / sum);
  for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(row + i, wasm_f32x4_mul(wasm_v128_load(row + i), vinv));
  for (; i < n; i++) row[i] *= wasm_f32x4_extract_lane(vinv, 0);
  for (; i < T && (i & 3); i++) row[i] = 0.0f;
  for (; i + 4 <= T; i += 4) wasm_v128_store(row + i, wasm_f32x4_splat(0));
  for (; i < T; i++) row[i] = 0.0f;
}

/* out = softmax(q·kᵀ/√HS, causal)·v for units [u0, u1); saves the probabilities in att. */
void attention_forward(float *out, float *att, const float *q, const float *k, const float *v, int B, int T, int NH, int KVH, int HS,
                       int u0, int u1, float *work) {
  (void)B;
  float scale = 1.0f / __builtin_sqrtf((float)HS);
  int group = NH / KVH, rows = attention_block_rows(T);
  int qs = NH * HS, kvs = KVH * HS; /* row strides of q (and out) and of k, v */
  for (int u = u0; u < u1; u++) {
    int b = u / KVH, kvh = u % KVH;
    const float *ku = k + ((long)b * T * KVH + kvh) * HS, *vu = v + ((long)b * T * KVH + kvh) * HS; /* (T, HS), row stride kvs */
    for (int h = kvh * group; h < (kvh + 1) * group; h++) {
      const float *qh = q + ((long)b * T * NH + h) * HS; /* (T, HS), row stride qs */
      float *oh = out + ((long)b * T * NH + h) * HS;
      float *ah = att + (long)(b * NH + h) * T * T; /* (T, T) */
      for (int r0 = 0; r0 < T; r0 += rows) {
        int r1 = r0 + rows < T ? r0 + rows : T; /* rows [r0, r1) see keys [0, r1) */
        /* scores (r1 − r0, r1) = q rows · k rowsᵀ, B(i, t2) = ku[t2*kvs + i] */
        gemm(ah + (long)r0 * T, T, qh + (long)r0 * qs, qs, 1, ku, 1, kvs, 0, 0, r1 - r0, r1, HS, 0, work);
        for (int t = r0; t < r1; t++) softmax_row(ah + (long)t * T, t + 1, T, scale);
        /* out rows (r1 − r0, HS) = att block (r1 − r0, r1) · v rows [0, r1) */
        gemm(oh + (long)r0 * qs, qs, ah + (long)r0 * T, T, 1, vu, kvs, 1, 0, 0, r1 - r0, HS, r1, 0, work);
      }
    }
  }
}

/* Accumulates the gradients of attention_forward into dq, dk and dv for units [u0, u1). */
void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *att,
                        int B, int T, int NH, int KVH, int HS, int u0, int u1, float *work) {
  (void)B;
  float scale = 1.0f / __builtin_sqrtf((float)HS);
  int group = NH / KVH, rows = attention_block_rows(T);
  int qs = NH * HS, kvs = KVH * HS;
  float *ds = work + GEMM_WORK_FLOATS; /* (r1 − r0, r1), row stride r1: the block's probability, then score, gradients */
  for (int u = u0; u < u1; u++) {
    int b = u / KVH, kvh = u % KVH;
    long kvbase = ((long)b * T * KVH + kvh) * HS;
    const float *ku = k + kvbase, *vu = v + kvbase;
    float *dku = dk + kvbase, *dvu = dv + kvbase;
    for (int h = kvh * group; h < (kvh + 1) * group; h++) {
      long qbase = ((long)b * T * NH + h) * HS;
      const float *qh = q + qbase, *douth = dout + qbase;
      float *dqh = dq + qbase;
      const float *ah = att + (long)(b * NH + h) * T * T;
      for (int r0 = 0; r0 < T; r0 += rows) {
        int r1 = r0 + rows < T ? r0 + rows : T, n = r1 - r0;
        /* dv rows [0, r1) += att blockᵀ · dout rows, A(t2, t) = ah[(r0 + t)*T + t2] */
        gemm(dvu, kvs, ah + (long)r0 * T, 1, T, douth + (long)r0 * qs, qs, 1, 0, 0, r1, HS, n, 1, work);
        /* datt (n, r1) = dout rows · v rows [0, r1)ᵀ */
        gemm(ds, r1, douth + (long)r0 * qs, qs, 1, vu, 1, kvs, 0, 0, n, r1, HS, 0, work);
        /* through the softmax and the scale: dscore = att·(datt − Σ att·datt)·scale on and below the diagonal, 0 above */
        for (int t = r0; t < r1; t++) {
          const float *arow = ah + (long)t * T;
          float *drow = ds + (long)(t - r0) * r1;
          int count = t + 1, i = 0;
          v128_t vdot = wasm_f32x4_splat(0);
          for (; i + 4 <= count; i += 4) vdot = madd(wasm_v128_load(arow + i), wasm_v128_load(drow + i), vdot);
          float dotAttDatt = wasm_f32x4_extract_lane(vdot, 0) + wasm_f32x4_extract_lane(vdot, 1) + wasm_f32x4_extract_lane(vdot, 2) + wasm_f32x4_extract_lane(vdot, 3);
          for (; i < count; i++) dotAttDatt += arow[i] * drow[i];
          v128_t vd = wasm_f32x4_splat(dotAttDatt), vscale = wasm_f32x4_splat(scale);
          for (i = 0; i + 4 <= count; i += 4)
            wasm_v128_store(drow + i, wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(arow + i), wasm_f32x4_sub(wasm_v128_load(drow + i), vd)), vscale));
          for (; i < count; i++) drow[i] = arow[i] * (drow[i] - dotAttDatt) * scale;
          for (i = count; i < r1; i++) drow[i] = 0.0f;
        }
        /* dq rows += dscore (n, r1) · k rows [0, r1) */
        gemm(dqh + (long)r0 * qs, qs, ds, r1, 1, ku, kvs, 1, 0, 0, n, HS, r1, 1, work);
        /* dk rows [0, r1) += dscoreᵀ · q rows, A(t2, t) = ds[t*r1 + t2] */
        gemm(dku, kvs, ds, 1, r1, qh + (long)r0 * qs, qs, 1, 0, 0, r1, HS, n, 1, work);
      }
    }
  }
}

/*
 * SwiGLU over elements [n0, n1) of N, as src/gpu/reference/swiglu.ts: out = silu(gate)·up with
 * silu(g) = g·sigmoid(g); backward accumulates dgate += dout·up·sigmoid·(1 + g·(1 − sigmoid)) and
 * dup += dout·silu. f32, with the vector exp above. work is unused (every kernel takes one). Nothing
 * here may take a local's address: that would put it on the shadow stack, which threads share.
 */

/* sigmoid(g) per lane. */
static v128_t sigmoid_f32x4(v128_t g) {
  v128_t one = wasm_f32x4_splat(1.0f);
  return wasm_f32x4_div(one, wasm_f32x4_add(one, exp_f32x4(wasm_f32x4_neg(g))));
}

/* Loads count ≤ 4 floats into the low lanes (zeros above). */
static v128_t load_partial(const float *p, int count) {
  v128_t v = wasm_f32x4_splat(0);
  if (count > 0) v = wasm_f32x4_replace_lane(v, 0, p[0]);
  if (count > 1) v = wasm_f32x4_replace_lane(v, 1, p[1]);
  if (count > 2) v = wasm_f32x4_replace_lane(v, 2, p[2]);
  return v;
}

/* Stores the low count ≤ 4 lanes. */
static void store_partial(float *p, v128_t v, int count) {
  if (count > 0) p[0] = wasm_f32x4_extract_lane(v, 0);
  if (count > 1) p[1] = wasm_f32x4_extract_lane(v, 1);
  if (count > 2) p[2] = wasm_f32x4_extract_lane(v, 2);
}

void swiglu_forward(float *out, const float *gate, const float *up, int n0, int n1, float *work) {
  (void)work;
  int i = n0;
  for (; i + 4 <= n1; i += 4) {
    v128_t g = wasm_v128_load(gate + i);
    wasm_v128_store(out + i, wasm_f32x4_mul(wasm_f32x4_mul(g, sigmoid_f32x4(g)), wasm_v128_load(up + i)));
  }
  if (i < n1) {
    v128_t g = load_partial(gate + i, n1 - i);
    store_partial(out + i, wasm_f32x4_mul(wasm_f32x4_mul(g, sigmoid_f32x4(g)), load_partial(up + i, n1 - i)), n1 - i);
  }
}

/* One vector of swiglu_backward: returns (dgate increment, dup increment) through pointers. */
static inline __attribute__((always_inline)) void swiglu_backward_lanes(v128_t g, v128_t u, v128_t d, v128_t *ddgate, v128_t *ddup) {
  v128_t one = wasm_f32x4_splat(1.0f);
  v128_t s = sigmoid_f32x4(g);
  v128_t slope = wasm_f32x4_mul(s, wasm_f32x4_add(one, wasm_f32x4_mul(g, wasm_f32x4_sub(one, s))));
  *ddgate = wasm_f32x4_mul(wasm_f32x4_mul(d, u), slope);
  *ddup = wasm_f32x4_mul(d, wasm_f32x4_mul(g, s));
}

void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate, const float *up, int n0, int n1, float *work) {
  (void)work;
  int i = n0;
  v128_t a, b;
  for (; i + 4 <= n1; i += 4) {
    swiglu_backward_lanes(wasm_v128_load(gate + i), wasm_v128_load(up + i), wasm_v128_load(dout + i), &a, &b);
    wasm_v128_store(dgate + i, wasm_f32x4_add(wasm_v128_load(dgate + i), a));
    wasm_v128_store(dup + i, wasm_f32x4_add(wasm_v128_load(dup + i), b));
  }
  if (i < n1) {
    int count = n1 - i;
    swiglu_backward_lanes(load_partial(gate + i, count), load_partial(up + i, count), load_partial(dout + i, count), &a, &b);
    store_partial(dgate + i, wasm_f32x4_add(load_partial(dgate + i, count), a), count);
    store_partial(dup + i, wasm_f32x4_add(load_partial(dup + i, count), b), count);
  }
}

/*
 * Row and elementwise kernels of the training step, each over a range [n0, n1) that threads may split
 * (rows for RMSNorm and log-softmax, elements otherwise). Scalars that are not sizes (eps, the inverse
 * temperature, AdamW's hyperparameters) come in a small float array, `hyper`, so every argument a
 * thread pool passes stays an integer. work is unused here.
 */

/* Sum of the four lanes. */
static float hsum(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) + wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

/* RMSNorm forward over rows [n0, n1) of (N, C): out = inp·rstd·weight, rstd = 1/sqrt(mean(inp²) + hyper[0]). */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, const float *hyper, int C, int n0, int n1, float *work) {
  (void)work;
  float eps = hyper[0];
  for (int n = n0; n < n1; n++) {
    const float *x = inp + (long)n * C;
    float *y = out + (long)n * C;
    v128_t acc = wasm_f32x4_splat(0);
    int c = 0;
    for (; c + 4 <= C; c += 4) {
      v128_t v = wasm_v128_load(x + c);
      acc = madd(v, v, acc);
    }
    float sumSquares = hsum(acc);
    for (; c < C; c++) sumSquares += x[c] * x[c];
    float s = 1.0f / __builtin_sqrtf(sumSquares / (float)C + eps);
    v128_t vs = wasm_f32x4_splat(s);
    for (c = 0; c + 4 <= C; c += 4) wasm_v128_store(y + c, wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + c), vs), wasm_v128_load(weight + c)));
    for (; c < C; c++) y[c] = x[c] * s * weight[c];
    rstd[n] = s;
  }
}

/*
 * RMSNorm backward over rows [n0, n1): dinp += dout·w·s − x·s³·Σ(dout·w·x)/C, and dweight (when not
 * null) += dout·x·s summed over the rows; with dweight, one caller must own every row (no split).
 */
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, const float *rstd, int C, int n0, int n1,
                      float *work) {
  (void)work;
  for (int n = n0; n < n1; n++) {
    const float *x = inp + (long)n * C;
    const float *g = dout + (long)n * C;
    float *dx = dinp + (long)n * C;
    float s = rstd[n];
    v128_t acc = wasm_f32x4_splat(0);
    int c = 0;
    for (; c + 4 <= C; c += 4) acc = madd(wasm_f32x4_mul(wasm_v128_load(g + c), wasm_v128_load(weight + c)), wasm_v128_load(x + c), acc);
    float dotDoutWeightInp = hsum(acc);
    for (; c < C; c++) dotDoutWeightInp += g[c] * weight[c] * x[c];
    float correction = s * s * s * dotDoutWeightInp / (float)C;
    v128_t vs = wasm_f32x4_splat(s), vcorr = wasm_f32x4_splat(correction);
    for (c = 0; c + 4 <= C; c += 4) {
      v128_t xv = wasm_v128_load(x + c), gv = wasm_v128_load(g + c);
      v128_t d = wasm_f32x4_sub(wasm_f32x4_mul(wasm_f32x4_mul(gv, wasm_v128_load(weight + c)), vs), wasm_f32x4_mul(xv, vcorr));
      wasm_v128_store(dx + c, wasm_f32x4_add(wasm_v128_load(dx + c), d));
      if (dweight) wasm_v128_store(dweight + c, wasm_f32x4_add(wasm_v128_load(dweight + c), wasm_f32x4_mul(wasm_f32x4_mul(gv, xv), vs)));
    }
    for (; c < C; c++) {
      dx[c] += g[c] * weight[c] * s - x[c] * correction;
      if (dweight) dweight[c] += g[c] * x[c] * s;
    }
  }
}

/* Natural logarithm of x > 0 in double: x = 2^e·m with m in [√½, √2), log m = 2·atanh((m−1)/(m+1)) by its series. */
static double log_f64(double x) {
  unsigned long long bits = __builtin_bit_cast(unsigned long long, x);
  int e = (int)((bits >> 52) & 0x7ff) - 1023;
  double m = __builtin_bit_cast(double, (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL); /* [1, 2) */
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  double s = (m - 1.0) / (m + 1.0), s2 = s * s, term = s, sum = 0.0;
  for (int k = 1; k <= 21; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2.0 * sum + e * 0.6931471805599453;
}

/* log Σ_v exp(z_v) of one row, z = logits·invT: the maximum in f32, the exponentials' sum in f64. */
static double log_sum_exp(const float *row, int V, float invT) {
  v128_t vinv = wasm_f32x4_splat(invT);
  v128_t vmax = wasm_f32x4_splat(-3.4e38f);
  int v = 0;
  for (; v + 4 <= V; v += 4) vmax = wasm_f32x4_pmax(vmax, wasm_f32x4_mul(wasm_v128_load(row + v), vinv));
  float max = wasm_f32x4_extract_lane(vmax, 0);
  for (int i = 1; i < 4; i++) {
    float lane = i == 1 ? wasm_f32x4_extract_lane(vmax, 1) : i == 2 ? wasm_f32x4_extract_lane(vmax, 2) : wasm_f32x4_extract_lane(vmax, 3);
    max = lane > max ? lane : max;
  }
  for (; v < V; v++) max = row[v] * invT > max ? row[v] * invT : max;
  vmax = wasm_f32x4_splat(max);
  v128_t sum01 = wasm_f64x2_splat(0), sum23 = sum01;
  for (v = 0; v + 4 <= V; v += 4) {
    v128_t e = exp_f32x4(wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(row + v), vinv), vmax));
    sum01 = wasm_f64x2_add(sum01, wasm_f64x2_promote_low_f32x4(e));
    sum23 = wasm_f64x2_add(sum23, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(e, e, 2, 3, 0, 1)));
  }
  double sum = wasm_f64x2_extract_lane(sum01, 0) + wasm_f64x2_extract_lane(sum01, 1) + wasm_f64x2_extract_lane(sum23, 0) + wasm_f64x2_extract_lane(sum23, 1);
  if (v < V) {
    v128_t e = exp_f32x4(wasm_f32x4_sub(wasm_f32x4_mul(load_partial(row + v, V - v), vinv), vmax));
    for (int i = 0; i < V - v; i++) sum += i == 0 ? wasm_f32x4_extract_lane(e, 0) : i == 1 ? wasm_f32x4_extract_lane(e, 1) : wasm_f32x4_extract_lane(e, 2);
  }
  return (double)max + log_f64(sum);
}

/* logprobs[n] = log_softmax(logits[n,:]·hyper[0])[targets[n]] over rows [n0, n1) of (N, V); hyper[0] = 1/temperature. */
void logprobs_forward(float *logprobs, const float *logits, const int *targets, const float *hyper, int V, int n0, int n1, float *work) {
  (void)work;
  float invT = hyper[0];
  for (int n = n0; n < n1; n++) {
    const float *row = logits + (long)n * V;
    logprobs[n] = (float)((double)(row[targets[n]] * invT) - log_sum_exp(row, V, invT));
  }
}

/* dlogits[n,v] += dlogprobs[n]·(onehot(targets[n])[v] − softmax(logits[n,:]·invT)[v])·invT over rows [n0, n1), skipping rows whose dlogprobs is 0. */
void logprobs_backward(float *dlogits, const float *dlogprobs, const float *logits, const int *targets, const float *hyper, int V, int n0, int n1,
                       float *work) {
  (void)work;
  float invT = hyper[0];
  for (int n = n0; n < n1; n++) {
    float g = dlogprobs[n];
    if (g == 0.0f) continue;
    const float *row = logits + (long)n * V;
    float *drow = dlogits + (long)n * V;
    v128_t vlse = wasm_f32x4_splat((float)log_sum_exp(row, V, invT));
    v128_t vinv = wasm_f32x4_splat(invT), vscale = wasm_f32x4_splat(-g * invT);
    int v = 0;
    for (; v + 4 <= V; v += 4) {
      v128_t p = exp_f32x4(wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(row + v), vinv), vlse));
      wasm_v128_store(drow + v, wasm_f32x4_add(wasm_v128_load(drow + v), wasm_f32x4_mul(vscale, p)));
    }
    if (v < V) {
      v128_t p = exp_f32x4(wasm_f32x4_sub(wasm_f32x4_mul(load_partial(row + v, V - v), vinv), vlse));
      store_partial(drow + v, wasm_f32x4_add(load_partial(drow + v, V - v), wasm_f32x4_mul(vscale, p)), V - v);
    }
    drow[targets[n]] += g * invT;
  }
}

/*
 * AdamW over elements [n0, n1), as src/gpu/reference/adamw.ts in f32: hyper = (beta1, 1 − beta1, beta2,
 * 1 − beta2, 1 − lr·weightDecay, lr / biasCorrection1, sqrt(biasCorrection2), eps).
 */
void adamw_update(float *params, const float *grads, float *m, float *v, const float *hyper, int n0, int n1, float *work) {
  (void)work;
  v128_t b1 = wasm_f32x4_splat(hyper[0]), ob1 = wasm_f32x4_splat(hyper[1]), b2 = wasm_f32x4_splat(hyper[2]), ob2 = wasm_f32x4_splat(hyper[3]);
  v128_t decay = wasm_f32x4_splat(hyper[4]), stepSize = wasm_f32x4_splat(hyper[5]), bc2 = wasm_f32x4_splat(hyper[6]), eps = wasm_f32x4_splat(hyper[7]);
  int i = n0;
  for (; i + 4 <= n1; i += 4) {
    v128_t g = wasm_v128_load(grads + i);
    v128_t mi = wasm_f32x4_add(wasm_f32x4_mul(b1, wasm_v128_load(m + i)), wasm_f32x4_mul(ob1, g));
    v128_t vi = wasm_f32x4_add(wasm_f32x4_mul(b2, wasm_v128_load(v + i)), wasm_f32x4_mul(wasm_f32x4_mul(ob2, g), g));
    wasm_v128_store(m + i, mi);
    wasm_v128_store(v + i, vi);
    v128_t denom = wasm_f32x4_add(wasm_f32x4_div(wasm_f32x4_sqrt(vi), bc2), eps);
    v128_t p = wasm_f32x4_mul(wasm_v128_load(params + i), decay);
    wasm_v128_store(params + i, wasm_f32x4_sub(p, wasm_f32x4_div(wasm_f32x4_mul(stepSize, mi), denom)));
  }
  for (; i < n1; i++) {
    float g = grads[i];
    float mi = hyper[0] * m[i] + hyper[1] * g;
    float vi = hyper[2] * v[i] + hyper[3] * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = params[i] * hyper[4] - hyper[5] * mi / (__builtin_sqrtf(vi) / hyper[6] + hyper[7]);
  }
}

/* out = a + b over elements [n0, n1). */
void residual_forward(float *out, const float *a, const float *b, int n0, int n1, float *work) {
  (void)work;
  int i = n0;
  for (; i + 4 <= n1; i += 4) wasm_v128_store(out + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  for (; i < n1; i++) out[i] = a[i] + b[i];
}

/* da += dout and db += dout over elements [n0, n1). */
void residual_backward(float *da, float *db, const float *dout, int n0, int n1, float *work) {
  (void)work;
  int i = n0;
  for (; i + 4 <= n1; i += 4) {
    v128_t d = wasm_v128_load(dout + i);
    wasm_v128_store(da + i, wasm_f32x4_add(wasm_v128_load(da + i), d));
    wasm_v128_store(db + i, wasm_f32x4_add(wasm_v128_load(db + i), d));
  }
  for (; i < n1; i++) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}
