/* Reductions: TH-only semantics numpy can't judge (keepdim and squeeze rules, a reduced 1-D
 * tensor stays 1-D, 0-based index outputs as THLongTensor, accreal return types, 1-based k),
 * and errors: exactly one handler call, the argument number, outputs left untouched. */
#include "th_test.h"

#include <stdint.h>

static THFloatTensor *arange3(long a, long b, long c) {
  THFloatTensor *t = THFloatTensor_newWithSize3d(a, b, c);
  float v = 0;
  for (long i = 0; i < a; i++)
    for (long j = 0; j < b; j++)
      for (long k = 0; k < c; k++) THFloatTensor_set3d(t, i, j, k, v++);
  return t;
}

static void keepdim_rules(void) {
  THFloatTensor *t = arange3(2, 3, 4);
  THFloatTensor *r = THFloatTensor_new();
  EXPECT_OK(THFloatTensor_sum(r, t, 1, 0));
  CHECK(THFloatTensor_nDimension(r) == 2);
  CHECK(THFloatTensor_size(r, 0) == 2 && THFloatTensor_size(r, 1) == 4);
  /* r[1][3] = sum_j t[1][j][3] = 15 + 19 + 23 */
  CHECK(THFloatTensor_get2d(r, 1, 3) == 57.0f);
  EXPECT_OK(THFloatTensor_sum(r, t, 1, 1));
  CHECK(THFloatTensor_nDimension(r) == 3);
  CHECK(THFloatTensor_size(r, 0) == 2 && THFloatTensor_size(r, 1) == 1 && THFloatTensor_size(r, 2) == 4);
  CHECK(THFloatTensor_get3d(r, 1, 0, 3) == 57.0f);
  EXPECT_OK(THFloatTensor_mean(r, t, 2, 0));
  CHECK(THFloatTensor_nDimension(r) == 2 && THFloatTensor_size(r, 1) == 3);
  CHECK(THFloatTensor_get2d(r, 0, 0) == 1.5f);

  /* reducing a 1-D tensor gives a 1-D tensor of size 1, with or without keepdim */
  THFloatTensor *v = THFloatTensor_newWithSize1d(3);
  THFloatTensor_set1d(v, 0, 100);
  THFloatTensor_set1d(v, 1, 101);
  THFloatTensor_set1d(v, 2, 102);
  THLongTensor *idx = THLongTensor_new();
  for (int keep = 0; keep < 2; keep++) {
    EXPECT_OK(THFloatTensor_max(r, idx, v, 0, keep));
    CHECK(THFloatTensor_nDimension(r) == 1 && THFloatTensor_size(r, 0) == 1);
    CHECK(THLongTensor_nDimension(idx) == 1 && THLongTensor_size(idx, 0) == 1);
    CHECK(THFloatTensor_get1d(r, 0) == 102.0f);
    CHECK(THLongTensor_get1d(idx, 0) == 2); /* 0-based */
    EXPECT_OK(THFloatTensor_sum(r, v, 0, keep));
    CHECK(THFloatTensor_nDimension(r) == 1 && THFloatTensor_get1d(r, 0) == 303.0f);
  }
  EXPECT_OK(THFloatTensor_min(r, idx, v, 0, 0));
  CHECK(THLongTensor_get1d(idx, 0) == 0);

  /* indices: first occurrence; kthvalue's k is 1-based */
  THFloatTensor *w = THFloatTensor_newWithSize1d(5);
  float vals[5] = {3, 1, 3, 0, 1};
  for (int i = 0; i < 5; i++) THFloatTensor_set1d(w, i, vals[i]);
  EXPECT_OK(THFloatTensor_max(r, idx, w, 0, 0));
  CHECK(THLongTensor_get1d(idx, 0) == 0);
  EXPECT_OK(THFloatTensor_kthvalue(r, idx, w, 1, 0, 0));
  CHECK(THFloatTensor_get1d(r, 0) == 0.0f && THLongTensor_get1d(idx, 0) == 3);
  EXPECT_OK(THFloatTensor_kthvalue(r, idx, w, 2, 0, 0));
  CHECK(THFloatTensor_get1d(r, 0) == 1.0f && THLongTensor_get1d(idx, 0) == 1);
  EXPECT_OK(THFloatTensor_median(r, idx, w, 0, 0));
  CHECK(THFloatTensor_get1d(r, 0) == 1.0f && THLongTensor_get1d(idx, 0) == 4);
  EXPECT_OK(THFloatTensor_mode(r, idx, w, 0, 1));
  CHECK(THFloatTensor_get1d(r, 0) == 1.0f && THLongTensor_get1d(idx, 0) == 4);
  CHECK(THFloatTensor_medianall(w) == 1.0f);

  /* NaN propagates and the first NaN's index is reported */
  THFloatTensor_set1d(w, 2, NAN);
  THFloatTensor_set1d(w, 4, NAN);
  EXPECT_OK(THFloatTensor_max(r, idx, w, 0, 0));
  CHECK(isnan(THFloatTensor_get1d(r, 0)) && THLongTensor_get1d(idx, 0) == 2);
  CHECK(isnan(THFloatTensor_maxall(w)) && isnan(THFloatTensor_minall(w)));

  THFloatTensor_free(w);
  THLongTensor_free(idx);
  THFloatTensor_free(v);
  THFloatTensor_free(r);
  THFloatTensor_free(t);
}

static void accreal_types(void) {
  /* Char accumulates in int64_t: 200 * 100 does not wrap */
  THCharTensor *c = THCharTensor_newWithSize2d(10, 20);
  THCharTensor_fill(c, 100);
  int64_t s = THCharTensor_sumall(c);
  CHECK(s == 20000);
  CHECK(THCharTensor_trace(c) == 1000);
  CHECK(THCharTensor_dot(c, c) == 2000000);
  /* per-dim sums are cast back to the element type (wraps, as C) */
  THCharTensor *r = THCharTensor_new();
  EXPECT_OK(THCharTensor_sum(r, c, 1, 0));
  CHECK(THCharTensor_get1d(r, 0) == (int8_t)(uint8_t)(2000 & 0xff));
  /* Half accumulates in float */
  THHalfTensor *h = THHalfTensor_newWithSize1d(5000);
  THHalfTensor_fill(h, TH_float2half(1.0f));
  float hs = THHalfTensor_sumall(h);
  CHECK(hs == 5000.0f);
  CHECK(THHalfTensor_meanall(h) == 1.0f);
  double fd = 0;
  THFloatTensor *f = THFloatTensor_newWithSize1d(4);
  THFloatTensor_fill(f, 0.5f);
  fd = THFloatTensor_normall(f, 2.0f);
  CHECK(fd == 1.0);
  CHECK(THFloatTensor_normall(f, 0.0f) == 4.0);
  CHECK(THFloatTensor_numel(f) == 4);
  /* Bool: sumall counts true elements; logicalall/any */
  THBoolTensor *b = THBoolTensor_newWithSize1d(3);
  THBoolTensor_fill(b, 1);
  CHECK(THBoolTensor_sumall(b) == 3 && THBoolTensor_logicalall(b) == 1);
  THBoolTensor_set1d(b, 1, 0);
  CHECK(THBoolTensor_sumall(b) == 2 && THBoolTensor_logicalall(b) == 0 && THBoolTensor_logicalany(b) == 1);
  THBoolTensor_free(b);
  THFloatTensor_free(f);
  THHalfTensor_free(h);
  THCharTensor_free(r);
  THCharTensor_free(c);
}

static void sum_to(void) {
  THFloatTensor *t = arange3(2, 3, 4);
  THFloatTensor *r = THFloatTensor_new();
  THLongStorage *shape = THLongStorage_newWithSize2(3, 1);
  EXPECT_OK(THFloatTensor_sumTo(r, t, shape));
  CHECK(THFloatTensor_nDimension(r) == 2 && THFloatTensor_size(r, 0) == 3 && THFloatTensor_size(r, 1) == 1);
  /* sum over i, k of 12 i + 4 j + k for j = 2: 2*4*8 + (0+12)*4 + 2*(0+1+2+3) */
  CHECK(THFloatTensor_get2d(r, 2, 0) == 64.0f + 48.0f + 12.0f);
  THLongStorage_free(shape);
  shape = THLongStorage_newWithSize2(2, 4);
  th_test_last_arg = 0;
  EXPECT_ERROR(THFloatTensor_sumTo(r, t, shape));
  CHECK(th_test_last_arg == 3);
  CHECK(THFloatTensor_nDimension(r) == 2 && THFloatTensor_size(r, 0) == 3); /* untouched */
  THLongStorage_free(shape);
  THFloatTensor_free(r);
  THFloatTensor_free(t);
}

static void errors(void) {
  THFloatTensor *t = arange3(2, 3, 4);
  THFloatTensor *r = THFloatTensor_newWithSize1d(7);
  THFloatTensor *empty = THFloatTensor_new();
  THLongTensor *idx = THLongTensor_newWithSize1d(5);

  th_test_last_arg = 0;
  EXPECT_ERROR(THFloatTensor_sum(r, t, 3, 0));
  CHECK(th_test_last_arg == 3);
  EXPECT_ERROR(THFloatTensor_max(r, idx, t, -1, 0));
  CHECK(th_test_last_arg == 4);
  EXPECT_ERROR(THFloatTensor_kthvalue(r, idx, t, 0, 0, 0));
  CHECK(th_test_last_arg == 4);
  EXPECT_ERROR(THFloatTensor_kthvalue(r, idx, t, 3, 0, 0));
  EXPECT_ERROR(THFloatTensor_cumsum(r, t, 5));
  EXPECT_ERROR(THFloatTensor_std(r, t, 9, 0, 0));
  EXPECT_ERROR(THFloatTensor_renorm(r, t, 0.0f, 0, 1.0f));
  EXPECT_ERROR(THFloatTensor_histc(r, t, 0, 0.0f, 1.0f));
  EXPECT_ERROR(THFloatTensor_histc(r, t, 4, 2.0f, 1.0f));
  EXPECT_ERROR(THFloatTensor_bhistc(r, t, 4, 0.0f, 1.0f));
  EXPECT_ERROR((void)THFloatTensor_dot(t, r));
  EXPECT_ERROR((void)THFloatTensor_trace(t));
  EXPECT_ERROR((void)THFloatTensor_maxall(empty));
  EXPECT_ERROR((void)THFloatTensor_medianall(empty));
  EXPECT_ERROR((void)THFloatTensor_meanall(empty));
  EXPECT_ERROR((void)THFloatTensor_varall(empty, 0));
  EXPECT_ERROR((void)THByteTensor_logicalall(NULL));
  EXPECT_ERROR(THFloatTensor_sum(NULL, t, 0, 0));
  EXPECT_ERROR(THFloatTensor_max(r, NULL, t, 0, 0));
  /* the outputs were never touched */
  CHECK(THFloatTensor_nDimension(r) == 1 && THFloatTensor_size(r, 0) == 7);
  CHECK(THLongTensor_nDimension(idx) == 1 && THLongTensor_size(idx, 0) == 5);
  /* empty tensors: sums are 0, products 1 */
  EXPECT_OK(CHECK(THFloatTensor_sumall(empty) == 0.0));
  EXPECT_OK(CHECK(THFloatTensor_prodall(empty) == 1.0));

  THLongTensor_free(idx);
  THFloatTensor_free(empty);
  THFloatTensor_free(r);
  THFloatTensor_free(t);
}

int main(void) {
  th_test_install_handlers();
  keepdim_rules();
  accreal_types();
  sum_to();
  errors();
  return TH_TEST_DONE();
}
