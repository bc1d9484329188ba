/* THC without a usable CUDA device: on a machine with no driver (libcuda missing) or a driver but
 * no GPU, every THC entry point must return cleanly: its sentinel (NULL, 0, -1 or an error status),
 * exactly one handler call, the code TH_ERR_NO_CUDA or TH_ERR_NO_DEVICE and a message that says
 * why; host tensors handed in stay untouched, and nothing aborts. Skipped where a device exists
 * (the GPU suite, scripts/test_gpu.sh, covers that machine). */
#include "th_test.h"

#include <stdint.h>

static int unavailable(void) {
  int c = THGetLastErrorCode();
  return c == TH_ERR_NO_CUDA || c == TH_ERR_NO_DEVICE;
}

#define EXPECT_UNAVAILABLE(call) \
  do {                           \
    EXPECT_ERROR(call);          \
    CHECK(unavailable());        \
  } while (0)

int main(void) {
  THCState *state;
  THFloatTensor *host;
  THCudaTensor *none = NULL;
  void *p = (void *)&p;
  size_t free_b = 1, total_b = 1, largest = 1;
  int n;
  th_test_install_handlers();

  state = THCState_alloc();
  CHECK(state != NULL);
  THClearLastError();
  n = THCState_getNumDevices(state);
  if (n > 0) {
    printf("test_thc_unavailable: %d CUDA device(s) present: skipped\n", n);
    THCState_free(state);
    return 0;
  }
  CHECK(unavailable());
  CHECK(strlen(THGetLastError()) > 20);

  /* General API. */
  EXPECT_UNAVAILABLE(THCudaInit(state));
  EXPECT_UNAVAILABLE(CHECK(THCState_getNumDevices(state) == 0));
  EXPECT_UNAVAILABLE(CHECK(THCudaGetDevice(state) == -1));
  EXPECT_UNAVAILABLE(THCudaSetDevice(state, 0));
  EXPECT_UNAVAILABLE(THCudaSynchronize(state));
  EXPECT_UNAVAILABLE(CHECK(THCState_getCurrentStream(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCState_getStream(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCStream_new(0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCStream_defaultStream(0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaMalloc(state, &p, 1024) != 0));
  CHECK(p == (void *)&p); /* output untouched */
  EXPECT_UNAVAILABLE(CHECK(THCudaMemGetInfo(state, &free_b, &total_b) != 0));
  CHECK(free_b == 1 && total_b == 1);
  EXPECT_UNAVAILABLE(CHECK(THCudaMemGetInfoCached(state, &free_b, &total_b, &largest) != 0));
  EXPECT_UNAVAILABLE(CHECK(THCudaHostAlloc(state, 64) == NULL));
  EXPECT_UNAVAILABLE(THCudaEmptyCache(state));

  /* Storages and tensors of every family come from a device: none can be made. */
  EXPECT_UNAVAILABLE(CHECK(THCudaStorage_new(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaStorage_newWithSize(state, 10) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaDoubleStorage_newWithSize2(state, 1.0, 2.0) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaByteStorage_newWithSize(state, 3) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaTensor_new(state) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaTensor_newWithSize1d(state, 4) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaLongTensor_newWithSize2d(state, 2, 3) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaHalfTensor_newWithSize3d(state, 2, 3, 4) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaBFloat16Tensor_newWithStorage1d(state, NULL, 0, 5, 1) == NULL));
  EXPECT_UNAVAILABLE(CHECK(THCudaBoolTensor_newWithSize4d(state, 1, 2, 3, 4) == NULL));

  /* NULL handles are argument errors before any device is needed. */
  EXPECT_ERROR(CHECK(THCudaTensor_nDimension(state, none) == 0));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);

  /* Host tensors passed to host<->device copies are left as they were. */
  host = THFloatTensor_newWithSize1d(3);
  THFloatTensor_fill(host, 7.0f);
  EXPECT_ERROR(THFloatTensor_copyCuda(state, host, none));
  CHECK(THFloatTensor_get1d(host, 2) == 7.0f);
  THFloatTensor_free(host);

  THCudaShutdown(state);
  THCState_free(state);
  return TH_TEST_DONE();
}
