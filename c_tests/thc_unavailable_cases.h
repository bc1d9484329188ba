/* The THC entry points that need a device, and what each must do when there is none: its
 * sentinel (NULL, 0, -1 or an error status), exactly one handler call, an error code saying why
 * and a message; outputs and host tensors handed in stay untouched; nothing aborts.
 *
 * Shared by test_thc_unavailable.c (whatever this machine has: no driver or no GPU) and
 * test_thc_nodevice.c (a real libcuda, no GPU: exactly TH_ERR_NO_DEVICE, the CUresult named).
 * Set thc_expect_code / thc_expect_text before thc_unavailable_cases(). */
#ifndef THC_UNAVAILABLE_CASES_H
#define THC_UNAVAILABLE_CASES_H

#include "th_test.h"

/* 0: either TH_ERR_NO_CUDA or TH_ERR_NO_DEVICE; otherwise exactly this code. */
static int thc_expect_code = 0;
/* NULL, or a text every "unavailable" message must contain. */
static const char *thc_expect_text = NULL;

static int thc_unavailable(void) {
  int c = THGetLastErrorCode();
  const char *m = THGetLastError();
  int code_ok = thc_expect_code ? c == thc_expect_code : (c == TH_ERR_NO_CUDA || c == TH_ERR_NO_DEVICE);
  if (m == NULL || strlen(m) < 20) return 0;
  if (thc_expect_text != NULL && strstr(m, thc_expect_text) == NULL) {
    fprintf(stderr, "message lacks \"%s\": %s\n", thc_expect_text, m);
    return 0;
  }
  return code_ok;
}

#define EXPECT_UNAVAILABLE(call) \
  do {                           \
    EXPECT_ERROR(call);          \
    CHECK(thc_unavailable());    \
  } while (0)

static void thc_unavailable_cases(THCState *state) {
  THFloatTensor *host;
  THFloatStorage *hs;
  THCudaTensor *none = NULL;
  THCudaStorage *no_storage = NULL;
  THAllocator *pinned;
  void *p = (void *)&p;
  size_t free_b = 1, total_b = 1, largest = 1, stat = 1;

  /* General API. */
  EXPECT_UNAVAILABLE(THCudaInit(state));
  EXPECT_UNAVAILABLE(CHECK(THCState_getNumDevices(state) == 0));
  EXPECT_UNAVAILABLE(CHECK(THCudaGetDevice(state) == -1));
  EXPECT_UNAVAILABLE(THCudaSetDevice(state, 0));
  EXPECT_UNAVAILABLE(THCudaSynchronize(state));
  EXPECT_UNAVAILABLE(CHECK(THCState_getCurrentStream(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCState_getCurrentStreamOnDevice(state, 0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCState_getStream(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCStream_new(0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCStream_newWithPriority(1, -1) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCStream_defaultStream(0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaMalloc(state, &p, 1024) != 0));
  CHECK(p == (void *)&p); /* output untouched */
  EXPECT_UNAVAILABLE(CHECK(THCudaMemGetInfo(state, &free_b, &total_b) != 0));
  CHECK(free_b == 1 && total_b == 1);
  EXPECT_UNAVAILABLE(CHECK(THCudaMemGetInfoCached(state, &free_b, &total_b, &largest) != 0));
  CHECK(free_b == 1 && total_b == 1 && largest == 1);
  EXPECT_UNAVAILABLE(THCudaMemoryStats(state, 0, &stat, NULL, NULL, NULL));
  CHECK(stat == 1);
  EXPECT_UNAVAILABLE(CHECK(THCudaHostAlloc(state, 64) == NULL));
  EXPECT_UNAVAILABLE(THCudaEmptyCache(state));
  EXPECT_UNAVAILABLE(THCCachingHostAllocator_emptyCache());

  /* The pinned-host THAllocator can be had, but a host storage on it cannot be made. */
  pinned = THCState_getCudaHostAllocator(state);
  CHECK(pinned != NULL);
  EXPECT_UNAVAILABLE(CHECK(THFloatStorage_newWithAllocator(16, pinned, NULL) == NULL));

  /* Storages and tensors of every family come from a device: none can be made. */
  EXPECT_UNAVAILABLE(CHECK(THCudaStorage_new(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaStorage_newWithSize(state, 10) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaDoubleStorage_newWithSize2(state, 1.0, 2.0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaByteStorage_newWithSize(state, 3) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaTensor_new(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaTensor_newWithSize1d(state, 4) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaTensor_newWithSize2d(state, 4, 5) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaLongTensor_newWithSize2d(state, 2, 3) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaHalfTensor_newWithSize3d(state, 2, 3, 4) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaBFloat16Tensor_newWithStorage1d(state, NULL, 0, 5, 1) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaBoolTensor_newWithSize4d(state, 1, 2, 3, 4) == NULL));

  /* Without a device no device handle exists, so calls on one get NULL: an argument error
   * found before any device is needed. */
  EXPECT_ERROR(CHECK(THCudaTensor_nDimension(state, none) == 0));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THCudaTensor_fill(state, none, 1.0f));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THCudaTensor_cadd(state, none, none, 2.0f, none));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THCudaTensor_mul(state, none, none, 2.0f));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THCudaTensor_exp(state, none, none));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THCudaTensor_copy(state, none, none));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);

  /* Host tensors and storages passed to host<->device copies are left as they were. */
  host = THFloatTensor_newWithSize1d(3);
  THFloatTensor_fill(host, 7.0f);
  EXPECT_ERROR(THFloatTensor_copyCuda(state, host, none));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THCudaTensor_copyFloat(state, none, host));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  CHECK(THFloatTensor_get1d(host, 2) == 7.0f);
  hs = THFloatTensor_storage(host);
  EXPECT_ERROR(THFloatStorage_copyCuda(state, hs, no_storage));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  CHECK(THFloatTensor_get1d(host, 0) == 7.0f);
  THFloatTensor_free(host);
}

#endif
