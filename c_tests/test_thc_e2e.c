/* THC end to end on a device (a GPU, or the CPU emulator with TH_CUDA_EMULATOR=1 in a library
 * built with the cuda-emulator feature): create device tensors, copy host data in, compute
 * pointwise (scalar, tensor, broadcast, strided, aliased, comparisons, float functions), copy
 * back and check every element against values computed here, then free everything. Errors
 * on device tensors leave the output untouched. Skipped (exit 0) where no device exists,
 * unless TH_REQUIRE_DEVICE=1. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>

#define R 37
#define C 53

static float host_at(THFloatTensor *t, int64_t i, int64_t j) { return THFloatTensor_get2d(t, i, j); }

/* A host R x C tensor holding f(i, j). */
static THFloatTensor *host_matrix(float (*f)(int64_t, int64_t)) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(R, C);
  int64_t i, j;
  for (i = 0; i < R; i++)
    for (j = 0; j < C; j++) THFloatTensor_set2d(t, i, j, f(i, j));
  return t;
}

static float fa(int64_t i, int64_t j) { return (float)(i * C + j) * 0.25f - 100.0f; }
static float fb(int64_t i, int64_t j) { return (float)((i * 7 + j * 3) % 11) - 5.0f; }

/* The device tensor copied back to a fresh host tensor. */
static THFloatTensor *to_host(THCState *state, THCudaTensor *d) {
  THFloatTensor *h = THFloatTensor_new();
  THLongStorage *size = THCudaTensor_newSizeOf(state, d);
  THFloatTensor_resize(h, size, NULL);
  THLongStorage_free(size);
  THFloatTensor_copyCuda(state, h, d);
  return h;
}

/* A THCDeviceAllocator over THCudaMalloc/THCudaFree that counts its calls. */
static THCState *alloc_state;
static int alloc_mallocs, alloc_frees;
static int count_malloc(void *ctx, void **ptr, size_t size, cudaStream_t stream) {
  (void)stream;
  CHECK(ctx == (void *)&alloc_mallocs);
  alloc_mallocs++;
  return THCudaMalloc(alloc_state, ptr, size);
}
static int count_free(void *ctx, void *ptr) {
  CHECK(ctx == (void *)&alloc_mallocs);
  alloc_frees++;
  return THCudaFree(alloc_state, ptr);
}

/* Storages over raw device memory and a caller's allocator, and rawCopy. */
static void raw_storages(THCState *state) {
  THCDeviceAllocator counting = {count_malloc, NULL, count_free, NULL, NULL, NULL};
  THCudaStorage *s, *u;
  void *block = NULL;
  alloc_state = state;
  CHECK(THCudaMalloc(state, &block, 8 * sizeof(float)) == 0 && block != NULL);
  s = THCudaStorage_newWithData(state, (float *)block, 8);
  THCudaStorage_fill(state, s, 2.5f);
  CHECK(THCudaStorage_get(state, s, 7) == 2.5f && THCudaStorage_size(state, s) == 8);

  u = THCudaStorage_newWithAllocator(state, 8, &counting, &alloc_mallocs);
  CHECK(u != NULL && alloc_mallocs == 1);
  THCudaStorage_rawCopy(state, u, THCudaStorage_data(state, s));
  CHECK(THCudaStorage_get(state, u, 3) == 2.5f);
  EXPECT_ERROR(THCudaStorage_resize(state, u, 16)); /* not resizable */
  CHECK(THCudaStorage_size(state, u) == 8);
  THCudaStorage_free(state, u);
  CHECK(alloc_frees == 1);

  CHECK(THCudaMalloc(state, &block, 4 * sizeof(float)) == 0);
  u = THCudaStorage_newWithDataAndAllocator(state, (float *)block, 4, &counting, &alloc_mallocs);
  THCudaStorage_set(state, u, 0, -1.0f);
  CHECK(THCudaStorage_get(state, u, 0) == -1.0f);
  THCudaStorage_free(state, u);
  CHECK(alloc_mallocs == 1 && alloc_frees == 2);

  EXPECT_ERROR(THCudaStorage_newWithAllocator(state, 8, NULL, NULL));
  EXPECT_ERROR(THCudaStorage_newWithMapping(state, "/tmp/x", 8, 0));
  CHECK(strstr(THGetLastError(), "cannot map") != NULL);
  THCudaStorage_free(state, s);
}

/* THCHalf.h, the caching allocator as a THCDeviceAllocator, and THCDescBuff. */
static void half_and_allocator(THCState *state) {
  float in[5] = {1.0f, -2.5f, 65504.0f, 1e-8f, 0.333333f}, back[5];
  void *f = NULL, *h = NULL, *f2 = NULL;
  size_t cached = 99, largest = 99;
  int k;
  THCDeviceAllocator *a = THCCachingAllocator_get();
  THCDescBuff d;
  THCudaTensor *t;
  CHECK(a == THCState_getDeviceAllocator(state) && a->realloc == NULL);
  CHECK(a->malloc(a->state, &f, sizeof in, THCState_getCurrentStream(state)) == 0 && f != NULL);
  CHECK(a->malloc(a->state, &h, 5 * 2, NULL) == 0 && a->malloc(a->state, &f2, sizeof in, NULL) == 0);
  t = THCudaTensor_newWithStorage1d(state, THCudaStorage_newWithData(state, (float *)f, 5), 0, 5, 1);
  for (k = 0; k < 5; k++) THCudaTensor_set1d(state, t, k, in[k]);
  THCFloat2Half(state, h, (float *)f, 5);
  THCHalf2Float(state, (float *)f2, h, 5);
  THCudaStorage_rawCopy(state, THCudaTensor_storage(state, t), (float *)f2);
  for (k = 0; k < 5; k++) back[k] = THCudaTensor_get1d(state, t, k);
  for (k = 0; k < 5; k++) CHECK(back[k] == THC_half2float(THC_float2half(in[k])));
  CHECK(back[1] == -2.5f && back[2] == 65504.0f && back[3] != in[3]);
  CHECK(THC_half2float(THC_float2half(1.5f)) == 1.5f);
  CHECK(THC_nativeHalfInstructions(state) == 0 || THC_nativeHalfInstructions(state) == 1);
  d = THCudaTensor_sizeDesc(state, t);
  CHECK(strcmp(d.str, "[5]") == 0);
  THCudaStorage_free(state, THCudaTensor_storage(state, t)); /* the +1 of newWithData */
  THCudaTensor_free(state, t); /* frees f through the storage */
  CHECK(a->free(a->state, h) == 0 && a->free(a->state, f2) == 0);
  CHECK(a->free(a->state, (void *)&cached) == 17); /* not a device block */
  CHECK(a->cacheInfo(a->state, 0, &cached, &largest) == 0 && cached >= 10 && largest >= 10);
  CHECK(a->emptyCache(a->state) == 0);
  CHECK(a->cacheInfo(a->state, 0, &cached, &largest) == 0 && cached == 0);
}

int main(void) {
  THCState *state;
  THFloatTensor *ha, *hb, *h;
  THCudaTensor *a, *b, *r, *col, *at;
  THCudaByteTensor *mask;
  THByteTensor *hmask;
  int64_t i, j;
  int bad;
  th_test_install_handlers();

  state = THCState_alloc();
  THClearLastError();
  if (THCState_getNumDevices(state) <= 0) {
    const char *req = getenv("TH_REQUIRE_DEVICE");
    printf("test_thc_e2e: no CUDA device (%s): skipped\n", THGetLastError());
    THCState_free(state);
    return req && strcmp(req, "1") == 0 ? 1 : 0;
  }
  THCudaInit(state);
  CHECK(THGetLastErrorCode() == TH_OK);

  ha = host_matrix(fa);
  hb = host_matrix(fb);
  a = THCudaTensor_newWithSize2d(state, R, C);
  b = THCudaTensor_newWithSize2d(state, R, C);
  r = THCudaTensor_new(state);
  THCudaTensor_copyFloat(state, a, ha);
  THCudaTensor_copyFloat(state, b, hb);
  CHECK(THCudaTensor_getDevice(state, a) == 0);

  /* r = a + 2 * b (r resized by the call) */
  THCudaTensor_cadd(state, r, a, 2.0f, b);
  CHECK(THCudaTensor_nDimension(state, r) == 2 && THCudaTensor_size(state, r, 1) == C);
  h = to_host(state, r);
  bad = 0;
  for (i = 0; i < R; i++)
    for (j = 0; j < C; j++) bad += host_at(h, i, j) != fa(i, j) + 2.0f * fb(i, j);
  CHECK(bad == 0);
  THFloatTensor_free(h);

  /* sums on the device: all elements, and along each dim, against loops here */
  {
    double want = 0, got_all;
    THCudaTensor *s = THCudaTensor_new(state);
    for (i = 0; i < R; i++)
      for (j = 0; j < C; j++) want += (double)(fa(i, j) + 2.0f * fb(i, j));
    got_all = THCudaTensor_sumall(state, r);
    CHECK(fabs(got_all - want) <= 1e-6 * fabs(want) + 1e-3);
    THCudaTensor_sum(state, s, r, 0, 0); /* column sums: C values */
    CHECK(THCudaTensor_nDimension(state, s) == 1 && THCudaTensor_size(state, s, 0) == C);
    h = to_host(state, s);
    bad = 0;
    for (j = 0; j < C; j++) {
      double col = 0;
      for (i = 0; i < R; i++) col += (double)(fa(i, j) + 2.0f * fb(i, j));
      bad += fabs(THFloatTensor_get1d(h, j) - col) > 1e-5 * fabs(col) + 1e-3;
    }
    CHECK(bad == 0);
    THFloatTensor_free(h);
    THCudaTensor_sum(state, s, r, 1, 1); /* row sums, keepdim: R x 1 */
    CHECK(THCudaTensor_nDimension(state, s) == 2 && THCudaTensor_size(state, s, 0) == R);
    {
      float mx = fa(0, 0) + 2.0f * fb(0, 0);
      for (i = 0; i < R; i++)
        for (j = 0; j < C; j++) mx = fa(i, j) + 2.0f * fb(i, j) > mx ? fa(i, j) + 2.0f * fb(i, j) : mx;
      CHECK(THCudaTensor_maxall(state, r) == mx);
    }
    THCudaTensor_free(state, s);
  }

  /* in place: a = a * 0.5 (output aliases the input) */
  THCudaTensor_mul(state, a, a, 0.5f);
  h = to_host(state, a);
  bad = 0;
  for (i = 0; i < R; i++)
    for (j = 0; j < C; j++) bad += host_at(h, i, j) != fa(i, j) * 0.5f;
  CHECK(bad == 0);
  THFloatTensor_free(h);

  /* broadcast: r = b + column (R x 1 expands along the columns) */
  col = THCudaTensor_newNarrow(state, b, 1, 3, 1);
  THCudaTensor_cadd(state, r, b, 1.0f, col);
  h = to_host(state, r);
  bad = 0;
  for (i = 0; i < R; i++)
    for (j = 0; j < C; j++) bad += host_at(h, i, j) != fb(i, j) + fb(i, 3);
  CHECK(bad == 0);
  THFloatTensor_free(h);

  /* strided: r = transpose(b) - 1, from a transposed device view */
  at = THCudaTensor_newTranspose(state, b, 0, 1);
  THCudaTensor_sub(state, r, at, 1.0f);
  CHECK(THCudaTensor_size(state, r, 0) == C && THCudaTensor_size(state, r, 1) == R);
  h = THFloatTensor_newWithSize2d(C, R);
  THFloatTensor_copyCuda(state, h, r);
  bad = 0;
  for (i = 0; i < C; i++)
    for (j = 0; j < R; j++) bad += THFloatTensor_get2d(h, i, j) != fb(j, i) - 1.0f;
  CHECK(bad == 0);
  THFloatTensor_free(h);

  /* comparisons into a Byte mask on the device */
  mask = THCudaByteTensor_new(state);
  THCudaTensor_gtValue(state, mask, b, 0.0f);
  hmask = THByteTensor_newWithSize2d(R, C);
  THByteTensor_copyCudaByte(state, hmask, mask);
  bad = 0;
  for (i = 0; i < R; i++)
    for (j = 0; j < C; j++) bad += THByteTensor_get2d(hmask, i, j) != (fb(i, j) > 0.0f);
  CHECK(bad == 0);

  /* float functions: r = exp(b / 4) within 2 ulp-ish of libm */
  THCudaTensor_div(state, r, b, 4.0f);
  THCudaTensor_exp(state, r, r);
  h = to_host(state, r);
  bad = 0;
  for (i = 0; i < R; i++)
    for (j = 0; j < C; j++) {
      double want = exp((double)(fb(i, j) / 4.0f));
      bad += fabs(host_at(h, i, j) - want) > 4e-7 * want;
    }
  CHECK(bad == 0);
  THFloatTensor_free(h);

  /* errors leave the output untouched: a host tensor mixed into a device call */
  THCudaTensor_fill(state, r, 7.0f);
  EXPECT_ERROR(THCudaTensor_cadd(state, r, a, 1.0f, (THCudaTensor *)ha));
  CHECK(strstr(THGetLastError(), "same device") != NULL);
  h = to_host(state, r);
  CHECK(THFloatTensor_get2d(h, 0, 0) == 7.0f && THFloatTensor_get2d(h, 4, 5) == 7.0f);
  THFloatTensor_free(h);

  THCudaTensor_free(state, at);
  THCudaTensor_free(state, col);
  THCudaTensor_free(state, r);
  THCudaTensor_free(state, b);
  THCudaTensor_free(state, a);
  THCudaByteTensor_free(state, mask);
  THByteTensor_free(hmask);
  THFloatTensor_free(ha);
  THFloatTensor_free(hb);
  raw_storages(state);
  half_and_allocator(state);
  THCudaShutdown(state);
  THCState_free(state);
  return TH_TEST_DONE();
}
