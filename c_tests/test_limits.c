/* Limits: allocation failure is an error, never an abort. Each case runs in a forked child so
 * that an abort (the failure this test exists to catch: Rust's Vec aborts the process when an
 * allocation fails) is seen by the parent as a failed case instead of killing the test.
 *
 * 1. Sizes past any machine: element counts and byte sizes that overflow int64_t / ptrdiff_t,
 *    or need terabytes; and stride-0 expansions with 2^40 logical elements (no memory at all)
 *    fed to operations that must materialise them (clone, contiguous, cumsum, sort, reshape,
 *    cat, resizeAs, pointwise into a fresh output). Every call fails with TH_ERR_SIZE or
 *    TH_ERR_ALLOC and leaves its output unchanged; the library still works afterwards.
 * 2. The same with the address space limited (setrlimit(RLIMIT_AS) to what the process uses
 *    plus 384 MiB): allocations that would succeed on the machine fail, both C-heap storages
 *    and the Rust-side temporaries of sort/topk/maskedSelect/nonzero, and fail cleanly.
 *    Skipped under valgrind and AddressSanitizer, which need the address space themselves. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TH_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TH_UNDER_ASAN 1
#endif
#ifndef TH_UNDER_ASAN
#define TH_UNDER_ASAN 0
#endif

static int under_valgrind(void) {
  const char *p = getenv("LD_PRELOAD");
  return p != NULL && strstr(p, "vgpreload") != NULL;
}

/* ---- geometry snapshots ------------------------------------------------------------------ */
typedef struct {
  int nd;
  int64_t sz[8], st[8];
  ptrdiff_t off;
  void *s;
  ptrdiff_t ssize;
} Geo;

static Geo geo(THFloatTensor *t) {
  Geo g;
  memset(&g, 0, sizeof g);
  g.nd = THFloatTensor_nDimension(t);
  for (int d = 0; d < g.nd && d < 8; d++) {
    g.sz[d] = THFloatTensor_size(t, d);
    g.st[d] = THFloatTensor_stride(t, d);
  }
  g.off = THFloatTensor_storageOffset(t);
  g.s = THFloatTensor_storage(t);
  g.ssize = g.s ? THFloatStorage_size(g.s) : 0;
  return g;
}

static int same_geo(const Geo *a, THFloatTensor *t) {
  Geo b = geo(t);
  return memcmp(a, &b, sizeof b) == 0;
}

/* `call` fails with one of the codes; `out` keeps its geometry and its first element. */
#define FAILS_KEEPING(out, codes, call)                                                      \
  do {                                                                                       \
    Geo g_ = geo(out);                                                                       \
    float first_ = THFloatTensor_nDimension(out) ? THFloatTensor_data(out)[0] : 0.0f;        \
    EXPECT_ERROR(call);                                                                      \
    int c_ = THGetLastErrorCode();                                                           \
    CHECK(((codes) & (1u << c_)) != 0);                                                      \
    if (((codes) & (1u << c_)) == 0) fprintf(stderr, "  %s: code %d: %s\n", #call, c_, THGetLastError()); \
    CHECK(same_geo(&g_, out));                                                               \
    CHECK(!THFloatTensor_nDimension(out) || THFloatTensor_data(out)[0] == first_);           \
  } while (0)

#define SIZE_OR_ALLOC ((1u << TH_ERR_SIZE) | (1u << TH_ERR_ALLOC))

/* A 1-element tensor seen as `a x b` with both strides 0. */
static THFloatTensor *expanded(int64_t a, int64_t b) {
  THFloatTensor *one = THFloatTensor_newWithSize2d(1, 1);
  THFloatTensor_fill(one, 1.0f);
  THLongStorage *sz = THLongStorage_newWithSize2(a, b);
  THFloatTensor *e = THFloatTensor_newExpand(one, sz);
  THLongStorage_free(sz);
  THFloatTensor_free(one);
  return e;
}

/* The library still works after the failures. */
static void still_works(void) {
  THFloatTensor *t = THFloatTensor_newWithSize1d(4);
  THFloatTensor_fill(t, 2.0f);
  CHECK(THFloatTensor_sumall(t) == 8.0);
  THFloatTensor_free(t);
}

/* ---- 1. sizes past any machine ----------------------------------------------------------- */
static void case_huge_sizes(void) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(2, 3);
  THFloatTensor_fill(t, 5.0f);
  const int64_t big = (int64_t)1 << 40;
  THFloatTensor *n;
  EXPECT_ERROR(n = THFloatTensor_newWithSize1d(big));
  CHECK(n == NULL && THGetLastErrorCode() == TH_ERR_ALLOC);
  EXPECT_ERROR(n = THFloatTensor_newWithSize2d(INT64_MAX, 2));
  CHECK(n == NULL && THGetLastErrorCode() == TH_ERR_SIZE);
  EXPECT_ERROR(n = THFloatTensor_newWithSize4d((int64_t)1 << 20, (int64_t)1 << 20, (int64_t)1 << 20, 2));
  CHECK(n == NULL && THGetLastErrorCode() == TH_ERR_SIZE);
  FAILS_KEEPING(t, SIZE_OR_ALLOC, THFloatTensor_resize1d(t, big));
  FAILS_KEEPING(t, SIZE_OR_ALLOC, THFloatTensor_resize2d(t, INT64_MAX / 2, 3));
  FAILS_KEEPING(t, SIZE_OR_ALLOC, THFloatTensor_resize5d(t, 1 << 15, 1 << 15, 1 << 15, 1 << 15, 1 << 15));
  /* cat past the inputs' dimensions adds size-1 dims (torch7); INT_MAX of them is refused */
  FAILS_KEEPING(t, 1u << TH_ERR_INDEX, THFloatTensor_cat(t, t, t, 2147483647));
  {
    int64_t sz[2] = {3, 3}, st[2] = {INT64_MAX / 2, 1};
    FAILS_KEEPING(t, SIZE_OR_ALLOC, THFloatTensor_resizeNd(t, 2, sz, st));
    FAILS_KEEPING(t, SIZE_OR_ALLOC, THFloatTensor_setStorageNd(t, THFloatTensor_storage(t), PTRDIFF_MAX - 2, 2, sz, NULL));
  }
  THFloatStorage *s;
  EXPECT_ERROR(s = THFloatStorage_newWithSize(PTRDIFF_MAX / 2));
  CHECK(s == NULL && THGetLastErrorCode() == TH_ERR_SIZE);
  EXPECT_ERROR(s = THFloatStorage_newWithSize((ptrdiff_t)1 << 40));
  CHECK(s == NULL && THGetLastErrorCode() == TH_ERR_ALLOC);
  s = THFloatStorage_newWithSize(4);
  THFloatStorage_fill(s, 1.0f);
  EXPECT_ERROR(THFloatStorage_resize(s, (ptrdiff_t)1 << 40));
  CHECK(THFloatStorage_size(s) == 4 && THFloatStorage_get(s, 3) == 1.0f);
  THFloatStorage_free(s);
  CHECK(THFloatTensor_sumall(t) == 30.0);
  THFloatTensor_free(t);
  still_works();
}

/* Stride-0 tensors of 2^40 elements fed to operations that materialise them. */
static void case_expanded(void) {
  THFloatTensor *e = expanded((int64_t)1 << 20, (int64_t)1 << 20);
  CHECK(e != NULL && THFloatTensor_nElement(e) == (ptrdiff_t)1 << 40);
  THFloatTensor *r = THFloatTensor_newWithSize1d(3);
  THFloatTensor_fill(r, 7.0f);
  THLongTensor *ri = THLongTensor_newWithSize1d(2);
  THLongStorage *flat = THLongStorage_newWithSize1((int64_t)1 << 40);
  THFloatTensor *n;
  EXPECT_ERROR(n = THFloatTensor_newClone(e));
  CHECK(n == NULL && THGetLastErrorCode() == TH_ERR_ALLOC);
  EXPECT_ERROR(n = THFloatTensor_newContiguous(e));
  CHECK(n == NULL && THGetLastErrorCode() == TH_ERR_ALLOC);
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_cumsum(r, e, 1));
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_sort(r, ri, e, 1, 0));
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_reshape(r, e, flat));
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_cat(r, e, e, 0));
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_resizeAs(r, e));
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_cadd(r, e, 1.0f, e));
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_exp(r, e));
  /* (nonzero and maskedSelect are left out here: they scan all 2^40 elements before they know
   * their result size, which takes hours; they run under RLIMIT_AS below.) */
  /* Nothing was touched: e still reads as ones, r as sevens. */
  CHECK(THFloatTensor_get2d(e, ((int64_t)1 << 20) - 1, 5) == 1.0f);
  CHECK(THFloatTensor_sumall(r) == 21.0);
  THLongStorage_free(flat);
  THLongTensor_free(ri);
  THFloatTensor_free(r);
  THFloatTensor_free(e);
  still_works();
}

/* ---- 2. under RLIMIT_AS ------------------------------------------------------------------ */
static long vm_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0;
  if (f) {
    if (fscanf(f, "%ld", &pages) != 1) pages = 0;
    fclose(f);
  }
  return pages * sysconf(_SC_PAGESIZE);
}

/* Starts the worker threads (so their stacks and arenas exist), then caps the address space. */
static int limit_address_space(long extra) {
  THFloatTensor *w = THFloatTensor_newWithSize1d(1 << 22);
  THFloatTensor_fill(w, 1.0f);
  THFloatTensor_cadd(w, w, 1.0f, w);
  CHECK(THFloatTensor_sumall(w) == (double)(1 << 23));
  THFloatTensor_free(w);
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = (rlim_t)(vm_bytes() + extra);
  return setrlimit(RLIMIT_AS, &rl);
}

static const long MiB = 1L << 20;

static void case_rlimit_storage(void) {
  CHECK(limit_address_space(384 * MiB) == 0);
  THFloatTensor *n;
  EXPECT_ERROR(n = THFloatTensor_newWithSize1d(1 << 28)); /* 1 GiB */
  CHECK(n == NULL && THGetLastErrorCode() == TH_ERR_ALLOC);
  THFloatTensor *t = THFloatTensor_newWithSize1d(8);
  THFloatTensor_fill(t, 1.0f);
  FAILS_KEEPING(t, SIZE_OR_ALLOC, THFloatTensor_resize2d(t, 1 << 14, 1 << 14));
  THFloatStorage *s;
  EXPECT_ERROR(s = THFloatStorage_newWithSize(1 << 28));
  CHECK(s == NULL && THGetLastErrorCode() == TH_ERR_ALLOC);
  THFloatTensor_free(t);
  still_works();
}

/* Real data within the limit whose Rust-side temporaries are not. */
static void case_rlimit_temporaries(void) {
  const int64_t n = (int64_t)1 << 24; /* 64 MiB of floats */
  THFloatTensor *t = THFloatTensor_newWithSize1d(n);
  THFloatTensor_fill(t, 3.0f);
  THFloatTensor *rt = THFloatTensor_newWithSize1d(n);
  THLongTensor *ri = THLongTensor_newWithSize1d(n);
  THByteTensor *m = THByteTensor_newWithSize1d(n);
  THByteTensor_fill(m, 1);
  THLongTensor *nz = THLongTensor_newWithSize1d(1);
  CHECK(limit_address_space(160 * MiB) == 0);
  /* sort/topk need (value, index) pairs: 256 MiB. */
  FAILS_KEEPING(rt, SIZE_OR_ALLOC, THFloatTensor_sort(rt, ri, t, 0, 0));
  FAILS_KEEPING(rt, SIZE_OR_ALLOC, THFloatTensor_topk(rt, ri, t, n, 0, 1, 1));
  /* maskedSelect gathers the source and the mask first. */
  THFloatTensor *r = THFloatTensor_newWithSize1d(2);
  FAILS_KEEPING(r, SIZE_OR_ALLOC, THFloatTensor_maskedSelect(r, t, m));
  /* nonzero: n subscripts. */
  EXPECT_ERROR(THFloatTensor_nonzero(nz, t));
  CHECK(THLongTensor_nDimension(nz) == 1 && THLongTensor_size(nz, 0) == 1);
  CHECK(THFloatTensor_get1d(t, n - 1) == 3.0f);
  THFloatTensor_free(r);
  THLongTensor_free(nz);
  THByteTensor_free(m);
  THLongTensor_free(ri);
  THFloatTensor_free(rt);
  THFloatTensor_free(t);
  still_works();
}

/* ---- driver ------------------------------------------------------------------------------ */
static int run_case(const char *name, void (*fn)(void)) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    th_test_checks = th_test_failures = 0; /* count this case only */
    th_test_install_handlers();
    fn();
    printf("  %s: %d checks, %d failed\n", name, th_test_checks, th_test_failures);
    fflush(stdout);
    _exit(th_test_failures == 0 ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) {
    if (WIFSIGNALED(status))
      fprintf(stderr, "%s: killed by signal %d (an abort is the bug this test catches)\n", name, WTERMSIG(status));
    else
      fprintf(stderr, "%s: failed (exit %d)\n", name, WEXITSTATUS(status));
  }
  CHECK(ok);
  return ok;
}

int main(void) {
  /* No library calls here before forking: the worker threads must start in the children. */
  run_case("huge sizes", case_huge_sizes);
  run_case("stride-0 expansions", case_expanded);
  if (TH_UNDER_ASAN || under_valgrind()) {
    printf("RLIMIT_AS cases skipped (valgrind/ASan need the address space)\n");
  } else {
    run_case("RLIMIT_AS storages", case_rlimit_storage);
    run_case("RLIMIT_AS temporaries", case_rlimit_temporaries);
  }
  return TH_TEST_DONE();
}
