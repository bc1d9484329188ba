/* Convolutions (THTensorConv.h): small hand-computed cases for every mode (valid/full,
 * xcorr/conv, strides, Rev), TH's output rules (beta scaling, resize-and-zero), integer
 * wrap-around, 1-based maps, the pointer helpers, and errors that leave the output untouched. */
#include "th_test.h"

#include <stdint.h>

static THFloatTensor *mat(long r, long c, const float *v) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(r, c);
  for (long i = 0; i < r; i++)
    for (long j = 0; j < c; j++) THFloatTensor_set2d(t, i, j, v[i * c + j]);
  return t;
}

static int equals2d(THFloatTensor *t, long r, long c, const float *v) {
  if (THFloatTensor_nDimension(t) != 2 || THFloatTensor_size(t, 0) != r || THFloatTensor_size(t, 1) != c) return 0;
  for (long i = 0; i < r; i++)
    for (long j = 0; j < c; j++)
      if (THFloatTensor_get2d(t, i, j) != v[i * c + j]) return 0;
  return 1;
}

static void modes_2d(void) {
  const float in3[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float kd[4] = {1, 0, 0, -1};
  THFloatTensor *t = mat(3, 3, in3);
  THFloatTensor *k = mat(2, 2, kd);
  THFloatTensor *r = THFloatTensor_new();
  /* valid xcorr: in[y][x] - in[y+1][x+1] = -4 everywhere */
  const float m4[4] = {-4, -4, -4, -4}, p4[4] = {4, 4, 4, 4};
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 0, 1, t, k, 1, 1, "V", "X"));
  CHECK(equals2d(r, 2, 2, m4));
  /* valid conv flips the kernel: in[y+1][x+1] - in[y][x] = 4 */
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 0, 1, t, k, 1, 1, "V", "C"));
  CHECK(equals2d(r, 2, 2, p4));
  /* beta scales the existing output (same shape): 2*4 + 3*4 = 20 */
  const float twenty[4] = {20, 20, 20, 20};
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 2, 3, t, k, 1, 1, "Valid", "Conv"));
  CHECK(equals2d(r, 2, 2, twenty));

  /* full: conv [1 1] * [1 2] = [1 3 2]; xcorr uses the flipped kernel: [2 3 1] */
  const float ones2[2] = {1, 1}, k12[2] = {1, 2};
  THFloatTensor *a = mat(1, 2, ones2), *b = mat(1, 2, k12);
  const float fc[3] = {1, 3, 2}, fx[3] = {2, 3, 1};
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 1, 1, a, b, 1, 1, "F", "C"));
  CHECK(equals2d(r, 1, 3, fc)); /* element count changed: zeroed, not scaled */
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 0, 1, a, b, 1, 1, "F", "X"));
  CHECK(equals2d(r, 1, 3, fx));

  /* strides: valid [1..5] (x) [1 1], column stride 2 -> positions 0, 2 */
  const float five[5] = {1, 2, 3, 4, 5}, s2[2] = {3, 7};
  THFloatTensor *f = mat(1, 5, five);
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 0, 1, f, a, 1, 2, "V", "X"));
  CHECK(equals2d(r, 1, 2, s2));
  /* full with stride 2 scatters: [1 2] conv [1 1] -> [1 1 2 2] */
  const float one_two[2] = {1, 2}, fs[4] = {1, 1, 2, 2};
  THFloatTensor *c = mat(1, 2, one_two);
  EXPECT_OK(THFloatTensor_conv2Dmul(r, 0, 1, c, a, 1, 2, "F", "C"));
  CHECK(equals2d(r, 1, 4, fs));

  /* pointer helpers: Rev with stride 2: out[x] = 1*in[x] + 10*in[x+2] */
  float in5[5] = {1, 2, 3, 4, 5}, kr[2] = {1, 10}, out3[3] = {0, 0, 100};
  EXPECT_OK(THFloatTensor_validXCorr2DRevptr(out3, 1, in5, 1, 5, kr, 1, 2, 1, 2));
  CHECK(out3[0] == 31 && out3[1] == 42 && out3[2] == 153);
  float o2[2] = {0, 0};
  EXPECT_OK(THFloatTensor_validConv2Dptr(o2, 2, in5, 1, 5, kr, 1, 2, 1, 3)); /* flipped [10 1], cols 0, 3 */
  CHECK(o2[0] == 2 * (10 * 1 + 2) && o2[1] == 2 * (10 * 4 + 5));
  float o6[6] = {0};
  EXPECT_OK(THFloatTensor_conv2d(o6, 1, in5, 1, 5, kr, 1, 2, 1, 1, "F", "X")); /* flipped [10 1] scattered */
  CHECK(o6[0] == 10 && o6[1] == 21 && o6[4] == 54 && o6[5] == 5);
  CHECK(THFloatTensor_convsize(5, 2, 2, "V") == 2 && THFloatTensor_convsize(5, 2, 2, "F") == 10);

  THFloatTensor_free(t);
  THFloatTensor_free(k);
  THFloatTensor_free(r);
  THFloatTensor_free(a);
  THFloatTensor_free(b);
  THFloatTensor_free(c);
  THFloatTensor_free(f);
}

static void planes_and_maps(void) {
  /* conv2Dmv: 2 input planes 2x2 (all 1, all 2), 1x1 kernels (3, 5) for 1 output plane: 3 + 10 */
  THDoubleTensor *t = THDoubleTensor_newWithSize3d(2, 2, 2);
  for (long p = 0; p < 2; p++)
    for (long i = 0; i < 2; i++)
      for (long j = 0; j < 2; j++) THDoubleTensor_set3d(t, p, i, j, (double)(p + 1));
  THDoubleTensor *k = THDoubleTensor_newWithSize4d(1, 2, 1, 1);
  THDoubleTensor_set4d(k, 0, 0, 0, 0, 3);
  THDoubleTensor_set4d(k, 0, 1, 0, 0, 5);
  THDoubleTensor *r = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_conv2Dmv(r, 0, 1, t, k, 1, 1, "V", "X"));
  CHECK(THDoubleTensor_nDimension(r) == 3 && THDoubleTensor_size(r, 0) == 1 && THDoubleTensor_size(r, 2) == 2);
  CHECK(THDoubleTensor_get3d(r, 0, 1, 1) == 13);

  /* conv2Dger: r[k][i] = plane i times kernel k: kernels 1x1 (3) and (5) of a 3-D kernel */
  THDoubleTensor *k3 = THDoubleTensor_newWithSize3d(2, 1, 1);
  THDoubleTensor_set3d(k3, 0, 0, 0, 3);
  THDoubleTensor_set3d(k3, 1, 0, 0, 5);
  EXPECT_OK(THDoubleTensor_conv2Dger(r, 0, 1, t, k3, 1, 1, "V", "X"));
  CHECK(THDoubleTensor_nDimension(r) == 4 && THDoubleTensor_size(r, 0) == 2 && THDoubleTensor_size(r, 1) == 2);
  CHECK(THDoubleTensor_get4d(r, 1, 0, 0, 0) == 5 && THDoubleTensor_get4d(r, 0, 1, 1, 1) == 6);

  /* conv2Dmap: map rows are 1-based (from, to): output 1 gets input 2 * kernel 1 (=3) */
  THDoubleTensor *map = THDoubleTensor_newWithSize2d(1, 2);
  THDoubleTensor_set2d(map, 0, 0, 2);
  THDoubleTensor_set2d(map, 0, 1, 1);
  EXPECT_OK(THDoubleTensor_conv2Dmap(r, 0, 1, t, k3, map, 1, 1, "V", "X"));
  CHECK(THDoubleTensor_size(r, 0) == 2 && THDoubleTensor_get3d(r, 0, 0, 0) == 6 && THDoubleTensor_get3d(r, 1, 0, 0) == 0);
  THDoubleTensor_set2d(map, 0, 0, 0); /* 0 is out of range for a 1-based map */
  EXPECT_ERROR(THDoubleTensor_conv2Dmap(r, 0, 1, t, k3, map, 1, 1, "V", "X"));
  CHECK(THDoubleTensor_get3d(r, 0, 0, 0) == 6);

  /* conv3Dmul: a 2x2x2 volume of ones and a 2x2x2 kernel of ones: 8 */
  THDoubleTensor *v = THDoubleTensor_newWithSize3d(2, 2, 2);
  THDoubleTensor_fill(v, 1);
  EXPECT_OK(THDoubleTensor_conv3Dmul(r, 0, 1, v, v, 1, 1, 1, "V", "C"));
  CHECK(THDoubleTensor_nDimension(r) == 3 && THDoubleTensor_size(r, 0) == 1 && THDoubleTensor_get3d(r, 0, 0, 0) == 8);
  EXPECT_OK(THDoubleTensor_conv3Dmul(r, 0, 1, v, v, 1, 1, 1, "F", "X"));
  CHECK(THDoubleTensor_size(r, 0) == 3 && THDoubleTensor_get3d(r, 1, 1, 1) == 8 && THDoubleTensor_get3d(r, 0, 0, 0) == 1);

  THDoubleTensor_free(t);
  THDoubleTensor_free(k);
  THDoubleTensor_free(k3);
  THDoubleTensor_free(r);
  THDoubleTensor_free(map);
  THDoubleTensor_free(v);
}

static void integer_wrap(void) {
  /* Byte: 200 * 2 = 400 wraps to 144; alpha 255 acts as -1 modulo 256 */
  THByteTensor *t = THByteTensor_newWithSize2d(2, 2);
  THByteTensor_fill(t, 200);
  THByteTensor *k = THByteTensor_newWithSize2d(1, 1);
  THByteTensor_fill(k, 2);
  THByteTensor *r = THByteTensor_new();
  EXPECT_OK(THByteTensor_conv2Dmul(r, 0, 1, t, k, 1, 1, "V", "X"));
  CHECK(THByteTensor_get2d(r, 1, 1) == 144);
  EXPECT_OK(THByteTensor_conv2Dmul(r, 1, 255, t, k, 1, 1, "V", "X"));
  CHECK(THByteTensor_get2d(r, 0, 0) == 0); /* 144 - 144 */
  /* Char: 100 + 100 over a 2x1 kernel of ones = 200 -> -56 */
  THCharTensor *ct = THCharTensor_newWithSize2d(2, 1);
  THCharTensor_fill(ct, 100);
  THCharTensor *cr = THCharTensor_new();
  EXPECT_OK(THCharTensor_conv2Dmul(cr, 0, 1, ct, ct, 1, 1, "V", "X"));
  CHECK(THCharTensor_get2d(cr, 0, 0) == 32); /* 2 * 100 * 100 = 20000 = 32 mod 256 */
  THByteTensor_free(t);
  THByteTensor_free(k);
  THByteTensor_free(r);
  THCharTensor_free(ct);
  THCharTensor_free(cr);
}

static void errors(void) {
  THFloatTensor *t = THFloatTensor_newWithSize3d(2, 5, 5);
  THFloatTensor_fill(t, 1);
  THFloatTensor *k = THFloatTensor_newWithSize4d(3, 2, 2, 2);
  THFloatTensor_fill(k, 1);
  THFloatTensor *kbig = THFloatTensor_newWithSize4d(3, 2, 6, 2);
  THFloatTensor_fill(kbig, 1);
  THFloatTensor *r = THFloatTensor_newWithSize2d(2, 2);
  THFloatTensor_fill(r, 7);
  const float sevens[4] = {7, 7, 7, 7};
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, k, 0, 1, "V", "X"));
  CHECK(th_test_last_arg == 6);
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, k, 1, -2, "V", "X"));
  CHECK(th_test_last_arg == 7);
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, k, 1, 1, "Q", "X"));
  CHECK(th_test_last_arg == 8);
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, k, 1, 1, "V", "Y"));
  CHECK(th_test_last_arg == 9);
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, k, 1, 1, NULL, "X"));
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, kbig, 1, 1, "V", "X")); /* kernel larger than input */
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, k, k, 1, 1, "V", "X"));    /* 4-D input */
  CHECK(th_test_last_arg == 4);
  EXPECT_ERROR(THFloatTensor_conv2Dmv(r, 1, 1, t, NULL, 1, 1, "V", "X"));
  EXPECT_ERROR(THFloatTensor_conv2Dmv(NULL, 1, 1, t, k, 1, 1, "V", "X"));
  EXPECT_ERROR(THFloatTensor_conv2DRevger(r, 1, 1, t, t, 3, 1)); /* 5 - (5-1)*3 < 1 */
  CHECK(equals2d(r, 2, 2, sevens));
  float buf[4] = {7, 7, 7, 7}, in[4] = {1, 2, 3, 4};
  EXPECT_ERROR(THFloatTensor_validXCorr2Dptr(buf, 1, in, 2, 2, in, 3, 1, 1, 1)); /* kernel too big */
  EXPECT_ERROR(THFloatTensor_fullConv2Dptr(buf, 1, NULL, 2, 2, in, 1, 1, 1, 1));
  EXPECT_ERROR(THFloatTensor_conv2d(buf, 1, in, 2, 2, in, 1, 1, 1, 1, "V", "Z"));
  EXPECT_ERROR(THFloatTensor_validXCorr3Dptr(buf, 1, in, 1, 2, 2, in, 1, 1, 1, 0, 1, 1));
  CHECK(buf[0] == 7 && buf[1] == 7 && buf[2] == 7 && buf[3] == 7);
  EXPECT_ERROR(THFloatTensor_convsize(3, 1, 1, "X"));
  THFloatTensor_free(t);
  THFloatTensor_free(k);
  THFloatTensor_free(kbig);
  THFloatTensor_free(r);
}

int main(void) {
  th_test_install_handlers();
  modes_2d();
  planes_and_maps();
  integer_wrap();
  errors();
  return TH_TEST_DONE();
}
