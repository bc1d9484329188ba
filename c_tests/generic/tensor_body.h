/* The tensor API tests, written once in TH's generic style and included once per dtype by
 * test_tensor.c (not compiled on its own). Before each inclusion the includer defines:
 *   Real     the name infix (Float -> THFloatTensor_new via THTensor_(new))
 *   real     the C element type
 *   MKVAL(k) a `real` for the integer k; distinct for 0 <= k < 200 (except Bool: 0/1)
 *   VEQ(a,b) element equality
 * TB(name) (defined by the includer) makes per-dtype names for the static functions here.
 *
 * Every geometry is checked against hand-computed sizes/strides/offsets, and every element of a
 * view is checked against the naive storage position offset + sum(i_d * stride_d). */

/* Storage element k <- MKVAL(k) for every k. */
static void TB(fill)(THStorage *s) {
  ptrdiff_t n = THStorage_(size)(s);
  real *d = THStorage_(data)(s);
  for (ptrdiff_t k = 0; k < n; k++) d[k] = MKVAL(k);
}

/* 1 if storage element k holds MKVAL(k) for every k < n. */
static int TB(prefix_ok)(THStorage *s, ptrdiff_t n) {
  const real *d = THStorage_(data)(s);
  if (THStorage_(size)(s) < n) return 0;
  for (ptrdiff_t k = 0; k < n; k++)
    if (!VEQ(d[k], MKVAL(k))) return 0;
  return 1;
}

/* Some MKVAL value different from `cur`. */
static real TB(differ)(real cur) {
  int64_t k = 0;
  while (VEQ(MKVAL(k), cur)) k++;
  return MKVAL(k);
}

static real TB(getn)(THTensor *t, int nd, const int64_t *i) {
  switch (nd) {
    case 1: return THTensor_(get1d)(t, i[0]);
    case 2: return THTensor_(get2d)(t, i[0], i[1]);
    case 3: return THTensor_(get3d)(t, i[0], i[1], i[2]);
    default: return THTensor_(get4d)(t, i[0], i[1], i[2], i[3]);
  }
}

/* Mismatches between `t` and the expected view (storage s, offset off, nd sizes sz, strides st):
 * geometry through the accessors, then every element read with get<nd>d against
 * storage[off + sum(i_d * st_d)]. 0 means all good. */
static int TB(view_bad)(THTensor *t, THStorage *s, ptrdiff_t off, int nd, const int64_t *sz, const int64_t *st) {
  int bad = 0;
  if (THTensor_(storage)(t) != s) bad++;
  if (THTensor_(storageOffset)(t) != off) bad++;
  if (THTensor_(nDimension)(t) != nd) return bad + 1;
  int64_t n = nd > 0 ? 1 : 0;
  for (int d = 0; d < nd; d++) {
    if (THTensor_(size)(t, d) != sz[d]) bad++;
    if (THTensor_(stride)(t, d) != st[d]) bad++;
    n *= sz[d];
  }
  if (THTensor_(nElement)(t) != n) bad++;
  if (bad || nd == 0) return bad;
  const real *base = THStorage_(data)(s);
  if (THTensor_(data)(t) != base + off) bad++;
  for (int64_t lin = 0; lin < n; lin++) {
    int64_t idx[4] = {0, 0, 0, 0};
    int64_t rem = lin;
    ptrdiff_t k = off;
    for (int d = nd - 1; d >= 0; d--) {
      idx[d] = rem % sz[d];
      rem /= sz[d];
    }
    for (int d = 0; d < nd; d++) k += (ptrdiff_t)(idx[d] * st[d]);
    if (!VEQ(TB(getn)(t, nd, idx), base[k])) bad++;
  }
  return bad;
}

/* VIEW_OK(t, s, off, nd, SZ(sizes...), ST(strides...)) */
#define SZ(...) (const int64_t[]){__VA_ARGS__}
#define ST(...) (const int64_t[]){__VA_ARGS__}
#define VIEW_OK(t, s, off, nd, sz, st) CHECK(TB(view_bad)((t), (s), (off), (nd), sz, st) == 0)

/* ---- creation --------------------------------------------------------------------------- */
static void TB(test_new)(void) {
  THTensor *t = THTensor_(new)();
  CHECK(t != NULL);
  CHECK(THTensor_(nDimension)(t) == 0);
  CHECK(THTensor_(nElement)(t) == 0);
  CHECK(THTensor_(storage)(t) == NULL);
  CHECK(THTensor_(data)(t) == NULL);
  CHECK(THTensor_(storageOffset)(t) == 0);
  CHECK(THTensor_(isContiguous)(t) == 1);
  THTensor_(free)(t);

  t = THTensor_(newWithSize1d)(5);
  CHECK(THTensor_(nDimension)(t) == 1 && THTensor_(size)(t, 0) == 5 && THTensor_(stride)(t, 0) == 1);
  CHECK(THTensor_(nElement)(t) == 5);
  CHECK(THTensor_(storage)(t) != NULL && THStorage_(size)(THTensor_(storage)(t)) == 5);
  CHECK(THTensor_(storageOffset)(t) == 0 && THTensor_(isContiguous)(t));
  for (int64_t i = 0; i < 5; i++) THTensor_(set1d)(t, i, MKVAL(i + 10));
  CHECK(TB(view_bad)(t, THTensor_(storage)(t), 0, 1, SZ(5), ST(1)) == 0);
  {
    const real *d = THStorage_(data)(THTensor_(storage)(t));
    int ok = 1;
    for (int i = 0; i < 5; i++) ok &= VEQ(d[i], MKVAL(i + 10));
    CHECK(ok);
  }
  THTensor_(free)(t);

  /* A size <= 0 ends the dimension list (0 and -1 are end markers). */
  t = THTensor_(newWithSize1d)(0);
  CHECK(THTensor_(nDimension)(t) == 0 && THTensor_(storage)(t) == NULL && THTensor_(nElement)(t) == 0);
  THTensor_(free)(t);
  t = THTensor_(newWithSize1d)(-1);
  CHECK(THTensor_(nDimension)(t) == 0 && THTensor_(storage)(t) == NULL);
  THTensor_(free)(t);
  t = THTensor_(newWithSize2d)(3, 0);
  CHECK(THTensor_(nDimension)(t) == 1 && THTensor_(size)(t, 0) == 3 && THTensor_(nElement)(t) == 3);
  THTensor_(free)(t);

  t = THTensor_(newWithSize2d)(2, 3);
  CHECK(THTensor_(nDimension)(t) == 2);
  CHECK(THTensor_(size)(t, 0) == 2 && THTensor_(size)(t, 1) == 3);
  CHECK(THTensor_(stride)(t, 0) == 3 && THTensor_(stride)(t, 1) == 1);
  CHECK(THTensor_(nElement)(t) == 6 && THStorage_(size)(THTensor_(storage)(t)) == 6);
  THTensor_(free)(t);

  t = THTensor_(newWithSize3d)(2, 3, 4);
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 3, SZ(2, 3, 4), ST(12, 4, 1));
  CHECK(THStorage_(size)(THTensor_(storage)(t)) == 24);
  THTensor_(free)(t);

  t = THTensor_(newWithSize4d)(2, 3, 4, 5);
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 4, SZ(2, 3, 4, 5), ST(60, 20, 5, 1));
  CHECK(THTensor_(nElement)(t) == 120 && THStorage_(size)(THTensor_(storage)(t)) == 120);
  THTensor_(free)(t);

  /* newWithSize(sizes, strides) */
  THLongStorage *sz = THLongStorage_newWithSize3(2, 3, 4);
  t = THTensor_(newWithSize)(sz, NULL);
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 3, SZ(2, 3, 4), ST(12, 4, 1));
  THTensor_(free)(t);
  THLongStorage *st = THLongStorage_newWithSize3(1, 2, 6); /* column-major */
  t = THTensor_(newWithSize)(sz, st);
  CHECK(THStorage_(size)(THTensor_(storage)(t)) == 24); /* 1 + 1*1 + 2*2 + 3*6 */
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 3, SZ(2, 3, 4), ST(1, 2, 6));
  CHECK(THTensor_(isContiguous)(t) == 0);
  THTensor_(free)(t);
  THLongStorage_free(sz);
  THLongStorage_free(st);
  /* A negative stride entry means "contiguous from here": {2,3} with {-1, 2} -> {6, 2}. */
  sz = THLongStorage_newWithSize2(2, 3);
  st = THLongStorage_newWithSize2(-1, 2);
  t = THTensor_(newWithSize)(sz, st);
  CHECK(THStorage_(size)(THTensor_(storage)(t)) == 11); /* 1 + 1*6 + 2*2 */
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 2, SZ(2, 3), ST(6, 2));
  THTensor_(free)(t);
  THLongStorage_free(sz);
  THLongStorage_free(st);
  t = THTensor_(newWithSize)(NULL, NULL);
  CHECK(t != NULL && THTensor_(nDimension)(t) == 0 && THTensor_(storage)(t) == NULL);
  THTensor_(free)(t);
}

static void TB(test_with_storage)(void) {
  THStorage *s = THStorage_(newWithSize)(40);
  TB(fill)(s);
  CHECK(TB(prefix_ok)(s, 40));

  THLongStorage *sz = THLongStorage_newWithSize2(2, 3), *st = THLongStorage_newWithSize2(5, 1);
  THTensor *t = THTensor_(newWithStorage)(s, 2, sz, st);
  VIEW_OK(t, s, 2, 2, SZ(2, 3), ST(5, 1));
  /* Shares the storage: writes through one are seen by the other. */
  {
    real v = TB(differ)(THStorage_(get)(s, 2 + 5 + 2));
    THTensor_(set2d)(t, 1, 2, v);
    CHECK(VEQ(THStorage_(get)(s, 9), v));
    CHECK(VEQ(THStorage_(data)(s)[9], v));
    real w = TB(differ)(THTensor_(get2d)(t, 0, 0));
    THStorage_(set)(s, 2, w);
    CHECK(VEQ(THTensor_(get2d)(t, 0, 0), w));
    TB(fill)(s);
  }
  THTensor_(free)(t);
  /* Strides NULL: contiguous. */
  t = THTensor_(newWithStorage)(s, 7, sz, NULL);
  VIEW_OK(t, s, 7, 2, SZ(2, 3), ST(3, 1));
  THTensor_(free)(t);
  /* Sizes NULL: an empty tensor that still holds the storage. */
  t = THTensor_(newWithStorage)(s, 0, NULL, NULL);
  CHECK(t != NULL && THTensor_(nDimension)(t) == 0 && THTensor_(storage)(t) == s);
  THTensor_(free)(t);
  /* Storage NULL: a fresh one is made. */
  t = THTensor_(newWithStorage)(NULL, 0, sz, NULL);
  CHECK(THTensor_(storage)(t) != NULL && THTensor_(storage)(t) != s);
  CHECK(THStorage_(size)(THTensor_(storage)(t)) == 6);
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 2, SZ(2, 3), ST(3, 1));
  THTensor_(free)(t);
  THLongStorage_free(sz);
  THLongStorage_free(st);

  t = THTensor_(newWithStorage1d)(s, 3, 4, 2);
  VIEW_OK(t, s, 3, 1, SZ(4), ST(2));
  THTensor_(free)(t);
  t = THTensor_(newWithStorage2d)(s, 1, 3, 7, 2, 3);
  VIEW_OK(t, s, 1, 2, SZ(3, 2), ST(7, 3));
  THTensor_(free)(t);
  t = THTensor_(newWithStorage3d)(s, 0, 2, 20, 3, 5, 4, 1);
  VIEW_OK(t, s, 0, 3, SZ(2, 3, 4), ST(20, 5, 1));
  THTensor_(free)(t);
  t = THTensor_(newWithStorage4d)(s, 1, 2, 18, 2, 9, 3, 3, 3, 1);
  VIEW_OK(t, s, 1, 4, SZ(2, 2, 3, 3), ST(18, 9, 3, 1));
  THTensor_(free)(t);
  /* A size <= 0 ends the list. */
  t = THTensor_(newWithStorage2d)(s, 4, 3, 2, 0, 1);
  VIEW_OK(t, s, 4, 1, SZ(3), ST(2));
  THTensor_(free)(t);
  t = THTensor_(newWithStorage1d)(s, 5, 0, 1);
  CHECK(THTensor_(nDimension)(t) == 0 && THTensor_(storage)(t) == s && THTensor_(storageOffset)(t) == 5);
  THTensor_(free)(t);
  /* A negative stride means contiguous. */
  t = THTensor_(newWithStorage2d)(s, 0, 2, -1, 3, -1);
  VIEW_OK(t, s, 0, 2, SZ(2, 3), ST(3, 1));
  THTensor_(free)(t);
  CHECK(THStorage_(size)(s) == 40); /* none of these needed to grow it */

  /* A too-small resizable storage is grown, keeping its elements. */
  THStorage *s2 = THStorage_(newWithSize)(4);
  TB(fill)(s2);
  t = THTensor_(newWithStorage2d)(s2, 1, 3, 3, 3, 1); /* needs 1 + 2*3 + 2*1 + 1 = 10 */
  CHECK(THTensor_(storage)(t) == s2);
  CHECK(THStorage_(size)(s2) == 10);
  CHECK(TB(prefix_ok)(s2, 4));
  TB(fill)(s2);
  VIEW_OK(t, s2, 1, 2, SZ(3, 3), ST(3, 1));
  THTensor_(free)(t);
  CHECK(THStorage_(size)(s2) == 10);
  CHECK(TB(prefix_ok)(s2, 10));
  THStorage_(free)(s2);

  /* The tensor holds its own reference: the storage outlives the caller's. */
  s2 = THStorage_(newWithSize)(6);
  TB(fill)(s2);
  t = THTensor_(newWithStorage1d)(s2, 0, 6, 1);
  THStorage_(free)(s2);
  CHECK(VEQ(THTensor_(get1d)(t, 5), MKVAL(5)));
  CHECK(THStorage_(size)(THTensor_(storage)(t)) == 6);
  THTensor_(free)(t);

  THStorage_(free)(s);
}

static void TB(test_with_tensor_clone_contiguous)(void) {
  THStorage *s = THStorage_(newWithSize)(40);
  TB(fill)(s);
  THTensor *t = THTensor_(newWithStorage2d)(s, 2, 2, 5, 3, 1);

  THTensor *w = THTensor_(newWithTensor)(t);
  CHECK(w != NULL && w != t);
  CHECK(THTensor_(isSetTo)(w, t) == 1 && THTensor_(isSetTo)(t, w) == 1);
  VIEW_OK(w, s, 2, 2, SZ(2, 3), ST(5, 1));
  {
    real v = TB(differ)(THTensor_(get2d)(t, 1, 1));
    THTensor_(set2d)(w, 1, 1, v);
    CHECK(VEQ(THTensor_(get2d)(t, 1, 1), v));
    CHECK(VEQ(THStorage_(get)(s, 8), v));
    TB(fill)(s);
  }
  /* Separate headers: re-viewing w leaves t alone. */
  THTensor_(transpose)(w, NULL, 0, 1);
  VIEW_OK(w, s, 2, 2, SZ(3, 2), ST(1, 5));
  VIEW_OK(t, s, 2, 2, SZ(2, 3), ST(5, 1));
  CHECK(THTensor_(isSetTo)(w, t) == 0);

  /* newClone of the transposed view: contiguous, own storage, same values. */
  THTensor *c = THTensor_(newClone)(w);
  CHECK(c != NULL && THTensor_(storage)(c) != s);
  CHECK(THTensor_(isContiguous)(c) == 1);
  CHECK(THStorage_(size)(THTensor_(storage)(c)) == 6);
  VIEW_OK(c, THTensor_(storage)(c), 0, 2, SZ(3, 2), ST(2, 1));
  {
    int ok = 1;
    const real *cd = THTensor_(data)(c);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) ok &= VEQ(cd[i * 2 + j], MKVAL(2 + i * 1 + j * 5));
    CHECK(ok);
    THTensor_(set2d)(c, 0, 0, TB(differ)(MKVAL(2)));
    CHECK(VEQ(THStorage_(get)(s, 2), MKVAL(2))); /* the original is untouched */
  }
  THTensor_(free)(c);

  /* newContiguous of a contiguous tensor: the same pointer, retained. */
  THTensor *ct = THTensor_(newWithStorage2d)(s, 2, 2, 3, 3, 1);
  CHECK(THTensor_(isContiguous)(ct) == 1 && THTensor_(isContiguous)(t) == 0);
  THTensor *same = THTensor_(newContiguous)(ct);
  CHECK(same == ct);
  THTensor_(free)(same);
  VIEW_OK(ct, s, 2, 2, SZ(2, 3), ST(3, 1)); /* still alive: our reference remains */
  THTensor_(free)(ct);
  /* ...of a row-strided (not contiguous) one: a copy. */
  same = THTensor_(newContiguous)(t);
  CHECK(same != t && THTensor_(storage)(same) != s && THTensor_(isContiguous)(same) == 1);
  {
    int ok = THTensor_(nDimension)(same) == 2 && THTensor_(size)(same, 0) == 2 && THTensor_(size)(same, 1) == 3;
    const real *cd = THTensor_(data)(same);
    for (int i = 0; ok && i < 2; i++)
      for (int j = 0; j < 3; j++) ok &= VEQ(cd[i * 3 + j], MKVAL(2 + i * 5 + j));
    CHECK(ok);
  }
  THTensor_(free)(same);
  /* ...of a transposed one: a contiguous copy. */
  THTensor *tc = THTensor_(newContiguous)(w);
  CHECK(tc != NULL && tc != w && THTensor_(storage)(tc) != s);
  CHECK(THTensor_(isContiguous)(tc) == 1);
  CHECK(THTensor_(nDimension)(tc) == 2 && THTensor_(size)(tc, 0) == 3 && THTensor_(size)(tc, 1) == 2);
  {
    int ok = 1;
    const real *cd = THTensor_(data)(tc);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) ok &= VEQ(cd[i * 2 + j], MKVAL(2 + i + j * 5));
    CHECK(ok);
  }
  THTensor_(free)(tc);
  /* A 3x1 view with a junk stride on the size-1 dim is contiguous: same pointer too. */
  THTensor *col = THTensor_(newWithStorage2d)(s, 0, 3, 1, 1, 99);
  CHECK(THTensor_(isContiguous)(col) == 1);
  same = THTensor_(newContiguous)(col);
  CHECK(same == col);
  THTensor_(free)(same);
  THTensor_(free)(col);

  THTensor_(free)(w);
  THTensor_(free)(t);
  THStorage_(free)(s);
}

static void TB(test_new_views)(void) {
  THStorage *s = THStorage_(newWithSize)(40);
  TB(fill)(s);
  THTensor *t3 = THTensor_(newWithStorage3d)(s, 0, 2, 12, 3, 4, 4, 1); /* contiguous 2x3x4 */
  THTensor *v;

  v = THTensor_(newSelect)(t3, 1, 2);
  VIEW_OK(v, s, 8, 2, SZ(2, 4), ST(12, 1));
  THTensor_(free)(v);
  v = THTensor_(newSelect)(t3, 0, 1);
  VIEW_OK(v, s, 12, 2, SZ(3, 4), ST(4, 1));
  THTensor_(free)(v);
  v = THTensor_(newSelect)(t3, 2, 3);
  VIEW_OK(v, s, 3, 2, SZ(2, 3), ST(12, 4));
  THTensor_(free)(v);

  v = THTensor_(newNarrow)(t3, 2, 1, 2);
  VIEW_OK(v, s, 1, 3, SZ(2, 3, 2), ST(12, 4, 1));
  CHECK(THTensor_(isContiguous)(v) == 0);
  THTensor_(free)(v);
  v = THTensor_(newNarrow)(t3, 0, 1, 1);
  VIEW_OK(v, s, 12, 3, SZ(1, 3, 4), ST(12, 4, 1));
  CHECK(THTensor_(isContiguous)(v) == 1);
  THTensor_(free)(v);
  v = THTensor_(newNarrow)(t3, 1, 0, 3); /* the whole dimension */
  VIEW_OK(v, s, 0, 3, SZ(2, 3, 4), ST(12, 4, 1));
  THTensor_(free)(v);

  v = THTensor_(newTranspose)(t3, 0, 2);
  VIEW_OK(v, s, 0, 3, SZ(4, 3, 2), ST(1, 4, 12));
  CHECK(THTensor_(isContiguous)(v) == 0);
  THTensor_(free)(v);
  v = THTensor_(newTranspose)(t3, 1, 1);
  VIEW_OK(v, s, 0, 3, SZ(2, 3, 4), ST(12, 4, 1));
  THTensor_(free)(v);

  v = THTensor_(newUnfold)(t3, 2, 2, 2); /* (4-2)/2+1 = 2 windows */
  VIEW_OK(v, s, 0, 4, SZ(2, 3, 2, 2), ST(12, 4, 2, 1));
  THTensor_(free)(v);
  {
    THTensor *u1 = THTensor_(newWithStorage1d)(s, 0, 7, 1);
    v = THTensor_(newUnfold)(u1, 0, 3, 2);
    VIEW_OK(v, s, 0, 2, SZ(3, 3), ST(2, 1));
    THTensor_(free)(v);
    v = THTensor_(newUnfold)(u1, 0, 7, 1); /* one window of everything */
    VIEW_OK(v, s, 0, 2, SZ(1, 7), ST(1, 1));
    THTensor_(free)(v);
    THTensor_(free)(u1);
  }

  {
    THLongStorage *ls = THLongStorage_newWithSize2(-1, 6);
    v = THTensor_(newView)(t3, ls);
    VIEW_OK(v, s, 0, 2, SZ(4, 6), ST(6, 1));
    THTensor_(free)(v);
    THLongStorage_free(ls);
    ls = THLongStorage_newWithSize2(3, 8);
    v = THTensor_(newView)(t3, ls);
    VIEW_OK(v, s, 0, 2, SZ(3, 8), ST(8, 1));
    THTensor_(free)(v);
    THLongStorage_free(ls);
    ls = THLongStorage_newWithSize3(2, -1, 2);
    v = THTensor_(newView)(t3, ls);
    VIEW_OK(v, s, 0, 3, SZ(2, 6, 2), ST(12, 2, 1));
    THTensor_(free)(v);
    THLongStorage_free(ls);
    /* A view of a contiguous narrow keeps its offset. */
    THTensor *n = THTensor_(newNarrow)(t3, 0, 1, 1);
    ls = THLongStorage_newWithSize1(-1);
    v = THTensor_(newView)(n, ls);
    VIEW_OK(v, s, 12, 1, SZ(12), ST(1));
    THTensor_(free)(v);
    THLongStorage_free(ls);
    THTensor_(free)(n);
  }

  {
    THTensor *c31 = THTensor_(newWithStorage2d)(s, 5, 3, 1, 1, 1); /* 3x1 */
    THLongStorage *ls = THLongStorage_newWithSize3(2, 3, 4);
    v = THTensor_(newExpand)(c31, ls);
    VIEW_OK(v, s, 5, 3, SZ(2, 3, 4), ST(0, 1, 0));
    CHECK(THTensor_(isContiguous)(v) == 0);
    THTensor_(free)(v);
    THLongStorage_free(ls);
    ls = THLongStorage_newWithSize2(-1, 5);
    v = THTensor_(newExpand)(c31, ls);
    VIEW_OK(v, s, 5, 2, SZ(3, 5), ST(1, 0));
    THTensor_(free)(v);
    THLongStorage_free(ls);
    VIEW_OK(c31, s, 5, 2, SZ(3, 1), ST(1, 1)); /* the source is untouched */
    THTensor_(free)(c31);
  }
  /* None of the views changed t3 or the storage. */
  VIEW_OK(t3, s, 0, 3, SZ(2, 3, 4), ST(12, 4, 1));
  CHECK(TB(prefix_ok)(s, 40));
  THTensor_(free)(t3);
  THStorage_(free)(s);
}

static void TB(test_inplace_views)(void) {
  THStorage *s = THStorage_(newWithSize)(40);
  TB(fill)(s);
  THTensor *t3 = THTensor_(newWithStorage3d)(s, 0, 2, 12, 3, 4, 4, 1);
  THTensor *self = THTensor_(new)();

  THTensor_(narrow)(self, t3, 1, 1, 2);
  VIEW_OK(self, s, 4, 3, SZ(2, 2, 4), ST(12, 4, 1));
  THTensor_(narrow)(self, NULL, 2, 3, 1); /* src NULL: self */
  VIEW_OK(self, s, 7, 3, SZ(2, 2, 1), ST(12, 4, 1));
  THTensor_(narrow)(self, self, 0, 1, 1); /* src == self */
  VIEW_OK(self, s, 19, 3, SZ(1, 2, 1), ST(12, 4, 1));

  THTensor_(select)(self, t3, 2, 3);
  VIEW_OK(self, s, 3, 2, SZ(2, 3), ST(12, 4));
  THTensor_(select)(self, NULL, 0, 1);
  VIEW_OK(self, s, 15, 1, SZ(3), ST(4));

  THTensor_(transpose)(self, t3, 1, 2);
  VIEW_OK(self, s, 0, 3, SZ(2, 4, 3), ST(12, 1, 4));
  THTensor_(transpose)(self, NULL, 0, 1);
  VIEW_OK(self, s, 0, 3, SZ(4, 2, 3), ST(1, 12, 4));

  {
    THTensor *u1 = THTensor_(newWithStorage1d)(s, 0, 7, 1);
    THTensor_(unfold)(self, u1, 0, 4, 3); /* (7-4)/3+1 = 2 */
    VIEW_OK(self, s, 0, 2, SZ(2, 4), ST(3, 1));
    THTensor_(unfold)(self, NULL, 1, 2, 1); /* (4-2)/1+1 = 3 */
    VIEW_OK(self, s, 0, 3, SZ(2, 3, 2), ST(3, 1, 1));
    VIEW_OK(u1, s, 0, 1, SZ(7), ST(1));
    THTensor_(free)(u1);
  }

  {
    THTensor *sq = THTensor_(newWithStorage3d)(s, 2, 1, 50, 3, 2, 1, 7); /* 1x3x1 */
    THTensor_(squeeze)(self, sq);
    VIEW_OK(self, s, 2, 1, SZ(3), ST(2));
    VIEW_OK(sq, s, 2, 3, SZ(1, 3, 1), ST(50, 2, 7));
    THTensor_(squeeze1d)(self, sq, 0);
    VIEW_OK(self, s, 2, 2, SZ(3, 1), ST(2, 7));
    THTensor_(squeeze1d)(self, NULL, 0); /* size 3: unchanged */
    VIEW_OK(self, s, 2, 2, SZ(3, 1), ST(2, 7));
    THTensor_(squeeze1d)(self, NULL, 1);
    VIEW_OK(self, s, 2, 1, SZ(3), ST(2));
    THTensor_(squeeze)(sq, NULL);
    VIEW_OK(sq, s, 2, 1, SZ(3), ST(2));
    THTensor_(free)(sq);
    /* All ones: 1-d of size 1, stride 1. */
    THTensor *ones = THTensor_(newWithStorage2d)(s, 9, 1, 5, 1, 3);
    THTensor_(squeeze)(self, ones);
    VIEW_OK(self, s, 9, 1, SZ(1), ST(1));
    /* squeeze1d never removes the only dimension. */
    THTensor *o1 = THTensor_(newWithStorage1d)(s, 4, 1, 1);
    THTensor_(squeeze1d)(o1, NULL, 0);
    VIEW_OK(o1, s, 4, 1, SZ(1), ST(1));
    THTensor_(free)(o1);
    THTensor_(free)(ones);
  }

  {
    THTensor *m = THTensor_(newWithStorage2d)(s, 0, 2, 3, 3, 1); /* 2x3 */
    THTensor_(unsqueeze1d)(self, m, 0);
    VIEW_OK(self, s, 0, 3, SZ(1, 2, 3), ST(6, 3, 1));
    THTensor_(unsqueeze1d)(self, m, 1);
    VIEW_OK(self, s, 0, 3, SZ(2, 1, 3), ST(3, 3, 1));
    THTensor_(unsqueeze1d)(self, m, 2);
    VIEW_OK(self, s, 0, 3, SZ(2, 3, 1), ST(3, 1, 1));
    THTensor_(unsqueeze1d)(self, NULL, 0);
    VIEW_OK(self, s, 0, 4, SZ(1, 2, 3, 1), ST(6, 3, 1, 1));
    THTensor_(unsqueeze1d)(m, NULL, 2);
    VIEW_OK(m, s, 0, 3, SZ(2, 3, 1), ST(3, 1, 1));
    THTensor_(free)(m);
  }

  {
    /* expand / expandNd */
    THTensor *c31 = THTensor_(newWithStorage2d)(s, 5, 3, 1, 1, 1); /* 3x1 */
    THTensor *b4 = THTensor_(newWithStorage1d)(s, 10, 4, 1);     /* 4 */
    THLongStorage *ls = THLongStorage_newWithSize2(3, 4);
    THTensor_(expand)(self, c31, ls);
    VIEW_OK(self, s, 5, 2, SZ(3, 4), ST(1, 0));
    THLongStorage_free(ls);
    ls = THLongStorage_newWithSize3(2, 3, 4);
    THTensor_(expand)(self, self, ls); /* r == tensor */
    VIEW_OK(self, s, 5, 3, SZ(2, 3, 4), ST(0, 1, 0));
    THLongStorage_free(ls);

    THTensor *r0 = THTensor_(new)(), *r1 = THTensor_(new)();
    THTensor *rets[2] = {r0, r1};
    THTensor *ops[2] = {c31, b4};
    THTensor_(expandNd)(rets, ops, 2);
    VIEW_OK(r0, s, 5, 2, SZ(3, 4), ST(1, 0));
    VIEW_OK(r1, s, 10, 2, SZ(3, 4), ST(0, 1));
    VIEW_OK(c31, s, 5, 2, SZ(3, 1), ST(1, 1));
    VIEW_OK(b4, s, 10, 1, SZ(4), ST(1));
    /* rets[i] == ops[i]: in place */
    THTensor *same[2] = {c31, b4};
    THTensor_(expandNd)(same, same, 2);
    VIEW_OK(c31, s, 5, 2, SZ(3, 4), ST(1, 0));
    VIEW_OK(b4, s, 10, 2, SZ(3, 4), ST(0, 1));
    THTensor_(free)(r0);
    THTensor_(free)(r1);
    THTensor_(free)(c31);
    THTensor_(free)(b4);
  }

  CHECK(TB(prefix_ok)(s, 40));
  THTensor_(free)(self);
  THTensor_(free)(t3);
  THStorage_(free)(s);
}

static void TB(test_resize)(void) {
  THTensor *t = THTensor_(newWithSize2d)(2, 3);
  THStorage *s = THTensor_(storage)(t);
  TB(fill)(s);

  THTensor_(resize2d)(t, 3, 2);
  CHECK(THTensor_(storage)(t) == s && THStorage_(size)(s) == 6);
  VIEW_OK(t, s, 0, 2, SZ(3, 2), ST(2, 1));
  THTensor_(resize1d)(t, 4); /* never shrinks the storage */
  CHECK(THTensor_(storage)(t) == s && THStorage_(size)(s) == 6);
  VIEW_OK(t, s, 0, 1, SZ(4), ST(1));
  CHECK(TB(prefix_ok)(s, 6));
  THTensor_(resize3d)(t, 2, 2, 2); /* grows to 8, keeps the 6 */
  CHECK(THTensor_(storage)(t) == s && THStorage_(size)(s) == 8);
  CHECK(TB(prefix_ok)(s, 6));
  TB(fill)(s);
  VIEW_OK(t, s, 0, 3, SZ(2, 2, 2), ST(4, 2, 1));
  THTensor_(resize4d)(t, 1, 2, 3, 2);
  CHECK(THStorage_(size)(s) == 12 && TB(prefix_ok)(s, 8));
  TB(fill)(s);
  VIEW_OK(t, s, 0, 4, SZ(1, 2, 3, 2), ST(12, 6, 2, 1));
  THTensor_(resize5d)(t, 1, 1, 2, 2, 4);
  CHECK(THStorage_(size)(s) == 16 && TB(prefix_ok)(s, 12));
  TB(fill)(s);
  CHECK(THTensor_(nDimension)(t) == 5 && THTensor_(nElement)(t) == 16);
  {
    const int64_t esz[5] = {1, 1, 2, 2, 4}, est[5] = {16, 16, 8, 4, 1};
    int ok = 1;
    for (int d = 0; d < 5; d++) ok &= THTensor_(size)(t, d) == esz[d] && THTensor_(stride)(t, d) == est[d];
    CHECK(ok);
  }

  {
    int64_t sz[3] = {3, 4, 0};
    THTensor_(resizeNd)(t, 3, sz, NULL); /* ends at the 0 */
    CHECK(THStorage_(size)(s) == 16);
    VIEW_OK(t, s, 0, 2, SZ(3, 4), ST(4, 1));
    int64_t sz2[3] = {2, 5, -1};
    THTensor_(resizeNd)(t, 3, sz2, NULL); /* ends at the -1 */
    VIEW_OK(t, s, 0, 2, SZ(2, 5), ST(5, 1));
    int64_t sz3[2] = {2, 3}, st3[2] = {1, 2};
    THTensor_(resizeNd)(t, 2, sz3, st3);
    VIEW_OK(t, s, 0, 2, SZ(2, 3), ST(1, 2));
    CHECK(THTensor_(isContiguous)(t) == 0);
  }
  {
    THLongStorage *ls = THLongStorage_newWithSize2(2, 5);
    THTensor_(resize)(t, ls, NULL);
    VIEW_OK(t, s, 0, 2, SZ(2, 5), ST(5, 1));
    THLongStorage_free(ls);
    ls = THLongStorage_newWithSize2(2, 2);
    THLongStorage *lst = THLongStorage_newWithSize2(1, 2);
    THTensor_(resize)(t, ls, lst);
    VIEW_OK(t, s, 0, 2, SZ(2, 2), ST(1, 2));
    THLongStorage_free(ls);
    THLongStorage_free(lst);
  }
  {
    THTensor *o = THTensor_(newWithSize2d)(5, 2);
    THTensor_(resizeAs)(t, o);
    VIEW_OK(t, s, 0, 2, SZ(5, 2), ST(2, 1));
    /* Same sizes already: no-op, even when not contiguous. */
    THTensor *x = THTensor_(newWithStorage2d)(s, 0, 3, 1, 2, 3);
    THTensor *y = THTensor_(newWithSize2d)(3, 2);
    THTensor_(resizeAs)(x, y);
    VIEW_OK(x, s, 0, 2, SZ(3, 2), ST(1, 3));
    THTensor_(free)(x);
    THTensor_(free)(y);
    THTensor_(free)(o);
  }
  CHECK(THStorage_(size)(s) == 16 && TB(prefix_ok)(s, 16));
  /* Resizing to nothing: empty, storage kept. */
  THTensor_(resize1d)(t, 0);
  CHECK(THTensor_(nDimension)(t) == 0 && THTensor_(nElement)(t) == 0 && THTensor_(storage)(t) == s);
  THTensor_(resize2d)(t, 2, 2);
  VIEW_OK(t, s, 0, 2, SZ(2, 2), ST(2, 1));
  THTensor_(free)(t);

  /* A tensor without storage gets one. */
  t = THTensor_(new)();
  THTensor_(resize2d)(t, 2, 2);
  CHECK(THTensor_(storage)(t) != NULL && THStorage_(size)(THTensor_(storage)(t)) == 4);
  TB(fill)(THTensor_(storage)(t));
  VIEW_OK(t, THTensor_(storage)(t), 0, 2, SZ(2, 2), ST(2, 1));
  THTensor_(free)(t);

  /* Growing a shared storage: another view of it stays valid and sees the kept data. */
  {
    THTensor *a = THTensor_(newWithSize1d)(4);
    THStorage *sa = THTensor_(storage)(a);
    TB(fill)(sa);
    THTensor *b = THTensor_(newWithTensor)(a);
    THTensor_(resize1d)(a, 100);
    CHECK(THTensor_(storage)(a) == sa && THTensor_(storage)(b) == sa);
    CHECK(THStorage_(size)(sa) == 100 && TB(prefix_ok)(sa, 4));
    VIEW_OK(b, sa, 0, 1, SZ(4), ST(1));
    CHECK(THTensor_(data)(b) == THStorage_(data)(sa));
    THTensor_(free)(a);
    VIEW_OK(b, sa, 0, 1, SZ(4), ST(1));
    THTensor_(free)(b);
  }
  /* Resizing a view with an offset grows the storage to offset + needed. */
  {
    THStorage *s5 = THStorage_(newWithSize)(5);
    TB(fill)(s5);
    THTensor *v = THTensor_(newWithStorage1d)(s5, 3, 2, 1);
    THTensor_(resize2d)(v, 2, 3);
    CHECK(THStorage_(size)(s5) == 9 && TB(prefix_ok)(s5, 5));
    TB(fill)(s5);
    VIEW_OK(v, s5, 3, 2, SZ(2, 3), ST(3, 1));
    THTensor_(free)(v);
    THStorage_(free)(s5);
  }
}

static void TB(test_set_storage)(void) {
  THStorage *s = THStorage_(newWithSize)(40);
  TB(fill)(s);
  THTensor *self = THTensor_(newWithSize1d)(3);

  {
    THTensor *src = THTensor_(newWithStorage2d)(s, 3, 2, 4, 3, 1);
    THTensor_(set)(self, src);
    CHECK(THTensor_(isSetTo)(self, src) == 1);
    THTensor_(free)(src); /* self holds its own storage reference */
    VIEW_OK(self, s, 3, 2, SZ(2, 3), ST(4, 1));
    THTensor_(set)(self, self); /* no-op */
    VIEW_OK(self, s, 3, 2, SZ(2, 3), ST(4, 1));
  }
  {
    THLongStorage *sz = THLongStorage_newWithSize2(2, 3), *st = THLongStorage_newWithSize2(1, 2);
    THTensor_(setStorage)(self, s, 4, sz, st);
    VIEW_OK(self, s, 4, 2, SZ(2, 3), ST(1, 2));
    THTensor_(setStorage)(self, s, 1, sz, NULL);
    VIEW_OK(self, s, 1, 2, SZ(2, 3), ST(3, 1));
    THTensor_(setStorage)(self, s, 6, NULL, NULL);
    CHECK(THTensor_(nDimension)(self) == 0 && THTensor_(storage)(self) == s && THTensor_(storageOffset)(self) == 6);
    THLongStorage_free(sz);
    THLongStorage_free(st);
  }
  {
    int64_t sz[3] = {2, 2, 2}, st[3] = {8, 4, 1};
    THTensor_(setStorageNd)(self, s, 2, 3, sz, st);
    VIEW_OK(self, s, 2, 3, SZ(2, 2, 2), ST(8, 4, 1));
    THTensor_(setStorageNd)(self, s, 0, 3, sz, NULL);
    VIEW_OK(self, s, 0, 3, SZ(2, 2, 2), ST(4, 2, 1));
  }
  THTensor_(setStorage1d)(self, s, 5, 4, 3);
  VIEW_OK(self, s, 5, 1, SZ(4), ST(3));
  THTensor_(setStorage2d)(self, s, 1, 3, 1, 4, 3);
  VIEW_OK(self, s, 1, 2, SZ(3, 4), ST(1, 3));
  THTensor_(setStorage3d)(self, s, 0, 2, 1, 2, 2, 2, 4);
  VIEW_OK(self, s, 0, 3, SZ(2, 2, 2), ST(1, 2, 4));
  THTensor_(setStorage4d)(self, s, 0, 2, 1, 2, 2, 2, 4, 2, 8);
  VIEW_OK(self, s, 0, 4, SZ(2, 2, 2, 2), ST(1, 2, 4, 8));
  THTensor_(setStorage2d)(self, s, 0, 2, -1, 3, -1); /* negative strides: contiguous */
  VIEW_OK(self, s, 0, 2, SZ(2, 3), ST(3, 1));
  CHECK(THStorage_(size)(s) == 40 && TB(prefix_ok)(s, 40));

  /* A too-small storage is grown. */
  {
    THStorage *small = THStorage_(newWithSize)(3);
    TB(fill)(small);
    THTensor_(setStorage1d)(self, small, 2, 5, 1);
    CHECK(THTensor_(storage)(self) == small && THStorage_(size)(small) == 7 && TB(prefix_ok)(small, 3));
    TB(fill)(small);
    VIEW_OK(self, small, 2, 1, SZ(5), ST(1));
    THStorage_(free)(small);
    VIEW_OK(self, small, 2, 1, SZ(5), ST(1)); /* still held by self */
  }
  /* Storage NULL: a fresh storage. */
  THTensor_(setStorage1d)(self, NULL, 0, 3, 1);
  CHECK(THTensor_(storage)(self) != NULL && THTensor_(storage)(self) != s);
  CHECK(THStorage_(size)(THTensor_(storage)(self)) == 3);
  THTensor_(free)(self);
  THStorage_(free)(s);
}

static void TB(test_predicates)(void) {
  THStorage *s = THStorage_(newWithSize)(40);
  TB(fill)(s);
  THTensor *t = THTensor_(newWithStorage2d)(s, 0, 2, 3, 3, 1);
  THTensor *tr = THTensor_(newTranspose)(t, 0, 1);
  THTensor *m32 = THTensor_(newWithStorage2d)(s, 0, 3, 2, 2, 1);
  THTensor *m32t = THTensor_(newTranspose)(m32, 0, 1); /* 2x3, not contiguous */
  THTensor *v6 = THTensor_(newWithStorage1d)(s, 0, 6, 1);
  THTensor *t3 = THTensor_(newWithStorage3d)(s, 0, 2, 12, 3, 4, 4, 1);
  THTensor *e1 = THTensor_(new)(), *e2 = THTensor_(new)();

  CHECK(THTensor_(isContiguous)(t) == 1);
  CHECK(THTensor_(isContiguous)(tr) == 0);
  CHECK(THTensor_(isContiguous)(m32t) == 0);
  {
    THTensor *n = THTensor_(newNarrow)(t3, 1, 0, 2);
    CHECK(THTensor_(isContiguous)(n) == 0);
    THTensor_(free)(n);
    n = THTensor_(newNarrow)(t3, 0, 1, 1);
    CHECK(THTensor_(isContiguous)(n) == 1);
    THTensor_(free)(n);
  }
  CHECK(THTensor_(isSameSizeAs)(t, m32t) == 1);
  CHECK(THTensor_(isSameSizeAs)(t, m32) == 0);
  CHECK(THTensor_(isSameSizeAs)(t, v6) == 0);
  CHECK(THTensor_(isSameSizeAs)(e1, e2) == 1);

  {
    THTensor *w = THTensor_(newWithTensor)(t);
    CHECK(THTensor_(isSetTo)(w, t) == 1);
    THTensor *off = THTensor_(newWithStorage2d)(s, 1, 2, 3, 3, 1);
    CHECK(THTensor_(isSetTo)(off, t) == 0);
    CHECK(THTensor_(isSetTo)(tr, t) == 0);
    CHECK(THTensor_(isSetTo)(e1, e2) == 0); /* no storage */
    THTensor *other = THTensor_(newWithSize2d)(2, 3);
    CHECK(THTensor_(isSetTo)(other, t) == 0);
    THTensor_(free)(other);
    THTensor_(free)(off);
    THTensor_(free)(w);
  }
  {
    THLongStorage *a = THLongStorage_newWithSize2(2, 3), *b = THLongStorage_newWithSize2(3, 2),
                  *c = THLongStorage_newWithSize3(2, 3, 1);
    CHECK(THTensor_(isSize)(t, a) == 1);
    CHECK(THTensor_(isSize)(m32t, a) == 1);
    CHECK(THTensor_(isSize)(t, b) == 0);
    CHECK(THTensor_(isSize)(t, c) == 0);
    THLongStorage_free(a);
    THLongStorage_free(b);
    THLongStorage_free(c);
  }
  CHECK(THTensor_(nElement)(t3) == 24);
  CHECK(THTensor_(nElement)(e1) == 0);
  CHECK(THTensor_(nDimension)(t3) == 3);
  {
    THTensor *tt = THTensor_(newTranspose)(t3, 0, 2);
    THLongStorage *sz = THTensor_(newSizeOf)(tt), *st = THTensor_(newStrideOf)(tt);
    CHECK(THLongStorage_size(sz) == 3 && THLongStorage_size(st) == 3);
    CHECK(THLongStorage_get(sz, 0) == 4 && THLongStorage_get(sz, 1) == 3 && THLongStorage_get(sz, 2) == 2);
    CHECK(THLongStorage_get(st, 0) == 1 && THLongStorage_get(st, 1) == 4 && THLongStorage_get(st, 2) == 12);
    THLongStorage_free(sz);
    THLongStorage_free(st);
    THTensor_(free)(tt);
  }
  {
    THTensor *n = THTensor_(newNarrow)(t3, 2, 3, 1);
    CHECK(THTensor_(data)(n) == THStorage_(data)(s) + 3);
    CHECK(THTensor_(storageOffset)(n) == 3);
    THTensor_(free)(n);
  }
  THTensor_(free)(e1);
  THTensor_(free)(e2);
  THTensor_(free)(t3);
  THTensor_(free)(v6);
  THTensor_(free)(m32t);
  THTensor_(free)(m32);
  THTensor_(free)(tr);
  THTensor_(free)(t);
  THStorage_(free)(s);
}

static void TB(test_get_set)(void) {
  THTensor *t = THTensor_(newWithSize4d)(2, 3, 4, 5);
  const real *d = THStorage_(data)(THTensor_(storage)(t));
  int ok = 1;
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++)
      for (int64_t k = 0; k < 4; k++)
        for (int64_t l = 0; l < 5; l++) THTensor_(set4d)(t, i, j, k, l, MKVAL(60 * i + 20 * j + 5 * k + l));
  for (int64_t n = 0; n < 120; n++) ok &= VEQ(d[n], MKVAL(n));
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++)
      for (int64_t k = 0; k < 4; k++)
        for (int64_t l = 0; l < 5; l++) ok &= VEQ(THTensor_(get4d)(t, i, j, k, l), MKVAL(60 * i + 20 * j + 5 * k + l));
  CHECK(ok);
  THTensor_(free)(t);

  t = THTensor_(newWithSize3d)(3, 4, 2);
  d = THStorage_(data)(THTensor_(storage)(t));
  ok = 1;
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 4; j++)
      for (int64_t k = 0; k < 2; k++) THTensor_(set3d)(t, i, j, k, MKVAL(8 * i + 2 * j + k + 1));
  for (int64_t n = 0; n < 24; n++) ok &= VEQ(d[n], MKVAL(n + 1));
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 4; j++)
      for (int64_t k = 0; k < 2; k++) ok &= VEQ(THTensor_(get3d)(t, i, j, k), MKVAL(8 * i + 2 * j + k + 1));
  CHECK(ok);
  THTensor_(free)(t);

  /* set2d through a transposed view lands at the transposed position. */
  t = THTensor_(newWithSize2d)(3, 4);
  THTensor *tr = THTensor_(newTranspose)(t, 0, 1);
  d = THStorage_(data)(THTensor_(storage)(t));
  ok = 1;
  for (int64_t i = 0; i < 4; i++)
    for (int64_t j = 0; j < 3; j++) THTensor_(set2d)(tr, i, j, MKVAL(i * 3 + j + 2));
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 4; j++) {
      ok &= VEQ(d[i * 4 + j], MKVAL(j * 3 + i + 2));
      ok &= VEQ(THTensor_(get2d)(t, i, j), MKVAL(j * 3 + i + 2));
    }
  CHECK(ok);
  THTensor_(free)(tr);
  THTensor_(free)(t);

  t = THTensor_(newWithSize1d)(7);
  for (int64_t i = 0; i < 7; i++) THTensor_(set1d)(t, i, MKVAL(30 - i));
  ok = 1;
  d = THTensor_(data)(t);
  for (int64_t i = 0; i < 7; i++) ok &= VEQ(THTensor_(get1d)(t, i), MKVAL(30 - i)) && VEQ(d[i], MKVAL(30 - i));
  CHECK(ok);
  THTensor_(free)(t);
}

static void TB(test_desc_refcount)(void) {
  THTensor *t = THTensor_(newWithSize2d)(2, 3);
  THDescBuff b = THTensor_(desc)(t);
  CHECK(strcmp(b.str, "torch." TH_CONCAT_STRING_2(Real, Tensor) " of size 2x3") == 0);
  b = THTensor_(sizeDesc)(t);
  CHECK(strcmp(b.str, "[2 x 3]") == 0);
  THTensor_(resize3d)(t, 4, 1, 12);
  b = THTensor_(desc)(t);
  CHECK(strcmp(b.str, "torch." TH_CONCAT_STRING_2(Real, Tensor) " of size 4x1x12") == 0);
  b = THTensor_(sizeDesc)(t);
  CHECK(strcmp(b.str, "[4 x 1 x 12]") == 0);
  THTensor_(resize1d)(t, 5);
  b = THTensor_(desc)(t);
  CHECK(strcmp(b.str, "torch." TH_CONCAT_STRING_2(Real, Tensor) " of size 5") == 0);
  b = THTensor_(sizeDesc)(t);
  CHECK(strcmp(b.str, "[5]") == 0);

  /* retain/free: the tensor lives until the last reference goes (valgrind checks the end). */
  TB(fill)(THTensor_(storage)(t));
  THTensor_(retain)(t);
  THTensor_(retain)(t);
  THTensor_(free)(t);
  THTensor_(free)(t);
  CHECK(VEQ(THTensor_(get1d)(t, 4), MKVAL(4)));
  THTensor_(release)(t); /* == free: the last one */
  THTensor_(free)(NULL);
  THTensor_(retain)(NULL);

  /* freeCopyTo: copies into dst and drops the temporary. */
  {
    THStorage *s = THStorage_(newWithSize)(12);
    TB(fill)(s);
    THTensor *dst = THTensor_(newWithStorage2d)(s, 0, 2, 6, 3, 2); /* a strided 2x3 destination */
    THTensor *tmp = THTensor_(newWithSize2d)(3, 2);                /* 6 elements, another shape */
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 2; j++) THTensor_(set2d)(tmp, i, j, MKVAL(100 + i * 2 + j));
    THTensor_(freeCopyTo)(tmp, dst);
    int ok = 1;
    const real *d = THStorage_(data)(s);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) ok &= VEQ(d[i * 6 + j * 2], MKVAL(100 + i * 3 + j));
    for (int k = 1; k < 12; k += 2) ok &= VEQ(d[k], MKVAL(k)); /* holes untouched */
    CHECK(ok);
    /* self == dst: no copy, just the free. */
    THTensor_(retain)(dst);
    THTensor_(freeCopyTo)(dst, dst);
    CHECK(VEQ(THTensor_(get2d)(dst, 1, 2), MKVAL(105)));
    THTensor_(free)(dst);
    THStorage_(free)(s);
  }
}

static void TB(run)(void) {
  TB(test_new)();
  TB(test_with_storage)();
  TB(test_with_tensor_clone_contiguous)();
  TB(test_new_views)();
  TB(test_inplace_views)();
  TB(test_resize)();
  TB(test_set_storage)();
  TB(test_predicates)();
  TB(test_get_set)();
  TB(test_desc_refcount)();
}

#undef SZ
#undef ST
#undef VIEW_OK
