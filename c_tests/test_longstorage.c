/* The non-generic THLongStorage helpers (TH_API.md 2.5): sizeDesc, newInferSize,
 * inferSize2/inferSizeN (numpy broadcasting; -1 plus a message in error_buffer on failure) and
 * inferExpandGeometry (THAlloc'd outputs the caller THFrees). */
#include "th_test.h"
#include <stdint.h>

/* A LongStorage holding v[0..n), written straight into memory. */
static THLongStorage *longs(const int64_t *v, ptrdiff_t n) {
  THLongStorage *s = THLongStorage_newWithSize(n);
  if (n > 0) memcpy(THLongStorage_data(s), v, (size_t)n * sizeof(int64_t));
  return s;
}

/* 1 if s holds exactly v[0..n). */
static int holds(THLongStorage *s, const int64_t *v, ptrdiff_t n) {
  if (THLongStorage_size(s) != n) return 0;
  for (ptrdiff_t i = 0; i < n; i++)
    if (THLongStorage_data(s)[i] != v[i]) return 0;
  return 1;
}

#define LONGS(...) longs((const int64_t[]){__VA_ARGS__}, (ptrdiff_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define HOLDS(s, ...) holds((s), (const int64_t[]){__VA_ARGS__}, (ptrdiff_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

static void size_desc(void) {
  THLongStorage *s = LONGS(2, 3);
  CHECK(strcmp(THLongStorage_sizeDesc(s).str, "[2 x 3]") == 0);
  THLongStorage_free(s);
  s = LONGS(5);
  CHECK(strcmp(THLongStorage_sizeDesc(s).str, "[5]") == 0);
  THLongStorage_free(s);
  s = LONGS(7, 1, 1234567890123LL, 4);
  CHECK(strcmp(THLongStorage_sizeDesc(s).str, "[7 x 1 x 1234567890123 x 4]") == 0);
  THLongStorage_free(s);
  s = THLongStorage_new();
  CHECK(strcmp(THLongStorage_sizeDesc(s).str, "[]") == 0);
  THLongStorage_free(s);

  /* too long for the 64-byte buffer: cut and ended with "...]" */
  s = THLongStorage_newWithSize(20);
  char full[400];
  int n = snprintf(full, sizeof full, "[");
  for (int i = 0; i < 20; i++) {
    THLongStorage_data(s)[i] = 1000000 + i;
    n += snprintf(full + n, sizeof full - (size_t)n, i < 19 ? "%d x " : "%d]", 1000000 + i);
  }
  THDescBuff d = THLongStorage_sizeDesc(s);
  CHECK(strlen(d.str) == TH_DESC_BUFF_LEN - 1);
  CHECK(strcmp(d.str + TH_DESC_BUFF_LEN - 5, "...]") == 0);
  CHECK(strncmp(d.str, full, TH_DESC_BUFF_LEN - 5) == 0);
  THLongStorage_free(s);
}

static void infer_size(void) {
  THLongStorage *in = LONGS(2, -1);
  THLongStorage *out = NULL;
  EXPECT_OK(out = THLongStorage_newInferSize(in, 8));
  CHECK(out != NULL && out != in);
  CHECK(HOLDS(out, 2, 4));
  CHECK(HOLDS(in, 2, -1)); /* the argument is not modified */
  THLongStorage_free(out);

  out = THLongStorage_newInferSize(in, 2);
  CHECK(HOLDS(out, 2, 1));
  THLongStorage_free(out);
  THLongStorage_free(in);

  in = LONGS(-1);
  out = THLongStorage_newInferSize(in, 7);
  CHECK(HOLDS(out, 7));
  THLongStorage_free(out);
  THLongStorage_free(in);

  in = LONGS(3, -1, 2);
  out = THLongStorage_newInferSize(in, 30);
  CHECK(HOLDS(out, 3, 5, 2));
  THLongStorage_free(out);
  THLongStorage_free(in);

  /* nothing to infer: a copy when the count matches */
  in = LONGS(2, 3);
  EXPECT_OK(out = THLongStorage_newInferSize(in, 6));
  CHECK(out != NULL && out != in);
  CHECK(HOLDS(out, 2, 3));
  THLongStorage_free(out);

  /* errors: the count does not match (argument 2) */
  out = (THLongStorage *)&out;
  th_test_last_arg = 0;
  EXPECT_ERROR(out = THLongStorage_newInferSize(in, 7));
  CHECK(out == NULL);
  CHECK(th_test_last_arg == 2);
  CHECK(HOLDS(in, 2, 3));
  THLongStorage_free(in);

  in = LONGS(2, -1);
  th_test_last_arg = 0;
  EXPECT_ERROR(out = THLongStorage_newInferSize(in, 7)); /* 7 is not a multiple of 2 */
  CHECK(out == NULL);
  CHECK(th_test_last_arg == 2);
  CHECK(THGetLastError() != NULL && strstr(THGetLastError(), "[2 x -1]") != NULL);
  THLongStorage_free(in);

  in = LONGS(4, -1);
  EXPECT_ERROR(out = THLongStorage_newInferSize(in, 2));
  CHECK(out == NULL);
  THLongStorage_free(in);

  /* only one dimension can be inferred (argument 1) */
  in = LONGS(-1, 2, -1);
  th_test_last_arg = 0;
  EXPECT_ERROR(out = THLongStorage_newInferSize(in, 8));
  CHECK(out == NULL);
  CHECK(th_test_last_arg == 1);
  THLongStorage_free(in);
}

static void infer_size2(void) {
  char buf[128];
  THLongStorage *out = LONGS(9, 9, 9, 9, 9);
  int64_t a1[] = {3, 1}, b1[] = {4};
  int rc = -7;
  EXPECT_OK(rc = THLongStorage_inferSize2(out, a1, 2, b1, 1, buf, (int)sizeof buf));
  CHECK(rc == 0);
  CHECK(HOLDS(out, 3, 4));

  int64_t a2[] = {5, 1, 3}, b2[] = {2, 1};
  rc = THLongStorage_inferSize2(out, a2, 3, b2, 2, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 5, 2, 3));

  int64_t a3[] = {1}, b3[] = {2, 3, 4};
  rc = THLongStorage_inferSize2(out, a3, 1, b3, 3, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 2, 3, 4));
  rc = THLongStorage_inferSize2(out, b3, 3, a3, 1, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 2, 3, 4));

  int64_t a4[] = {2, 3}, b4[] = {2, 3};
  rc = THLongStorage_inferSize2(out, a4, 2, b4, 2, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 2, 3));

  int64_t a5[] = {6, 1, 5, 1}, b5[] = {7, 1, 8};
  rc = THLongStorage_inferSize2(out, a5, 4, b5, 3, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 6, 7, 5, 8));

  /* do not broadcast: -1, a message, no handler call, output untouched */
  int64_t a6[] = {3}, b6[] = {4};
  memset(buf, 0, sizeof buf);
  int calls = th_test_handler_calls;
  rc = THLongStorage_inferSize2(out, a6, 1, b6, 1, buf, (int)sizeof buf);
  CHECK(rc == -1);
  CHECK(th_test_handler_calls == calls);
  CHECK(strlen(buf) > 0);
  CHECK(strchr(buf, '3') != NULL && strchr(buf, '4') != NULL);
  CHECK(HOLDS(out, 6, 7, 5, 8));

  int64_t a7[] = {2, 3}, b7[] = {3, 3};
  rc = THLongStorage_inferSize2(out, a7, 2, b7, 2, buf, (int)sizeof buf);
  CHECK(rc == -1);
  CHECK(HOLDS(out, 6, 7, 5, 8));

  /* the message is cut to buffer_len - 1 characters and NUL-terminated; nothing past it */
  memset(buf, 'Z', sizeof buf);
  rc = THLongStorage_inferSize2(out, a6, 1, b6, 1, buf, 10);
  CHECK(rc == -1);
  CHECK(buf[9] == '\0' && strlen(buf) == 9);
  int untouched = 1;
  for (size_t i = 10; i < sizeof buf; i++)
    if (buf[i] != 'Z') untouched = 0;
  CHECK(untouched);
  THLongStorage_free(out);
}

static void infer_size_n(void) {
  char buf[128];
  THLongStorage *out = THLongStorage_new();
  int64_t s0[] = {2, 1, 4}, s1[] = {3, 1}, s2[] = {1};
  int64_t *sizes[] = {s0, s1, s2};
  int64_t dims[] = {3, 2, 1};
  int rc = -7;
  EXPECT_OK(rc = THLongStorage_inferSizeN(out, 3, sizes, dims, buf, (int)sizeof buf));
  CHECK(rc == 0);
  CHECK(HOLDS(out, 2, 3, 4));

  int64_t t0[] = {5, 6};
  int64_t *one[] = {t0};
  int64_t one_dim[] = {2};
  rc = THLongStorage_inferSizeN(out, 1, one, one_dim, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 5, 6));

  int64_t u0[] = {2, 1}, u1[] = {1, 3}, u2[] = {4, 1, 1}, u3[] = {3};
  int64_t *four[] = {u0, u1, u2, u3};
  int64_t four_dims[] = {2, 2, 3, 1};
  rc = THLongStorage_inferSizeN(out, 4, four, four_dims, buf, (int)sizeof buf);
  CHECK(rc == 0);
  CHECK(HOLDS(out, 4, 2, 3));

  /* {2}, {3}, {2}: the second does not broadcast with the first */
  int64_t v0[] = {2}, v1[] = {3}, v2[] = {2};
  int64_t *bad[] = {v0, v1, v2};
  int64_t bad_dims[] = {1, 1, 1};
  memset(buf, 0, sizeof buf);
  int calls = th_test_handler_calls;
  rc = THLongStorage_inferSizeN(out, 3, bad, bad_dims, buf, (int)sizeof buf);
  CHECK(rc == -1);
  CHECK(th_test_handler_calls == calls);
  CHECK(strlen(buf) > 0);
  CHECK(HOLDS(out, 4, 2, 3));
  THLongStorage_free(out);
}

static void expand_geometry(void) {
  char buf[128];
  int64_t *es = NULL, *et = NULL;

  /* [3 x 1] (strides 1, 1) -> [2 x 3 x 4]: new leading dim and the size-1 dim get stride 0 */
  int64_t ts[] = {3, 1}, tt[] = {1, 1};
  THLongStorage *want = LONGS(2, 3, 4);
  int rc = -7;
  EXPECT_OK(rc = THLongStorage_inferExpandGeometry(ts, tt, 2, want, &es, &et, buf, (int)sizeof buf));
  CHECK(rc == 0);
  CHECK(es != NULL && et != NULL);
  if (es && et) {
    CHECK(es[0] == 2 && es[1] == 3 && es[2] == 4);
    CHECK(et[0] == 0 && et[1] == 1 && et[2] == 0);
  }
  CHECK(ts[0] == 3 && ts[1] == 1 && tt[0] == 1 && tt[1] == 1);
  THFree(es);
  THFree(et);
  THLongStorage_free(want);

  /* same sizes: unchanged geometry (strides kept even when not contiguous) */
  int64_t ts2[] = {3}, tt2[] = {2};
  want = LONGS(3);
  es = et = NULL;
  rc = THLongStorage_inferExpandGeometry(ts2, tt2, 1, want, &es, &et, buf, (int)sizeof buf);
  CHECK(rc == 0);
  if (es && et) CHECK(es[0] == 3 && et[0] == 2);
  THFree(es);
  THFree(et);
  THLongStorage_free(want);

  /* -1 keeps a dimension: [1 x 4] (4, 1) -> [5 x -1] gives [5 x 4] (0, 1) */
  int64_t ts3[] = {1, 4}, tt3[] = {4, 1};
  want = LONGS(5, -1);
  es = et = NULL;
  rc = THLongStorage_inferExpandGeometry(ts3, tt3, 2, want, &es, &et, buf, (int)sizeof buf);
  CHECK(rc == 0);
  if (es && et) CHECK(es[0] == 5 && es[1] == 4 && et[0] == 0 && et[1] == 1);
  THFree(es);
  THFree(et);
  THLongStorage_free(want);

  /* [2 x 1 x 3] (3, 3, 1) -> [4 x 2 x 5 x 3] (0, 3, 0, 1) */
  int64_t ts4[] = {2, 1, 3}, tt4[] = {3, 3, 1};
  want = LONGS(4, 2, 5, 3);
  es = et = NULL;
  rc = THLongStorage_inferExpandGeometry(ts4, tt4, 3, want, &es, &et, buf, (int)sizeof buf);
  CHECK(rc == 0);
  if (es && et) {
    CHECK(es[0] == 4 && es[1] == 2 && es[2] == 5 && es[3] == 3);
    CHECK(et[0] == 0 && et[1] == 3 && et[2] == 0 && et[3] == 1);
  }
  THFree(es);
  THFree(et);
  THLongStorage_free(want);

  /* a non-singleton dimension cannot change: -1, a message, outputs untouched */
  int64_t ts5[] = {3, 2}, tt5[] = {2, 1};
  want = LONGS(3, 4);
  int64_t sentinel_s = 0, sentinel_t = 0;
  es = &sentinel_s;
  et = &sentinel_t;
  memset(buf, 0, sizeof buf);
  int calls = th_test_handler_calls;
  rc = THLongStorage_inferExpandGeometry(ts5, tt5, 2, want, &es, &et, buf, (int)sizeof buf);
  CHECK(rc == -1);
  CHECK(th_test_handler_calls == calls);
  CHECK(strlen(buf) > 0);
  CHECK(es == &sentinel_s && et == &sentinel_t);
  THLongStorage_free(want);

  /* -1 is not allowed for a new leading dimension */
  int64_t ts6[] = {3}, tt6[] = {1};
  want = LONGS(-1, 3);
  es = &sentinel_s;
  et = &sentinel_t;
  memset(buf, 0, sizeof buf);
  rc = THLongStorage_inferExpandGeometry(ts6, tt6, 1, want, &es, &et, buf, (int)sizeof buf);
  CHECK(rc == -1);
  CHECK(strlen(buf) > 0);
  CHECK(es == &sentinel_s && et == &sentinel_t);
  THLongStorage_free(want);
}

int main(void) {
  th_test_install_handlers();
  size_desc();
  infer_size();
  infer_size2();
  infer_size_n();
  expand_geometry();
  return TH_TEST_DONE();
}
