/* THCUNN from C on a device (a GPU, or the CPU emulator with TH_CUDA_EMULATOR=1 in a library built
 * with the cuda-emulator feature): the elementwise layers on Cuda, CudaDouble and CudaHalf device
 * tensors against the host THNN layers on the same values, in place and not, LogSoftMax and a
 * criterion, and a refused call that leaves its output alone. Skipped (exit 0) where no device exists, unless
 * TH_REQUIRE_DEVICE=1. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>

#define N 301

static double value(int64_t i) { return (double)((i * 37) % 101) / 16.0 - 3.0; }

/* The device tensor copied back to a fresh host Double tensor (through its own dtype). */
static THFloatTensor *float_back(THCState *state, THCudaTensor *d) {
  THFloatTensor *h = THFloatTensor_newWithSize1d(THCudaTensor_nElement(state, d));
  THFloatTensor_copyCuda(state, h, d);
  return h;
}

/* Cuda and CudaHalf Threshold and ELU forward/backward against THNN_Float. */
static void float_and_half(THCState *state) {
  THFloatTensor *hx = THFloatTensor_newWithSize1d(N), *hg = THFloatTensor_newWithSize1d(N);
  THFloatTensor *hy = THFloatTensor_new(), *hgi = THFloatTensor_new(), *back;
  THCudaTensor *x = THCudaTensor_newWithSize1d(state, N), *g = THCudaTensor_newWithSize1d(state, N);
  THCudaTensor *y = THCudaTensor_new(state), *gi = THCudaTensor_new(state);
  THCudaHalfTensor *xh = THCudaHalfTensor_new(state), *yh = THCudaHalfTensor_new(state);
  THCudaTensor *yhf = THCudaTensor_new(state);
  int64_t i;
  int bad = 0;
  for (i = 0; i < N; i++) {
    THFloatTensor_set1d(hx, i, (float)value(i));
    THFloatTensor_set1d(hg, i, (float)value(i + 5));
  }
  THCudaTensor_copyFloat(state, x, hx);
  THCudaTensor_copyFloat(state, g, hg);

  THNN_FloatThreshold_updateOutput(NULL, hx, hy, 0.25, -0.5, false);
  THNN_CudaThreshold_updateOutput(state, x, y, 0.25f, -0.5f, false);
  THNN_FloatThreshold_updateGradInput(NULL, hx, hg, hgi, 0.25, -0.5, false);
  THNN_CudaThreshold_updateGradInput(state, x, g, gi, 0.25f, -0.5f, false);
  CHECK(THGetLastErrorCode() == TH_OK);
  back = float_back(state, y);
  for (i = 0; i < N; i++) bad += THFloatTensor_get1d(back, i) != THFloatTensor_get1d(hy, i);
  THFloatTensor_free(back);
  back = float_back(state, gi);
  for (i = 0; i < N; i++) bad += THFloatTensor_get1d(back, i) != THFloatTensor_get1d(hgi, i);
  THFloatTensor_free(back);
  CHECK(bad == 0);

  /* ELU in place: x is overwritten and y becomes a view of it */
  THNN_FloatELU_updateOutput(NULL, hx, hy, 0.75, true);
  THNN_CudaELU_updateOutput(state, x, y, 0.75f, true);
  CHECK(THCudaTensor_data(state, y) == THCudaTensor_data(state, x));
  back = float_back(state, x);
  for (i = 0; i < N; i++) bad += THFloatTensor_get1d(back, i) != THFloatTensor_get1d(hx, i);
  THFloatTensor_free(back);
  CHECK(bad == 0);

  /* Half: the inputs are exact in half (multiples of 1/16 below 4), Sigmoid computed in f32
   * and rounded once, so it equals the Float layer's result rounded to half */
  THCudaHalfTensor_resize1d(state, xh, N);
  for (i = 0; i < N; i++) THFloatTensor_set1d(hx, i, (float)value(i));
  THCudaTensor_copyFloat(state, x, hx);
  THCudaHalfTensor_copyCudaFloat(state, xh, x);
  THNN_CudaHalfSigmoid_updateOutput(state, xh, yh);
  THNN_FloatSigmoid_updateOutput(NULL, hx, hy);
  THCudaTensor_resize1d(state, yhf, N);
  THCudaTensor_copyCudaHalf(state, yhf, yh);
  CHECK(THGetLastErrorCode() == TH_OK);
  back = float_back(state, yhf);
  for (i = 0; i < N; i++) {
    float want = THFloatTensor_get1d(hy, i);
    bad += fabs((double)THFloatTensor_get1d(back, i) - want) > fabs(want) / 1024.0;
  }
  THFloatTensor_free(back);
  CHECK(bad == 0);

  /* a refused call leaves its output alone: gradOutput of another element count */
  THCudaTensor_fill(state, gi, 7.0f);
  THCudaTensor_resize1d(state, g, N - 1);
  EXPECT_ERROR(THNN_CudaThreshold_updateGradInput(state, x, g, gi, 0.25f, -0.5f, false));
  CHECK(strstr(THGetLastError(), "THNN_CudaThreshold_updateGradInput") != NULL);
  back = float_back(state, gi);
  CHECK(THFloatTensor_get1d(back, 0) == 7.0f && THFloatTensor_get1d(back, N - 1) == 7.0f);
  THFloatTensor_free(back);

  THFloatTensor_free(hx);
  THFloatTensor_free(hg);
  THFloatTensor_free(hy);
  THFloatTensor_free(hgi);
  THCudaTensor_free(state, x);
  THCudaTensor_free(state, g);
  THCudaTensor_free(state, y);
  THCudaTensor_free(state, gi);
  THCudaTensor_free(state, yhf);
  THCudaHalfTensor_free(state, xh);
  THCudaHalfTensor_free(state, yh);
}

/* CudaDouble SoftPlus backward against THNN_Double. */
static void double_softplus(THCState *state) {
  THDoubleTensor *hx = THDoubleTensor_newWithSize1d(N), *hg = THDoubleTensor_newWithSize1d(N);
  THDoubleTensor *hy = THDoubleTensor_new(), *hgi = THDoubleTensor_new(), *back = THDoubleTensor_newWithSize1d(N);
  THCudaDoubleTensor *x = THCudaDoubleTensor_newWithSize1d(state, N), *g = THCudaDoubleTensor_newWithSize1d(state, N);
  THCudaDoubleTensor *y = THCudaDoubleTensor_new(state), *gi = THCudaDoubleTensor_new(state);
  int64_t i;
  int bad = 0;
  THClearLastError();
  for (i = 0; i < N; i++) {
    THDoubleTensor_set1d(hx, i, value(i));
    THDoubleTensor_set1d(hg, i, value(i + 9));
  }
  THCudaDoubleTensor_copyDouble(state, x, hx);
  THCudaDoubleTensor_copyDouble(state, g, hg);
  THNN_DoubleSoftPlus_updateOutput(NULL, hx, hy, 1.5, 2.0);
  THNN_DoubleSoftPlus_updateGradInput(NULL, hx, hg, hgi, hy, 1.5, 2.0);
  THNN_CudaDoubleSoftPlus_updateOutput(state, x, y, 1.5, 2.0);
  THNN_CudaDoubleSoftPlus_updateGradInput(state, x, g, gi, y, 1.5, 2.0);
  CHECK(THGetLastErrorCode() == TH_OK);
  THDoubleTensor_copyCudaDouble(state, back, gi);
  for (i = 0; i < N; i++) {
    double want = THDoubleTensor_get1d(hgi, i);
    bad += fabs(THDoubleTensor_get1d(back, i) - want) > 1e-15 * (1.0 + fabs(want));
  }
  CHECK(bad == 0);
  THDoubleTensor_free(hx);
  THDoubleTensor_free(hg);
  THDoubleTensor_free(hy);
  THDoubleTensor_free(hgi);
  THDoubleTensor_free(back);
  THCudaDoubleTensor_free(state, x);
  THCudaDoubleTensor_free(state, g);
  THCudaDoubleTensor_free(state, y);
  THCudaDoubleTensor_free(state, gi);
}

/* LogSoftMax over the rows of a 7 x 43 Cuda tensor and MSECriterion against THNN_Float. */
static void softmax_and_loss(THCState *state) {
  THFloatTensor *hx = THFloatTensor_newWithSize2d(7, 43), *ht = THFloatTensor_newWithSize2d(7, 43);
  THFloatTensor *hy = THFloatTensor_new(), *hl = THFloatTensor_new(), *back = THFloatTensor_newWithSize2d(7, 43);
  THFloatTensor *loss = THFloatTensor_newWithSize1d(1);
  THCudaTensor *x = THCudaTensor_newWithSize2d(state, 7, 43), *t = THCudaTensor_newWithSize2d(state, 7, 43);
  THCudaTensor *y = THCudaTensor_new(state), *l = THCudaTensor_new(state);
  int64_t i, j;
  int bad = 0;
  THClearLastError();
  for (i = 0; i < 7; i++)
    for (j = 0; j < 43; j++) {
      THFloatTensor_set2d(hx, i, j, (float)value(i * 43 + j));
      THFloatTensor_set2d(ht, i, j, (float)value(i * 43 + j + 11));
    }
  THCudaTensor_copyFloat(state, x, hx);
  THCudaTensor_copyFloat(state, t, ht);
  THNN_FloatLogSoftMax_updateOutput(NULL, hx, hy);
  THNN_CudaLogSoftMax_updateOutput(state, x, y);
  THNN_FloatMSECriterion_updateOutput(NULL, hx, ht, hl, true);
  THNN_CudaMSECriterion_updateOutput(state, x, t, l, true);
  if (THGetLastErrorCode() != TH_OK) printf("error: %s\n", THGetLastError());
  CHECK(THGetLastErrorCode() == TH_OK);
  THFloatTensor_copyCuda(state, back, y);
  for (i = 0; i < 7; i++)
    for (j = 0; j < 43; j++) {
      double want = THFloatTensor_get2d(hy, i, j);
      bad += fabs(THFloatTensor_get2d(back, i, j) - want) > 1e-5 * (1.0 + fabs(want));
    }
  CHECK(bad == 0);
  CHECK(THCudaTensor_nElement(state, l) == 1);
  THFloatTensor_copyCuda(state, loss, l);
  CHECK_CLOSE(THFloatTensor_get1d(loss, 0), THFloatTensor_get1d(hl, 0), 1e-6 * fabs(THFloatTensor_get1d(hl, 0)));
  THFloatTensor_free(hx);
  THFloatTensor_free(ht);
  THFloatTensor_free(hy);
  THFloatTensor_free(hl);
  THFloatTensor_free(back);
  THFloatTensor_free(loss);
  THCudaTensor_free(state, x);
  THCudaTensor_free(state, t);
  THCudaTensor_free(state, y);
  THCudaTensor_free(state, l);
}

/* One LSTMFused step on CudaDouble (2 rows of 3 units, bias2 only) against THNN_Double: hy, cy
   and the activated gates written over the input. */
static void double_lstm(THCState *state) {
  THDoubleTensor *hg = THDoubleTensor_newWithSize2d(2, 12), *hh = THDoubleTensor_newWithSize2d(2, 12);
  THDoubleTensor *hb = THDoubleTensor_newWithSize1d(12), *hc = THDoubleTensor_newWithSize2d(2, 3);
  THDoubleTensor *hy = THDoubleTensor_new(), *hcy = THDoubleTensor_new();
  THCudaDoubleTensor *g = THCudaDoubleTensor_newWithSize2d(state, 2, 12), *h = THCudaDoubleTensor_newWithSize2d(state, 2, 12);
  THCudaDoubleTensor *b = THCudaDoubleTensor_newWithSize1d(state, 12), *c = THCudaDoubleTensor_newWithSize2d(state, 2, 3);
  THCudaDoubleTensor *y = THCudaDoubleTensor_new(state), *cy = THCudaDoubleTensor_new(state);
  THDoubleTensor *want[3], *got[3];
  int64_t i, k;
  THClearLastError();
  for (i = 0; i < 24; i++) {
    THDoubleTensor_set2d(hg, i / 12, i % 12, value(i));
    THDoubleTensor_set2d(hh, i / 12, i % 12, value(i + 5));
  }
  for (i = 0; i < 12; i++) THDoubleTensor_set1d(hb, i, value(i + 9) / 4.0);
  for (i = 0; i < 6; i++) THDoubleTensor_set2d(hc, i / 3, i % 3, value(i + 2));
  THCudaDoubleTensor_copyDouble(state, g, hg);
  THCudaDoubleTensor_copyDouble(state, h, hh);
  THCudaDoubleTensor_copyDouble(state, b, hb);
  THCudaDoubleTensor_copyDouble(state, c, hc);
  THNN_DoubleLSTMFused_updateOutput(NULL, hg, hh, NULL, hb, hc, hy, hcy);
  THNN_CudaDoubleLSTMFused_updateOutput(state, g, h, NULL, b, c, y, cy);
  if (THGetLastErrorCode() != TH_OK) printf("error: %s\n", THGetLastError());
  CHECK(THGetLastErrorCode() == TH_OK);
  want[0] = hy, want[1] = hcy, want[2] = hg;
  got[0] = THDoubleTensor_new(), got[1] = THDoubleTensor_new(), got[2] = THDoubleTensor_new();
  THDoubleTensor_resize2d(got[0], 2, 3);
  THDoubleTensor_resize2d(got[1], 2, 3);
  THDoubleTensor_resize2d(got[2], 2, 12);
  THDoubleTensor_copyCudaDouble(state, got[0], y);
  THDoubleTensor_copyCudaDouble(state, got[1], cy);
  THDoubleTensor_copyCudaDouble(state, got[2], g);
  for (k = 0; k < 3; k++) {
    int bad = 0;
    double *a = THDoubleTensor_data(got[k]), *w = THDoubleTensor_data(want[k]);
    for (i = 0; i < THDoubleTensor_nElement(want[k]); i++) bad += fabs(a[i] - w[i]) > 1e-14 * (1.0 + fabs(w[i]));
    CHECK(bad == 0);
    THDoubleTensor_free(got[k]);
  }
  THDoubleTensor_free(hg);
  THDoubleTensor_free(hh);
  THDoubleTensor_free(hb);
  THDoubleTensor_free(hc);
  THDoubleTensor_free(hy);
  THDoubleTensor_free(hcy);
  THCudaDoubleTensor_free(state, g);
  THCudaDoubleTensor_free(state, h);
  THCudaDoubleTensor_free(state, b);
  THCudaDoubleTensor_free(state, c);
  THCudaDoubleTensor_free(state, y);
  THCudaDoubleTensor_free(state, cy);
}

int main(void) {
  THCState *state;
  th_test_install_handlers();
  state = THCState_alloc();
  THClearLastError();
  if (THCState_getNumDevices(state) <= 0) {
    const char *req = getenv("TH_REQUIRE_DEVICE");
    printf("test_thc_nn: no CUDA device (%s): skipped\n", THGetLastError());
    THCState_free(state);
    return req && strcmp(req, "1") == 0 ? 1 : 0;
  }
  THCudaInit(state);
  CHECK(THGetLastErrorCode() == TH_OK);
  float_and_half(state);
  double_softplus(state);
  softmax_and_loss(state);
  double_lstm(state);
  THCudaShutdown(state);
  THCState_free(state);
  return TH_TEST_DONE();
}
