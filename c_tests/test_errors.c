/* Bad input: every failing call records an error (code + message), calls the installed handler
 * exactly once, returns NULL/0 and leaves its outputs untouched (sizes, strides, offset,
 * storage, data bytes). Also handler routing, last-error persistence, message contents, the
 * THError/THArgCheck/THAssert macros and the error-code list.
 * Set TH_TEST_VERBOSE=1 to print the table of cases and the codes they produced. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the case table ------------------------------------------------------------------- */
#define MAXROWS 256
static struct {
  const char *kind;
  const char *text;
  int code;
  int arg;
} rows[MAXROWS];
static int nrows = 0;

/* Allowed codes as a bit mask. */
#define C(code) (1u << (code))
#define C_NULL C(TH_ERR_NULL_ARG)
#define C_SIZE C(TH_ERR_SIZE)
#define C_INDEX C(TH_ERR_INDEX)
#define C_RANGE (C(TH_ERR_SIZE) | C(TH_ERR_INDEX) | C(TH_ERR_INVALID_ARG))

/* Runs `call`: one error with a code in `codes` and a message, then `unchanged` must hold. */
#define ERR(kind_, codes, call, unchanged)                                                      \
  do {                                                                                          \
    th_test_last_arg = 0;                                                                       \
    EXPECT_ERROR(call);                                                                         \
    int code_ = THGetLastErrorCode();                                                           \
    CHECK(code_ > 0 && code_ < 32 && ((codes) & (1u << code_)) != 0);                          \
    if (code_ <= 0 || code_ >= 32 || ((codes) & (1u << code_)) == 0)                           \
      fprintf(stderr, "  %s: %s gave code %d (%s)\n", kind_, #call, code_,                     \
              THGetLastError() ? THGetLastError() : "no message");                              \
    CHECK(THGetLastError() != NULL && strlen(THGetLastError()) > 0);                            \
    CHECK(unchanged);                                                                           \
    if (nrows < MAXROWS) {                                                                      \
      rows[nrows].kind = kind_;                                                                 \
      rows[nrows].text = #call;                                                                 \
      rows[nrows].arg = th_test_last_arg;                                                       \
      rows[nrows++].code = code_;                                                               \
    }                                                                                           \
  } while (0)

/* As ERR for a call returning a new handle: it must return NULL (else free what came back). */
#define ERR_NEW(kind_, codes, T, freefn, call, unchanged) \
  do {                                                     \
    T *p_ = (T *)1;                                        \
    ERR(kind_, codes, p_ = (call), unchanged);             \
    CHECK(p_ == NULL);                                     \
    if (p_ != NULL && p_ != (T *)1) freefn(p_);            \
  } while (0)

/* As ERR for a call returning a value: it must return `zero`. */
#define ERR_VAL(kind_, codes, T, zero, call, unchanged) \
  do {                                                   \
    T v_ = (T)77;                                        \
    ERR(kind_, codes, v_ = (call), unchanged);           \
    CHECK(v_ == (zero));                                 \
  } while (0)

/* For borrowed pointers: nothing to release. */
static void no_free(void *p) { (void)p; }

/* ---- snapshots of a Float tensor / storage ---------------------------------------------- */
typedef struct {
  int nd;
  int64_t sz[8], st[8];
  ptrdiff_t off;
  THFloatStorage *s;
  ptrdiff_t ssize;
  const float *sdata;
  float bytes[64];
} Snap;

static Snap snap(THFloatTensor *t) {
  Snap a;
  memset(&a, 0, sizeof a);
  a.nd = THFloatTensor_nDimension(t);
  for (int d = 0; d < a.nd && d < 8; d++) {
    a.sz[d] = THFloatTensor_size(t, d);
    a.st[d] = THFloatTensor_stride(t, d);
  }
  a.off = THFloatTensor_storageOffset(t);
  a.s = THFloatTensor_storage(t);
  if (a.s) {
    a.ssize = THFloatStorage_size(a.s);
    a.sdata = THFloatStorage_data(a.s);
    if (a.ssize <= 64) memcpy(a.bytes, a.sdata, (size_t)a.ssize * sizeof(float));
  }
  return a;
}

/* 1 if t still has exactly the geometry, storage and storage bytes of `a`. */
static int same(const Snap *a, THFloatTensor *t) {
  Snap b = snap(t);
  if (a->nd != b.nd || a->off != b.off || a->s != b.s || a->ssize != b.ssize || a->sdata != b.sdata) return 0;
  for (int d = 0; d < a->nd; d++)
    if (a->sz[d] != b.sz[d] || a->st[d] != b.st[d]) return 0;
  return a->ssize > 64 || memcmp(a->bytes, b.bytes, (size_t)a->ssize * sizeof(float)) == 0;
}

typedef struct {
  ptrdiff_t size;
  const float *data;
  float bytes[64];
} SSnap;

static SSnap ssnap(THFloatStorage *s) {
  SSnap a;
  memset(&a, 0, sizeof a);
  a.size = THFloatStorage_size(s);
  a.data = THFloatStorage_data(s);
  if (a.size <= 64) memcpy(a.bytes, a.data, (size_t)a.size * sizeof(float));
  return a;
}

static int ssame(const SSnap *a, THFloatStorage *s) {
  SSnap b = ssnap(s);
  return a->size == b.size && a->data == b.data && memcmp(a->bytes, b.bytes, (size_t)a->size * sizeof(float)) == 0;
}

static THFloatStorage *filled_storage(ptrdiff_t n) {
  THFloatStorage *s = THFloatStorage_newWithSize(n);
  for (ptrdiff_t k = 0; k < n; k++) THFloatStorage_set(s, k, (float)k + 0.5f);
  return s;
}

/* ---- the bad inputs -------------------------------------------------------------------- */
static void test_bad_inputs(void) {
  THFloatStorage *s6 = filled_storage(6);
  THFloatTensor *t23 = THFloatTensor_newWithStorage2d(s6, 0, 2, 3, 3, 1);
  THFloatStorage *s1 = filled_storage(6);
  THFloatTensor *t1 = THFloatTensor_newWithStorage1d(s1, 0, 6, 1);
  THFloatTensor *t5 = THFloatTensor_newWithStorage1d(s1, 0, 5, 1);
  THFloatTensor *tr = THFloatTensor_newTranspose(t23, 0, 1);
  THFloatTensor *r = THFloatTensor_newWithStorage1d(s1, 1, 2, 2);
  THFloatTensor *empty = THFloatTensor_new();
  THByteTensor *bt = THByteTensor_newWithSize1d(6);
  for (int i = 0; i < 6; i++) THByteTensor_set1d(bt, i, (uint8_t)i);
  THLongStorage *ls6 = THLongStorage_newWithSize1(6);
  const Snap S23 = snap(t23), S1 = snap(t1), SR = snap(r), STR = snap(tr), S5 = snap(t5), SE = snap(empty);
  const SSnap SS6 = ssnap(s6);
  const char *K;

  /* -- NULL handles -- */
  K = "NULL tensor";
  ERR_VAL(K, C_NULL, int, 0, THFloatTensor_nDimension(NULL), 1);
  ERR_VAL(K, C_NULL, int64_t, 0, THFloatTensor_size(NULL, 0), 1);
  ERR_VAL(K, C_NULL, int64_t, 0, THFloatTensor_stride(NULL, 0), 1);
  ERR_VAL(K, C_NULL, ptrdiff_t, 0, THFloatTensor_storageOffset(NULL), 1);
  ERR_VAL(K, C_NULL, ptrdiff_t, 0, THFloatTensor_nElement(NULL), 1);
  ERR_VAL(K, C_NULL, int, 0, THFloatTensor_isContiguous(NULL), 1);
  ERR_NEW(K, C_NULL, THFloatStorage, no_free, THFloatTensor_storage(NULL), 1); /* borrowed */
  ERR_NEW(K, C_NULL, float, no_free, THFloatTensor_data(NULL), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithTensor(NULL), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newClone(NULL), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newContiguous(NULL), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newSelect(NULL, 0, 0), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newNarrow(NULL, 0, 0, 1), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newTranspose(NULL, 0, 1), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newUnfold(NULL, 0, 1, 1), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(NULL, ls6), 1);
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newExpand(NULL, ls6), 1);
  ERR_NEW(K, C_NULL, THLongStorage, THLongStorage_free, THFloatTensor_newSizeOf(NULL), 1);
  ERR_NEW(K, C_NULL, THLongStorage, THLongStorage_free, THFloatTensor_newStrideOf(NULL), 1);
  ERR(K, C_NULL, THFloatTensor_narrow(NULL, t23, 0, 0, 1), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_select(NULL, t23, 0, 0), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_transpose(NULL, t23, 0, 1), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_unfold(NULL, t23, 0, 1, 1), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_squeeze(NULL, t23), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_squeeze1d(NULL, t23, 0), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_unsqueeze1d(NULL, t23, 0), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_set(NULL, t23), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_setStorage1d(NULL, s6, 0, 2, 1), ssame(&SS6, s6));
  ERR(K, C_NULL, THFloatTensor_resize1d(NULL, 3), 1);
  ERR(K, C_NULL, THFloatTensor_resize2d(NULL, 3, 2), 1);
  ERR(K, C_NULL, THFloatTensor_resize3d(NULL, 1, 3, 2), 1);
  ERR(K, C_NULL, THFloatTensor_resize4d(NULL, 1, 1, 3, 2), 1);
  ERR(K, C_NULL, THFloatTensor_resize5d(NULL, 1, 1, 1, 3, 2), 1);
  ERR(K, C_NULL, THFloatTensor_resizeAs(NULL, t23), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_copy(NULL, t23), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_copyByte(NULL, bt), 1);
  ERR_VAL(K, C_NULL, float, 0.0f, THFloatTensor_get1d(NULL, 0), 1);
  ERR_VAL(K, C_NULL, float, 0.0f, THFloatTensor_get2d(NULL, 0, 0), 1);
  ERR_VAL(K, C_NULL, float, 0.0f, THFloatTensor_get3d(NULL, 0, 0, 0), 1);
  ERR_VAL(K, C_NULL, float, 0.0f, THFloatTensor_get4d(NULL, 0, 0, 0, 0), 1);
  ERR(K, C_NULL, THFloatTensor_set1d(NULL, 0, 1.0f), 1);
  ERR(K, C_NULL, THFloatTensor_set2d(NULL, 0, 0, 1.0f), 1);
  ERR(K, C_NULL, THFloatTensor_set3d(NULL, 0, 0, 0, 1.0f), 1);
  ERR(K, C_NULL, THFloatTensor_set4d(NULL, 0, 0, 0, 0, 1.0f), 1);
  ERR_VAL(K, C_NULL, int, 0, THFloatTensor_isSetTo(NULL, t23), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_desc(NULL), 1);
  CHECK(THFloatTensor_desc(NULL).str[0] == '\0');
  ERR(K, C_NULL, THFloatTensor_sizeDesc(NULL), 1);
  ERR(K, C_NULL, THFloatTensor_expand(NULL, t23, ls6), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_setFlag(NULL, TH_TENSOR_REFCOUNTED), 1);
  ERR(K, C_NULL, THDoubleTensor_narrow(NULL, NULL, 0, 0, 1), 1);
  ERR_VAL(K, C_NULL, uint16_t, 0, THHalfTensor_get1d(NULL, 0).x, 1);
  ERR(K, C_NULL, THBoolTensor_copy(NULL, NULL), 1);
  ERR(K, C_NULL, THLongTensor_resize1d(NULL, 2), 1);
  ERR_NEW(K, C_NULL, THByteTensor, THByteTensor_free, THByteTensor_newClone(NULL), 1);
  ERR(K, C_NULL, THBFloat16Tensor_set1d(NULL, 0, (THBFloat16){0x3F80}), 1);

  K = "NULL second argument";
  ERR(K, C_NULL, THFloatTensor_set(t23, NULL), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_copy(t23, NULL), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_copyDouble(t23, NULL), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_resizeAs(t23, NULL), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_resize(t23, NULL, NULL), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_resizeNd(t23, 2, NULL, NULL), same(&S23, t23));
  ERR(K, C_NULL, THFloatTensor_expand(r, NULL, ls6), same(&SR, r));
  ERR(K, C_NULL, THFloatTensor_expand(r, t1, NULL), same(&SR, r) && same(&S1, t1));
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(t23, NULL), same(&S23, t23));
  ERR_NEW(K, C_NULL, THFloatTensor, THFloatTensor_free, THFloatTensor_newExpand(t23, NULL), same(&S23, t23));
  ERR_VAL(K, C_NULL, int, 0, THFloatTensor_isSameSizeAs(t23, NULL), same(&S23, t23));
  ERR_VAL(K, C_NULL, int, 0, THFloatTensor_isSize(t23, NULL), same(&S23, t23));
  {
    THFloatTensor *ops[2] = {t1, t1};
    ERR(K, C_NULL, THFloatTensor_expandNd(NULL, ops, 2), same(&S1, t1));
  }
  {
    /* freeCopyTo drops its `self` reference even when it fails. */
    THFloatTensor *tmp = THFloatTensor_newWithTensor(t1);
    ERR(K, C_NULL, THFloatTensor_freeCopyTo(tmp, NULL), same(&S1, t1));
  }

  K = "NULL storage";
  ERR_VAL(K, C_NULL, ptrdiff_t, 0, THFloatStorage_size(NULL), 1);
  ERR_NEW(K, C_NULL, float, no_free, THFloatStorage_data(NULL), 1);
  ERR_VAL(K, C_NULL, float, 0.0f, THFloatStorage_get(NULL, 0), 1);
  ERR(K, C_NULL, THFloatStorage_set(NULL, 0, 1.0f), 1);
  ERR(K, C_NULL, THFloatStorage_resize(NULL, 3), 1);
  ERR(K, C_NULL, THFloatStorage_fill(NULL, 1.0f), 1);
  ERR(K, C_NULL, THFloatStorage_copy(NULL, s6), ssame(&SS6, s6));
  ERR(K, C_NULL, THFloatStorage_copy(s6, NULL), ssame(&SS6, s6));
  ERR(K, C_NULL, THFloatStorage_copyDouble(s6, NULL), ssame(&SS6, s6));
  ERR(K, C_NULL, THFloatStorage_swap(NULL, s6), ssame(&SS6, s6));
  ERR(K, C_NULL, THFloatStorage_swap(s6, NULL), ssame(&SS6, s6));
  ERR(K, C_NULL, THFloatStorage_clearFlag(NULL, TH_STORAGE_RESIZABLE), 1);
  ERR_VAL(K, C_NULL, int64_t, 0, THLongStorage_get(NULL, 0), 1);
  ERR(K, C_NULL, THHalfStorage_fill(NULL, (THHalf){0x3C00}), 1);

  /* NULL where TH allows it: no error. */
  {
    THFloatTensor *x = NULL;
    EXPECT_OK(x = THFloatTensor_newWithStorage(NULL, 0, NULL, NULL));
    CHECK(x != NULL && THFloatTensor_nDimension(x) == 0 && THFloatTensor_storage(x) == NULL);
    THFloatTensor_free(x);
    EXPECT_OK(x = THFloatTensor_newWithStorage(s6, 0, NULL, NULL));
    CHECK(x != NULL && THFloatTensor_nDimension(x) == 0 && THFloatTensor_storage(x) == s6);
    THFloatTensor_free(x);
    EXPECT_OK(THFloatTensor_free(NULL));
    EXPECT_OK(THFloatTensor_retain(NULL));
    EXPECT_OK(THFloatStorage_free(NULL));
    EXPECT_OK(THFloatTensor_narrow(r, NULL, 0, 1, 1)); /* src NULL: self */
    CHECK(THFloatTensor_size(r, 0) == 1 && THFloatTensor_storageOffset(r) == 3);
    EXPECT_OK(THFloatTensor_setStorage1d(r, s1, 1, 2, 2));
    CHECK(same(&SR, r));
  }

  /* -- negative sizes (the end markers 0 and -1 aside) and offsets -- */
  K = "negative size";
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize1d(-5), 1);
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize2d(2, -3), 1);
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize3d(2, 3, -2), 1);
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize4d(-7, 1, 1, 1), 1);
  {
    THLongStorage *bad = THLongStorage_newWithSize2(2, -3);
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize(bad, NULL), 1);
    ERR(K, C_SIZE, THFloatTensor_resize(t23, bad, NULL), same(&S23, t23));
    ERR(K, C_SIZE, THFloatTensor_setStorage(t23, s6, 0, bad, NULL), same(&S23, t23));
    THLongStorage_free(bad);
  }
  ERR(K, C_SIZE, THFloatTensor_resize1d(t1, -2), same(&S1, t1));
  ERR(K, C_SIZE, THFloatTensor_resize2d(t23, 2, -3), same(&S23, t23));
  ERR(K, C_SIZE, THFloatTensor_resize5d(t23, 1, 1, 1, 2, -3), same(&S23, t23));
  {
    int64_t sz[2] = {3, -2};
    ERR(K, C_SIZE, THFloatTensor_resizeNd(t23, 2, sz, NULL), same(&S23, t23));
    ERR(K, C_SIZE, THFloatTensor_setStorageNd(t23, s6, 0, 2, sz, NULL), same(&S23, t23));
    ERR(K, C_SIZE, THFloatTensor_resizeNd(t23, -1, sz, NULL), same(&S23, t23));
  }
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithStorage1d(s6, 0, -7, 1), ssame(&SS6, s6));
  ERR(K, C_SIZE, THFloatTensor_setStorage1d(t23, s6, 0, -4, 1), same(&S23, t23));
  ERR(K, C_SIZE, THFloatTensor_setStorage2d(t23, s6, 0, 2, 3, -9, 1), same(&S23, t23));
  ERR_NEW(K, C_SIZE, THFloatStorage, THFloatStorage_free, THFloatStorage_newWithSize(-1), 1);
  ERR(K, C_SIZE, THFloatStorage_resize(s6, -3), ssame(&SS6, s6));
  K = "negative storage offset";
  ERR(K, C_SIZE, THFloatTensor_setStorage1d(t23, s6, -1, 2, 1), same(&S23, t23));
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithStorage1d(s6, -3, 2, 1), ssame(&SS6, s6));

  /* -- sizes whose product or extent overflows int64 -- */
  K = "size overflow";
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize2d(INT64_MAX, 4), 1);
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize2d(INT64_MAX, INT64_MAX), 1);
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free,
          THFloatTensor_newWithSize4d(1LL << 20, 1LL << 20, 1LL << 20, 1LL << 20), 1);
  ERR(K, C_SIZE, THFloatTensor_resize2d(t23, INT64_MAX, 2), same(&S23, t23));
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithStorage1d(s6, 0, INT64_MAX / 2, 4),
          ssame(&SS6, s6));
  ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithStorage1d(s6, PTRDIFF_MAX, 2, 1),
          ssame(&SS6, s6));
  ERR(K, C_SIZE, THFloatTensor_setStorage2d(t23, s6, 0, 1LL << 40, 1LL << 40, 1LL << 40, 1), same(&S23, t23));
  {
    THLongStorage *big = THLongStorage_newWithSize3(INT64_MAX / 2, 3, 4);
    THFloatTensor *c31 = THFloatTensor_newWithStorage2d(s6, 0, 3, 1, 1, 1);
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newExpand(c31, big), ssame(&SS6, s6));
    THFloatTensor_free(c31);
    THLongStorage_free(big);
  }

  /* -- dimensions out of range -- */
  K = "dimension out of range";
  ERR_VAL(K, C_INDEX, int64_t, 0, THFloatTensor_size(t23, 2), same(&S23, t23));
  ERR_VAL(K, C_INDEX, int64_t, 0, THFloatTensor_size(t23, -1), same(&S23, t23));
  ERR_VAL(K, C_INDEX, int64_t, 0, THFloatTensor_stride(t23, 5), same(&S23, t23));
  ERR_VAL(K, C_INDEX, int64_t, 0, THFloatTensor_size(empty, 0), same(&SE, empty));
  ERR_NEW(K, C_INDEX, THFloatTensor, THFloatTensor_free, THFloatTensor_newTranspose(t23, 0, 2), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_transpose(t23, NULL, -1, 0), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_narrow(t23, NULL, 2, 0, 1), same(&S23, t23));
  ERR_NEW(K, C_INDEX, THFloatTensor, THFloatTensor_free, THFloatTensor_newNarrow(t23, -1, 0, 1), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_select(r, t23, 5, 0), same(&SR, r) && same(&S23, t23));
  ERR_NEW(K, C_INDEX, THFloatTensor, THFloatTensor_free, THFloatTensor_newSelect(t23, 2, 0), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_squeeze1d(t23, NULL, 2), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_unsqueeze1d(t23, NULL, 3), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_unsqueeze1d(t23, NULL, -1), same(&S23, t23));
  ERR_NEW(K, C_INDEX, THFloatTensor, THFloatTensor_free, THFloatTensor_newUnfold(t23, 2, 1, 1), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_unfold(t23, NULL, -1, 1, 1), same(&S23, t23));

  /* -- indices out of range -- */
  K = "index out of range";
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get2d(t23, 2, 0), same(&S23, t23));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get2d(t23, 0, 3), same(&S23, t23));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get2d(t23, -1, 0), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_set2d(t23, 0, 3, 99.0f), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_set1d(t1, 6, 99.0f), same(&S1, t1));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get1d(t1, -1), same(&S1, t1));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatStorage_get(s6, 6), ssame(&SS6, s6));
  ERR(K, C_INDEX, THFloatStorage_set(s6, -1, 99.0f), ssame(&SS6, s6));
  K = "wrong number of indices";
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get1d(t23, 0), same(&S23, t23));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get3d(t23, 0, 0, 0), same(&S23, t23));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get4d(t1, 0, 0, 0, 0), same(&S1, t1));
  ERR(K, C_INDEX, THFloatTensor_set2d(t1, 0, 0, 99.0f), same(&S1, t1));
  ERR_VAL(K, C_INDEX, float, 0.0f, THFloatTensor_get1d(empty, 0), same(&SE, empty));
  K = "narrow out of range";
  ERR_NEW(K, C_INDEX, THFloatTensor, THFloatTensor_free, THFloatTensor_newNarrow(t23, 1, 3, 1), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_narrow(t23, NULL, 1, 1, 3), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_narrow(t23, NULL, 1, 0, 0), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_narrow(t23, NULL, 1, -1, 1), same(&S23, t23));
  ERR(K, C_INDEX, THFloatTensor_narrow(r, t23, 1, 1, INT64_MAX), same(&S23, t23) && same(&SR, r));
  K = "select out of range";
  ERR(K, C_INDEX, THFloatTensor_select(t23, NULL, 0, 2), same(&S23, t23));
  ERR_NEW(K, C_INDEX, THFloatTensor, THFloatTensor_free, THFloatTensor_newSelect(t23, 1, -1), same(&S23, t23));
  K = "select on a 1-d tensor";
  ERR(K, C_INDEX | C(TH_ERR_INVALID_ARG), THFloatTensor_select(t1, NULL, 0, 0), same(&S1, t1));
  ERR_NEW(K, C_INDEX | C(TH_ERR_INVALID_ARG), THFloatTensor, THFloatTensor_free, THFloatTensor_newSelect(t1, 0, 0),
          same(&S1, t1));
  K = "bad unfold";
  ERR(K, C_RANGE, THFloatTensor_unfold(t23, NULL, 1, 2, 0), same(&S23, t23)); /* step 0 */
  ERR(K, C_RANGE, THFloatTensor_unfold(t23, NULL, 1, 2, -1), same(&S23, t23));
  ERR(K, C_RANGE, THFloatTensor_unfold(t23, NULL, 1, 0, 1), same(&S23, t23));
  ERR_NEW(K, C_RANGE, THFloatTensor, THFloatTensor_free, THFloatTensor_newUnfold(t23, 1, 4, 1), same(&S23, t23));
  ERR(K, C_RANGE, THFloatTensor_unfold(r, empty, 0, 1, 1), same(&SR, r));

  /* -- view / expand shape errors -- */
  K = "bad view";
  {
    THLongStorage *l4 = THLongStorage_newWithSize1(4), *l2m = THLongStorage_newWithSize2(-1, -1),
                  *lneg = THLongStorage_newWithSize2(-2, 3), *l5m = THLongStorage_newWithSize2(-1, 5);
    ERR_NEW(K, C_RANGE, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(tr, ls6), same(&STR, tr));
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(t23, l4), same(&S23, t23));
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(t23, l2m), same(&S23, t23));
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(t23, lneg), same(&S23, t23));
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newView(t23, l5m), same(&S23, t23));
    THLongStorage_free(l4);
    THLongStorage_free(l2m);
    THLongStorage_free(lneg);
    THLongStorage_free(l5m);
  }
  K = "bad expand";
  {
    THLongStorage *l24 = THLongStorage_newWithSize2(2, 4), *l3 = THLongStorage_newWithSize1(3),
                  *l43 = THLongStorage_newWithSize2(4, 3);
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newExpand(t23, l24), same(&S23, t23));
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newExpand(t23, l3), same(&S23, t23));
    ERR(K, C_SIZE, THFloatTensor_expand(r, t23, l43), same(&SR, r) && same(&S23, t23));
    ERR(K, C_SIZE, THFloatTensor_expand(r, empty, l43), same(&SR, r));
    THLongStorage_free(l24);
    THLongStorage_free(l3);
    THLongStorage_free(l43);
  }
  K = "expandNd not broadcastable";
  {
    /* All or none: {3x1, 4, 5} fails at the third, and no ret has changed. */
    THFloatTensor *c31 = THFloatTensor_newWithStorage2d(s6, 0, 3, 1, 1, 1);
    THFloatTensor *r0 = THFloatTensor_newWithStorage1d(s6, 1, 2, 1), *r1 = THFloatTensor_new(),
                  *r2 = THFloatTensor_newWithStorage1d(s1, 0, 3, 2);
    const Snap A = snap(r0), B = snap(r1), Cc = snap(r2);
    THFloatTensor *rets[3] = {r0, r1, r2}, *ops[3] = {c31, t5 /* [5] */, t1 /* [6] */};
    THFloatTensor *b4 = THFloatTensor_newWithStorage1d(s6, 0, 4, 1);
    ops[1] = b4;
    ops[2] = t5;
    ERR(K, C_SIZE, THFloatTensor_expandNd(rets, ops, 3), same(&A, r0) && same(&B, r1) && same(&Cc, r2));
    ERR(K, C_SIZE, THFloatTensor_expandNd(rets, ops, 0), same(&A, r0));
    ops[1] = empty;
    ERR(K, C_SIZE, THFloatTensor_expandNd(rets, ops, 2), same(&A, r0) && same(&B, r1));
    THFloatTensor_free(b4);
    THFloatTensor_free(c31);
    THFloatTensor_free(r0);
    THFloatTensor_free(r1);
    THFloatTensor_free(r2);
  }
  K = "size/stride length mismatch";
  {
    THLongStorage *sz = THLongStorage_newWithSize2(2, 3), *st = THLongStorage_newWithSize3(3, 1, 1);
    ERR_NEW(K, C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithStorage(s6, 0, sz, st), ssame(&SS6, s6));
    ERR(K, C_SIZE, THFloatTensor_setStorage(t23, s6, 0, sz, st), same(&S23, t23));
    ERR(K, C_SIZE, THFloatTensor_resize(t23, sz, st), same(&S23, t23));
    THLongStorage_free(sz);
    THLongStorage_free(st);
  }

  /* -- copies with different element counts -- */
  K = "copy count mismatch";
  ERR(K, C_SIZE, THFloatTensor_copy(t23, t5), same(&S23, t23) && same(&S5, t5));
  ERR(K, C_SIZE, THFloatTensor_copy(t5, t23), same(&S23, t23) && same(&S5, t5));
  ERR(K, C_SIZE, THFloatTensor_copyByte(t5, bt), same(&S5, t5));
  ERR(K, C_SIZE, THFloatTensor_copy(empty, t5), same(&SE, empty));
  {
    THFloatTensor *tmp = THFloatTensor_newClone(t23);
    ERR(K, C_SIZE, THFloatTensor_freeCopyTo(tmp, t5), same(&S5, t5)); /* tmp is dropped anyway */
  }
  {
    THFloatStorage *s4 = filled_storage(4);
    const SSnap SS4 = ssnap(s4);
    ERR(K, C_SIZE, THFloatStorage_copy(s4, s6), ssame(&SS4, s4) && ssame(&SS6, s6));
    THFloatStorage_free(s4);
  }

  /* -- views that would leave a non-resizable storage -- */
  K = "beyond a non-resizable storage";
  {
    THFloatStorage *sn = filled_storage(4);
    THFloatStorage_clearFlag(sn, TH_STORAGE_RESIZABLE);
    const SSnap SN = ssnap(sn);
    ERR(K, C_RANGE, THFloatTensor_setStorage1d(t23, sn, 0, 6, 1), same(&S23, t23) && ssame(&SN, sn));
    ERR(K, C_RANGE, THFloatTensor_setStorage1d(t23, sn, 3, 2, 1), same(&S23, t23) && ssame(&SN, sn));
    ERR(K, C_RANGE, THFloatTensor_setStorage2d(t23, sn, 0, 2, 3, 2, 1), same(&S23, t23) && ssame(&SN, sn));
    ERR_NEW(K, C_RANGE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithStorage1d(sn, 2, 3, 1), ssame(&SN, sn));
    THFloatTensor *tn = THFloatTensor_newWithStorage1d(sn, 0, 4, 1);
    const Snap TN = snap(tn);
    ERR(K, C_RANGE, THFloatTensor_resize1d(tn, 10), same(&TN, tn) && ssame(&SN, sn));
    ERR(K, C_RANGE, THFloatStorage_resize(sn, 10), ssame(&SN, sn));
    EXPECT_OK(THFloatTensor_resize2d(tn, 2, 2)); /* fits: fine */
    CHECK(THFloatTensor_get2d(tn, 1, 1) == 3.5f && ssame(&SN, sn));
    THFloatTensor_free(tn);
    THFloatStorage_free(sn);
  }

  /* -- a storage shrunk under its tensor: accesses are errors, not out-of-bounds reads -- */
  K = "storage shrunk under the tensor";
  {
    THFloatStorage *ss = filled_storage(6);
    THFloatTensor *ts = THFloatTensor_newWithStorage1d(ss, 0, 6, 1);
    THFloatStorage_resize(ss, 2);
    const Snap TS = snap(ts);
    CHECK(TS.ssize == 2);
    ERR_VAL(K, C_RANGE, float, 0.0f, THFloatTensor_get1d(ts, 4), same(&TS, ts));
    ERR(K, C_RANGE, THFloatTensor_set1d(ts, 5, 1.0f), same(&TS, ts));
    ERR_NEW(K, C_RANGE, THFloatTensor, THFloatTensor_free, THFloatTensor_newClone(ts), same(&TS, ts));
    ERR(K, C_RANGE, THFloatTensor_copy(t1, ts), same(&S1, t1) && same(&TS, ts));
    ERR(K, C_RANGE, THFloatTensor_copy(ts, t1), same(&S1, t1) && same(&TS, ts));
    THFloatTensor *ts2 = THFloatTensor_newWithStorage2d(ss, 0, 1, 1, 2, 1); /* fits: fine */
    CHECK(THFloatTensor_get2d(ts2, 0, 1) == 1.5f);
    THFloatTensor_free(ts2);
    THFloatTensor_free(ts);
    THFloatStorage_free(ss);
  }

  /* -- allocations that cannot succeed -- */
  K = "huge allocation";
  ERR_NEW(K, C(TH_ERR_ALLOC) | C_SIZE, THFloatTensor, THFloatTensor_free, THFloatTensor_newWithSize1d(1LL << 60), 1);
  ERR_NEW(K, C(TH_ERR_ALLOC) | C_SIZE, THFloatStorage, THFloatStorage_free, THFloatStorage_newWithSize((ptrdiff_t)1 << 60), 1);
  ERR_NEW(K, C(TH_ERR_ALLOC) | C_SIZE, THDoubleTensor, THDoubleTensor_free,
          THDoubleTensor_newWithSize2d(1LL << 31, 1LL << 31), 1);
  ERR(K, C(TH_ERR_ALLOC) | C_SIZE, THFloatTensor_resize1d(t1, 1LL << 60), same(&S1, t1));
  ERR(K, C(TH_ERR_ALLOC) | C_SIZE, THFloatStorage_resize(s6, (ptrdiff_t)1 << 60), ssame(&SS6, s6));

  /* Everything is still as it was. */
  CHECK(same(&S23, t23) && same(&S1, t1) && same(&SR, r) && same(&STR, tr) && same(&S5, t5) && same(&SE, empty));
  CHECK(ssame(&SS6, s6));
  CHECK(THByteTensor_get1d(bt, 5) == 5);

  THLongStorage_free(ls6);
  THByteTensor_free(bt);
  THFloatTensor_free(empty);
  THFloatTensor_free(r);
  THFloatTensor_free(tr);
  THFloatTensor_free(t5);
  THFloatTensor_free(t1);
  THFloatTensor_free(t23);
  THFloatStorage_free(s1);
  THFloatStorage_free(s6);
}

/* ---- handler routing -------------------------------------------------------------------- */
static int h_err_calls, h_arg_calls, h_def_calls, h_defarg_calls, h_last_arg;
static char h_msg[4096];
static void *h_last_data;

static void h_err(const char *msg, void *data) {
  h_err_calls++;
  h_last_data = data;
  snprintf(h_msg, sizeof h_msg, "%s", msg ? msg : "");
}
static void h_arg(int arg, const char *msg, void *data) {
  h_arg_calls++;
  h_last_arg = arg;
  h_last_data = data;
  snprintf(h_msg, sizeof h_msg, "%s", msg ? msg : "");
}
static void h_def(const char *msg, void *data) {
  h_def_calls++;
  h_last_data = data;
  snprintf(h_msg, sizeof h_msg, "%s", msg ? msg : "");
}
static void h_defarg(int arg, const char *msg, void *data) {
  h_defarg_calls++;
  h_last_arg = arg;
  h_last_data = data;
  snprintf(h_msg, sizeof h_msg, "%s", msg ? msg : "");
}
static void h_reset(void) {
  h_err_calls = h_arg_calls = h_def_calls = h_defarg_calls = h_last_arg = 0;
  h_msg[0] = '\0';
  h_last_data = NULL;
  THClearLastError();
}
#define CALLS(e, a, d, da) (h_err_calls == (e) && h_arg_calls == (a) && h_def_calls == (d) && h_defarg_calls == (da))

static void test_routing(void) {
  int tag_e = 1, tag_a = 2, tag_d = 3, tag_da = 4;
  THFloatTensor *t = THFloatTensor_newWithSize2d(2, 3);
  THFloatStorage *s = filled_storage(3);

  THSetErrorHandler(h_err, &tag_e);
  THSetArgErrorHandler(h_arg, &tag_a);

  /* An argument error goes to the arg handler, with the argument's 1-based position. */
  h_reset();
  THFloatTensor_get2d(t, 0, 3); /* x1 is argument 3 */
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 3 && h_last_data == &tag_a);
  CHECK(THGetLastError() != NULL && strcmp(h_msg, THGetLastError()) == 0);
  CHECK(strstr(h_msg, "get2d") != NULL);
  h_reset();
  THFloatTensor_narrow(t, NULL, 5, 0, 1); /* dimension is argument 3 */
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 3);
  CHECK(strstr(h_msg, "narrow") != NULL);
  h_reset();
  THFloatTensor_narrow(t, NULL, 1, 7, 1); /* firstIndex is argument 4 */
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 4);
  h_reset();
  THFloatTensor_narrow(t, NULL, 1, 1, 9); /* size is argument 5 */
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 5);
  h_reset();
  THFloatStorage_get(s, 5); /* TH: argNumber 2 "out of bounds" */
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 2);
  h_reset();
  THFloatTensor_get1d(NULL, 0);
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 1);
  h_reset();
  THFloatTensor_copy(t, NULL);
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 2);
  /* argNumber is a 1-based position: never 0 when the arg handler is called. */
  {
    THFloatTensor *v1 = THFloatTensor_newWithSize1d(4), *e = THFloatTensor_new();
    h_reset();
    CHECK(THFloatTensor_newSelect(v1, 0, 0) == NULL); /* a vector: the tensor (argument 1) is bad */
    CHECK(h_err_calls + h_arg_calls == 1 && (h_arg_calls == 0 || h_last_arg == 1));
    if (h_arg_calls == 1 && h_last_arg != 1) fprintf(stderr, "  newSelect on a vector: argNumber %d\n", h_last_arg);
    h_reset();
    CHECK(THFloatTensor_newUnfold(e, 0, 1, 1) == NULL); /* empty: the tensor (argument 1) is bad */
    CHECK(h_err_calls + h_arg_calls == 1 && (h_arg_calls == 0 || h_last_arg == 1));
    if (h_arg_calls == 1 && h_last_arg != 1) fprintf(stderr, "  newUnfold of an empty tensor: argNumber %d\n", h_last_arg);
    h_reset();
    CHECK(THFloatTensor_newNarrow(t, 1, 0, 4) == NULL); /* size is argument 4 of newNarrow */
    CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 4);
    THFloatTensor_free(v1);
    THFloatTensor_free(e);
  }
  /* A non-argument error goes to the error handler even with an arg handler installed. */
  h_reset();
  THFloatTensor *x = THFloatTensor_newWithSize2d(INT64_MAX, 4);
  CHECK(x == NULL && CALLS(1, 0, 0, 0) && h_last_data == &tag_e);
  CHECK(strstr(h_msg, "newWithSize2d") != NULL && strcmp(h_msg, THGetLastError()) == 0);
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE);

  /* No arg handler: argument errors fall back to the error handler. */
  THSetArgErrorHandler(NULL, NULL);
  h_reset();
  THFloatTensor_get2d(t, 0, 3);
  CHECK(CALLS(1, 0, 0, 0) && h_last_data == &tag_e && strstr(h_msg, "get2d") != NULL);

  /* The process default is used only by threads without their own handler. */
  THSetDefaultErrorHandler(h_def, &tag_d);
  h_reset();
  THFloatTensor_get2d(t, 0, 3);
  CHECK(CALLS(1, 0, 0, 0)); /* this thread's handler first */
  THSetErrorHandler(NULL, NULL);
  h_reset();
  x = THFloatTensor_newWithSize1d(-3);
  CHECK(x == NULL && CALLS(0, 0, 1, 0) && h_last_data == &tag_d);
  h_reset();
  THFloatTensor_get2d(t, 0, 3); /* arg error, no arg handler anywhere: the default error handler */
  CHECK(CALLS(0, 0, 1, 0));
  /* Default arg handler. */
  THSetDefaultArgErrorHandler(h_defarg, &tag_da);
  h_reset();
  THFloatTensor_get2d(t, 5, 0);
  CHECK(CALLS(0, 0, 0, 1) && h_last_arg == 2 && h_last_data == &tag_da);
  THSetArgErrorHandler(h_arg, &tag_a);
  h_reset();
  THFloatTensor_get2d(t, 5, 0);
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 2); /* the thread's arg handler first */
  THSetArgErrorHandler(NULL, NULL);
  h_reset();
  x = THFloatTensor_newWithSize1d(-3); /* non-arg error: default error handler, not the arg one */
  CHECK(x == NULL && CALLS(0, 0, 1, 0));

  /* No handler at all: the error is only recorded. */
  THSetDefaultErrorHandler(NULL, NULL);
  THSetDefaultArgErrorHandler(NULL, NULL);
  h_reset();
  CHECK(THFloatTensor_get2d(t, 0, 3) == 0.0f);
  CHECK(CALLS(0, 0, 0, 0) && THGetLastErrorCode() == TH_ERR_INDEX && THGetLastError() != NULL);

  /* A handler that calls back into the library. */
  th_test_install_handlers();
  THFloatTensor_free(t);
  THFloatStorage_free(s);
}

/* ---- the last error ---------------------------------------------------------------------- */
static void test_last_error(void) {
  char saved[4096];
  THFloatTensor *t = THFloatTensor_newWithSize2d(2, 3);
  THClearLastError();
  CHECK(THGetLastError() == NULL && THGetLastErrorCode() == TH_OK);
  EXPECT_ERROR(THFloatTensor_narrow(t, NULL, 1, 2, 5));
  CHECK(THGetLastErrorCode() == TH_ERR_INDEX);
  CHECK(THGetLastError() != NULL && strstr(THGetLastError(), "narrow") != NULL);
  snprintf(saved, sizeof saved, "%s", THGetLastError() ? THGetLastError() : "");
  /* Successful calls do not clear it (no EXPECT_OK here: it clears). */
  THFloatTensor_set2d(t, 1, 2, 4.0f);
  CHECK(THFloatTensor_get2d(t, 1, 2) == 4.0f);
  THFloatTensor *u = THFloatTensor_newWithSize1d(3);
  THFloatTensor_free(u);
  CHECK(THFloatTensor_nElement(t) == 6);
  CHECK(THGetLastErrorCode() == TH_ERR_INDEX);
  CHECK(THGetLastError() != NULL && strcmp(THGetLastError(), saved) == 0);
  /* The next failure replaces it. */
  THFloatTensor_resize1d(NULL, 2);
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG && strcmp(THGetLastError(), saved) != 0);
  CHECK(strstr(THGetLastError(), "resize1d") != NULL);
  THClearLastError();
  CHECK(THGetLastError() == NULL && THGetLastErrorCode() == TH_OK);
  /* The message names the function. */
  THFloatTensor_newWithSize2d(INT64_MAX, 4);
  CHECK(THGetLastError() != NULL && strstr(THGetLastError(), "newWithSize2d") != NULL);
  THFloatTensor_newSelect(t, 0, 9);
  CHECK(THGetLastError() != NULL && strstr(THGetLastError(), "newSelect") != NULL);
  THFloatTensor_unfold(t, NULL, 1, 2, 0);
  CHECK(THGetLastError() != NULL && strstr(THGetLastError(), "unfold") != NULL);
  THDoubleTensor_copyFloat(NULL, t);
  CHECK(THGetLastError() != NULL && strstr(THGetLastError(), "copyFloat") != NULL);
  THClearLastError();
  THFloatTensor_free(t);
}

/* ---- THError / THArgCheck / THAssert (the C-variadic entry points) ----------------------- */
static void test_macros(void) {
  THSetErrorHandler(h_err, NULL);
  THSetArgErrorHandler(h_arg, NULL);

  h_reset();
  THError("bad %d thing %s", 42, "x");
  CHECK(CALLS(1, 0, 0, 0));
  CHECK(strstr(h_msg, "bad 42 thing x") != NULL);
  CHECK(strstr(h_msg, "test_errors.c") != NULL); /* " at <file>:<line>" */
  CHECK(THGetLastErrorCode() == TH_ERR_USER);
  CHECK(THGetLastError() != NULL && strcmp(THGetLastError(), h_msg) == 0);

  h_reset();
  THArgCheck(0, 3, "arg %s wrong (%d)", "foo", -1);
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 3);
  CHECK(strstr(h_msg, "arg foo wrong (-1)") != NULL);
  CHECK(THGetLastErrorCode() == TH_ERR_USER);

  h_reset();
  THArgCheck(1, 3, "never %s", "seen");
  CHECK(CALLS(0, 0, 0, 0) && THGetLastError() == NULL && THGetLastErrorCode() == TH_OK);

  h_reset();
  THAssert(1 == 2);
  CHECK(CALLS(1, 0, 0, 0) && strstr(h_msg, "Assertion") != NULL && strstr(h_msg, "1 == 2") != NULL);
  CHECK(THGetLastErrorCode() == TH_ERR_USER);
  h_reset();
  THAssertMsg(2 < 1, "why %d", 7);
  CHECK(CALLS(1, 0, 0, 0) && strstr(h_msg, "why 7") != NULL && strstr(h_msg, "2 < 1") != NULL);
  h_reset();
  THAssert(2 > 1);
  CHECK(CALLS(0, 0, 0, 0) && THGetLastError() == NULL);

  /* Without an arg handler, THArgCheck reaches the error handler. */
  THSetArgErrorHandler(NULL, NULL);
  h_reset();
  THArgCheck(0, 2, "fallback %d", 5);
  CHECK(CALLS(1, 0, 0, 0) && strstr(h_msg, "fallback 5") != NULL);
  THSetArgErrorHandler(h_arg, NULL);

  /* A very long message is cut, not overflowed. */
  {
    static char big[5000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    h_reset();
    THError("%s", big);
    CHECK(CALLS(1, 0, 0, 0) && strlen(h_msg) > 1000 && strlen(h_msg) < 2048);
  }

  /* THReportError directly. */
  h_reset();
  THReportError(TH_ERR_INDEX, 0, "plain");
  CHECK(CALLS(1, 0, 0, 0) && strstr(h_msg, "plain") != NULL);
  CHECK(THGetLastErrorCode() == TH_ERR_INDEX); /* the code given is the code recorded */
  if (THGetLastErrorCode() != TH_ERR_INDEX)
    fprintf(stderr, "  THReportError(TH_ERR_INDEX, 0, ...) recorded code %d\n", THGetLastErrorCode());
  h_reset();
  THReportError(TH_ERR_USER, 4, "argy");
  CHECK(CALLS(0, 1, 0, 0) && h_last_arg == 4 && strstr(h_msg, "argy") != NULL);

  THClearLastError();
  th_test_install_handlers();
}

static void test_codes(void) {
  const int codes[] = {TH_OK, TH_ERR_NULL_ARG, TH_ERR_INVALID_ARG, TH_ERR_SIZE, TH_ERR_INDEX,
                       TH_ERR_DTYPE, TH_ERR_ALLOC, TH_ERR_NO_CUDA, TH_ERR_CUDA, TH_ERR_IO,
                       TH_ERR_INTERNAL, TH_ERR_PANIC, TH_ERR_USER};
  const int n = (int)(sizeof codes / sizeof codes[0]);
  int distinct = 1, positive = 1;
  CHECK(TH_OK == 0);
  for (int i = 0; i < n; i++) {
    if (i > 0 && codes[i] <= 0) positive = 0;
    for (int j = i + 1; j < n; j++)
      if (codes[i] == codes[j]) distinct = 0;
  }
  CHECK(distinct);
  CHECK(positive);
}

int main(void) {
  th_test_install_handlers();
  test_codes();
  test_bad_inputs();
  test_routing();
  test_last_error();
  test_macros();
  if (getenv("TH_TEST_VERBOSE")) {
    printf("%-34s %-5s %-4s %s\n", "case", "code", "arg", "call");
    for (int i = 0; i < nrows; i++)
      printf("%-34s %-5d %-4d %s\n", rows[i].kind, rows[i].code, rows[i].arg, rows[i].text);
  }
  return TH_TEST_DONE();
}
