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

/* ReLU as Threshold(0, 0), out of place and in place (output becomes a view of input). */
static void threshold(void) {
  const double xv[4] = {-1, 0.5, 0, 2};
  THDoubleTensor *x = vec(4, xv), *out = THDoubleTensor_new(), *g = vec(4, xv), *gin = THDoubleTensor_new();
  EXPECT_OK(THNN_(Threshold_updateOutput)(NULL, x, out, 0, 0, 0));
  CHECK(THDoubleTensor_get1d(out, 0) == 0 && THDoubleTensor_get1d(out, 1) == 0.5 && THDoubleTensor_get1d(out, 2) == 0 &&
        THDoubleTensor_get1d(out, 3) == 2);
  CHECK(THDoubleTensor_get1d(x, 0) == -1);
  /* gradient passes where input > threshold */
  EXPECT_OK(THNN_(Threshold_updateGradInput)(NULL, x, g, gin, 0, 0, 0));
  CHECK(THDoubleTensor_get1d(gin, 0) == 0 && THDoubleTensor_get1d(gin, 1) == 0.5 && THDoubleTensor_get1d(gin, 2) == 0 &&
        THDoubleTensor_get1d(gin, 3) == 2);
  EXPECT_OK(THNN_(Threshold_updateOutput)(NULL, x, out, 0, 0, 1));
  CHECK(THDoubleTensor_get1d(x, 0) == 0 && THDoubleTensor_data(out) == THDoubleTensor_data(x));
  THDoubleTensor_free(x);
  THDoubleTensor_free(out);
  THDoubleTensor_free(g);
  THDoubleTensor_free(gin);
}

/* LogSoftMax over the classes of a 2-D batch, then ClassNLL with 0-based targets. */
static void log_softmax_nll(void) {
  const double xv[6] = {0, 0, 0, 1, 2, 3};
  THDoubleTensor *x = mat(2, 3, xv), *logp = THDoubleTensor_new(), *loss = THDoubleTensor_new();
  THDoubleTensor *tw = THDoubleTensor_new(), *g = THDoubleTensor_new();
  EXPECT_OK(THNN_(LogSoftMax_updateOutput)(NULL, x, logp));
  CHECK_CLOSE(THDoubleTensor_get2d(logp, 0, 1), -log(3.0), 1e-15);
  double z = log(exp(1.0) + exp(2.0) + exp(3.0));
  CHECK_CLOSE(THDoubleTensor_get2d(logp, 1, 2), 3 - z, 1e-15);
  THLongTensor *y = THLongTensor_newWithSize1d(2);
  THLongTensor_set1d(y, 0, 0);
  THLongTensor_set1d(y, 1, 2);
  /* mean of -logp[i][y[i]] */
  EXPECT_OK(THNN_(ClassNLLCriterion_updateOutput)(NULL, logp, y, loss, 1, NULL, tw, -100));
  CHECK_CLOSE(THDoubleTensor_get1d(loss, 0), (log(3.0) + z - 3) / 2, 1e-15);
  CHECK(THDoubleTensor_get1d(tw, 0) == 2);
  EXPECT_OK(THNN_(ClassNLLCriterion_updateGradInput)(NULL, logp, y, g, 1, NULL, tw, -100));
  CHECK(THDoubleTensor_get2d(g, 0, 0) == -0.5 && THDoubleTensor_get2d(g, 0, 1) == 0 &&
        THDoubleTensor_get2d(g, 1, 2) == -0.5);
  /* ignore_index: the ignored row counts for nothing */
  EXPECT_OK(THNN_(ClassNLLCriterion_updateOutput)(NULL, logp, y, loss, 1, NULL, tw, 2));
  CHECK_CLOSE(THDoubleTensor_get1d(loss, 0), log(3.0), 1e-15);
  /* a target of 3 is out of range for 3 classes: an index error, the loss untouched */
  THLongTensor_set1d(y, 1, 3);
  EXPECT_ERROR(THNN_(ClassNLLCriterion_updateOutput)(NULL, logp, y, loss, 1, NULL, tw, -100));
  CHECK(THGetLastErrorCode() == TH_ERR_INDEX && strstr(THGetLastError(), "argument 3") != NULL);
  CHECK_CLOSE(THDoubleTensor_get1d(loss, 0), log(3.0), 1e-15);
  THLongTensor_free(y);
  THDoubleTensor *all[] = {x, logp, loss, tw, g};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) THDoubleTensor_free(all[i]);
}

/* 2x2 max pooling of one 4x4 plane: values, 0-based flat indices, the scattered gradient. */
static void max_pooling(void) {
  THDoubleTensor *x = THDoubleTensor_newWithSize3d(1, 4, 4);
  for (int i = 0; i < 16; i++) THDoubleTensor_set3d(x, 0, i / 4, i % 4, (i * 7) % 16);
  THDoubleTensor *out = THDoubleTensor_new(), *gin = THDoubleTensor_new();
  THLongTensor *idx = THLongTensor_new();
  EXPECT_OK(THNN_(SpatialMaxPooling_updateOutput)(NULL, x, out, idx, 2, 2, 2, 2, 0, 0, 0));
  CHECK(THDoubleTensor_nDimension(out) == 3 && THDoubleTensor_size(out, 1) == 2 && THDoubleTensor_size(out, 2) == 2);
  /* plane: 0 7 14 5 / 12 3 10 1 / 8 15 6 13 / 4 11 2 9 */
  CHECK(THDoubleTensor_get3d(out, 0, 0, 0) == 12 && THDoubleTensor_get3d(out, 0, 0, 1) == 14);
  CHECK(THDoubleTensor_get3d(out, 0, 1, 0) == 15 && THDoubleTensor_get3d(out, 0, 1, 1) == 13);
  CHECK(THLongTensor_get3d(idx, 0, 0, 0) == 4 && THLongTensor_get3d(idx, 0, 0, 1) == 2 &&
        THLongTensor_get3d(idx, 0, 1, 0) == 9 && THLongTensor_get3d(idx, 0, 1, 1) == 11);
  THDoubleTensor *g = THDoubleTensor_newWithSize3d(1, 2, 2);
  THDoubleTensor_fill(g, 1);
  EXPECT_OK(THNN_(SpatialMaxPooling_updateGradInput)(NULL, x, g, gin, idx, 2, 2, 2, 2, 0, 0, 0));
  CHECK(THDoubleTensor_sumall(gin) == 4 && THDoubleTensor_get3d(gin, 0, 1, 0) == 1 && THDoubleTensor_get3d(gin, 0, 0, 0) == 0);
  /* a 5x5 kernel does not fit a 4x4 plane: error, output untouched */
  EXPECT_ERROR(THNN_(SpatialMaxPooling_updateOutput)(NULL, x, out, idx, 5, 5, 1, 1, 0, 0, 0));
  CHECK(THDoubleTensor_size(out, 1) == 2 && THDoubleTensor_get3d(out, 0, 0, 0) == 12);
  THLongTensor_free(idx);
  THDoubleTensor *all[] = {x, out, gin, g};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) THDoubleTensor_free(all[i]);
}

int main(void) {
  th_test_install_handlers();
  linear();
  threshold();
  log_softmax_nll();
  max_pooling();
  return TH_TEST_DONE();
}
