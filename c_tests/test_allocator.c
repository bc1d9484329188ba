/* Custom allocators (TH_API.md section 9) and THAlloc/THRealloc/THFree (section 10): a
 * THAllocator that counts its calls and checks it gets its own context pointer, allocators
 * without realloc, allocators that fail, newWithDataAndAllocator, newWithData, the default
 * allocator. */
#include "th_test.h"
#include "counting_allocator.h"
#include <stdint.h>
#include <stdlib.h>

#define ALIGNED64(p) (((uintptr_t)(p) % 64) == 0)

static THAllocator no_realloc_allocator = {counting_malloc, NULL, counting_free};

/* newWithAllocator: malloc once with the byte size, resize through realloc, free once at the
 * last free, always with the context given. */
static void counted_lifecycle(void) {
  Counter c;
  counter_init(&c);
  THFloatStorage *s = THFloatStorage_newWithAllocator(10, &counting_allocator, &c);
  CHECK(s != NULL);
  CHECK(c.mallocs == 1 && c.reallocs == 0 && c.frees == 0);
  CHECK(c.last_malloc_size == 40);
  CHECK(THFloatStorage_data(s) == c.last_malloc);
  CHECK(THFloatStorage_size(s) == 10);
  for (int i = 0; i < 10; i++) THFloatStorage_data(s)[i] = (float)(i * i);

  void *old = THFloatStorage_data(s);
  EXPECT_OK(THFloatStorage_resize(s, 25));
  CHECK(c.mallocs == 1 && c.reallocs == 1 && c.frees == 0);
  CHECK(c.last_realloc_in == old);
  CHECK(c.last_realloc_size == 100);
  CHECK(THFloatStorage_data(s) == c.last_realloc_out);
  CHECK(THFloatStorage_size(s) == 25);
  for (int i = 0; i < 10; i++) CHECK(THFloatStorage_data(s)[i] == (float)(i * i));
  THFloatStorage_data(s)[24] = -1.0f;

  old = THFloatStorage_data(s);
  EXPECT_OK(THFloatStorage_resize(s, 3));
  CHECK(c.reallocs == 2 && c.last_realloc_in == old && c.last_realloc_size == 12);
  CHECK(THFloatStorage_size(s) == 3);
  CHECK(THFloatStorage_data(s)[0] == 0.0f && THFloatStorage_data(s)[1] == 1.0f && THFloatStorage_data(s)[2] == 4.0f);

  /* retain/free: nothing reaches the allocator until the last reference goes */
  THFloatStorage_retain(s);
  THFloatStorage_retain(s);
  THFloatStorage_free(s);
  THFloatStorage_free(s);
  CHECK(c.frees == 0);
  CHECK(THFloatStorage_get(s, 2) == 4.0f);
  void *data = THFloatStorage_data(s);
  THFloatStorage_free(s);
  CHECK(c.frees == 1);
  CHECK(c.last_free == data);
  CHECK(c.mallocs == 1 && c.reallocs == 2);
  CHECK(c.live == 0 && c.bad_frees == 0);

  /* the byte size follows the element size */
  counter_init(&c);
  THDoubleStorage *d = THDoubleStorage_newWithAllocator(3, &counting_allocator, &c);
  CHECK(c.mallocs == 1 && c.last_malloc_size == 24);
  THDoubleStorage_resize(d, 5);
  CHECK(c.reallocs == 1 && c.last_realloc_size == 40);
  THDoubleStorage_free(d);
  CHECK(c.frees == 1 && c.live == 0);

  counter_init(&c);
  THHalfStorage *h = THHalfStorage_newWithAllocator(7, &counting_allocator, &c);
  CHECK(c.mallocs == 1 && c.last_malloc_size == 14);
  THHalfStorage_free(h);
  CHECK(c.frees == 1 && c.live == 0);

  /* two storages with two contexts: each allocator call gets its own */
  Counter c1, c2;
  counter_init(&c1);
  counter_init(&c2);
  THIntStorage *a = THIntStorage_newWithAllocator(2, &counting_allocator, &c1);
  THIntStorage *b = THIntStorage_newWithAllocator(6, &counting_allocator, &c2);
  CHECK(c1.mallocs == 1 && c1.last_malloc_size == 8);
  CHECK(c2.mallocs == 1 && c2.last_malloc_size == 24);
  THIntStorage_resize(b, 7);
  CHECK(c1.reallocs == 0 && c2.reallocs == 1);
  THIntStorage_free(a);
  CHECK(c1.frees == 1 && c2.frees == 0);
  THIntStorage_free(b);
  CHECK(c2.frees == 1 && c1.live == 0 && c2.live == 0);

  /* negative size: an error before the allocator is called */
  counter_init(&c);
  THFloatStorage *bad = (THFloatStorage *)&bad;
  EXPECT_ERROR(bad = THFloatStorage_newWithAllocator(-1, &counting_allocator, &c));
  CHECK(bad == NULL);
  CHECK(c.mallocs == 0 && c.frees == 0);
  /* no allocator: an error */
  bad = (THFloatStorage *)&bad;
  EXPECT_ERROR(bad = THFloatStorage_newWithAllocator(4, NULL, NULL));
  CHECK(bad == NULL);
}

/* realloc == NULL: resize is malloc + copy of the common prefix + free of the old block. */
static void without_realloc(void) {
  Counter c;
  counter_init(&c);
  THIntStorage *s = THIntStorage_newWithAllocator(4, &no_realloc_allocator, &c);
  CHECK(c.mallocs == 1 && c.last_malloc_size == 16);
  for (int i = 0; i < 4; i++) THIntStorage_data(s)[i] = 10 * (i + 1);

  void *old = THIntStorage_data(s);
  EXPECT_OK(THIntStorage_resize(s, 9));
  CHECK(THIntStorage_size(s) == 9);
  CHECK(c.mallocs == 2 && c.last_malloc_size == 36);
  CHECK(c.frees == 1 && c.last_free == old);
  CHECK(THIntStorage_data(s) == c.last_malloc);
  CHECK(THIntStorage_data(s)[0] == 10 && THIntStorage_data(s)[1] == 20 && THIntStorage_data(s)[2] == 30 &&
        THIntStorage_data(s)[3] == 40);
  THIntStorage_data(s)[8] = 99;

  old = THIntStorage_data(s);
  EXPECT_OK(THIntStorage_resize(s, 2));
  CHECK(THIntStorage_size(s) == 2);
  CHECK(c.mallocs == 3 && c.last_malloc_size == 8);
  CHECK(c.frees == 2 && c.last_free == old);
  CHECK(THIntStorage_data(s)[0] == 10 && THIntStorage_data(s)[1] == 20);
  CHECK(c.live == 1);

  void *data = THIntStorage_data(s);
  THIntStorage_free(s);
  CHECK(c.frees == 3 && c.last_free == data);
  CHECK(c.live == 0 && c.bad_frees == 0);
  CHECK(c.reallocs == 0);
}

/* An allocator that fails: newWithAllocator reports an error and returns NULL; a failed realloc
 * leaves the storage as it was. */
static void failing(void) {
  Counter c;
  counter_init(&c);
  c.fail_malloc = 1;
  THFloatStorage *s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithAllocator(5, &counting_allocator, &c));
  CHECK(s == NULL);
  CHECK(THGetLastErrorCode() == TH_ERR_ALLOC);
  CHECK(c.mallocs == 1 && c.last_malloc_size == 20);
  CHECK(c.frees == 0 && c.live == 0);

  /* resize through a failing realloc */
  counter_init(&c);
  THLongStorage *l = THLongStorage_newWithAllocator(3, &counting_allocator, &c);
  for (int i = 0; i < 3; i++) THLongStorage_data(l)[i] = 7 + i;
  void *data = THLongStorage_data(l);
  c.fail_realloc = 1;
  EXPECT_ERROR(THLongStorage_resize(l, 1000));
  CHECK(THGetLastErrorCode() == TH_ERR_ALLOC);
  CHECK(c.reallocs == 1);
  CHECK(THLongStorage_size(l) == 3);
  CHECK(THLongStorage_data(l) == data);
  CHECK(THLongStorage_get(l, 0) == 7 && THLongStorage_get(l, 2) == 9);
  EXPECT_ERROR(THLongStorage_get(l, 3));
  c.fail_realloc = 0;
  THLongStorage_free(l);
  CHECK(c.frees == 1 && c.last_free == data && c.live == 0);

  /* resize through a failing malloc when there is no realloc */
  counter_init(&c);
  THByteStorage *b = THByteStorage_newWithAllocator(4, &no_realloc_allocator, &c);
  memset(THByteStorage_data(b), 0xab, 4);
  data = THByteStorage_data(b);
  c.fail_malloc = 1;
  EXPECT_ERROR(THByteStorage_resize(b, 64));
  CHECK(c.mallocs == 2 && c.frees == 0);
  CHECK(THByteStorage_size(b) == 4 && THByteStorage_data(b) == data);
  CHECK(THByteStorage_get(b, 3) == 0xab);
  THByteStorage_free(b);
  CHECK(c.frees == 1 && c.last_free == data && c.live == 0);
}

/* newWithDataAndAllocator: the storage takes the block; the allocator frees it exactly once. */
static void data_and_allocator(void) {
  Counter c;
  counter_init(&c);
  float *p = (float *)malloc(6 * sizeof(float));
  for (int i = 0; i < 6; i++) p[i] = 0.5f * (float)i;
  counter_adopt(&c, p);
  THFloatStorage *s = THFloatStorage_newWithDataAndAllocator(p, 6, &counting_allocator, &c);
  CHECK(s != NULL);
  CHECK(c.mallocs == 0);
  CHECK(THFloatStorage_data(s) == p);
  CHECK(THFloatStorage_size(s) == 6);
  CHECK(THFloatStorage_get(s, 5) == 2.5f);
  THFloatStorage_retain(s);
  THFloatStorage_free(s);
  CHECK(c.frees == 0);
  /* resizing goes through the same allocator */
  EXPECT_OK(THFloatStorage_resize(s, 8));
  CHECK(c.reallocs == 1 && c.last_realloc_in == (void *)p && c.last_realloc_size == 32);
  CHECK(THFloatStorage_get(s, 5) == 2.5f);
  void *data = THFloatStorage_data(s);
  THFloatStorage_free(s);
  CHECK(c.frees == 1);
  CHECK(c.last_free == data);
  CHECK(c.live == 0 && c.bad_frees == 0);

  /* without resizing the freed pointer is the one handed in */
  counter_init(&c);
  int16_t *q = (int16_t *)malloc(3 * sizeof(int16_t));
  q[0] = -1;
  q[1] = 2;
  q[2] = -3;
  counter_adopt(&c, q);
  THShortStorage *sh = THShortStorage_newWithDataAndAllocator(q, 3, &counting_allocator, &c);
  CHECK(THShortStorage_get(sh, 2) == -3);
  THShortStorage_free(sh);
  CHECK(c.frees == 1 && c.last_free == (void *)q && c.live == 0);

  /* on error the block stays the caller's: the allocator is not called */
  counter_init(&c);
  double *r = (double *)malloc(2 * sizeof(double));
  counter_adopt(&c, r);
  THDoubleStorage *bad = (THDoubleStorage *)&bad;
  EXPECT_ERROR(bad = THDoubleStorage_newWithDataAndAllocator(r, -1, &counting_allocator, &c));
  CHECK(bad == NULL);
  bad = (THDoubleStorage *)&bad;
  EXPECT_ERROR(bad = THDoubleStorage_newWithDataAndAllocator(r, 2, NULL, NULL));
  CHECK(bad == NULL);
  CHECK(c.frees == 0 && c.mallocs == 0 && c.reallocs == 0);
  counting_free(&c, r);
  CHECK(c.live == 0);

  /* the default allocator with a THAlloc block */
  int32_t *t = (int32_t *)THAlloc(4 * (ptrdiff_t)sizeof(int32_t));
  for (int i = 0; i < 4; i++) t[i] = 100 + i;
  THIntStorage *ti = THIntStorage_newWithDataAndAllocator(t, 4, &THDefaultAllocator, NULL);
  CHECK(THIntStorage_data(ti) == t && THIntStorage_get(ti, 3) == 103);
  THIntStorage_free(ti);
}

/* newWithData: memory from malloc or THAlloc, released by the storage (valgrind checks). */
static void with_data(void) {
  float *p = (float *)malloc(4 * sizeof(float));
  for (int i = 0; i < 4; i++) p[i] = (float)(3 - i);
  THFloatStorage *s = THFloatStorage_newWithData(p, 4);
  CHECK(s != NULL);
  CHECK(THFloatStorage_data(s) == p);
  CHECK(THFloatStorage_size(s) == 4);
  CHECK(THFloatStorage_get(s, 0) == 3.0f && THFloatStorage_get(s, 3) == 0.0f);
  EXPECT_OK(THFloatStorage_resize(s, 1000)); /* realloc of a malloc block */
  CHECK(THFloatStorage_get(s, 1) == 2.0f);
  THFloatStorage_free(s);

  int64_t *q = (int64_t *)THAlloc(3 * (ptrdiff_t)sizeof(int64_t));
  q[0] = INT64_MIN;
  q[1] = 0;
  q[2] = INT64_MAX;
  THLongStorage *l = THLongStorage_newWithData(q, 3);
  CHECK(THLongStorage_get(l, 0) == INT64_MIN && THLongStorage_get(l, 2) == INT64_MAX);
  THLongStorage_free(l);

  THByteStorage *e = THByteStorage_newWithData(NULL, 0);
  CHECK(e != NULL);
  CHECK(THByteStorage_size(e) == 0);
  THByteStorage_free(e);

  /* on error the block stays the caller's */
  uint8_t *m = (uint8_t *)malloc(8);
  THByteStorage *bad = (THByteStorage *)&bad;
  EXPECT_ERROR(bad = THByteStorage_newWithData(m, -2));
  CHECK(bad == NULL);
  free(m);
}

/* THAlloc / THRealloc / THFree (TH_API.md 10): 64-byte alignment, NULL for 0, errors for < 0. */
static void th_alloc(void) {
  static const ptrdiff_t sizes[] = {1, 7, 63, 64, 65, 4096, 5121, 100000, 1 << 22};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uint8_t *p = NULL;
    EXPECT_OK(p = (uint8_t *)THAlloc(sizes[k]));
    CHECK(p != NULL);
    CHECK(ALIGNED64(p));
    p[0] = 1;
    p[sizes[k] - 1] = 2; /* the whole block is usable (valgrind checks) */
    THFree(p);
  }

  void *z = (void *)&z;
  EXPECT_OK(z = THAlloc(0));
  CHECK(z == NULL);

  void *neg = (void *)&neg;
  EXPECT_ERROR(neg = THAlloc(-1));
  CHECK(neg == NULL);
  neg = (void *)&neg;
  EXPECT_ERROR(neg = THAlloc(PTRDIFF_MIN));
  CHECK(neg == NULL);
  neg = (void *)&neg;
  EXPECT_ERROR(neg = THAlloc(PTRDIFF_MAX));
  CHECK(neg == NULL);

  /* THRealloc keeps the prefix and the alignment through growing and shrinking */
  uint8_t *p = (uint8_t *)THAlloc(100);
  for (int i = 0; i < 100; i++) p[i] = (uint8_t)(i * 3);
  ptrdiff_t have = 100;
  static const ptrdiff_t steps[] = {100000, 50, 7, 65, 4097, 6000, 1 << 20, 100};
  for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
    uint8_t *q = NULL;
    EXPECT_OK(q = (uint8_t *)THRealloc(p, steps[k]));
    CHECK(q != NULL);
    CHECK(ALIGNED64(q));
    ptrdiff_t keep = have < steps[k] ? have : steps[k];
    int ok = 1;
    for (ptrdiff_t i = 0; i < keep; i++)
      if (q[i] != (uint8_t)(i * 3)) ok = 0;
    CHECK(ok);
    for (ptrdiff_t i = keep; i < steps[k]; i++) q[i] = (uint8_t)(i * 3);
    have = steps[k];
    p = q;
  }

  /* a failed THRealloc returns NULL and leaves the block alone */
  void *r = (void *)&r;
  EXPECT_ERROR(r = THRealloc(p, -1));
  CHECK(r == NULL);
  CHECK(p[0] == 0 && p[99] == (uint8_t)(99 * 3));

  /* (p, 0) frees and returns NULL */
  void *gone = (void *)&gone;
  EXPECT_OK(gone = THRealloc(p, 0));
  CHECK(gone == NULL);

  /* (NULL, n) allocates */
  uint8_t *fresh = NULL;
  EXPECT_OK(fresh = (uint8_t *)THRealloc(NULL, 300));
  CHECK(fresh != NULL && ALIGNED64(fresh));
  fresh[299] = 1;
  THFree(fresh);

  EXPECT_OK(THFree(NULL));
}

/* THDefaultAllocator: {THAlloc, THRealloc, THFree}, ignoring the context. */
static void default_allocator(void) {
  THFloatStorage *s = THFloatStorage_newWithAllocator(16, &THDefaultAllocator, NULL);
  CHECK(s != NULL);
  CHECK(THFloatStorage_size(s) == 16);
  CHECK(ALIGNED64(THFloatStorage_data(s)));
  for (int i = 0; i < 16; i++) THFloatStorage_data(s)[i] = (float)i + 0.25f;
  EXPECT_OK(THFloatStorage_resize(s, 10000));
  CHECK(ALIGNED64(THFloatStorage_data(s)));
  CHECK(THFloatStorage_get(s, 15) == 15.25f);
  EXPECT_OK(THFloatStorage_resize(s, 5));
  CHECK(THFloatStorage_get(s, 4) == 4.25f);
  THFloatStorage_free(s);

  /* the context is ignored */
  int dummy = 0;
  THByteStorage *b = THByteStorage_newWithAllocator(3, &THDefaultAllocator, &dummy);
  CHECK(b != NULL && THByteStorage_size(b) == 3);
  THByteStorage_free(b);
  CHECK(dummy == 0);

  /* calling the callbacks directly */
  uint8_t *p = (uint8_t *)THDefaultAllocator.malloc(NULL, 256);
  CHECK(p != NULL && ALIGNED64(p));
  for (int i = 0; i < 256; i++) p[i] = (uint8_t)i;
  p = (uint8_t *)THDefaultAllocator.realloc(NULL, p, 100000);
  CHECK(p != NULL && ALIGNED64(p));
  CHECK(p[0] == 0 && p[255] == 255);
  THDefaultAllocator.free(NULL, p);
  CHECK(THDefaultAllocator.malloc(NULL, 0) == NULL);
  THDefaultAllocator.free(NULL, NULL);

  /* a storage from newWithSize behaves as one from the default allocator */
  THDoubleStorage *d = THDoubleStorage_newWithSize(9);
  CHECK(ALIGNED64(THDoubleStorage_data(d)));
  THDoubleStorage_free(d);
}

int main(void) {
  th_test_install_handlers();
  counted_lifecycle();
  without_realloc();
  failing();
  data_and_allocator();
  with_data();
  th_alloc();
  default_allocator();
  CHECK(counting_bad_ctx == 0);
  return TH_TEST_DONE();
}
