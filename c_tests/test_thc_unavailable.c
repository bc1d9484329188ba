/* THC without a usable CUDA device: on a machine with no driver (libcuda missing) or a driver but
 * no GPU, every THC entry point must return cleanly (the table in thc_unavailable_cases.h) with
 * the code TH_ERR_NO_CUDA or TH_ERR_NO_DEVICE. test_thc_nodevice.c runs the same table against
 * a real driver. Skipped where a device exists (the GPU suite, scripts/test_gpu.sh, covers that
 * machine). */
#include "thc_unavailable_cases.h"

int main(void) {
  THCState *state;
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
  CHECK(thc_unavailable());

  thc_unavailable_cases(state);

  THCudaShutdown(state);
  THCState_free(state);
  return TH_TEST_DONE();
}
