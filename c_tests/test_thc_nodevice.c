/* THC against a real NVIDIA driver library on a machine without a GPU: Debian's libcuda1
 * (scripts/libcuda_nodevice.sh) on LD_LIBRARY_PATH, no device node, no kernel module. There
 * cuInit returns CUDA_ERROR_NO_DEVICE (100), so every entry point of the shared table
 * (thc_unavailable_cases.h) must fail with exactly TH_ERR_NO_DEVICE and a message naming that
 * CUresult and the call that returned it; the outcome is the same on every thread and every
 * call; nothing aborts (valgrind: no errors, no definite leaks).
 *
 * Without libcuda it prints "skipped" (TH_REQUIRE_LIBCUDA=1 makes that a failure); with a
 * device it is skipped too (scripts/test_gpu.sh covers that machine). */
#include "thc_unavailable_cases.h"

#include <pthread.h>
#include <stdlib.h>

#define DRIVER_TEXT "cuInit: cuda error CUDA_ERROR_NO_DEVICE (100)"

/* Another thread gets the same answer (the current device and errors are per thread, the
 * discovery outcome per process). */
static void *other_thread(void *arg) {
  int *ok = (int *)arg;
  THCudaTensor *t;
  th_test_install_handlers();
  THClearLastError();
  t = THCudaTensor_newWithSize1d(NULL, 8);
  *ok = t == NULL && THGetLastErrorCode() == TH_ERR_NO_DEVICE && strstr(THGetLastError(), DRIVER_TEXT) != NULL &&
        th_test_handler_calls > 0;
  return NULL;
}

int main(void) {
  THCState *state;
  int n, code, thread_ok = 0;
  char first[512];
  pthread_t th;
  const char *require = getenv("TH_REQUIRE_LIBCUDA");
  th_test_install_handlers();

  state = THCState_alloc();
  CHECK(state != NULL);
  THClearLastError();
  n = THCState_getNumDevices(state);
  code = THGetLastErrorCode();
  if (n > 0) {
    printf("test_thc_nodevice: %d CUDA device(s) present: skipped\n", n);
    THCState_free(state);
    return 0;
  }
  if (code == TH_ERR_NO_CUDA) {
    printf("test_thc_nodevice: no libcuda on the library path: skipped (%s)\n", THGetLastError());
    THCState_free(state);
    if (require != NULL && strcmp(require, "1") == 0) {
      fprintf(stderr, "test_thc_nodevice: TH_REQUIRE_LIBCUDA=1 but libcuda could not be loaded\n");
      return 1;
    }
    return 0;
  }
  printf("test_thc_nodevice: the driver says: %s\n", THGetLastError());

  /* What the real driver returned, mapped to TH's code, with the CUresult's name and number. */
  thc_expect_code = TH_ERR_NO_DEVICE;
  thc_expect_text = DRIVER_TEXT;
  CHECK(n == 0);
  CHECK(thc_unavailable());

  /* The outcome is kept: a second init reports the very same reason. */
  EXPECT_UNAVAILABLE(THCudaInit(state));
  strncpy(first, THGetLastError(), sizeof first - 1);
  first[sizeof first - 1] = '\0';
  EXPECT_UNAVAILABLE(THCudaInit(state));
  CHECK(strcmp(first, THGetLastError()) == 0);
  CHECK(strstr(first, "THCudaInit") != NULL);

  thc_unavailable_cases(state);

  CHECK(pthread_create(&th, NULL, other_thread, &thread_ok) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(thread_ok);

  THCudaShutdown(state);
  THCState_free(state);
  return TH_TEST_DONE();
}
