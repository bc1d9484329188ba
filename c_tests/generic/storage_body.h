/* Generic storage checks, included once per dtype by generic/storage_types.h (see there for
 * Real, real and the TEST_* macros). Expected values come from hand-written patterns and
 * straight memory reads (TEST_(at)), never from the function under test. Needs
 * generic/storage_helpers.h included for every dtype first (the copy checks read sources of
 * all dtypes) and the counting allocator of test_storage.c. */

/* 0..12 in a scrambled order: exact in every dtype, includes 0 (false for Bool). */
static double TEST_(pattern)(ptrdiff_t i) {
  return (double)((i * 7 + 3) % 13);
}

/* elementSize, new, newWithSize (sizes, 64-byte alignment, negative sizes), newWithSize1..4,
 * newWithData. */
static void TEST_(construction)(void) {
  CHECK(THStorage_(elementSize)() == (size_t)TEST_ELEM_SIZE);
  CHECK(THStorage_(elementSize)() == sizeof(real));

  THStorage *e = THStorage_(new)();
  CHECK(e != NULL);
  CHECK(THStorage_(size)(e) == 0);
  CHECK(THStorage_(data)(e) == NULL);
  THStorage_(free)(e);

  e = THStorage_(newWithSize)(0);
  CHECK(e != NULL);
  CHECK(THStorage_(size)(e) == 0);
  CHECK(THStorage_(data)(e) == NULL);
  THStorage_(free)(e);

  static const ptrdiff_t sizes[] = {1, 3, 17, 64, 1000, 6000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    ptrdiff_t n = sizes[k];
    THStorage *s = THStorage_(newWithSize)(n);
    CHECK(s != NULL);
    CHECK(THStorage_(size)(s) == n);
    CHECK(((uintptr_t)THStorage_(data)(s) % 64) == 0);
    /* every element is writable (valgrind checks the bounds) and reads back */
    real *p = THStorage_(data)(s);
    for (ptrdiff_t i = 0; i < n; i++) p[i] = TEST_TO_REAL(TEST_(pattern)(i));
    int ok = 1;
    for (ptrdiff_t i = 0; i < n; i++)
      if (TEST_FROM_REAL(THStorage_(get)(s, i)) != TEST_NORM(TEST_(pattern)(i))) ok = 0;
    CHECK(ok);
    THStorage_(free)(s);
  }

  THStorage *bad = (THStorage *)&bad; /* any non-NULL value: must be overwritten with NULL */
  EXPECT_ERROR(bad = THStorage_(newWithSize)(-1));
  CHECK(bad == NULL);
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE);
  bad = (THStorage *)&bad;
  EXPECT_ERROR(bad = THStorage_(newWithSize)(PTRDIFF_MIN));
  CHECK(bad == NULL);
  /* more bytes than the address space (or than malloc can give): an error, not a crash */
  bad = (THStorage *)&bad;
  EXPECT_ERROR(bad = THStorage_(newWithSize)(PTRDIFF_MAX));
  CHECK(bad == NULL);
  bad = (THStorage *)&bad;
  EXPECT_ERROR(bad = THStorage_(newWithSize)(PTRDIFF_MAX / TEST_ELEM_SIZE));
  CHECK(bad == NULL);

  THStorage *s1 = THStorage_(newWithSize1)(TEST_TO_REAL(5));
  CHECK(THStorage_(size)(s1) == 1);
  CHECK(TEST_(at)(s1, 0) == TEST_NORM(5.0));
  THStorage_(free)(s1);

  THStorage *s2 = THStorage_(newWithSize2)(TEST_TO_REAL(0), TEST_TO_REAL(8));
  CHECK(THStorage_(size)(s2) == 2);
  CHECK(TEST_(at)(s2, 0) == 0.0);
  CHECK(TEST_(at)(s2, 1) == TEST_NORM(8.0));
  THStorage_(free)(s2);

  THStorage *s3 = THStorage_(newWithSize3)(TEST_TO_REAL(3), TEST_TO_REAL(0), TEST_TO_REAL(11));
  CHECK(THStorage_(size)(s3) == 3);
  CHECK(TEST_(at)(s3, 0) == TEST_NORM(3.0));
  CHECK(TEST_(at)(s3, 1) == 0.0);
  CHECK(TEST_(at)(s3, 2) == TEST_NORM(11.0));
  THStorage_(free)(s3);

  THStorage *s4 = THStorage_(newWithSize4)(TEST_TO_REAL(1), TEST_TO_REAL(0), TEST_TO_REAL(9),
                                           TEST_TO_REAL(4));
  CHECK(THStorage_(size)(s4) == 4);
  CHECK(TEST_(at)(s4, 0) == 1.0);
  CHECK(TEST_(at)(s4, 1) == 0.0);
  CHECK(TEST_(at)(s4, 2) == TEST_NORM(9.0));
  CHECK(TEST_(at)(s4, 3) == TEST_NORM(4.0));
  THStorage_(free)(s4);

  /* newWithData takes a THAlloc block (it is released with free: valgrind checks) */
  real *block = (real *)THAlloc(5 * (ptrdiff_t)sizeof(real));
  for (ptrdiff_t i = 0; i < 5; i++) block[i] = TEST_TO_REAL(TEST_(pattern)(i));
  THStorage *d = THStorage_(newWithData)(block, 5);
  CHECK(d != NULL);
  CHECK(THStorage_(data)(d) == block);
  CHECK(THStorage_(size)(d) == 5);
  for (ptrdiff_t i = 0; i < 5; i++) CHECK(TEST_FROM_REAL(THStorage_(get)(d, i)) == TEST_NORM(TEST_(pattern)(i)));
  THStorage_(free)(d);
}

/* get/set (0-based, bounds-checked), fill. */
static void TEST_(access)(void) {
  const ptrdiff_t n = 5;
  THStorage *s = THStorage_(newWithSize)(n);
  real *p = THStorage_(data)(s);
  for (ptrdiff_t i = 0; i < n; i++) p[i] = TEST_TO_REAL(0);

  for (ptrdiff_t i = 0; i < n; i++) EXPECT_OK(THStorage_(set)(s, i, TEST_TO_REAL(TEST_(pattern)(i))));
  for (ptrdiff_t i = 0; i < n; i++) CHECK(TEST_FROM_REAL(p[i]) == TEST_NORM(TEST_(pattern)(i)));
  /* index 0 is the first element (0-based), index n-1 the last */
  CHECK(TEST_FROM_REAL(THStorage_(get)(s, 0)) == TEST_NORM(3.0));
  CHECK(TEST_FROM_REAL(THStorage_(get)(s, n - 1)) == TEST_NORM(TEST_(pattern)(n - 1)));
  for (ptrdiff_t i = 0; i < n; i++) {
    real v = TEST_TO_REAL(0);
    EXPECT_OK(v = THStorage_(get)(s, i));
    CHECK(TEST_FROM_REAL(v) == TEST_FROM_REAL(p[i]));
  }

  /* out of range: an argument error on argument 2, nothing written, 0 returned */
  static const ptrdiff_t bad[] = {5, 6, -1, -5, PTRDIFF_MAX, PTRDIFF_MIN};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    th_test_last_arg = 0;
    EXPECT_ERROR(THStorage_(set)(s, bad[k], TEST_TO_REAL(1)));
    CHECK(THGetLastErrorCode() == TH_ERR_INDEX);
    CHECK(th_test_last_arg == 2);
    real v = TEST_TO_REAL(7);
    th_test_last_arg = 0;
    EXPECT_ERROR(v = THStorage_(get)(s, bad[k]));
    CHECK(TEST_FROM_REAL(v) == 0.0);
    CHECK(THGetLastErrorCode() == TH_ERR_INDEX);
    CHECK(th_test_last_arg == 2);
  }
  CHECK(THStorage_(size)(s) == n);
  for (ptrdiff_t i = 0; i < n; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(TEST_(pattern)(i)));

  /* fill */
  EXPECT_OK(THStorage_(fill)(s, TEST_TO_REAL(6)));
  for (ptrdiff_t i = 0; i < n; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(6.0));
  EXPECT_OK(THStorage_(fill)(s, TEST_TO_REAL(0)));
  for (ptrdiff_t i = 0; i < n; i++) CHECK(TEST_(at)(s, i) == 0.0);
  THStorage_(free)(s);

  THStorage *e = THStorage_(new)();
  EXPECT_ERROR(THStorage_(get)(e, 0));
  EXPECT_ERROR(THStorage_(set)(e, 0, TEST_TO_REAL(1)));
  EXPECT_OK(THStorage_(fill)(e, TEST_TO_REAL(2)));
  CHECK(THStorage_(size)(e) == 0);
  THStorage_(free)(e);

#if TEST_IS_BOOL
  /* Bool: writes always store 0 or 1, whatever nonzero byte they are given */
  THStorage *b = THStorage_(newWithSize)(3);
  real *bp = THStorage_(data)(b);
  bp[0] = bp[1] = bp[2] = 0;
  THStorage_(set)(b, 1, (THBool)7);
  CHECK(bp[0] == 0 && bp[1] == 1 && bp[2] == 0);
  CHECK(THStorage_(get)(b, 1) == 1);
  THStorage_(fill)(b, (THBool)200);
  CHECK(bp[0] == 1 && bp[1] == 1 && bp[2] == 1);
  THStorage_(free)(b);
  THStorage *b4 = THStorage_(newWithSize4)((THBool)2, (THBool)0, (THBool)255, (THBool)1);
  real *b4p = THStorage_(data)(b4);
  CHECK(b4p[0] == 1 && b4p[1] == 0 && b4p[2] == 1 && b4p[3] == 1);
  THStorage_(free)(b4);
#endif
#if TEST_IS_HALFLIKE
  /* the element is stored bit for bit */
  THStorage *h = THStorage_(newWithSize)(2);
  real hv;
  hv.x = 0x3C01; /* just above 1.0 */
  THStorage_(set)(h, 1, hv);
  CHECK(THStorage_(data)(h)[1].x == 0x3C01);
  CHECK(THStorage_(get)(h, 1).x == 0x3C01);
  THStorage_(free)(h);
#endif
}

/* resize keeps the prefix (and the default allocator's 64-byte alignment); RESIZABLE. */
static void TEST_(resizing)(void) {
  THStorage *s = THStorage_(newWithSize)(4);
  for (ptrdiff_t i = 0; i < 4; i++) THStorage_(data)(s)[i] = TEST_TO_REAL(TEST_(pattern)(i));

  EXPECT_OK(THStorage_(resize)(s, 10));
  CHECK(THStorage_(size)(s) == 10);
  CHECK(((uintptr_t)THStorage_(data)(s) % 64) == 0);
  for (ptrdiff_t i = 0; i < 4; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(TEST_(pattern)(i)));
  for (ptrdiff_t i = 4; i < 10; i++) THStorage_(data)(s)[i] = TEST_TO_REAL(TEST_(pattern)(i));

  EXPECT_OK(THStorage_(resize)(s, 100000));
  CHECK(THStorage_(size)(s) == 100000);
  CHECK(((uintptr_t)THStorage_(data)(s) % 64) == 0);
  for (ptrdiff_t i = 0; i < 10; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(TEST_(pattern)(i)));
  THStorage_(data)(s)[99999] = TEST_TO_REAL(1); /* the new tail is addressable */

  EXPECT_OK(THStorage_(resize)(s, 3));
  CHECK(THStorage_(size)(s) == 3);
  CHECK(((uintptr_t)THStorage_(data)(s) % 64) == 0);
  for (ptrdiff_t i = 0; i < 3; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(TEST_(pattern)(i)));
  EXPECT_ERROR(THStorage_(get)(s, 3));

  /* negative size: an error, nothing changes */
  real *before = THStorage_(data)(s);
  EXPECT_ERROR(THStorage_(resize)(s, -1));
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE);
  CHECK(THStorage_(size)(s) == 3);
  CHECK(THStorage_(data)(s) == before);
  for (ptrdiff_t i = 0; i < 3; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(TEST_(pattern)(i)));

  EXPECT_ERROR(THStorage_(resize)(s, PTRDIFF_MAX));
  CHECK(THStorage_(size)(s) == 3);
  CHECK(THStorage_(data)(s) == before);
  for (ptrdiff_t i = 0; i < 3; i++) CHECK(TEST_(at)(s, i) == TEST_NORM(TEST_(pattern)(i)));

  EXPECT_OK(THStorage_(resize)(s, 0));
  CHECK(THStorage_(size)(s) == 0);
  CHECK(THStorage_(data)(s) == NULL);
  EXPECT_OK(THStorage_(resize)(s, 2));
  CHECK(THStorage_(size)(s) == 2);
  THStorage_(data)(s)[0] = TEST_TO_REAL(4);
  THStorage_(data)(s)[1] = TEST_TO_REAL(9);

  /* not RESIZABLE: resize is an error and leaves size, data and contents alone */
  THStorage_(clearFlag)(s, TH_STORAGE_RESIZABLE);
  before = THStorage_(data)(s);
  EXPECT_ERROR(THStorage_(resize)(s, 8));
  CHECK(THStorage_(size)(s) == 2);
  CHECK(THStorage_(data)(s) == before);
  CHECK(TEST_(at)(s, 0) == TEST_NORM(4.0) && TEST_(at)(s, 1) == TEST_NORM(9.0));
  EXPECT_ERROR(THStorage_(resize)(s, 1));
  CHECK(THStorage_(size)(s) == 2);
  /* other operations still work */
  EXPECT_OK(THStorage_(set)(s, 1, TEST_TO_REAL(2)));
  CHECK(TEST_(at)(s, 1) == TEST_NORM(2.0));
  THStorage_(setFlag)(s, TH_STORAGE_RESIZABLE);
  EXPECT_OK(THStorage_(resize)(s, 8));
  CHECK(THStorage_(size)(s) == 8);
  CHECK(TEST_(at)(s, 0) == TEST_NORM(4.0) && TEST_(at)(s, 1) == TEST_NORM(2.0));
  THStorage_(free)(s);
}

/* swap exchanges data, size, flags and allocator, not refcounts. */
static void TEST_(swapping)(void) {
  THStorage *a = THStorage_(newWithSize3)(TEST_TO_REAL(1), TEST_TO_REAL(2), TEST_TO_REAL(3));
  THStorage *b = THStorage_(newWithSize1)(TEST_TO_REAL(9));
  real *pa = THStorage_(data)(a), *pb = THStorage_(data)(b);

  EXPECT_OK(THStorage_(swap)(a, b));
  CHECK(THStorage_(size)(a) == 1);
  CHECK(THStorage_(data)(a) == pb);
  CHECK(TEST_(at)(a, 0) == TEST_NORM(9.0));
  CHECK(THStorage_(size)(b) == 3);
  CHECK(THStorage_(data)(b) == pa);
  CHECK(TEST_(at)(b, 0) == 1.0 && TEST_(at)(b, 1) == TEST_NORM(2.0) && TEST_(at)(b, 2) == TEST_NORM(3.0));

  /* flags travel with the contents */
  THStorage_(clearFlag)(a, TH_STORAGE_RESIZABLE); /* a holds {9} */
  EXPECT_OK(THStorage_(swap)(a, b));               /* now b holds {9}, not resizable */
  CHECK(THStorage_(size)(a) == 3 && THStorage_(size)(b) == 1);
  EXPECT_ERROR(THStorage_(resize)(b, 5));
  CHECK(THStorage_(size)(b) == 1);
  EXPECT_OK(THStorage_(resize)(a, 5));
  CHECK(THStorage_(size)(a) == 5);
  CHECK(TEST_(at)(a, 0) == 1.0 && TEST_(at)(a, 1) == TEST_NORM(2.0) && TEST_(at)(a, 2) == TEST_NORM(3.0));

  /* swapping with itself changes nothing */
  real *now = THStorage_(data)(a);
  EXPECT_OK(THStorage_(swap)(a, a));
  CHECK(THStorage_(size)(a) == 5 && THStorage_(data)(a) == now);

  /* refcounts stay: a has two references, b one, before and after the swap */
  THStorage_(retain)(a);
  EXPECT_OK(THStorage_(swap)(a, b));
  THStorage_(free)(a); /* a survives (one reference left) */
  CHECK(THStorage_(size)(a) == 1);
  CHECK(TEST_(at)(a, 0) == TEST_NORM(9.0));
  CHECK(THStorage_(size)(b) == 5);
  THStorage_(free)(b);
  THStorage_(free)(a);

  /* the allocator travels too: a custom-allocated buffer is freed by its allocator whichever
   * handle owns it when the last reference goes */
  Counter c;
  counter_init(&c);
  THStorage *ca = THStorage_(newWithAllocator)(3, &counting_allocator, &c);
  real *cdata = THStorage_(data)(ca);
  THStorage *cb = THStorage_(newWithSize)(2);
  THStorage_(swap)(ca, cb);
  CHECK(THStorage_(data)(cb) == cdata);
  THStorage_(free)(ca); /* default-allocator buffer */
  CHECK(c.frees == 0);
  THStorage_(free)(cb);
  CHECK(c.frees == 1);
  CHECK(c.last_free == (void *)cdata);
  CHECK(c.live == 0 && counting_bad_ctx == 0);
}

/* retain/free counts and the REFCOUNTED / FREEMEM flags, observed through a counting allocator. */
static void TEST_(refcounts)(void) {
  Counter c;
  counter_init(&c);
  THStorage *s = THStorage_(newWithAllocator)(4, &counting_allocator, &c);
  CHECK(c.mallocs == 1);
  CHECK(c.last_malloc_size == 4 * TEST_ELEM_SIZE);
  CHECK(THStorage_(data)(s) == c.last_malloc);
  for (ptrdiff_t i = 0; i < 4; i++) THStorage_(data)(s)[i] = TEST_TO_REAL(TEST_(pattern)(i));

  THStorage_(retain)(s);
  THStorage_(free)(s); /* back to one reference: still alive */
  CHECK(c.frees == 0);
  CHECK(THStorage_(size)(s) == 4);
  CHECK(TEST_FROM_REAL(THStorage_(get)(s, 3)) == TEST_NORM(TEST_(pattern)(3)));
  THStorage_(retain)(s);
  THStorage_(retain)(s);
  THStorage_(release)(s);
  THStorage_(free)(s);
  CHECK(c.frees == 0);
  THStorage_(set)(s, 0, TEST_TO_REAL(1));
  CHECK(TEST_(at)(s, 0) == 1.0);
  void *data = THStorage_(data)(s);
  THStorage_(free)(s); /* the last reference: the allocator frees the data once */
  CHECK(c.frees == 1);
  CHECK(c.last_free == data);
  CHECK(c.live == 0);

  EXPECT_OK(THStorage_(retain)(NULL));
  EXPECT_OK(THStorage_(free)(NULL));

  /* REFCOUNTED cleared: retain/free are no-ops, so the storage outlives its "last" free */
  counter_init(&c);
  s = THStorage_(newWithAllocator)(3, &counting_allocator, &c);
  THStorage_(clearFlag)(s, TH_STORAGE_REFCOUNTED);
  THStorage_(free)(s);
  THStorage_(free)(s);
  THStorage_(retain)(s);
  CHECK(c.frees == 0);
  CHECK(THStorage_(size)(s) == 3);
  THStorage_(set)(s, 2, TEST_TO_REAL(5));
  CHECK(TEST_(at)(s, 2) == TEST_NORM(5.0));
  THStorage_(setFlag)(s, TH_STORAGE_REFCOUNTED); /* counting again: one reference left */
  THStorage_(free)(s);
  CHECK(c.frees == 1);
  CHECK(c.live == 0);

  /* FREEMEM cleared: the storage is freed but its data is not handed to the allocator */
  counter_init(&c);
  s = THStorage_(newWithAllocator)(2, &counting_allocator, &c);
  data = THStorage_(data)(s);
  THStorage_(clearFlag)(s, TH_STORAGE_FREEMEM);
  THStorage_(free)(s);
  CHECK(c.frees == 0);
  CHECK(c.live == 1);
  counting_allocator.free(&c, data);
  CHECK(c.live == 0 && counting_bad_ctx == 0 && c.bad_frees == 0);
}

/* copy (same dtype), copy<Src> from every dtype, size mismatches, rawCopy. */
#define TEST_COPY_FROM(S)                                                                      \
  do {                                                                                         \
    double vals_[10];                                                                          \
    for (ptrdiff_t i_ = 0; i_ < 10; i_++) vals_[i_] = TEST_(pattern)(i_ + 2);                  \
    TH##S##Storage *src_ = test_##S##_make(vals_, 9);                                          \
    THStorage *dst_ = THStorage_(newWithSize)(9);                                              \
    for (ptrdiff_t i_ = 0; i_ < 9; i_++) THStorage_(data)(dst_)[i_] = TEST_TO_REAL(12);        \
    EXPECT_OK(THStorage_(copy##S)(dst_, src_));                                                \
    int ok_ = 1;                                                                               \
    for (ptrdiff_t i_ = 0; i_ < 9; i_++)                                                       \
      if (TEST_(at)(dst_, i_) != TEST_NORM(test_##S##_norm(vals_[i_]))) ok_ = 0;              \
    CHECK(ok_ && "copy" #S);                                                                   \
    /* the source is untouched */                                                             \
    ok_ = 1;                                                                                   \
    for (ptrdiff_t i_ = 0; i_ < 9; i_++)                                                       \
      if (test_##S##_at(src_, i_) != test_##S##_norm(vals_[i_])) ok_ = 0;                     \
    CHECK(ok_);                                                                                \
    /* sizes must match: a longer or a shorter source is an error and dst is unchanged */      \
    TH##S##Storage *longer_ = test_##S##_make(vals_, 10);                                      \
    TH##S##Storage *shorter_ = test_##S##_make(vals_, 8);                                      \
    THStorage *small_ = THStorage_(newWithSize2)(TEST_TO_REAL(1), TEST_TO_REAL(0));            \
    th_test_last_arg = 0;                                                                      \
    EXPECT_ERROR(THStorage_(copy##S)(dst_, longer_));                                          \
    CHECK(th_test_last_arg == 2);                                                              \
    EXPECT_ERROR(THStorage_(copy##S)(dst_, shorter_));                                         \
    EXPECT_ERROR(THStorage_(copy##S)(small_, src_));                                           \
    CHECK(THStorage_(size)(dst_) == 9 && THStorage_(size)(small_) == 2);                       \
    ok_ = 1;                                                                                   \
    for (ptrdiff_t i_ = 0; i_ < 9; i_++)                                                       \
      if (TEST_(at)(dst_, i_) != TEST_NORM(test_##S##_norm(vals_[i_]))) ok_ = 0;              \
    CHECK(ok_);                                                                                \
    CHECK(TEST_(at)(small_, 0) == 1.0 && TEST_(at)(small_, 1) == 0.0);                         \
    /* empty into empty is fine */                                                            \
    TH##S##Storage *esrc_ = TH##S##Storage_new();                                              \
    THStorage *edst_ = THStorage_(new)();                                                      \
    EXPECT_OK(THStorage_(copy##S)(edst_, esrc_));                                              \
    EXPECT_ERROR(THStorage_(copy##S)(edst_, src_));                                            \
    CHECK(THStorage_(size)(edst_) == 0);                                                       \
    TH##S##Storage_free(esrc_);                                                                \
    THStorage_(free)(edst_);                                                                   \
    TH##S##Storage_free(src_);                                                                 \
    TH##S##Storage_free(longer_);                                                              \
    TH##S##Storage_free(shorter_);                                                             \
    THStorage_(free)(dst_);                                                                    \
    THStorage_(free)(small_);                                                                  \
  } while (0)

static void TEST_(copying)(void) {
  double v[6] = {4, 0, 12, 7, 1, 3};
  THStorage *src = TEST_(make)(v, 6);
  THStorage *dst = THStorage_(newWithSize)(6);
  EXPECT_OK(THStorage_(copy)(dst, src));
  for (ptrdiff_t i = 0; i < 6; i++) CHECK(TEST_(at)(dst, i) == TEST_NORM(v[i]));
  CHECK(THStorage_(data)(dst) != THStorage_(data)(src));
  /* the copy is independent of its source */
  THStorage_(data)(src)[0] = TEST_TO_REAL(0);
  CHECK(TEST_(at)(dst, 0) == TEST_NORM(4.0));
  THStorage_(data)(src)[0] = TEST_TO_REAL(4);

  /* size mismatch: argument error on argument 2, destination unchanged */
  THStorage *five = THStorage_(newWithSize)(5);
  THStorage_(fill)(five, TEST_TO_REAL(9));
  th_test_last_arg = 0;
  EXPECT_ERROR(THStorage_(copy)(five, src));
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE);
  CHECK(th_test_last_arg == 2);
  CHECK(THStorage_(size)(five) == 5);
  for (ptrdiff_t i = 0; i < 5; i++) CHECK(TEST_(at)(five, i) == TEST_NORM(9.0));
  EXPECT_ERROR(THStorage_(copy)(src, five));
  for (ptrdiff_t i = 0; i < 6; i++) CHECK(TEST_(at)(src, i) == TEST_NORM(v[i]));

  /* copying a storage onto itself changes nothing */
  EXPECT_OK(THStorage_(copy)(src, src));
  for (ptrdiff_t i = 0; i < 6; i++) CHECK(TEST_(at)(src, i) == TEST_NORM(v[i]));
  THStorage_(free)(five);
  THStorage_(free)(dst);
  THStorage_(free)(src);

  TEST_COPY_FROM(Byte);
  TEST_COPY_FROM(Char);
  TEST_COPY_FROM(Short);
  TEST_COPY_FROM(Int);
  TEST_COPY_FROM(Long);
  TEST_COPY_FROM(Float);
  TEST_COPY_FROM(Double);
  TEST_COPY_FROM(Half);
  TEST_COPY_FROM(BFloat16);
  TEST_COPY_FROM(Bool);

  /* rawCopy: size() elements from a plain array */
  real raw[7];
  for (ptrdiff_t i = 0; i < 7; i++) raw[i] = TEST_TO_REAL(TEST_(pattern)(i + 5));
  THStorage *r = THStorage_(newWithSize)(7);
  EXPECT_OK(THStorage_(rawCopy)(r, raw));
  for (ptrdiff_t i = 0; i < 7; i++) CHECK(TEST_(at)(r, i) == TEST_NORM(TEST_(pattern)(i + 5)));
  CHECK(THStorage_(data)(r) != raw);
  raw[0] = TEST_TO_REAL(0); /* no aliasing */
  CHECK(TEST_(at)(r, 0) == TEST_NORM(TEST_(pattern)(5)));
  THStorage_(free)(r);
  THStorage *er = THStorage_(new)();
  EXPECT_OK(THStorage_(rawCopy)(er, raw));
  CHECK(THStorage_(size)(er) == 0);
  THStorage_(free)(er);
}
#undef TEST_COPY_FROM

static void TEST_(run)(void) {
  TEST_(construction)();
  TEST_(access)();
  TEST_(resizing)();
  TEST_(swapping)();
  TEST_(refcounts)();
  TEST_(copying)();
}
