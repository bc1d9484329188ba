/* The index/shape family through the C API: Byte and Bool masks, Long index tensors (0-based
 * inputs and outputs), TH's resize rules, and errors (one handler call, outputs untouched). */
#include "th_test.h"

static THFloatTensor *fvec(const float *v, int64_t n) {
  THFloatTensor *t = THFloatTensor_newWithSize1d(n);
  for (int64_t i = 0; i < n; i++) THFloatTensor_set1d(t, i, v[i]);
  return t;
}

static THFloatTensor *fmat(const float *v, int64_t r, int64_t c) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(r, c);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) THFloatTensor_set2d(t, i, j, v[i * c + j]);
  return t;
}

static THLongTensor *lvec(const int64_t *v, int64_t n) {
  THLongTensor *t = THLongTensor_newWithSize1d(n);
  for (int64_t i = 0; i < n; i++) THLongTensor_set1d(t, i, v[i]);
  return t;
}

static THLongTensor *lmat(const int64_t *v, int64_t r, int64_t c) {
  THLongTensor *t = THLongTensor_newWithSize2d(r, c);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) THLongTensor_set2d(t, i, j, v[i * c + j]);
  return t;
}

static THByteTensor *bvec(const uint8_t *v, int64_t n) {
  THByteTensor *t = THByteTensor_newWithSize1d(n);
  for (int64_t i = 0; i < n; i++) THByteTensor_set1d(t, i, v[i]);
  return t;
}

static int fequals(THFloatTensor *t, const float *v, int64_t n) {
  if (THFloatTensor_nElement(t) != n) return 0;
  THFloatTensor *c = THFloatTensor_newContiguous(t);
  const float *d = THFloatTensor_data(c);
  int ok = 1;
  for (int64_t i = 0; i < n; i++) ok = ok && d[i] == v[i];
  THFloatTensor_free(c);
  return ok;
}

static int lequals(THLongTensor *t, const int64_t *v, int64_t n) {
  if (THLongTensor_nElement(t) != n) return 0;
  THLongTensor *c = THLongTensor_newContiguous(t);
  const int64_t *d = THLongTensor_data(c);
  int ok = 1;
  for (int64_t i = 0; i < n; i++) ok = ok && d[i] == v[i];
  THLongTensor_free(c);
  return ok;
}

static void test_index_ops(void) {
  const float v[] = {100, 101, 102};
  THFloatTensor *src = fvec(v, 3);
  THFloatTensor *out = THFloatTensor_new();
  const int64_t i02[] = {0, 2};
  THLongTensor *idx = lvec(i02, 2);
  /* torch7's probe indexSelect({100,101,102}, {1,3}) -> {100,102}, here 0-based */
  EXPECT_OK(THFloatTensor_indexSelect(out, src, 0, idx));
  const float want[] = {100, 102};
  CHECK(THFloatTensor_nDimension(out) == 1 && fequals(out, want, 2));

  /* out of range: error naming the index, argument 4, output untouched */
  const int64_t bad[] = {1, 3};
  THLongTensor *bidx = lvec(bad, 2);
  th_test_last_arg = 0;
  EXPECT_ERROR(THFloatTensor_indexSelect(out, src, 0, bidx));
  CHECK(THGetLastErrorCode() == TH_ERR_INDEX);
  CHECK(strstr(THGetLastError(), "index 3") != NULL && strstr(THGetLastError(), "size 3") != NULL);
  CHECK(th_test_last_arg == 4);
  CHECK(fequals(out, want, 2));
  EXPECT_ERROR(THFloatTensor_indexSelect(out, src, 1, idx)); /* dimension out of range */
  const int64_t neg[] = {0, -1};
  THLongTensor *nidx = lvec(neg, 2);
  EXPECT_ERROR(THFloatTensor_indexFill(src, 0, nidx, 5.0f));
  CHECK(fequals(src, v, 3));

  /* indexAdd with a repeated index accumulates; indexCopy: last wins */
  const int64_t rep[] = {1, 1, 0};
  THLongTensor *ridx = lvec(rep, 3);
  const float add[] = {1, 2, 4};
  THFloatTensor *addt = fvec(add, 3);
  EXPECT_OK(THFloatTensor_indexAdd(src, 0, ridx, addt));
  const float added[] = {104, 104, 102};
  CHECK(fequals(src, added, 3));
  EXPECT_OK(THFloatTensor_indexCopy(src, 0, ridx, addt));
  const float copied[] = {4, 2, 102};
  CHECK(fequals(src, copied, 3));
  /* index values are all checked before anything is written */
  const int64_t late[] = {0, 1, 9};
  THLongTensor *lidx = lvec(late, 3);
  EXPECT_ERROR(THFloatTensor_indexCopy(src, 0, lidx, addt));
  EXPECT_ERROR(THFloatTensor_indexAdd(src, 0, lidx, addt));
  CHECK(fequals(src, copied, 3));
  /* a 2-D index is not a vector */
  const int64_t two[] = {0, 1};
  THLongTensor *idx2 = lmat(two, 1, 2);
  EXPECT_ERROR(THFloatTensor_indexSelect(out, src, 0, idx2));
  CHECK(fequals(out, want, 2));

  THLongTensor_free(idx2);
  THLongTensor_free(lidx);
  THFloatTensor_free(addt);
  THLongTensor_free(ridx);
  THLongTensor_free(nidx);
  THLongTensor_free(bidx);
  THLongTensor_free(idx);
  THFloatTensor_free(out);
  THFloatTensor_free(src);
}

static void test_gather_scatter(void) {
  const float m[] = {1, 2, 3, 4, 5, 6};
  THFloatTensor *src = fmat(m, 2, 3);
  const int64_t g[] = {2, 0, 1, 1};
  THLongTensor *gi = lmat(g, 2, 2);
  THFloatTensor *out = THFloatTensor_new();
  EXPECT_OK(THFloatTensor_gather(out, src, 1, gi)); /* out resized like the index */
  const float gw[] = {3, 1, 5, 5};
  CHECK(THFloatTensor_size(out, 0) == 2 && THFloatTensor_size(out, 1) == 2 && fequals(out, gw, 4));
  const int64_t gb[] = {0, 0, 0, 3};
  THLongTensor *gbi = lmat(gb, 2, 2);
  EXPECT_ERROR(THFloatTensor_gather(out, src, 1, gbi));
  CHECK(fequals(out, gw, 4));

  THFloatTensor *dst = THFloatTensor_newWithSize2d(2, 3);
  THFloatTensor_zero(dst);
  const float sv[] = {10, 20, 30, 40};
  THFloatTensor *s = fmat(sv, 2, 2);
  EXPECT_OK(THFloatTensor_scatter(dst, 1, gi, s));
  const float sw[] = {20, 0, 10, 0, 40, 0}; /* row 1: both go to column 1, the last wins */
  CHECK(fequals(dst, sw, 6));
  EXPECT_OK(THFloatTensor_scatterAdd(dst, 1, gi, s));
  const float saw[] = {40, 0, 20, 0, 110, 0};
  CHECK(fequals(dst, saw, 6));
  EXPECT_ERROR(THFloatTensor_scatterFill(dst, 0, gi, -1.0f)); /* index 2 along a dim of size 2 */
  CHECK(fequals(dst, saw, 6));
  EXPECT_ERROR(THFloatTensor_scatterAdd(dst, 1, gbi, s));
  EXPECT_ERROR(THFloatTensor_scatter(dst, 1, gbi, s));
  EXPECT_ERROR(THFloatTensor_scatter(dst, 1, gi, NULL));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);

  THFloatTensor_free(s);
  THFloatTensor_free(dst);
  THLongTensor_free(gbi);
  THFloatTensor_free(out);
  THLongTensor_free(gi);
  THFloatTensor_free(src);
}

static void test_masks(void) {
  const float v[] = {1, 2, 3, 4};
  THFloatTensor *t = fvec(v, 4);
  const uint8_t mv[] = {1, 0, 0, 1};
  THByteTensor *mask = bvec(mv, 4);
  EXPECT_OK(THFloatTensor_maskedFill(t, mask, 0.0f));
  const float filled[] = {0, 2, 3, 0};
  CHECK(fequals(t, filled, 4));
  /* Byte masks must be 0/1: an error, nothing written */
  const uint8_t bv[] = {0, 1, 2, 0};
  THByteTensor *bad = bvec(bv, 4);
  EXPECT_ERROR(THFloatTensor_maskedFill(t, bad, 9.0f));
  CHECK(THGetLastErrorCode() == TH_ERR_INVALID_ARG);
  CHECK(fequals(t, filled, 4));
  /* maskedCopy: successive source elements; running out is an error */
  const float one[] = {7};
  THFloatTensor *src1 = fvec(one, 1);
  EXPECT_ERROR(THFloatTensor_maskedCopy(t, mask, src1));
  CHECK(fequals(t, filled, 4));
  const float two[] = {7, 8, 9};
  THFloatTensor *src2 = fvec(two, 3);
  EXPECT_OK(THFloatTensor_maskedCopy(t, mask, src2));
  const float copied[] = {7, 2, 3, 8};
  CHECK(fequals(t, copied, 4));
  /* maskedSelect: 1-D result; an all-zero mask gives an empty tensor */
  THFloatTensor *sel = THFloatTensor_new();
  EXPECT_OK(THFloatTensor_maskedSelect(sel, t, mask));
  const float selw[] = {7, 8};
  CHECK(THFloatTensor_nDimension(sel) == 1 && fequals(sel, selw, 2));
  const uint8_t zv[] = {0, 0, 0, 0};
  THByteTensor *zero = bvec(zv, 4);
  EXPECT_OK(THFloatTensor_maskedSelect(sel, t, zero));
  CHECK(THFloatTensor_nDimension(sel) == 0);
  /* a mask of another element count is an error */
  THByteTensor *short_mask = bvec(mv, 3);
  EXPECT_ERROR(THFloatTensor_maskedSelect(sel, t, short_mask));

  /* Bool masks: any nonzero byte is true */
  THBoolTensor *bm = THBoolTensor_newWithSize1d(4);
  THBoolTensor_set1d(bm, 0, 0);
  THBoolTensor_set1d(bm, 1, 1);
  THBoolTensor_set1d(bm, 2, 0);
  THBoolTensor_set1d(bm, 3, 0);
  THBoolStorage_set(THBoolTensor_storage(bm), 2, 7); /* a raw non-canonical true byte */
  EXPECT_OK(THFloatTensor_maskedFillBool(t, bm, -1.0f));
  const float bw[] = {7, -1, -1, 8};
  CHECK(fequals(t, bw, 4));
  EXPECT_OK(THFloatTensor_maskedSelectBool(sel, t, bm));
  const float bsel[] = {-1, -1};
  CHECK(fequals(sel, bsel, 2));

  /* nonzero: (nnz x nDimension) 0-based subscripts into a Long tensor */
  const float m[] = {0, 5, 0, 6, 0, 7};
  THFloatTensor *mt = fmat(m, 2, 3);
  THLongTensor *sub = THLongTensor_new();
  EXPECT_OK(THFloatTensor_nonzero(sub, mt));
  const int64_t subw[] = {0, 1, 1, 0, 1, 2};
  CHECK(THLongTensor_size(sub, 0) == 3 && THLongTensor_size(sub, 1) == 2 && lequals(sub, subw, 6));
  THFloatTensor_zero(mt);
  EXPECT_OK(THFloatTensor_nonzero(sub, mt));
  CHECK(THLongTensor_nDimension(sub) == 0);
  EXPECT_OK(THByteTensor_nonzero(sub, mask));
  const int64_t bsub[] = {0, 3};
  CHECK(THLongTensor_size(sub, 1) == 1 && lequals(sub, bsub, 2));

  THLongTensor_free(sub);
  THFloatTensor_free(mt);
  THBoolTensor_free(bm);
  THByteTensor_free(short_mask);
  THByteTensor_free(zero);
  THFloatTensor_free(sel);
  THFloatTensor_free(src2);
  THFloatTensor_free(src1);
  THByteTensor_free(bad);
  THByteTensor_free(mask);
  THFloatTensor_free(t);
}

static void test_sort_topk(void) {
  const float v[] = {3, 1, 2, 1, NAN, 0};
  THFloatTensor *t = fvec(v, 6);
  THFloatTensor *vals = THFloatTensor_new();
  THLongTensor *idx = THLongTensor_new();
  EXPECT_OK(THFloatTensor_sort(vals, idx, t, 0, 0));
  const int64_t asc[] = {5, 1, 3, 2, 0, 4}; /* stable; NaN last */
  CHECK(lequals(idx, asc, 6));
  CHECK(isnan(THFloatTensor_get1d(vals, 5)) && THFloatTensor_get1d(vals, 0) == 0.0f);
  EXPECT_OK(THFloatTensor_sort(vals, idx, t, 0, 1));
  const int64_t desc[] = {4, 0, 2, 1, 3, 5}; /* NaN first; equal values keep their order */
  CHECK(lequals(idx, desc, 6));
  EXPECT_OK(THFloatTensor_topk(vals, idx, t, 2, 0, 0, 1));
  const int64_t small[] = {5, 1};
  CHECK(THFloatTensor_size(vals, 0) == 2 && lequals(idx, small, 2));
  EXPECT_ERROR(THFloatTensor_topk(vals, idx, t, 7, 0, 1, 1));
  CHECK(lequals(idx, small, 2));
  EXPECT_ERROR(THFloatTensor_sort(vals, idx, t, 1, 0));
  THLongTensor_free(idx);
  THFloatTensor_free(vals);
  THFloatTensor_free(t);
}

static void test_constructors_and_ranges(void) {
  THFloatTensor *r = THFloatTensor_new();
  EXPECT_OK(THFloatTensor_range(r, 0, 3, 1));
  CHECK(THFloatTensor_nElement(r) == 4);
  EXPECT_OK(THFloatTensor_arange(r, 0, 3, 1));
  CHECK(THFloatTensor_nElement(r) == 3);
  THFloatTensor *sq = THFloatTensor_newWithSize2d(2, 2);
  EXPECT_OK(THFloatTensor_range(sq, 0, 3, 1)); /* keeps its 2x2 shape */
  const float r4[] = {0, 1, 2, 3};
  CHECK(THFloatTensor_nDimension(sq) == 2 && fequals(sq, r4, 4));
  EXPECT_ERROR(THFloatTensor_range(sq, 0, 3, -1));
  EXPECT_ERROR(THFloatTensor_range(sq, 0, 3, 0));
  CHECK(THFloatTensor_nDimension(sq) == 2 && fequals(sq, r4, 4));
  THLongTensor *lr = THLongTensor_new();
  EXPECT_OK(THLongTensor_arange(lr, 10, 0, -3));
  const int64_t lw[] = {10, 7, 4, 1};
  CHECK(lequals(lr, lw, 4));

  EXPECT_OK(THFloatTensor_linspace(r, 0, 1, 5));
  const float lin[] = {0, 0.25f, 0.5f, 0.75f, 1};
  CHECK(fequals(r, lin, 5));
  EXPECT_ERROR(THFloatTensor_linspace(r, 0, 1, 0));
  CHECK(fequals(r, lin, 5));
  THDoubleTensor *lg = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_logspace(lg, 0, 2, 3));
  CHECK_CLOSE(THDoubleTensor_get1d(lg, 1), 10.0, 1e-12);
  CHECK_CLOSE(THDoubleTensor_get1d(lg, 2), 100.0, 1e-12);
  EXPECT_ERROR(THDoubleTensor_logspace(NULL, 0, 1, 2));
  THDoubleTensor_free(lg);
  THHalfTensor *h = THHalfTensor_new();
  EXPECT_OK(THHalfTensor_linspace(h, TH_float2half(-1), TH_float2half(1), 3));
  CHECK(TH_half2float(THHalfTensor_get1d(h, 2)) == 1.0f && TH_half2float(THHalfTensor_get1d(h, 1)) == 0.0f);
  THHalfTensor_free(h);

  EXPECT_OK(THFloatTensor_eye(r, 2, 0));
  const float id[] = {1, 0, 0, 1};
  CHECK(fequals(r, id, 4));
  EXPECT_ERROR(THFloatTensor_eye(r, 0, 3));
  CHECK(fequals(r, id, 4));
  THLongStorage *size = THLongStorage_newWithSize2(2, 3);
  EXPECT_OK(THFloatTensor_ones(r, size));
  CHECK(THFloatTensor_size(r, 1) == 3 && THFloatTensor_get2d(r, 1, 2) == 1.0f);
  EXPECT_OK(THFloatTensor_zeros(r, size));
  CHECK(THFloatTensor_get2d(r, 1, 2) == 0.0f);
  EXPECT_ERROR(THFloatTensor_zeros(r, NULL));
  THFloatTensor *rs = THFloatTensor_new();
  EXPECT_ERROR(THFloatTensor_reshape(rs, sq, size)); /* 4 elements into 2x3 */
  CHECK(THFloatTensor_nDimension(rs) == 0);
  THLongStorage *size4 = THLongStorage_newWithSize1(4);
  EXPECT_OK(THFloatTensor_reshape(rs, sq, size4));
  CHECK(THFloatTensor_nDimension(rs) == 1 && fequals(rs, r4, 4));
  THLongStorage_free(size4);
  THLongStorage_free(size);
  THFloatTensor_free(rs);
  THLongTensor_free(lr);
  THFloatTensor_free(sq);
  THFloatTensor_free(r);
}

static void test_cat_tril_cross(void) {
  const float a[] = {1, 2};
  const float b[] = {3, 4, 5};
  THFloatTensor *ta = fvec(a, 2), *tb = fvec(b, 3);
  THFloatTensor *r = THFloatTensor_new();
  EXPECT_OK(THFloatTensor_cat(r, ta, tb, 0));
  const float ab[] = {1, 2, 3, 4, 5};
  CHECK(fequals(r, ab, 5));
  THFloatTensor *empty = THFloatTensor_new();
  THFloatTensor *arr[3] = {tb, empty, ta};
  EXPECT_OK(THFloatTensor_catArray(r, arr, 3, -1));
  const float ba[] = {3, 4, 5, 1, 2};
  CHECK(fequals(r, ba, 5));
  EXPECT_ERROR(THFloatTensor_cat(r, ta, tb, 1)); /* sizes 2 and 3 differ at dimension 0 */
  CHECK(fequals(r, ba, 5));
  arr[1] = NULL;
  EXPECT_ERROR(THFloatTensor_catArray(r, arr, 3, 0));
  EXPECT_ERROR(THFloatTensor_catArray(r, arr, 0, 0));
  CHECK(fequals(r, ba, 5));

  const float m[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  THFloatTensor *tm = fmat(m, 3, 3);
  EXPECT_OK(THFloatTensor_triu(r, tm, 1));
  const float up[] = {0, 2, 3, 0, 0, 6, 0, 0, 0};
  CHECK(fequals(r, up, 9));
  EXPECT_ERROR(THFloatTensor_tril(r, ta, 0));
  EXPECT_OK(THFloatTensor_diag(r, tm, -1));
  const float dg[] = {4, 8};
  CHECK(fequals(r, dg, 2));

  THIntTensor *x = THIntTensor_newWithSize1d(3), *y = THIntTensor_newWithSize1d(3);
  THIntTensor_zero(x);
  THIntTensor_zero(y);
  THIntTensor_set1d(x, 0, 1);
  THIntTensor_set1d(y, 1, 1);
  THIntTensor *z = THIntTensor_new();
  EXPECT_OK(THIntTensor_cross(z, x, y, -1));
  CHECK(THIntTensor_get1d(z, 2) == 1 && THIntTensor_get1d(z, 0) == 0);
  THIntTensor *four = THIntTensor_newWithSize1d(4);
  THIntTensor_zero(four);
  EXPECT_ERROR(THIntTensor_cross(z, four, four, -1));
  CHECK(THIntTensor_get1d(z, 2) == 1);
  THIntTensor_free(four);
  THIntTensor_free(z);
  THIntTensor_free(y);
  THIntTensor_free(x);
  THFloatTensor_free(tm);
  THFloatTensor_free(empty);
  THFloatTensor_free(r);
  THFloatTensor_free(tb);
  THFloatTensor_free(ta);
}

int main(void) {
  th_test_install_handlers();
  test_index_ops();
  test_gather_scatter();
  test_masks();
  test_sort_topk();
  test_constructors_and_ranges();
  test_cat_tril_cross();
  return TH_TEST_DONE();
}
