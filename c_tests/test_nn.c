/* THNN from C99 through the header alone: hand-computed values for the layers of a small
 * network (Linear, and the layers the digits example uses), the THNN_(NAME) generic macro with a
 * NULL state, accumulated parameter gradients with `scale`, and errors that call the handler
 * once, name the argument and leave the outputs untouched. */
#include "th_test.h"

#define Real Double

static THDoubleTensor *vec(long n, const double *v) {
  THDoubleTensor *t = THDoubleTensor_newWithSize1d(n);
  for (long i = 0; i < n; i++) THDoubleTensor_set1d(t, i, v[i]);
  return t;
}

static THDoubleTensor *mat(long r, long c, const double *v) {
  THDoubleTensor *t = THDoubleTensor_newWithSize2d(r, c);
  for (long i = 0; i < r; i++)
    for (long j = 0; j < c; j++) THDoubleTensor_set2d(t, i, j, v[i * c + j]);
  return t;
}

static void linear(void) {
  const double xv[4] = {1, 2, 3, 4}, wv[6] = {1, 0, -1, 2, 1, 1}, bv[3] = {0.5, -1, 2};
  THDoubleTensor *x = mat(2, 2, xv), *w = mat(3, 2, wv), *b = vec(3, bv);
  THDoubleTensor *out = THDoubleTensor_new(), *gin = THDoubleTensor_new();
  /* out[i][o] = sum_k x[i][k] w[o][k] + b[o] */
  EXPECT_OK(THNN_(Linear_updateOutput)(NULL, x, out, w, b, NULL));
  CHECK(THDoubleTensor_nDimension(out) == 2 && THDoubleTensor_size(out, 0) == 2 && THDoubleTensor_size(out, 1) == 3);
  CHECK(THDoubleTensor_get2d(out, 0, 0) == 1.5 && THDoubleTensor_get2d(out, 0, 1) == 2 &&
        THDoubleTensor_get2d(out, 0, 2) == 5);
  CHECK(THDoubleTensor_get2d(out, 1, 0) == 3.5 && THDoubleTensor_get2d(out, 1, 1) == 4 &&
        THDoubleTensor_get2d(out, 1, 2) == 9);
  /* gradInput = gradOutput @ w; gradWeight += scale * gradOutput^T @ x; gradBias += scale * sums */
  const double gv[6] = {1, 0, 1, 0, 1, 0};
  THDoubleTensor *g = mat(2, 3, gv);
  EXPECT_OK(THNN_DoubleLinear_updateGradInput(NULL, x, g, gin, w));
  CHECK(THDoubleTensor_get2d(gin, 0, 0) == 2 && THDoubleTensor_get2d(gin, 0, 1) == 1);
  CHECK(THDoubleTensor_get2d(gin, 1, 0) == -1 && THDoubleTensor_get2d(gin, 1, 1) == 2);
  THDoubleTensor *gw = THDoubleTensor_newWithSize2d(3, 2), *gb = THDoubleTensor_newWithSize1d(3);
  THDoubleTensor_fill(gw, 1);
  THDoubleTensor_fill(gb, 1);
  EXPECT_OK(THNN_DoubleLinear_accGradParameters(NULL, x, g, gin, w, b, gw, gb, NULL, 2.0));
  CHECK(THDoubleTensor_get2d(gw, 0, 0) == 3 && THDoubleTensor_get2d(gw, 0, 1) == 5);
  CHECK(THDoubleTensor_get2d(gw, 1, 0) == 7 && THDoubleTensor_get2d(gw, 1, 1) == 9);
  CHECK(THDoubleTensor_get2d(gw, 2, 0) == 3 && THDoubleTensor_get2d(gw, 2, 1) == 5);
  CHECK(THDoubleTensor_get1d(gb, 0) == 3 && THDoubleTensor_get1d(gb, 1) == 3 && THDoubleTensor_get1d(gb, 2) == 3);

  /* errors: a 3-feature input for a 2-feature weight; a gradWeight of the wrong size */
  THDoubleTensor *bad = THDoubleTensor_newWithSize2d(2, 3);
  THDoubleTensor_fill(bad, 0);
  EXPECT_ERROR(THNN_DoubleLinear_updateOutput(NULL, bad, out, w, b, NULL));
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE && strstr(THGetLastError(), "THNN_DoubleLinear_updateOutput") &&
        strstr(THGetLastError(), "argument 2 (input)"));
  CHECK(th_test_last_arg == 2);
  CHECK(THDoubleTensor_get2d(out, 1, 2) == 9 && THDoubleTensor_size(out, 1) == 3);
  THDoubleTensor *gw_bad = THDoubleTensor_newWithSize1d(5);
  THDoubleTensor_fill(gw_bad, 7);
  EXPECT_ERROR(THNN_DoubleLinear_accGradParameters(NULL, x, g, gin, w, b, gw_bad, gb, NULL, 1.0));
  CHECK(strstr(THGetLastError(), "argument 7 (gradWeight)") != NULL);
  CHECK(THDoubleTensor_get1d(gw_bad, 4) == 7 && THDoubleTensor_get1d(gb, 0) == 3);
  EXPECT_ERROR(THNN_DoubleLinear_updateOutput(NULL, NULL, out, w, b, NULL));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);

  THDoubleTensor *all[] = {x, w, b, out, gin, g, gw, gb, bad, gw_bad};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) THDoubleTensor_free(all[i]);
}

int main(void) {
  th_test_install_handlers();
  linear();
  return TH_TEST_DONE();
}
