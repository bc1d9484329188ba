/* Threads: atomic refcounts (8 threads retain/free one tensor 100000 times each while main
 * holds a reference; the storage comes from a counting allocator and is freed exactly once,
 * at the very end), per-thread last errors and handlers, and 8 threads reading one tensor
 * through their own views at the same time. Counters are only CHECKed on the main thread.
 * Also: 4. views made and dropped from many threads while the last reference to the shared
 * tensor moves to a worker (storage freed exactly once, by whichever thread lets go last);
 * 5. math on shared read-only inputs from many threads at once (pointwise, reductions, sort,
 * indexSelect, copy), checked against plain C loops, with each thread also raising its own
 * errors in between and never seeing another thread's. */
#include "th_test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8

/* ---- a counting allocator ---------------------------------------------------------------- */
typedef struct {
  pthread_mutex_t mu;
  int mallocs, reallocs, frees;
  ptrdiff_t bytes;
} Counter;

static void *cnt_malloc(void *ctx, ptrdiff_t size) {
  Counter *c = ctx;
  pthread_mutex_lock(&c->mu);
  c->mallocs++;
  c->bytes = size;
  pthread_mutex_unlock(&c->mu);
  return malloc((size_t)size);
}
static void *cnt_realloc(void *ctx, void *p, ptrdiff_t size) {
  Counter *c = ctx;
  pthread_mutex_lock(&c->mu);
  c->reallocs++;
  c->bytes = size;
  pthread_mutex_unlock(&c->mu);
  return realloc(p, (size_t)size);
}
static void cnt_free(void *ctx, void *p) {
  Counter *c = ctx;
  pthread_mutex_lock(&c->mu);
  c->frees++;
  pthread_mutex_unlock(&c->mu);
  free(p);
}
static THAllocator counting = {cnt_malloc, cnt_realloc, cnt_free};

static int counts(Counter *c, int *m, int *r, int *f) {
  pthread_mutex_lock(&c->mu);
  *m = c->mallocs;
  *r = c->reallocs;
  *f = c->frees;
  pthread_mutex_unlock(&c->mu);
  return 0;
}

/* ---- 1. refcounts ----------------------------------------------------------------------- */
typedef struct {
  THFloatTensor *t;
  THFloatStorage *s;
  pthread_barrier_t *go;
  int mode;
} RcArg;

static void *rc_worker(void *p) {
  RcArg *a = p;
  pthread_barrier_wait(a->go);
  if (a->mode == 0) {
    for (int i = 0; i < 100000; i++) {
      THFloatTensor_retain(a->t);
      THFloatTensor_free(a->t);
    }
  } else {
    /* Bursts: the count climbs by 1000 per thread, then falls back. */
    for (int k = 0; k < 100; k++) {
      for (int i = 0; i < 1000; i++) THFloatTensor_retain(a->t);
      for (int i = 0; i < 1000; i++) THFloatTensor_free(a->t);
    }
  }
  for (int i = 0; i < 20000; i++) {
    THFloatStorage_retain(a->s);
    THFloatStorage_release(a->s);
  }
  return NULL;
}

static void test_refcounts(void) {
  Counter c;
  int m, r, f;
  memset(&c, 0, sizeof c);
  pthread_mutex_init(&c.mu, NULL);
  THFloatStorage *s = THFloatStorage_newWithAllocator(64, &counting, &c);
  CHECK(s != NULL);
  counts(&c, &m, &r, &f);
  CHECK(m == 1 && f == 0 && c.bytes == 64 * (ptrdiff_t)sizeof(float));
  for (int k = 0; k < 64; k++) THFloatStorage_set(s, k, (float)(k * 3));
  THFloatTensor *t = THFloatTensor_newWithStorage2d(s, 0, 8, 8, 8, 1);
  THFloatStorage_free(s); /* from here on the tensor's reference keeps the storage alive */
  counts(&c, &m, &r, &f);
  CHECK(f == 0);

  pthread_t th[NTHREADS];
  pthread_barrier_t go;
  RcArg args[NTHREADS];
  pthread_barrier_init(&go, NULL, NTHREADS);
  for (int i = 0; i < NTHREADS; i++) {
    args[i] = (RcArg){t, s, &go, i % 2};
    pthread_create(&th[i], NULL, rc_worker, &args[i]);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&go);

  /* Every retain was matched by a free: main's reference is the only one left. */
  counts(&c, &m, &r, &f);
  CHECK(m == 1 && r == 0 && f == 0);
  {
    int ok = 1;
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 8; j++) ok &= THFloatTensor_get2d(t, i, j) == (float)((i * 8 + j) * 3);
    CHECK(ok);
    CHECK(THFloatTensor_storage(t) == s && THFloatStorage_size(s) == 64);
  }
  THFloatTensor_free(t);
  counts(&c, &m, &r, &f);
  CHECK(m == 1 && f == 1); /* freed exactly once, by the last free */
  pthread_mutex_destroy(&c.mu);
}

/* ---- 2. errors are per thread ------------------------------------------------------------ */
typedef struct {
  THFloatTensor *t;
  pthread_barrier_t *step;
  int id;
  /* results */
  int clean_at_start, own_code, own_msg, own_handler_calls, still_own_after_other, other_invisible;
} ErrArg;

static __thread int tl_calls; /* this thread's handler calls (C99 + GNU __thread) */
static void tl_handler(const char *msg, void *data) {
  (void)msg;
  (void)data;
  tl_calls++;
}

static void *err_worker(void *p) {
  ErrArg *a = p;
  a->clean_at_start = THGetLastError() == NULL && THGetLastErrorCode() == TH_OK;
  if (a->id == 0) {
    THSetErrorHandler(tl_handler, NULL);
    THFloatTensor_get2d(a->t, 0, 99); /* index error on this thread */
    a->own_code = THGetLastErrorCode();
    a->own_msg = THGetLastError() != NULL && strstr(THGetLastError(), "get2d") != NULL;
    a->own_handler_calls = tl_calls;
    pthread_barrier_wait(a->step); /* 1: thread 1 may look now */
    pthread_barrier_wait(a->step); /* 2: thread 1 has failed too */
    a->still_own_after_other = THGetLastErrorCode() == TH_ERR_INDEX && tl_calls == 1;
    a->other_invisible = 1;
  } else {
    pthread_barrier_wait(a->step); /* 1 */
    a->other_invisible = THGetLastError() == NULL && THGetLastErrorCode() == TH_OK;
    THFloatTensor_resize1d(NULL, 3); /* NULL error on this thread, no handler of its own */
    a->own_code = THGetLastErrorCode();
    a->own_msg = THGetLastError() != NULL && strstr(THGetLastError(), "resize1d") != NULL;
    a->own_handler_calls = tl_calls;
    pthread_barrier_wait(a->step); /* 2 */
    a->still_own_after_other = 1;
  }
  return NULL;
}

static void test_thread_errors(void) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(2, 3);
  int calls = th_test_handler_calls;
  EXPECT_ERROR(THFloatTensor_newWithSize1d(-5)); /* main's own last error */
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE);
  calls = th_test_handler_calls;

  pthread_t th[2];
  pthread_barrier_t step;
  ErrArg a[2];
  pthread_barrier_init(&step, NULL, 2);
  for (int i = 0; i < 2; i++) {
    memset(&a[i], 0, sizeof a[i]);
    a[i].t = t;
    a[i].step = &step;
    a[i].id = i;
    pthread_create(&th[i], NULL, err_worker, &a[i]);
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&step);

  CHECK(a[0].clean_at_start && a[1].clean_at_start); /* main's error is not theirs */
  CHECK(a[0].own_code == TH_ERR_INDEX && a[0].own_msg && a[0].own_handler_calls == 1);
  CHECK(a[1].other_invisible);                        /* thread 0's error is not thread 1's */
  CHECK(a[1].own_code == TH_ERR_NULL_ARG && a[1].own_msg);
  CHECK(a[1].own_handler_calls == 0);                 /* thread 0's handler is thread 0's */
  CHECK(a[0].still_own_after_other);                  /* and thread 1's error is not thread 0's */
  /* Main: unchanged last error, and main's handler saw none of the threads' errors. */
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE && THGetLastError() != NULL);
  CHECK(th_test_handler_calls == calls);
  THClearLastError();
  THFloatTensor_free(t);
}

/* ---- 3. concurrent readers --------------------------------------------------------------- */
#define ROWS 64
#define COLS 48
static float f_of(int i, int j) { return (float)(i * 1000 + j); }

typedef struct {
  THFloatTensor *t;
  pthread_barrier_t *go;
  int id;
  long checks, bad, errors;
} ReadArg;

static void *read_worker(void *p) {
  ReadArg *a = p;
  THSetErrorHandler(tl_handler, NULL);
  tl_calls = 0;
  pthread_barrier_wait(a->go);
  for (int it = 0; it < 40; it++) {
    int r0 = (a->id * 7 + it * 5) % (ROWS - 8);
    int c0 = (a->id * 3 + it) % (COLS - 6);
    THFloatTensor *n = THFloatTensor_newNarrow(a->t, 0, r0, 8);
    THFloatTensor *nn = THFloatTensor_newNarrow(n, 1, c0, 6);
    THFloatTensor *tr = THFloatTensor_newTranspose(nn, 0, 1);
    THFloatTensor *row = THFloatTensor_newSelect(a->t, 0, (r0 + 3) % ROWS);
    if (!n || !nn || !tr || !row) {
      a->bad++;
    } else {
      if (THFloatTensor_size(tr, 0) != 6 || THFloatTensor_size(tr, 1) != 8 ||
          THFloatTensor_storageOffset(nn) != (ptrdiff_t)(r0 * COLS + c0))
        a->bad++;
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < COLS; j++, a->checks++)
          if (THFloatTensor_get2d(n, i, j) != f_of(r0 + i, j)) a->bad++;
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++, a->checks++)
          if (THFloatTensor_get2d(tr, i, j) != f_of(r0 + j, c0 + i)) a->bad++;
      for (int j = 0; j < COLS; j++, a->checks++)
        if (THFloatTensor_get1d(row, j) != f_of((r0 + 3) % ROWS, j)) a->bad++;
      /* An in-place re-view of a private header over the shared storage. */
      THFloatTensor_transpose(n, NULL, 0, 1);
      for (int i = 0; i < COLS; i += 7, a->checks++)
        if (THFloatTensor_get2d(n, i, 5) != f_of(r0 + 5, i)) a->bad++;
    }
    THFloatTensor_free(row);
    THFloatTensor_free(tr);
    THFloatTensor_free(nn);
    THFloatTensor_free(n);
  }
  a->errors = tl_calls + (THGetLastErrorCode() != TH_OK);
  return NULL;
}

static void test_concurrent_reads(void) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(ROWS, COLS);
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < COLS; j++) THFloatTensor_set2d(t, i, j, f_of(i, j));
  pthread_t th[NTHREADS];
  pthread_barrier_t go;
  ReadArg a[NTHREADS];
  pthread_barrier_init(&go, NULL, NTHREADS);
  for (int i = 0; i < NTHREADS; i++) {
    a[i] = (ReadArg){t, &go, i, 0, 0, 0};
    pthread_create(&th[i], NULL, read_worker, &a[i]);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&go);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK(a[i].bad == 0);
    CHECK(a[i].errors == 0);
    CHECK(a[i].checks == 40L * (8 * COLS + 6 * 8 + COLS + 7));
  }
  /* The shared tensor itself was never changed. */
  CHECK(THFloatTensor_nDimension(t) == 2 && THFloatTensor_size(t, 0) == ROWS && THFloatTensor_stride(t, 0) == COLS);
  CHECK(THFloatTensor_get2d(t, ROWS - 1, COLS - 1) == f_of(ROWS - 1, COLS - 1));
  THFloatTensor_free(t);
}

/* ---- 4. views and the last reference across threads -------------------------------------- */
typedef struct {
  THFloatTensor *t; /* one reference owned by this worker, dropped at the end */
  pthread_barrier_t *go;
  int id;
  long bad;
} ViewArg;

static void *view_worker(void *p) {
  ViewArg *a = p;
  pthread_barrier_wait(a->go);
  for (int it = 0; it < 60; it++) {
    int r = (a->id + it) % 8;
    THFloatTensor *row = THFloatTensor_newSelect(a->t, 0, r);
    THFloatTensor *tr = THFloatTensor_newTranspose(a->t, 0, 1);
    THFloatTensor *n = THFloatTensor_newNarrow(tr, 1, r, 1);
    THFloatTensor *u = THFloatTensor_newUnfold(row, 0, 2, 2);
    THFloatTensor *same = THFloatTensor_newWithTensor(a->t);
    THFloatTensor_retain(row); /* an extra reference on a view, dropped below */
    if (!row || !tr || !n || !u || !same)
      a->bad++;
    else if (THFloatTensor_get1d(row, 3) != (float)(r * 8 + 3) * 3 || THFloatTensor_get2d(n, 5, 0) != (float)(r * 8 + 5) * 3 ||
             THFloatTensor_get2d(u, 1, 1) != (float)(r * 8 + 3) * 3 || THFloatTensor_storage(same) != THFloatTensor_storage(a->t))
      a->bad++;
    THFloatTensor_free(row);
    THFloatTensor_free(same);
    THFloatTensor_free(u);
    THFloatTensor_free(n);
    THFloatTensor_free(tr);
    THFloatTensor_free(row);
  }
  THFloatTensor_free(a->t); /* maybe the last reference: then the storage goes here */
  return NULL;
}

static void test_last_reference_on_workers(void) {
  Counter c;
  int m, r, f;
  memset(&c, 0, sizeof c);
  pthread_mutex_init(&c.mu, NULL);
  for (int round = 0; round < 4; round++) {
    THFloatStorage *s = THFloatStorage_newWithAllocator(64, &counting, &c);
    for (int k = 0; k < 64; k++) THFloatStorage_set(s, k, (float)(k * 3));
    THFloatTensor *t = THFloatTensor_newWithStorage2d(s, 0, 8, 8, 8, 1);
    THFloatStorage_free(s);
    pthread_t th[NTHREADS];
    pthread_barrier_t go;
    ViewArg args[NTHREADS];
    pthread_barrier_init(&go, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
      THFloatTensor_retain(t);
      args[i] = (ViewArg){t, &go, i, 0};
      pthread_create(&th[i], NULL, view_worker, &args[i]);
    }
    THFloatTensor_free(t); /* main lets go first: a worker drops the last reference */
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < NTHREADS; i++) CHECK(args[i].bad == 0);
    counts(&c, &m, &r, &f);
    CHECK(m == round + 1 && f == round + 1); /* each round's storage freed exactly once */
  }
  pthread_mutex_destroy(&c.mu);
}

/* ---- 5. concurrent math on shared read-only inputs ---------------------------------------- */
#define MATH_ITERS 4
#define MR 37
#define MC 29
static double a_of(int i, int j) { return (double)((i * 7 + j * 3) % 23) - 11.0; }
static double b_of(int i, int j) { return (double)((i * 5 + j * 11) % 17) * 0.5; }

typedef struct {
  THDoubleTensor *a, *b, *at; /* shared, read only; at = a transposed (a strided view) */
  THLongTensor *idx;
  pthread_barrier_t *go;
  int id;
  long bad, own_errors_ok, checks;
} MathArg;

static void *math_worker(void *p) {
  MathArg *a = p;
  THDoubleTensor *r = THDoubleTensor_new();
  THDoubleTensor *rs = THDoubleTensor_new();
  THLongTensor *ri = THLongTensor_new();
  THFloatTensor *rf = THFloatTensor_new();
  THDoubleTensor *three = THDoubleTensor_newWithSize1d(3);
  pthread_barrier_wait(a->go);
  for (int it = 0; it < MATH_ITERS; it++) {
    /* r = a + 2 b (broadcast-free pointwise on shared inputs) */
    THDoubleTensor_cadd(r, a->a, 2.0, a->b);
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < MC; j++, a->checks++)
        if (THDoubleTensor_get2d(r, i, j) != a_of(i, j) + 2.0 * b_of(i, j)) a->bad++;
    /* rs = sum over the rows of the transposed view: the column sums of a */
    THDoubleTensor_sum(rs, a->at, 1, 0);
    for (int j = 0; j < MC; j++, a->checks++) {
      double want = 0;
      for (int i = 0; i < MR; i++) want += a_of(i, j);
      if (THDoubleTensor_get1d(rs, j) != want) a->bad++;
    }
    a->checks++;
    {
      double want = 0;
      for (int i = 0; i < MR; i++)
        for (int j = 0; j < MC; j++) want += a_of(i, j) * b_of(i, j);
      if (THDoubleTensor_dot(a->a, a->b) != want) a->bad++;
    }
    /* sort each row of a (ascending): sorted and a permutation of the row */
    THDoubleTensor_sort(r, ri, a->a, 1, 0);
    for (int i = 0; i < MR; i++) {
      double prev = -1e300;
      for (int j = 0; j < MC; j++, a->checks++) {
        double v = THDoubleTensor_get2d(r, i, j);
        int64_t k = THLongTensor_get2d(ri, i, j);
        if (v < prev || k < 0 || k >= MC || a_of(i, (int)k) != v) a->bad++;
        prev = v;
      }
    }
    /* indexSelect rows of b, and a cross-dtype copy */
    THDoubleTensor_indexSelect(r, a->b, 0, a->idx);
    for (int q = 0; q < 5; q++)
      for (int j = 0; j < MC; j++, a->checks++)
        if (THDoubleTensor_get2d(r, q, j) != b_of((q * 7 + a->id) % MR, j)) a->bad++;
    THFloatTensor_resize2d(rf, MC, MR);
    THFloatTensor_copyDouble(rf, a->at);
    for (int j = 0; j < MC; j += 4)
      for (int i = 0; i < MR; i += 3, a->checks++)
        if (THFloatTensor_get2d(rf, j, i) != (float)a_of(i, j)) a->bad++;
    /* this thread's own error, invisible to the others */
    THClearLastError();
    if (a->id % 2)
      THDoubleTensor_cadd(r, a->a, 1.0, three); /* 37x29 and 3 do not broadcast */
    else
      THDoubleTensor_narrow(r, a->a, 5, 0, 1); /* bad dimension */
    int want = a->id % 2 ? TH_ERR_SIZE : TH_ERR_INDEX;
    if (THGetLastErrorCode() == want && THGetLastError() != NULL) a->own_errors_ok++;
    THClearLastError();
    THDoubleTensor_add(r, a->a, 1.0); /* a successful call reports nothing */
    if (THGetLastErrorCode() != TH_OK) a->bad++;
  }
  THDoubleTensor_free(three);
  THFloatTensor_free(rf);
  THLongTensor_free(ri);
  THDoubleTensor_free(rs);
  THDoubleTensor_free(r);
  return NULL;
}

static void test_concurrent_math(void) {
  THDoubleTensor *A = THDoubleTensor_newWithSize2d(MR, MC);
  THDoubleTensor *B = THDoubleTensor_newWithSize2d(MR, MC);
  for (int i = 0; i < MR; i++)
    for (int j = 0; j < MC; j++) {
      THDoubleTensor_set2d(A, i, j, a_of(i, j));
      THDoubleTensor_set2d(B, i, j, b_of(i, j));
    }
  THDoubleTensor *At = THDoubleTensor_newTranspose(A, 0, 1);
  pthread_t th[NTHREADS];
  pthread_barrier_t go;
  MathArg args[NTHREADS];
  THLongTensor *idx[NTHREADS];
  pthread_barrier_init(&go, NULL, NTHREADS);
  for (int i = 0; i < NTHREADS; i++) {
    idx[i] = THLongTensor_newWithSize1d(5);
    for (int q = 0; q < 5; q++) THLongTensor_set1d(idx[i], q, (q * 7 + i) % MR);
    args[i] = (MathArg){A, B, At, idx[i], &go, i, 0, 0, 0};
    pthread_create(&th[i], NULL, math_worker, &args[i]);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&go);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK(args[i].bad == 0);
    CHECK(args[i].own_errors_ok == MATH_ITERS);
    CHECK(args[i].checks > (long)MATH_ITERS * MR * MC * 2);
    THLongTensor_free(idx[i]);
  }
  CHECK(THGetLastErrorCode() == TH_OK); /* main saw none of the workers' errors */
  for (int i = 0; i < MR; i += 5)
    for (int j = 0; j < MC; j += 4) CHECK(THDoubleTensor_get2d(A, i, j) == a_of(i, j)); /* inputs untouched */
  THDoubleTensor_free(At);
  THDoubleTensor_free(B);
  THDoubleTensor_free(A);
}

int main(void) {
  th_test_install_handlers();
  test_refcounts();
  test_thread_errors();
  test_concurrent_reads();
  test_last_reference_on_workers();
  THClearLastError();
  test_concurrent_math();
  return TH_TEST_DONE();
}
