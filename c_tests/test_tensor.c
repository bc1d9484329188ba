/* The tensor API (generic/THTensor.h) for every dtype: creation, views, in-place views, resize,
 * set/setStorage, predicates, element access, desc, refcounts. The body is written once in TH's
 * generic style (generic/tensor_body.h) and included once per dtype. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Per-dtype names for the static functions of the generic body. */
#define TB(name) TH_CONCAT_4(tb_, Real, _, name)

/* Half bits for a small non-negative integer, computed by hand (exact: k < 2048). */
static THHalf mk_half(int64_t k) {
  THHalf h;
  int e = 0;
  k %= 1000;
  if (k == 0) {
    h.x = 0;
    return h;
  }
  while ((k >> (e + 1)) != 0) e++;
  h.x = (uint16_t)(((e + 15) << 10) | ((k << (10 - e)) & 0x3FF));
  return h;
}

/* BFloat16 bits for a small non-negative integer: the top half of the float (exact: k <= 256). */
static THBFloat16 mk_bf16(int64_t k) {
  float f = (float)(k % 200);
  uint32_t u;
  THBFloat16 b;
  memcpy(&u, &f, sizeof u);
  b.x = (uint16_t)(u >> 16);
  return b;
}

#define Real Byte
#define real uint8_t
#define MKVAL(k) ((uint8_t)(((k) * 7 + 3) % 256))
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Char
#define real int8_t
#define MKVAL(k) ((int8_t)(((k) * 7) % 256 - 128))
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Short
#define real int16_t
#define MKVAL(k) ((int16_t)((k) * 31 - 1000))
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Int
#define real int32_t
#define MKVAL(k) ((int32_t)((k) * 7919 - 100))
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Long
#define real int64_t
#define MKVAL(k) ((int64_t)(k) * 1000000007LL - 5)
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Float
#define real float
#define MKVAL(k) ((float)(k) * 0.5f - 3.0f)
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Double
#define real double
#define MKVAL(k) ((double)(k) * 0.25 - 7.0)
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Half
#define real THHalf
#define MKVAL(k) mk_half(k)
#define VEQ(a, b) ((a).x == (b).x)
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real BFloat16
#define real THBFloat16
#define MKVAL(k) mk_bf16(k)
#define VEQ(a, b) ((a).x == (b).x)
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

#define Real Bool
#define real THBool
#define MKVAL(k) ((THBool)((k) % 3 == 1))
#define VEQ(a, b) ((a) == (b))
#include "generic/tensor_body.h"
#undef Real
#undef real
#undef MKVAL
#undef VEQ

/* Dtype-specific details the generic body cannot express. */
static void test_dtype_specifics(void) {
  /* The hand-made Half/BFloat16 values are the known bit patterns. */
  CHECK(mk_half(1).x == 0x3C00 && mk_half(3).x == 0x4200 && mk_half(10).x == 0x4900 && mk_half(255).x == 0x5BF8);
  CHECK(mk_bf16(1).x == 0x3F80 && mk_bf16(10).x == 0x4120 && mk_bf16(0).x == 0);

  /* Element sizes. */
  CHECK(THByteStorage_elementSize() == 1 && THCharStorage_elementSize() == 1);
  CHECK(THShortStorage_elementSize() == 2 && THIntStorage_elementSize() == 4);
  CHECK(THLongStorage_elementSize() == 8 && THFloatStorage_elementSize() == 4);
  CHECK(THDoubleStorage_elementSize() == 8 && THHalfStorage_elementSize() == 2);
  CHECK(THBFloat16Storage_elementSize() == 2 && THBoolStorage_elementSize() == 1);

  /* Bool: writes store 0 or 1; any non-zero byte reads as true. */
  {
    THBoolTensor *b = THBoolTensor_newWithSize1d(3);
    THBoolTensor_set1d(b, 0, 7);
    THBoolTensor_set1d(b, 1, 0);
    THBoolTensor_set1d(b, 2, 1);
    const THBool *d = THBoolTensor_data(b);
    CHECK(d[0] == 1 && d[1] == 0 && d[2] == 1);
    CHECK(THBoolTensor_get1d(b, 0) == 1 && THBoolTensor_get1d(b, 1) == 0);
    THBoolTensor_free(b);
  }
  /* Char is signed, Byte unsigned. */
  {
    THCharTensor *c = THCharTensor_newWithSize1d(1);
    THCharTensor_set1d(c, 0, -100);
    CHECK(THCharTensor_get1d(c, 0) == -100 && THCharTensor_get1d(c, 0) < 0);
    THCharTensor_free(c);
    THByteTensor *b = THByteTensor_newWithSize1d(1);
    THByteTensor_set1d(b, 0, 250);
    CHECK(THByteTensor_get1d(b, 0) == 250);
    THByteTensor_free(b);
  }
  /* Long keeps all 64 bits; Double keeps non-integers; Half keeps its bit pattern as is. */
  {
    THLongTensor *l = THLongTensor_newWithSize2d(1, 1);
    THLongTensor_set2d(l, 0, 0, INT64_MIN + 3);
    CHECK(THLongTensor_get2d(l, 0, 0) == INT64_MIN + 3);
    THLongTensor_free(l);
    THDoubleTensor *d = THDoubleTensor_newWithSize1d(1);
    THDoubleTensor_set1d(d, 0, 0.1);
    CHECK(THDoubleTensor_get1d(d, 0) == 0.1);
    THDoubleTensor_free(d);
    THHalfTensor *h = THHalfTensor_newWithSize1d(1);
    THHalf nanbits = {0x7E01};
    THHalfTensor_set1d(h, 0, nanbits);
    CHECK(THHalfTensor_get1d(h, 0).x == 0x7E01);
    THHalfTensor_free(h);
  }
}

int main(void) {
  th_test_install_handlers();
  int calls_before = th_test_handler_calls;
  tb_Byte_run();
  tb_Char_run();
  tb_Short_run();
  tb_Int_run();
  tb_Long_run();
  tb_Float_run();
  tb_Double_run();
  tb_Half_run();
  tb_BFloat16_run();
  tb_Bool_run();
  test_dtype_specifics();
  /* Nothing above is an error. */
  CHECK(th_test_handler_calls == calls_before);
  CHECK(THGetLastErrorCode() == TH_OK && THGetLastError() == NULL);
  if (THGetLastError()) fprintf(stderr, "unexpected error: %s\n", THGetLastError());
  return TH_TEST_DONE();
}
