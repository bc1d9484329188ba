/* TH's element expressions, evaluated by the C compiler itself, against th (issue 27):
 * cmax/cmin/cmaxValue/cminValue/sign/clamp with NaN operands, and C's integer promotion in
 * addcdiv (`t + value * src1 / src2`) and the shifts of Byte/Char/Short. Every combination of a
 * list of special values, in 1-D tensors (the other layouts are in tests/python/test_th_rules.py).
 * Int and Long are left out here: their overflows are undefined behaviour in C. */
#include "th_test.h"

#include <stdint.h>

#define NF 8
static const double FSPECIAL[NF] = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.5, -2.0};

#define SAME(a, b) ((isnan(a) && isnan(b)) || ((a) == (b) && signbit(a) == signbit(b)))

/* cmax/cmin (tensor and value forms), sign, clamp of one float type against the C expressions. */
#define FLOAT_RULES(T, real)                                                                      \
  static void float_rules_##T(void) {                                                           \
    T##Tensor *a = T##Tensor_newWithSize1d(NF * NF), *b = T##Tensor_newWithSize1d(NF * NF);     \
    T##Tensor *r = T##Tensor_new();                                                             \
    real *pa = T##Tensor_data(a), *pb = T##Tensor_data(b), *pr;                                 \
    int i, j, k;                                                                                \
    for (i = 0; i < NF; i++)                                                                    \
      for (j = 0; j < NF; j++) {                                                                \
        pa[i * NF + j] = (real)FSPECIAL[i];                                                     \
        pb[i * NF + j] = (real)FSPECIAL[j];                                                     \
      }                                                                                         \
    T##Tensor_cmax(r, a, b);                                                                    \
    pr = T##Tensor_data(r);                                                                     \
    for (k = 0; k < NF * NF; k++) CHECK(SAME(pr[k], pa[k] > pb[k] ? pa[k] : pb[k]));            \
    T##Tensor_cmin(r, a, b);                                                                    \
    pr = T##Tensor_data(r);                                                                     \
    for (k = 0; k < NF * NF; k++) CHECK(SAME(pr[k], pa[k] < pb[k] ? pa[k] : pb[k]));            \
    T##Tensor_sign(r, a);                                                                       \
    pr = T##Tensor_data(r);                                                                     \
    for (k = 0; k < NF * NF; k++) CHECK(SAME(pr[k], (real)(pa[k] > 0 ? 1 : (pa[k] < 0 ? -1 : 0)))); \
    for (j = 0; j < NF; j++) {                                                                  \
      const real v = (real)FSPECIAL[j], w = (real)FSPECIAL[(j + 3) % NF];                       \
      T##Tensor_cmaxValue(r, a, v);                                                             \
      pr = T##Tensor_data(r);                                                                   \
      for (k = 0; k < NF * NF; k++) CHECK(SAME(pr[k], pa[k] > v ? pa[k] : v));                  \
      T##Tensor_cminValue(r, a, v);                                                             \
      pr = T##Tensor_data(r);                                                                   \
      for (k = 0; k < NF * NF; k++) CHECK(SAME(pr[k], pa[k] < v ? pa[k] : v));                  \
      T##Tensor_clamp(r, a, v, w);                                                              \
      pr = T##Tensor_data(r);                                                                   \
      for (k = 0; k < NF * NF; k++) CHECK(SAME(pr[k], pa[k] < v ? v : (pa[k] > w ? w : pa[k]))); \
    }                                                                                           \
    T##Tensor_free(a);                                                                          \
    T##Tensor_free(b);                                                                          \
    T##Tensor_free(r);                                                                          \
  }
FLOAT_RULES(THFloat, float)
FLOAT_RULES(THDouble, double)

#define NI 9
/* addcdiv and the shifts of one integer type narrower than int: the products, quotients and
 * shifts happen in int (the shifts through unsigned int: the same bits, without C's overflow). */
#define INT_RULES(T, real, ureal, lo, hi)                                                          \
  static void int_rules_##T(void) {                                                             \
    const real sp[NI] = {lo, (real)(lo + 1), (real)-1, 0, 1, 3, 100, (real)(hi - 1), hi};       \
    T##Tensor *t = T##Tensor_newWithSize1d(NI * NI * NI), *s1 = T##Tensor_newWithSize1d(NI * NI * NI); \
    T##Tensor *s2 = T##Tensor_newWithSize1d(NI * NI * NI), *r = T##Tensor_new();                \
    real *pt = T##Tensor_data(t), *p1 = T##Tensor_data(s1), *p2 = T##Tensor_data(s2), *pr;      \
    int i, j, k, c;                                                                             \
    for (i = 0; i < NI; i++)                                                                    \
      for (j = 0; j < NI; j++)                                                                  \
        for (k = 0; k < NI; k++) {                                                              \
          pt[(i * NI + j) * NI + k] = sp[i];                                                    \
          p1[(i * NI + j) * NI + k] = sp[j];                                                    \
          p2[(i * NI + j) * NI + k] = sp[k] == 0 ? (real)7 : sp[k];                             \
        }                                                                                       \
    for (j = 0; j < NI; j++) {                                                                  \
      const real v = sp[j];                                                                     \
      T##Tensor_addcdiv(r, t, v, s1, s2);                                                       \
      pr = T##Tensor_data(r);                                                                   \
      for (k = 0; k < NI * NI * NI; k++) CHECK(pr[k] == (real)(pt[k] + v * p1[k] / p2[k]));     \
    }                                                                                           \
    for (c = 0; c < 32; c++) {                                                                  \
      T##Tensor_lshift(r, t, (real)c);                                                          \
      pr = T##Tensor_data(r);                                                                   \
      for (k = 0; k < NI * NI * NI; k++) CHECK(pr[k] == (real)((unsigned)(ureal)pt[k] << c)); \
      T##Tensor_rshift(r, t, (real)c);                                                          \
      pr = T##Tensor_data(r);                                                                   \
      for (k = 0; k < NI * NI * NI; k++) CHECK(pr[k] == (real)((ureal)pt[k] >> c));     \
    }                                                                                           \
    T##Tensor_free(t);                                                                          \
    T##Tensor_free(s1);                                                                         \
    T##Tensor_free(s2);                                                                         \
    T##Tensor_free(r);                                                                          \
  }
INT_RULES(THByte, uint8_t, uint8_t, 0, UINT8_MAX)
INT_RULES(THChar, int8_t, uint8_t, INT8_MIN, INT8_MAX)
INT_RULES(THShort, int16_t, uint16_t, INT16_MIN, INT16_MAX)

int main(void) {
  th_test_install_handlers();
  float_rules_THFloat();
  float_rules_THDouble();
  int_rules_THByte();
  int_rules_THChar();
  int_rules_THShort();
  /* the rows */
  {
    THByteTensor *z = THByteTensor_newWithSize1d(1), *a = THByteTensor_newWithSize1d(1);
    THByteTensor *b = THByteTensor_newWithSize1d(1), *r = THByteTensor_new();
    THByteTensor_data(z)[0] = 0;
    THByteTensor_data(a)[0] = 200;
    THByteTensor_data(b)[0] = 10;
    THByteTensor_addcdiv(r, z, 3, a, b);
    CHECK(THByteTensor_data(r)[0] == 60);
    THByteTensor_free(z);
    THByteTensor_free(a);
    THByteTensor_free(b);
    THByteTensor_free(r);
  }
  return TH_TEST_DONE();
}
