/* The storage API for every dtype (TH_API.md section 2): construction, 0-based bounds-checked
 * get/set, fill, resize, swap, flags, retain/free, copy/rawCopy and the cross-dtype copy<Src>
 * functions. The generic checks live in generic/storage_body.h and are compiled once per
 * dtype through TH's THStorage_(NAME) macro; hand-computed conversions between dtypes follow. */
#include "th_test.h"
#include "counting_allocator.h"
#include <stdint.h>

/* test_<Real>_<name>: the test's own per-dtype functions. */
#define TEST_(NAME) TH_CONCAT_4(test_, Real, _, NAME)

#define TEST_GENERIC_FILE "generic/storage_helpers.h"
#include "generic/storage_types.h"
#undef TEST_GENERIC_FILE

#define TEST_GENERIC_FILE "generic/storage_body.h"
#include "generic/storage_types.h"
#undef TEST_GENERIC_FILE

/* Runs one conversion table: src values (C type of S) -> expected D values (C type of D). */
#define RUN_CAST(D, dt, S, st, SRC, EXP)                                                       \
  do {                                                                                         \
    st sv_[] = SRC;                                                                            \
    dt ex_[] = EXP;                                                                            \
    const ptrdiff_t n_ = (ptrdiff_t)(sizeof sv_ / sizeof sv_[0]);                              \
    CHECK(n_ == (ptrdiff_t)(sizeof ex_ / sizeof ex_[0]));                                      \
    TH##S##Storage *s_ = TH##S##Storage_newWithSize(n_);                                       \
    memcpy(TH##S##Storage_data(s_), sv_, sizeof sv_);                                          \
    TH##D##Storage *d_ = TH##D##Storage_newWithSize(n_);                                       \
    memset(TH##D##Storage_data(d_), 0x5a, (size_t)n_ * sizeof(dt));                            \
    EXPECT_OK(TH##D##Storage_copy##S(d_, s_));                                                 \
    for (ptrdiff_t i_ = 0; i_ < n_; i_++) {                                                    \
      th_test_checks++;                                                                        \
      if (memcmp(&TH##D##Storage_data(d_)[i_], &ex_[i_], sizeof(dt)) != 0) {                   \
        th_test_failures++;                                                                    \
        fprintf(stderr, "%s:%d: copy%s -> %s: element %td wrong\n", __FILE__, __LINE__, #S, #D, \
                i_);                                                                           \
      }                                                                                        \
    }                                                                                          \
    TH##S##Storage_free(s_);                                                                   \
    TH##D##Storage_free(d_);                                                                   \
  } while (0)

#define L(...) {__VA_ARGS__}
#define H(bits) {(uint16_t)(bits)}

/* Conversions between dtypes are C casts (TH_API.md 2.4): integers wrap modulo 2^bits, floats
 * truncate toward zero, Half/BFloat16 round to nearest even, anything nonzero is Bool 1. */
static void cast_checks(void) {
  /* integer narrowing wraps */
  RUN_CAST(Byte, uint8_t, Long, int64_t, L(300, -1, 256, 255, 0), L(44, 255, 0, 255, 0));
  RUN_CAST(Byte, uint8_t, Char, int8_t, L(-1, -128, 127), L(255, 128, 127));
  RUN_CAST(Char, int8_t, Byte, uint8_t, L(200, 127, 128, 255), L(-56, 127, -128, -1));
  RUN_CAST(Char, int8_t, Int, int32_t, L(130, -129, 1000), L(-126, 127, -24));
  RUN_CAST(Short, int16_t, Int, int32_t, L(70000, -70000, 32768), L(4464, -4464, -32768));
  RUN_CAST(Int, int32_t, Long, int64_t, L(((int64_t)1 << 40) + 5, -1, 4294967295LL), L(5, -1, -1));
  RUN_CAST(Long, int64_t, Byte, uint8_t, L(255, 0), L(255, 0));
  RUN_CAST(Long, int64_t, Char, int8_t, L(-128, -1), L(-128, -1));
  RUN_CAST(Short, int16_t, Bool, THBool, L(0, 1), L(0, 1));

  /* floating point to integer truncates toward zero */
  RUN_CAST(Int, int32_t, Double, double, L(-1.5, 2.9, -2.9, 0.99, -0.5), L(-1, 2, -2, 0, 0));
  RUN_CAST(Long, int64_t, Float, float, L(1e10f, -7.75f), L(10000000000LL, -7));
  RUN_CAST(Short, int16_t, Float, float, L(-3.99f, 32767.5f), L(-3, 32767));
  RUN_CAST(Char, int8_t, Double, double, L(-128.7, 127.2), L(-128, 127));
  RUN_CAST(Byte, uint8_t, Double, double, L(255.9, 0.3), L(255, 0));

  /* integer to floating point rounds to nearest */
  RUN_CAST(Float, float, Int, int32_t, L(16777217, -16777217, 7), L(16777216.0f, -16777216.0f, 7.0f));
  RUN_CAST(Double, double, Long, int64_t, L(((int64_t)1 << 53) + 1, -3), L(9007199254740992.0, -3.0));
  RUN_CAST(Float, float, Double, double, L(0.1, -2.5, 1e-3), L(0.1f, -2.5f, 1e-3f));
  RUN_CAST(Double, double, Float, float, L(0.1f, 3.0f), L((double)0.1f, 3.0));
  RUN_CAST(Float, float, Byte, uint8_t, L(255, 1), L(255.0f, 1.0f));
  RUN_CAST(Double, double, Char, int8_t, L(-128, -1), L(-128.0, -1.0));

  /* Half: IEEE binary16, round to nearest even (0x4100 = 2.5, 0xC000 = -2, 0x7BFF = 65504,
   * 0x7C00 = +inf, 0x6800 = 2048, 0x6802 = 2052, 0x3C00 = 1) */
  RUN_CAST(Half, THHalf, Float, float, L(2.5f, -2.0f, 65504.0f, 1e6f, 0.0f),
           L(H(0x4100), H(0xC000), H(0x7BFF), H(0x7C00), H(0x0000)));
  /* the top of the range and the subnormals round to nearest even too: 65519 -> 65504,
   * 65520 (halfway to 65536) -> inf; 2^-25 (half the smallest subnormal) -> 0, 3*2^-25 -> 2^-23 */
  RUN_CAST(Half, THHalf, Float, float, L(65519.0f, 65520.0f, -65520.0f, 2.98023223876953125e-8f, 8.94069671630859375e-8f),
           L(H(0x7BFF), H(0x7C00), H(0xFC00), H(0x0000), H(0x0002)));
  RUN_CAST(Half, THHalf, Long, int64_t, L(2048, 2049, 2051, 70000, 1), L(H(0x6800), H(0x6800), H(0x6802), H(0x7C00), H(0x3C00)));
  RUN_CAST(Half, THHalf, Double, double, L(1e-8, -0.0, 0.5), L(H(0x0000), H(0x8000), H(0x3800)));
  RUN_CAST(Half, THHalf, Bool, THBool, L(1, 0), L(H(0x3C00), H(0x0000)));
  RUN_CAST(Int, int32_t, Half, THHalf, L(H(0xC200), H(0x4100), H(0x7BFF)), L(-3, 2, 65504));
  RUN_CAST(Byte, uint8_t, Half, THHalf, L(H(0x5BF8), H(0x3C00)), L(255, 1));
  RUN_CAST(Float, float, Half, THHalf, L(H(0x4100), H(0x3555), H(0x0001)), L(2.5f, 0.333251953125f, 5.9604644775390625e-8f));
  RUN_CAST(Double, double, Half, THHalf, L(H(0xFC00)), L(-INFINITY));
  RUN_CAST(Half, THHalf, BFloat16, THBFloat16, L(H(0x4040), H(0x3F80)), L(H(0x4200), H(0x3C00)));
  RUN_CAST(BFloat16, THBFloat16, Half, THHalf, L(H(0x4200), H(0x3C00)), L(H(0x4040), H(0x3F80)));

  /* BFloat16: the top half of a float, round to nearest even (0x3F80 = 1, 0x4040 = 3) */
  RUN_CAST(BFloat16, THBFloat16, Float, float, L(1.0f, 3.0f, 1.00390625f, 1.01171875f, -2.0f),
           L(H(0x3F80), H(0x4040), H(0x3F80), H(0x3F82), H(0xC000)));
  RUN_CAST(BFloat16, THBFloat16, Int, int32_t, L(257, 259, -1), L(H(0x4380), H(0x4382), H(0xBF80)));
  RUN_CAST(Double, double, BFloat16, THBFloat16, L(H(0x4049), H(0xC2F7)), L(3.140625, -123.5));
  RUN_CAST(Short, int16_t, BFloat16, THBFloat16, L(H(0xC380), H(0x3F00)), L(-256, 0));

  /* Bool: any nonzero value is 1 (not a truncation: 256 is 1, 0.5 is 1, NaN is 1) */
  RUN_CAST(Bool, THBool, Long, int64_t, L(256, -1, 0, 1, ((int64_t)1 << 40)), L(1, 1, 0, 1, 1));
  RUN_CAST(Bool, THBool, Float, float, L(0.5f, -0.0f, 0.0f, NAN, -1e-30f), L(1, 0, 0, 1, 1));
  RUN_CAST(Bool, THBool, Double, double, L(1e-300, 0.0, -7.0), L(1, 0, 1));
  RUN_CAST(Bool, THBool, Byte, uint8_t, L(255, 0, 2), L(1, 0, 1));
  RUN_CAST(Bool, THBool, Char, int8_t, L(-128, 0), L(1, 0));
  RUN_CAST(Bool, THBool, Short, int16_t, L(256, 0), L(1, 0));
  RUN_CAST(Bool, THBool, Int, int32_t, L(65536, 0), L(1, 0));
  RUN_CAST(Bool, THBool, Half, THHalf, L(H(0x8000), H(0x0001), H(0x0000), H(0x7E00)), L(0, 1, 0, 1));
  RUN_CAST(Bool, THBool, BFloat16, THBFloat16, L(H(0x8000), H(0x3F80)), L(0, 1));
  /* a Bool byte holding any nonzero value (memory from C) reads as true: 1 in every dtype */
  RUN_CAST(Int, int32_t, Bool, THBool, L(7, 0, 255, 1), L(1, 0, 1, 1));
  RUN_CAST(Float, float, Bool, THBool, L(2, 0), L(1.0f, 0.0f));
  RUN_CAST(Byte, uint8_t, Bool, THBool, L(255, 0), L(1, 0));
  RUN_CAST(Long, int64_t, Bool, THBool, L(128, 0), L(1, 0));
  RUN_CAST(Double, double, Bool, THBool, L(9, 0), L(1.0, 0.0));
  {
    /* Bool -> Bool keeps truth values (a raw 7 may stay 7: it still reads as true) */
    THBoolStorage *bs = THBoolStorage_newWithSize(3);
    THBoolStorage_data(bs)[0] = 7;
    THBoolStorage_data(bs)[1] = 0;
    THBoolStorage_data(bs)[2] = 1;
    THBoolStorage *bd = THBoolStorage_newWithSize2(0, 1);
    THBoolStorage_resize(bd, 3);
    THBoolStorage_data(bd)[2] = 0;
    EXPECT_OK(THBoolStorage_copyBool(bd, bs));
    CHECK(THBoolStorage_data(bd)[0] != 0 && THBoolStorage_data(bd)[1] == 0 && THBoolStorage_data(bd)[2] == 1);
    THBoolStorage_free(bs);
    THBoolStorage_free(bd);
  }
  RUN_CAST(Half, THHalf, Bool, THBool, L(42), L(H(0x3C00)));

  /* NaN stays NaN (a carry out of the mantissa must not make it inf or flip its sign), and
   * the largest float rounds to bfloat16 inf */
  {
    uint32_t bits[3] = {0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F7FFFFFu};
    THFloatStorage *fs = THFloatStorage_newWithSize(3);
    memcpy(THFloatStorage_data(fs), bits, sizeof bits);
    THBFloat16Storage *bs = THBFloat16Storage_newWithSize(3);
    THHalfStorage *hs = THHalfStorage_newWithSize(3);
    EXPECT_OK(THBFloat16Storage_copyFloat(bs, fs));
    EXPECT_OK(THHalfStorage_copyFloat(hs, fs));
    for (int i = 0; i < 2; i++) {
      uint16_t b = THBFloat16Storage_data(bs)[i].x, h = THHalfStorage_data(hs)[i].x;
      CHECK((b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0); /* bfloat16 NaN */
      CHECK((h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0); /* half NaN */
      CHECK((b >> 15) == (bits[i] >> 31));                /* sign kept */
      CHECK((h >> 15) == (bits[i] >> 31));
    }
    CHECK(THBFloat16Storage_data(bs)[2].x == 0x7F80);
    CHECK(THHalfStorage_data(hs)[2].x == 0x7C00);
    float nanf_;
    memcpy(&nanf_, &bits[0], sizeof nanf_);
    THBFloat16 bn = TH_float2bfloat16(nanf_);
    CHECK((bn.x & 0x7F80) == 0x7F80 && (bn.x & 0x007F) != 0);
    THHalf hn = TH_float2half(nanf_);
    CHECK((hn.x & 0x7C00) == 0x7C00 && (hn.x & 0x03FF) != 0);
    THFloatStorage_free(fs);
    THBFloat16Storage_free(bs);
    THHalfStorage_free(hs);
  }

  /* the conversion helpers themselves, by hand */
  CHECK(TH_float2half(2.5f).x == 0x4100);
  CHECK(TH_half2float(TH_float2half(2.5f)) == 2.5f);
  CHECK(TH_float2half(0.1f).x == 0x2E66);
  CHECK(TH_float2bfloat16(1.0f).x == 0x3F80);
  CHECK(TH_bfloat162float(TH_float2bfloat16(3.0f)) == 3.0f);

  /* Float 2.5 -> Half through a storage, read back with TH_half2float */
  THFloatStorage *f = THFloatStorage_newWithSize2(2.5f, -0.75f);
  THHalfStorage *h = THHalfStorage_newWithSize(2);
  THHalfStorage_copyFloat(h, f);
  CHECK(TH_half2float(THHalfStorage_get(h, 0)) == 2.5f);
  CHECK(TH_half2float(THHalfStorage_get(h, 1)) == -0.75f);
  /* ... and back */
  THFloatStorage_fill(f, 0.0f);
  THFloatStorage_copyHalf(f, h);
  CHECK(THFloatStorage_get(f, 0) == 2.5f && THFloatStorage_get(f, 1) == -0.75f);
  /* cross-dtype size mismatch leaves the destination alone */
  THFloatStorage_resize(f, 3);
  THFloatStorage_fill(f, 8.0f);
  EXPECT_ERROR(THHalfStorage_copyFloat(h, f));
  CHECK(TH_half2float(THHalfStorage_get(h, 0)) == 2.5f);
  EXPECT_ERROR(THFloatStorage_copyHalf(f, h));
  CHECK(THFloatStorage_get(f, 0) == 8.0f && THFloatStorage_get(f, 2) == 8.0f);
  THHalfStorage_free(h);
  THFloatStorage_free(f);
}

/* NULL handles are errors, not crashes (the library's "errors never abort" rule). */
static void null_checks(void) {
  EXPECT_ERROR(THFloatStorage_size(NULL));
  EXPECT_ERROR(THFloatStorage_get(NULL, 0));
  EXPECT_ERROR(THFloatStorage_set(NULL, 0, 1.0f));
  EXPECT_ERROR(THFloatStorage_resize(NULL, 3));
  THFloatStorage *s = THFloatStorage_newWithSize1(4.0f);
  EXPECT_ERROR(THFloatStorage_copy(s, NULL));
  EXPECT_ERROR(THFloatStorage_copyDouble(s, NULL));
  EXPECT_ERROR(THFloatStorage_copy(NULL, s));
  CHECK(THFloatStorage_get(s, 0) == 4.0f);
  THFloatStorage_free(s);
}

/* swap exchanges the whole flag set (TH_API.md 2.3: "swaps data,size,flag,allocator,... - NOT
 * refcount"), REFCOUNTED included: after swapping a non-refcounted storage with a refcounted
 * one, the first handle counts references and the second does not. Observed through who frees
 * which buffer; written so that neither behaviour leaks or touches freed memory. */
static void swap_refcounted_flag(void) {
  Counter ca, cb;
  counter_init(&ca);
  counter_init(&cb);
  THFloatStorage *a = THFloatStorage_newWithAllocator(2, &counting_allocator, &ca);
  THFloatStorage *b = THFloatStorage_newWithAllocator(3, &counting_allocator, &cb);
  THFloatStorage_clearFlag(a, TH_STORAGE_REFCOUNTED);
  THFloatStorage_swap(a, b); /* a: cb's buffer, refcounted; b: ca's buffer, not refcounted */
  CHECK(THFloatStorage_size(a) == 3 && THFloatStorage_size(b) == 2);

  /* b should ignore retain/free now */
  THFloatStorage_retain(b);
  THFloatStorage_free(b);
  THFloatStorage_free(b);
  CHECK(ca.frees == 0);
  int b_alive = ca.frees == 0;
  /* a should count: its one reference goes, cb's buffer is freed */
  THFloatStorage_free(a);
  CHECK(cb.frees == 1);
  int a_alive = cb.frees == 0;

  if (b_alive) {
    THFloatStorage_setFlag(b, TH_STORAGE_REFCOUNTED);
    THFloatStorage_free(b);
  }
  if (a_alive) {
    THFloatStorage_setFlag(a, TH_STORAGE_REFCOUNTED);
    THFloatStorage_free(a);
  }
  CHECK(ca.frees == 1 && cb.frees == 1 && ca.live == 0 && cb.live == 0);
}

int main(void) {
  th_test_install_handlers();
  test_Byte_run();
  test_Char_run();
  test_Short_run();
  test_Int_run();
  test_Long_run();
  test_Float_run();
  test_Double_run();
  test_Half_run();
  test_BFloat16_run();
  test_Bool_run();
  cast_checks();
  null_checks();
  swap_refcounted_flag();
  CHECK(counting_bad_ctx == 0);
  return TH_TEST_DONE();
}
