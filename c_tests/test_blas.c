/* THBlas_ (column-major, BLAS trans chars, leading dimensions, increments incl. negative ones)
 * and THVector_ against naive loops, for Float, Double, Int, Long, Byte, Half; and the error
 * cases: negative sizes, too-small leading dimensions, NULL pointers, bad trans chars, zero
 * increments of written vectors, integer division by zero (nothing written). Values are small
 * integers, so float results are exact and compared with ==. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>

static unsigned long long lcg_state = 12345;
static int small_int(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((lcg_state >> 33) % 7) - 3;
}

/* element (i, j) of a column-major matrix with leading dimension ld, optionally transposed */
#define AT(p, ld, tr, i, j) ((tr) ? (p)[(j) + (i) * (ld)] : (p)[(i) + (j) * (ld)])
/* element i of a BLAS vector of n elements with increment inc (negative: from the far end) */
#define VAT(p, n, inc, i) (*((inc) < 0 ? &(p)[((n)-1 - (i)) * -(inc)] : &(p)[(i) * (inc)]))

#define BLAS_TESTS(R, real, ACC)                                                                   \
  static void test_##R(void) {                                                                     \
    enum { M = 7, N = 5, K = 6, LD = 9 };                                                          \
    real a[LD * 9], b[LD * 9], c[LD * 9], want[LD * 9];                                            \
    const char trs[4] = {'n', 't', 'N', 'c'};                                                      \
    for (int ta = 0; ta < 4; ta++)                                                                 \
      for (int tb = 0; tb < 4; tb++)                                                               \
        for (int beta_i = 0; beta_i < 2; beta_i++) {                                               \
          int tra = trs[ta] != 'n' && trs[ta] != 'N', trb = trs[tb] != 'n' && trs[tb] != 'N';      \
          for (int i = 0; i < LD * 9; i++) {                                                       \
            a[i] = (real)small_int();                                                              \
            b[i] = (real)small_int();                                                              \
            c[i] = (real)small_int();                                                              \
            want[i] = c[i];                                                                        \
          }                                                                                        \
          real alpha = (real)2, beta = (real)(beta_i ? 3 : 0);                                     \
          for (int i = 0; i < M; i++)                                                              \
            for (int j = 0; j < N; j++) {                                                          \
              ACC s = 0;                                                                           \
              for (int p = 0; p < K; p++) s += (ACC)AT(a, LD, tra, i, p) * (ACC)AT(b, LD, trb, p, j); \
              want[i + j * LD] = (real)((ACC)alpha * s + (beta_i ? (ACC)beta * (ACC)c[i + j * LD] : 0)); \
            }                                                                                      \
          EXPECT_OK(TH##R##Blas_gemm(trs[ta], trs[tb], M, N, K, alpha, a, LD, b, LD, beta, c, LD)); \
          int same = 1;                                                                            \
          for (int i = 0; i < LD * 9; i++) same &= c[i] == want[i]; /* padding rows untouched */   \
          CHECK(same);                                                                             \
        }                                                                                          \
    /* gemv, both transposes, strided x and negative incy */                                      \
    for (int t = 0; t < 2; t++) {                                                                  \
      real x[2 * 9], y[9], yw[9];                                                                  \
      for (int i = 0; i < LD * 9; i++) a[i] = (real)small_int();                                   \
      for (int i = 0; i < 18; i++) x[i] = (real)small_int();                                       \
      for (int i = 0; i < 9; i++) y[i] = yw[i] = (real)small_int();                                \
      int lx = t ? M : N, ly = t ? N : M;                                                          \
      for (int i = 0; i < ly; i++) {                                                               \
        ACC s = 0;                                                                                 \
        for (int p = 0; p < lx; p++) s += (ACC)AT(a, LD, t, i, p) * (ACC)VAT(x, lx, 2, p);         \
        VAT(yw, ly, -1, i) = (real)(3 * s + 2 * (ACC)VAT(y, ly, -1, i));                           \
      }                                                                                            \
      EXPECT_OK(TH##R##Blas_gemv(t ? 't' : 'n', M, N, (real)3, a, LD, x, 2, (real)2, y, -1));      \
      int same = 1;                                                                                \
      for (int i = 0; i < 9; i++) same &= y[i] == yw[i];                                           \
      CHECK(same);                                                                                 \
    }                                                                                              \
    /* ger with a padded leading dimension */                                                     \
    {                                                                                              \
      real x[M], y[2 * N];                                                                         \
      for (int i = 0; i < M; i++) x[i] = (real)small_int();                                        \
      for (int i = 0; i < 2 * N; i++) y[i] = (real)small_int();                                    \
      for (int i = 0; i < LD * 9; i++) want[i] = a[i] = (real)small_int();                         \
      for (int i = 0; i < M; i++)                                                                  \
        for (int j = 0; j < N; j++) want[i + j * LD] = (real)((ACC)a[i + j * LD] + 2 * (ACC)x[i] * (ACC)y[2 * j]); \
      EXPECT_OK(TH##R##Blas_ger(M, N, (real)2, x, 1, y, 2, a, LD));                                \
      int same = 1;                                                                                \
      for (int i = 0; i < LD * 9; i++) same &= a[i] == want[i];                                    \
      CHECK(same);                                                                                 \
    }                                                                                              \
    /* level 1 */                                                                                 \
    {                                                                                              \
      real x[12], y[12], x0[12], y0[12];                                                           \
      for (int i = 0; i < 12; i++) x0[i] = x[i] = (real)small_int(), y0[i] = y[i] = (real)small_int(); \
      EXPECT_OK(TH##R##Blas_swap(4, x, 3, y, -2));                                                 \
      int ok = 1;                                                                                  \
      for (int i = 0; i < 4; i++) ok &= VAT(x, 4, 3, i) == VAT(y0, 4, -2, i) && VAT(y, 4, -2, i) == VAT(x0, 4, 3, i); \
      CHECK(ok);                                                                                   \
      for (int i = 0; i < 12; i++) x[i] = x0[i], y[i] = y0[i];                                     \
      EXPECT_OK(TH##R##Blas_scal(5, (real)3, x, 2));                                               \
      ok = 1;                                                                                      \
      for (int i = 0; i < 12; i++) ok &= x[i] == ((i % 2 == 0 && i < 10) ? (real)(3 * x0[i]) : x0[i]); \
      CHECK(ok);                                                                                   \
      EXPECT_OK(TH##R##Blas_copy(6, x0, 1, y, 2));                                                 \
      ok = 1;                                                                                      \
      for (int i = 0; i < 6; i++) ok &= y[2 * i] == x0[i];                                         \
      CHECK(ok);                                                                                   \
      for (int i = 0; i < 12; i++) y[i] = y0[i];                                                   \
      EXPECT_OK(TH##R##Blas_axpy(6, (real)2, x0, 2, y, 1));                                        \
      ok = 1;                                                                                      \
      for (int i = 0; i < 6; i++) ok &= y[i] == (real)(y0[i] + 2 * x0[2 * i]);                     \
      CHECK(ok);                                                                                   \
      ACC d = 0;                                                                                   \
      for (int i = 0; i < 4; i++) d += (ACC)VAT(x0, 4, -3, i) * (ACC)y0[i];                        \
      CHECK(TH##R##Blas_dot(4, x0, -3, y0, 1) == (real)d);                                         \
    }                                                                                              \
    /* THVector, including in-place z == x */                                                     \
    {                                                                                              \
      enum { V = 37 };                                                                             \
      real x[V], y[V], z[V];                                                                       \
      for (int i = 0; i < V; i++) x[i] = (real)small_int(), y[i] = (real)(small_int() + 4);        \
      TH##R##Vector_fill(z, (real)5, V);                                                           \
      int ok = 1;                                                                                  \
      for (int i = 0; i < V; i++) ok &= z[i] == (real)5;                                           \
      TH##R##Vector_cadd(z, x, y, (real)2, V);                                                     \
      for (int i = 0; i < V; i++) ok &= z[i] == (real)(x[i] + 2 * y[i]);                           \
      TH##R##Vector_adds(z, x, (real)3, V);                                                        \
      for (int i = 0; i < V; i++) ok &= z[i] == (real)(x[i] + 3);                                  \
      TH##R##Vector_cmul(z, x, y, V);                                                              \
      for (int i = 0; i < V; i++) ok &= z[i] == (real)(x[i] * y[i]);                               \
      TH##R##Vector_muls(z, x, (real)3, V);                                                        \
      for (int i = 0; i < V; i++) ok &= z[i] == (real)(x[i] * 3);                                  \
      TH##R##Vector_cmul(z, x, y, V);                                                              \
      TH##R##Vector_cdiv(z, z, y, V);                                                              \
      for (int i = 0; i < V; i++) ok &= z[i] == x[i];                                              \
      TH##R##Vector_muls(z, y, (real)2, V);                                                        \
      TH##R##Vector_divs(z, z, (real)2, V);                                                        \
      for (int i = 0; i < V; i++) ok &= z[i] == y[i];                                              \
      TH##R##Vector_copy(z, x, V);                                                                 \
      for (int i = 0; i < V; i++) ok &= z[i] == x[i];                                              \
      TH##R##Vector_vectorDispatchInit();                                                          \
      CHECK(ok);                                                                                   \
      CHECK(THGetLastErrorCode() == TH_OK);                                                        \
    }                                                                                              \
    /* errors: nothing written */                                                                 \
    {                                                                                              \
      real cc[4] = {1, 2, 3, 4}, aa[4] = {1, 1, 1, 1};                                             \
      EXPECT_ERROR(TH##R##Blas_gemm('n', 'n', 2, 2, 2, 1, aa, 1, aa, 2, 0, cc, 2)); /* lda < m */ \
      EXPECT_ERROR(TH##R##Blas_gemm('n', 't', 2, 2, 2, 1, aa, 2, aa, 1, 0, cc, 2)); /* ldb < n */ \
      EXPECT_ERROR(TH##R##Blas_gemm('n', 'n', 2, 2, 2, 1, aa, 2, aa, 2, 0, cc, 1)); /* ldc < m */ \
      EXPECT_ERROR(TH##R##Blas_gemm('x', 'n', 2, 2, 2, 1, aa, 2, aa, 2, 0, cc, 2));               \
      EXPECT_ERROR(TH##R##Blas_gemm('n', 'n', -1, 2, 2, 1, aa, 2, aa, 2, 0, cc, 2));              \
      EXPECT_ERROR(TH##R##Blas_gemm('n', 'n', 2, 2, 2, 1, NULL, 2, aa, 2, 0, cc, 2));             \
      EXPECT_ERROR(TH##R##Blas_gemv('n', 2, 2, 1, aa, 1, aa, 1, 0, cc, 1));                       \
      EXPECT_ERROR(TH##R##Blas_gemv('n', 2, 2, 1, aa, 2, aa, 1, 0, cc, 0)); /* incy 0 */         \
      EXPECT_ERROR(TH##R##Blas_ger(2, 2, 1, aa, 1, aa, 1, cc, 1));                                \
      EXPECT_ERROR(TH##R##Blas_scal(-3, 1, cc, 1));                                               \
      EXPECT_ERROR(TH##R##Blas_axpy(2, 1, NULL, 1, cc, 1));                                       \
      EXPECT_ERROR(TH##R##Blas_copy(2, aa, 1, cc, 0));                                            \
      EXPECT_ERROR(TH##R##Vector_fill(NULL, 1, 3));                                               \
      EXPECT_ERROR(TH##R##Vector_copy(cc, aa, -1));                                               \
      CHECK(cc[0] == 1 && cc[1] == 2 && cc[2] == 3 && cc[3] == 4);                                \
      /* zero sizes are fine and touch nothing (NULL allowed) */                                  \
      EXPECT_OK(TH##R##Blas_gemm('n', 'n', 0, 0, 0, 1, NULL, 1, NULL, 1, 0, NULL, 1));            \
      EXPECT_OK(TH##R##Vector_fill(NULL, 1, 0));                                                  \
      /* alpha == 0: A and B are not read; beta == 0: C is not read */                           \
      EXPECT_OK(TH##R##Blas_gemm('n', 'n', 2, 2, 2, 0, NULL, 2, NULL, 2, 2, cc, 2));              \
      CHECK(cc[0] == 2 && cc[3] == 8);                                                            \
    }                                                                                              \
  }

BLAS_TESTS(Float, float, double)
BLAS_TESTS(Double, double, double)
BLAS_TESTS(Int, int32_t, int64_t)
BLAS_TESTS(Long, int64_t, int64_t)

static void float_specifics(void) {
  /* beta == 0 ignores NaN in C */
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {NAN, NAN, NAN, NAN};
  EXPECT_OK(THFloatBlas_gemm('n', 'n', 2, 2, 2, 1, a, 2, b, 2, 0, c, 2));
  CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4);
  float y[2] = {NAN, NAN};
  EXPECT_OK(THFloatBlas_gemv('t', 2, 2, 1, a, 2, b, 1, 0, y, 1));
  CHECK(y[0] == 1 && y[1] == 3);
  /* Half through the same path */
  THHalf ha[4], hb[4], hc[4];
  for (int i = 0; i < 4; i++) ha[i] = TH_float2half(a[i]), hb[i] = TH_float2half(b[i]), hc[i] = TH_float2half(1);
  EXPECT_OK(THHalfBlas_gemm('t', 'n', 2, 2, 2, TH_float2half(2), ha, 2, hb, 2, TH_float2half(1), hc, 2));
  /* op(A) = A^T = [[1,2],[3,4]] (row i), C = 2*A^T + 1 */
  CHECK(TH_half2float(hc[0]) == 3 && TH_half2float(hc[1]) == 7 && TH_half2float(hc[2]) == 5 && TH_half2float(hc[3]) == 9);
  CHECK(TH_half2float(THHalfBlas_dot(2, ha, 1, ha, 1)) == 5);
  /* integer division by zero is an error and writes nothing */
  int32_t x[3] = {1, 2, 3}, d[3] = {1, 0, 1}, z[3] = {7, 7, 7};
  EXPECT_ERROR(THIntVector_cdiv(z, x, d, 3));
  EXPECT_ERROR(THIntVector_divs(z, x, 0, 3));
  CHECK(z[0] == 7 && z[1] == 7 && z[2] == 7);
  /* Byte wraps as C's unsigned char arithmetic */
  uint8_t ba[2] = {200, 100}, bb[2] = {3, 5}, bc[1] = {0};
  EXPECT_OK(THByteBlas_gemm('n', 'n', 1, 1, 2, 1, ba, 1, bb, 2, 0, bc, 1));
  CHECK(bc[0] == (uint8_t)(200 * 3 + 100 * 5));
  /* normal_fill: fixed by the seed, moments near (mean, stddev), bad stddev is an error */
  THGenerator *g = THGenerator_new();
  THRandom_manualSeed(g, 42);
  enum { NS = 4099 };
  double *s1 = malloc(NS * sizeof(double)), *s2 = malloc(NS * sizeof(double));
  EXPECT_OK(THDoubleVector_normal_fill(s1, NS, g, 1.5, 2.0));
  THRandom_manualSeed(g, 42);
  EXPECT_OK(THDoubleVector_normal_fill(s2, NS, g, 1.5, 2.0));
  double mean = 0, var = 0;
  int same = 1;
  for (int i = 0; i < NS; i++) mean += s1[i] / NS, same &= s1[i] == s2[i];
  for (int i = 0; i < NS; i++) var += (s1[i] - mean) * (s1[i] - mean) / NS;
  CHECK(same);
  CHECK(fabs(mean - 1.5) < 0.15 && fabs(sqrt(var) - 2.0) < 0.15);
  float f5[5];
  EXPECT_OK(THFloatVector_normal_fill(f5, 5, g, 0, 1));
  EXPECT_ERROR(THFloatVector_normal_fill(f5, 5, g, 0, -1));
  EXPECT_ERROR(THFloatVector_normal_fill(f5, 5, NULL, 0, 1));
  free(s1);
  free(s2);
  THGenerator_free(g);
}

int main(void) {
  th_test_install_handlers();
  test_Float();
  test_Double();
  test_Int();
  test_Long();
  float_specifics();
  return TH_TEST_DONE();
}
