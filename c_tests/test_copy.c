/* Tensor copies (generic/THTensorCopy.h): copy and copy<Src> for every (destination, source)
 * dtype pair, on contiguous, transposed, narrowed and expanded (stride 0) sources and on
 * transposed / narrowed / reshaped destinations. Every element is compared with a naive
 * row-major loop over hand-written geometries and a hand-written C cast (with reference
 * float -> half / bfloat16 rounding written here, not taken from the library). Also: element
 * count mismatches (an error, destination untouched) and overlapping views of one storage. */
#include "th_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { K_BYTE, K_CHAR, K_SHORT, K_INT, K_LONG, K_FLOAT, K_DOUBLE, K_HALF, K_BF16, K_BOOL, NKIND };

/* ---- reference conversions ------------------------------------------------------------- */

/* double -> IEEE half bits, one round-to-nearest-even step. */
static uint16_t ref_half(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  int e;
  double m;
  if (isnan(x)) return 0x7E00;
  if (a >= 65520.0) return sign | 0x7C00; /* 65520 is the tie between 65504 and 2^16 */
  if (a < ldexp(1.0, -14)) return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, 24)));
  frexp(a, &e);
  e -= 1; /* a in [2^e, 2^(e+1)) */
  m = nearbyint(ldexp(a, 10 - e));
  if (m >= 2048.0) {
    m = 1024.0;
    e++;
  }
  if (e + 15 >= 31) return sign | 0x7C00;
  return (uint16_t)(sign | ((e + 15) << 10) | ((int)m - 1024));
}

/* double -> bfloat16 bits, one round-to-nearest-even step. */
static uint16_t ref_bf16(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  int e;
  double m;
  if (isnan(x)) return 0x7FC0;
  if (a == 0.0) return sign;
  if (isinf(a)) return sign | 0x7F80;
  frexp(a, &e);
  e -= 1;
  if (e < -126) return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, 133)));
  m = nearbyint(ldexp(a, 7 - e));
  if (m >= 256.0) {
    m = 128.0;
    e++;
  }
  if (e + 127 >= 255) return sign | 0x7F80;
  return (uint16_t)(sign | ((e + 127) << 7) | ((int)m - 128));
}

static double half_value(uint16_t h) {
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp((double)(1024 + m), e - 25);
  return (h & 0x8000) ? -v : v;
}

static double bf16_value(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return (double)f;
}

/* An element's exact value: an integer (integer and Bool dtypes) or a double. */
typedef struct {
  int isint;
  int64_t i;
  double f;
} Val;

static Val read_val(int kind, const unsigned char *p) {
  Val v = {1, 0, 0.0};
  switch (kind) {
    case K_BYTE: { uint8_t x; memcpy(&x, p, 1); v.i = x; break; }
    case K_CHAR: { int8_t x; memcpy(&x, p, 1); v.i = x; break; }
    case K_SHORT: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case K_INT: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case K_LONG: { int64_t x; memcpy(&x, p, 8); v.i = x; break; }
    case K_BOOL: v.i = p[0] != 0; break; /* any non-zero byte is true */
    case K_FLOAT: { float x; memcpy(&x, p, 4); v.isint = 0; v.f = x; break; }
    case K_DOUBLE: { double x; memcpy(&x, p, 8); v.isint = 0; v.f = x; break; }
    case K_HALF: { uint16_t x; memcpy(&x, p, 2); v.isint = 0; v.f = half_value(x); break; }
    case K_BF16: { uint16_t x; memcpy(&x, p, 2); v.isint = 0; v.f = bf16_value(x); break; }
  }
  return v;
}

/* The bytes of (dst type)v as a C cast would give them; 0 if C leaves it undefined (a float
 * out of an integer type's range). */
static int expect(int kind, Val v, unsigned char *out) {
  double x = v.isint ? (double)v.i : v.f;
#define INT_DST(T, lo, hi)                                  \
  do {                                                      \
    T r_;                                                   \
    if (v.isint) r_ = (T)v.i;                               \
    else if (v.f > (lo) && v.f < (hi)) r_ = (T)v.f;         \
    else return 0;                                          \
    memcpy(out, &r_, sizeof r_);                            \
  } while (0)
  switch (kind) {
    case K_BYTE: INT_DST(uint8_t, -1.0, 256.0); break;
    case K_CHAR: INT_DST(int8_t, -129.0, 128.0); break;
    case K_SHORT: INT_DST(int16_t, -32769.0, 32768.0); break;
    case K_INT: INT_DST(int32_t, -2147483649.0, 2147483648.0); break;
    case K_LONG:
      if (v.isint || (v.f >= -9223372036854775808.0 && v.f < 9223372036854775808.0)) {
        int64_t r = v.isint ? v.i : (int64_t)v.f;
        memcpy(out, &r, 8);
      } else {
        return 0;
      }
      break;
    case K_FLOAT: { float r = v.isint ? (float)v.i : (float)v.f; memcpy(out, &r, 4); break; }
    case K_DOUBLE: memcpy(out, &x, 8); break;
    case K_HALF: { uint16_t r = ref_half(x); memcpy(out, &r, 2); break; }
    case K_BF16: { uint16_t r = ref_bf16(x); memcpy(out, &r, 2); break; }
    case K_BOOL: out[0] = (unsigned char)(v.isint ? v.i != 0 : v.f != 0.0); break;
  }
#undef INT_DST
  return 1;
}

/* ---- source values (12 per dtype; element k of a source storage is vals[k % 12]) --------- */
static const uint8_t vals_Byte[12] = {0, 1, 2, 3, 7, 100, 127, 128, 200, 255, 16, 64};
static const int8_t vals_Char[12] = {0, 1, -1, 2, -2, 127, -128, 100, -100, 5, -5, 64};
static const int16_t vals_Short[12] = {0, 1, -1, 300, -300, 32767, -32768, 256, 1000, -1000, 7, 255};
static const int32_t vals_Int[12] = {0, 1, -1, 65536, -65536, 100000, -7, 300, 2147483647, -2147483647 - 1, 70000, -129};
static const int64_t vals_Long[12] = {0, 1, -1, 1LL << 40, -(1LL << 40), (1LL << 32) + 5, 300, -300, 65535, 70000, 12345678901LL, -9};
static const float vals_Float[12] = {0.0f, 1.0f, -1.0f, 0.5f, -2.75f, 100.25f, 200.75f, 1.0009765625f, 1.00048828125f, 65519.0f, 70000.0f, -0.0f};
static const double vals_Double[12] = {0.0, 1.0, -1.0, 0.25, -3.5, 127.5, 255.5, 1e300, -129.0, 3.0e9, 0.1, -40000.25};
static const THHalf vals_Half[12] = {{0x0000}, {0x3C00}, {0xBC00}, {0x3800}, {0xC170}, {0x5640}, {0x5A48}, {0x3C01}, {0x7BFF}, {0x7C00}, {0x8000}, {0x0001}};
static const THBFloat16 vals_BFloat16[12] = {{0x0000}, {0x3F80}, {0xBF80}, {0x3F00}, {0xC030}, {0x42C8}, {0x4349}, {0x3F81}, {0x4780}, {0x7F80}, {0x8000}, {0x477F}};
/* Raw bytes; 2 and 255 are "true" bytes that did not come from a write. */
static const THBool vals_Bool[12] = {0, 1, 0, 1, 1, 0, 2, 0, 1, 0, 255, 1};

/* ---- a type-erased view of each dtype's tensor API ------------------------------------- */
typedef struct {
  const char *name;
  int kind;
  size_t es;
  const void *vals;
  void *(*mk)(int64_t n);
  void *(*on)(void *t, ptrdiff_t off, int nd, const int64_t *sz, const int64_t *st);
  void *(*transpose)(void *t, int d1, int d2);
  void *(*narrow)(void *t, int dim, int64_t first, int64_t size);
  void *(*expand)(void *t, int64_t a, int64_t b);
  void (*free)(void *t);
  unsigned char *(*bytes)(void *t);
  int (*ndim)(void *t);
  int64_t (*size)(void *t, int d);
  void (*copy_same)(void *dst, void *src);
} DT;

#define DTYPES(X) \
  X(Byte, K_BYTE) X(Char, K_CHAR) X(Short, K_SHORT) X(Int, K_INT) X(Long, K_LONG) \
  X(Float, K_FLOAT) X(Double, K_DOUBLE) X(Half, K_HALF) X(BFloat16, K_BF16) X(Bool, K_BOOL)
#define SRC_LIST(M, D) \
  M(D, Byte) M(D, Char) M(D, Short) M(D, Int) M(D, Long) M(D, Float) M(D, Double) M(D, Half) M(D, BFloat16) M(D, Bool)

#define DEFINE_OPS(R, K)                                                                          \
  static void *R##_mk(int64_t n) { return TH##R##Tensor_newWithSize1d(n); }                       \
  static void *R##_on(void *t, ptrdiff_t off, int nd, const int64_t *sz, const int64_t *st) {     \
    THLongStorage *a = THLongStorage_newWithSize(nd), *b = THLongStorage_newWithSize(nd);         \
    for (int d = 0; d < nd; d++) {                                                                \
      THLongStorage_set(a, d, sz[d]);                                                             \
      THLongStorage_set(b, d, st[d]);                                                             \
    }                                                                                             \
    void *r = TH##R##Tensor_newWithStorage(TH##R##Tensor_storage((TH##R##Tensor *)t), off, a, b); \
    THLongStorage_free(a);                                                                        \
    THLongStorage_free(b);                                                                        \
    return r;                                                                                     \
  }                                                                                               \
  static void *R##_transpose(void *t, int a, int b) { return TH##R##Tensor_newTranspose((TH##R##Tensor *)t, a, b); } \
  static void *R##_narrow(void *t, int dim, int64_t f, int64_t n) {                               \
    return TH##R##Tensor_newNarrow((TH##R##Tensor *)t, dim, f, n);                                \
  }                                                                                               \
  static void *R##_expand(void *t, int64_t a, int64_t b) {                                        \
    THLongStorage *s = THLongStorage_newWithSize2(a, b);                                          \
    void *r = TH##R##Tensor_newExpand((TH##R##Tensor *)t, s);                                     \
    THLongStorage_free(s);                                                                        \
    return r;                                                                                     \
  }                                                                                               \
  static void R##_free(void *t) { TH##R##Tensor_free((TH##R##Tensor *)t); }                       \
  static unsigned char *R##_bytes(void *t) {                                                      \
    return (unsigned char *)TH##R##Storage_data(TH##R##Tensor_storage((TH##R##Tensor *)t));      \
  }                                                                                               \
  static int R##_ndim(void *t) { return TH##R##Tensor_nDimension((TH##R##Tensor *)t); }           \
  static int64_t R##_size(void *t, int d) { return TH##R##Tensor_size((TH##R##Tensor *)t, d); }   \
  static void R##_copy_same(void *d, void *s) { TH##R##Tensor_copy((TH##R##Tensor *)d, (TH##R##Tensor *)s); }
DTYPES(DEFINE_OPS)

#define DT_ENTRY(R, K)                                                                              \
  {#R, K, sizeof(vals_##R[0]), vals_##R, R##_mk, R##_on, R##_transpose, R##_narrow, R##_expand, \
   R##_free, R##_bytes, R##_ndim, R##_size, R##_copy_same},
static const DT dts[NKIND] = {DTYPES(DT_ENTRY)};

/* copy_table[dst][src] calls TH<dst>Tensor_copy<src>. */
#define COPY_WRAP(D, S) \
  static void copy_##D##_##S(void *d, void *s) { TH##D##Tensor_copy##S((TH##D##Tensor *)d, (TH##S##Tensor *)s); }
#define ROW_WRAP(D, K) SRC_LIST(COPY_WRAP, D)
DTYPES(ROW_WRAP)
#define COPY_ENTRY(D, S) copy_##D##_##S,
#define ROW_ENTRY(D, K) {SRC_LIST(COPY_ENTRY, D)},
static void (*const copy_table[NKIND][NKIND])(void *, void *) = {DTYPES(ROW_ENTRY)};

/* ---- layouts: how a 12-element (or 6-element) view is built, and its hand geometry -------- */
typedef struct {
  ptrdiff_t off;
  int nd;
  int64_t sz[2], st[2];
} Geo;

enum { L_C34, L_T34, L_N34, L_E31, L_E14, L_C26, L_C23, L_C6, L_C5 };
static const char *layout_name[] = {"contiguous 3x4", "transposed 3x4", "narrowed 3x4", "expanded 3x1->3x4",
                                    "expanded 1x4->3x4", "contiguous 2x6", "contiguous 2x3", "contiguous 6",
                                    "contiguous 5"};

/* Builds a view of layout `l` on a fresh storage (returned in *n the storage length) filled
 * with the source values (fill_src) or with the byte 0x5A (destination sentinel). */
static void *build(const DT *d, int l, int fill_src, int64_t *n, Geo *g) {
  static const int64_t ns[] = {12, 12, 18, 3, 4, 12, 6, 6, 5};
  void *base, *v, *tmp;
  *n = ns[l];
  base = d->mk(*n);
  unsigned char *p = d->bytes(base);
  if (fill_src)
    for (int64_t k = 0; k < *n; k++) memcpy(p + k * d->es, (const unsigned char *)d->vals + (k % 12) * d->es, d->es);
  else
    memset(p, 0x5A, (size_t)*n * d->es);
  switch (l) {
    case L_C34: v = d->on(base, 0, 2, (int64_t[]){3, 4}, (int64_t[]){4, 1}); *g = (Geo){0, 2, {3, 4}, {4, 1}}; break;
    case L_T34:
      tmp = d->on(base, 0, 2, (int64_t[]){4, 3}, (int64_t[]){3, 1});
      v = d->transpose(tmp, 0, 1);
      d->free(tmp);
      *g = (Geo){0, 2, {3, 4}, {1, 3}};
      break;
    case L_N34:
      tmp = d->on(base, 0, 2, (int64_t[]){3, 6}, (int64_t[]){6, 1});
      v = d->narrow(tmp, 1, 1, 4);
      d->free(tmp);
      *g = (Geo){1, 2, {3, 4}, {6, 1}};
      break;
    case L_E31:
      tmp = d->on(base, 0, 2, (int64_t[]){3, 1}, (int64_t[]){1, 1});
      v = d->expand(tmp, 3, 4);
      d->free(tmp);
      *g = (Geo){0, 2, {3, 4}, {1, 0}};
      break;
    case L_E14:
      tmp = d->on(base, 0, 2, (int64_t[]){1, 4}, (int64_t[]){4, 1});
      v = d->expand(tmp, 3, 4);
      d->free(tmp);
      *g = (Geo){0, 2, {3, 4}, {0, 1}};
      break;
    case L_C26: v = d->on(base, 0, 2, (int64_t[]){2, 6}, (int64_t[]){6, 1}); *g = (Geo){0, 2, {2, 6}, {6, 1}}; break;
    case L_C23: v = d->on(base, 0, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1}); *g = (Geo){0, 2, {2, 3}, {3, 1}}; break;
    case L_C6: v = d->on(base, 0, 1, (int64_t[]){6}, (int64_t[]){1}); *g = (Geo){0, 1, {6, 0}, {1, 0}}; break;
    default: v = d->on(base, 0, 1, (int64_t[]){5}, (int64_t[]){1}); *g = (Geo){0, 1, {5, 0}, {1, 0}}; break;
  }
  d->free(base); /* the view holds the storage */
  return v;
}

static int64_t geo_count(const Geo *g) { return g->nd == 1 ? g->sz[0] : g->sz[0] * g->sz[1]; }

/* Storage index of the l-th element in row-major order. */
static ptrdiff_t geo_index(const Geo *g, int64_t l) {
  if (g->nd == 1) return g->off + (ptrdiff_t)(l * g->st[0]);
  return g->off + (ptrdiff_t)((l / g->sz[1]) * g->st[0] + (l % g->sz[1]) * g->st[1]);
}

static int report_budget = 20;

/* Copies (dst layout ld) <- (src layout ls) with `fn`, and returns the number of wrong bytes
 * groups: elements that differ from the naive expectation, plus destination holes that changed. */
static int run_case(int dk, int sk, int ld, int ls, void (*fn)(void *, void *), const char *how) {
  const DT *D = &dts[dk], *S = &dts[sk];
  int64_t nd, ns;
  Geo gd, gs;
  void *dst = build(D, ld, 0, &nd, &gd);
  void *src = build(S, ls, 1, &ns, &gs);
  unsigned char *before = malloc((size_t)nd * D->es);
  unsigned char *written = calloc((size_t)nd, 1);
  unsigned char *sbefore = malloc((size_t)ns * S->es);
  memcpy(before, D->bytes(dst), (size_t)nd * D->es);
  memcpy(sbefore, S->bytes(src), (size_t)ns * S->es);
  int bad = 0;

  fn(dst, src);

  const unsigned char *db = D->bytes(dst), *sb = S->bytes(src);
  int64_t count = geo_count(&gd);
  for (int64_t l = 0; l < count; l++) {
    ptrdiff_t di = geo_index(&gd, l), si = geo_index(&gs, l);
    unsigned char exp[8];
    written[di] = 1;
    if (!expect(D->kind, read_val(S->kind, sb + si * S->es), exp)) continue; /* C leaves it undefined */
    if (memcmp(db + di * D->es, exp, D->es) != 0) {
      bad++;
      if (report_budget > 0) {
        report_budget--;
        unsigned long long got = 0, want = 0;
        memcpy(&got, db + di * D->es, D->es);
        memcpy(&want, exp, D->es);
        fprintf(stderr, "  %s %s <- %s (%s <- %s): element %lld: got bytes 0x%llx, want 0x%llx\n", how, D->name,
                S->name, layout_name[ld], layout_name[ls], (long long)l, got, want);
      }
    }
  }
  for (int64_t k = 0; k < nd; k++)
    if (!written[k] && memcmp(db + k * D->es, before + k * D->es, D->es) != 0) bad++;
  if (memcmp(sb, sbefore, (size_t)ns * S->es) != 0) bad++; /* the source is only read */
  free(before);
  free(written);
  free(sbefore);
  D->free(dst);
  S->free(src);
  return bad;
}

static const int cases[][2] = {
    {L_C34, L_C34}, {L_C34, L_T34}, {L_C34, L_N34}, {L_C34, L_E31}, {L_C34, L_E14},
    {L_T34, L_C34}, {L_N34, L_C34}, {L_T34, L_T34}, {L_C26, L_T34}, {L_C23, L_C6},
};

static void test_all_pairs(void) {
  for (int dk = 0; dk < NKIND; dk++)
    for (int sk = 0; sk < NKIND; sk++)
      for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        CHECK(run_case(dk, sk, cases[c][0], cases[c][1], copy_table[dk][sk], "copy<Src>") == 0);
  /* The untyped copy of the same dtype. */
  for (int k = 0; k < NKIND; k++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      CHECK(run_case(k, k, cases[c][0], cases[c][1], dts[k].copy_same, "copy") == 0);
}

/* An element-count mismatch is an error; the destination (geometry and bytes) is untouched. */
static void test_count_mismatch(void) {
  for (int dk = 0; dk < NKIND; dk++)
    for (int sk = 0; sk < NKIND; sk++) {
      const DT *D = &dts[dk], *S = &dts[sk];
      int64_t nd, ns;
      Geo gd, gs;
      void *dst = build(D, L_C23, 0, &nd, &gd); /* 6 elements */
      void *src = build(S, sk % 2 ? L_C5 : L_C34, 1, &ns, &gs); /* 5 or 12 */
      unsigned char before[64];
      memcpy(before, D->bytes(dst), (size_t)nd * D->es);
      EXPECT_ERROR(copy_table[dk][sk](dst, src));
      CHECK(THGetLastErrorCode() == TH_ERR_SIZE);
      CHECK(memcmp(before, D->bytes(dst), (size_t)nd * D->es) == 0);
      CHECK(D->ndim(dst) == 2 && D->size(dst, 0) == 2 && D->size(dst, 1) == 3);
      if (dk == sk) {
        EXPECT_ERROR(D->copy_same(dst, src));
        CHECK(memcmp(before, D->bytes(dst), (size_t)nd * D->es) == 0);
      }
      D->free(dst);
      S->free(src);
    }
}

/* Overlapping views of one storage behave as if the source were read first. */
static void test_overlap(void) {
  for (int k = 0; k < NKIND; k++) {
    const DT *D = &dts[k];
    /* The values as a write would store them (Bool: 0/1), so that this test is only about
     * the overlap (raw Bool bytes are covered by test_all_pairs). */
    unsigned char vals[12 * 8];
    for (int i = 0; i < 12; i++)
      expect(D->kind, read_val(D->kind, (const unsigned char *)D->vals + i * D->es), vals + i * D->es);
    for (int dir = 0; dir < 2; dir++)
      for (int typed = 0; typed < 2; typed++) {
        void *base = D->mk(8);
        memcpy(D->bytes(base), vals, 8 * D->es);
        void *hi = D->narrow(base, 0, 1, 7), *lo = D->narrow(base, 0, 0, 7);
        void (*fn)(void *, void *) = typed ? copy_table[k][k] : D->copy_same;
        if (dir == 0) fn(hi, lo); /* shift right: b[i+1] = old b[i] */
        else fn(lo, hi);          /* shift left: b[i] = old b[i+1] */
        int bad = 0;
        const unsigned char *b = D->bytes(base);
        for (int i = 0; i < 8; i++) {
          int from = dir == 0 ? (i == 0 ? 0 : i - 1) : (i == 7 ? 7 : i + 1);
          unsigned char exp[8];
          if (dir == 0 && i == 0) memcpy(exp, vals, D->es); /* untouched, raw */
          else if (dir == 1 && i == 7) memcpy(exp, vals + 7 * D->es, D->es);
          else expect(D->kind, read_val(D->kind, vals + from * D->es), exp);
          if (memcmp(b + i * D->es, exp, D->es) != 0) bad++;
        }
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  overlap %s dir %d typed %d: %d wrong\n", D->name, dir, typed, bad);
        D->free(hi);
        D->free(lo);
        D->free(base);
      }
    /* In-place transpose of a square matrix through the same storage. */
    {
      void *base = D->mk(9);
      memcpy(D->bytes(base), vals, 9 * D->es);
      void *m = D->on(base, 0, 2, (int64_t[]){3, 3}, (int64_t[]){3, 1});
      void *mt = D->transpose(m, 0, 1);
      D->copy_same(m, mt);
      int bad = 0;
      const unsigned char *b = D->bytes(base);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          unsigned char exp[8];
          expect(D->kind, read_val(D->kind, vals + (j * 3 + i) * D->es), exp);
          if (memcmp(b + (i * 3 + j) * D->es, exp, D->es) != 0) bad++;
        }
      CHECK(bad == 0);
      /* copy(t, t): nothing changes. */
      unsigned char snap[72];
      memcpy(snap, b, 9 * D->es);
      D->copy_same(m, m);
      CHECK(memcmp(snap, D->bytes(base), 9 * D->es) == 0);
      D->free(mt);
      D->free(m);
      D->free(base);
    }
  }
}

/* The reference conversions agree with known bit patterns. */
static void test_reference(void) {
  CHECK(ref_half(1.0) == 0x3C00 && ref_half(-2.0) == 0xC000 && ref_half(0.5) == 0x3800);
  CHECK(ref_half(65504.0) == 0x7BFF && ref_half(65519.0) == 0x7BFF && ref_half(65520.0) == 0x7C00);
  CHECK(ref_half(1.0 + ldexp(1.0, -11)) == 0x3C00);     /* tie: to even */
  CHECK(ref_half(1.0 + 3 * ldexp(1.0, -11)) == 0x3C02); /* tie: to even */
  CHECK(ref_half(ldexp(1.0, -24)) == 0x0001 && ref_half(-0.0) == 0x8000);
  CHECK(ref_bf16(1.0) == 0x3F80 && ref_bf16(100.0) == 0x42C8 && ref_bf16(-2.75) == 0xC030);
  CHECK(ref_bf16(1.0 + ldexp(1.0, -8)) == 0x3F80 && ref_bf16(65536.0) == 0x4780);
  CHECK(half_value(0x5A48) == 201.0 && half_value(0xC170) == -2.71875 && half_value(0x0001) == ldexp(1.0, -24));
  CHECK(bf16_value(0x4349) == 201.0 && bf16_value(0x477F) == 65280.0);
}

/* Hand-picked single conversions, each with its expected bits written out. */
static void test_known_casts(void) {
  THDoubleTensor *d = THDoubleTensor_newWithSize1d(1);
  THHalfTensor *h = THHalfTensor_newWithSize1d(1);
  THBFloat16Tensor *b = THBFloat16Tensor_newWithSize1d(1);
  THFloatTensor *f = THFloatTensor_newWithSize1d(1);
  THByteTensor *u = THByteTensor_newWithSize1d(1);
  THCharTensor *c = THCharTensor_newWithSize1d(1);
  THLongTensor *l = THLongTensor_newWithSize1d(1);
  THBoolTensor *q = THBoolTensor_newWithSize1d(1);

  THLongTensor_set1d(l, 0, 300);
  THByteTensor_copyLong(u, l);
  CHECK(THByteTensor_get1d(u, 0) == 44); /* 300 mod 256 */
  THCharTensor_copyLong(c, l);
  CHECK(THCharTensor_get1d(c, 0) == 44);
  THLongTensor_set1d(l, 0, -1);
  THByteTensor_copyLong(u, l);
  CHECK(THByteTensor_get1d(u, 0) == 255);
  THDoubleTensor_set1d(d, 0, -2.75);
  THLongTensor_copyDouble(l, d);
  CHECK(THLongTensor_get1d(l, 0) == -2); /* truncation toward zero */
  THDoubleTensor_set1d(d, 0, 0.25);
  THBoolTensor_copyDouble(q, d);
  CHECK(THBoolTensor_get1d(q, 0) == 1);
  THDoubleTensor_set1d(d, 0, 1e300);
  THFloatTensor_copyDouble(f, d);
  CHECK(isinf(THFloatTensor_get1d(f, 0)));
  THHalfTensor_copyDouble(h, d);
  CHECK(THHalfTensor_get1d(h, 0).x == 0x7C00);

  /* One rounding from double, as a C cast: values just above a tie of the narrow type (the
   * sticky bit 2^-40 lies below float precision). */
  THDoubleTensor_set1d(d, 0, 1.0 + ldexp(1.0, -24) + ldexp(1.0, -40));
  THFloatTensor_copyDouble(f, d);
  CHECK(THFloatTensor_get1d(f, 0) == 1.0f + ldexp(1.0, -23));
  THDoubleTensor_set1d(d, 0, 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40));
  THHalfTensor_copyDouble(h, d);
  CHECK(THHalfTensor_get1d(h, 0).x == 0x3C01);
  if (THHalfTensor_get1d(h, 0).x != 0x3C01)
    fprintf(stderr, "  Double 1+2^-11+2^-40 -> Half gave 0x%04x, want 0x3C01\n", THHalfTensor_get1d(h, 0).x);
  THDoubleTensor_set1d(d, 0, 1.0 + ldexp(1.0, -8) + ldexp(1.0, -40));
  THBFloat16Tensor_copyDouble(b, d);
  CHECK(THBFloat16Tensor_get1d(b, 0).x == 0x3F81);
  if (THBFloat16Tensor_get1d(b, 0).x != 0x3F81)
    fprintf(stderr, "  Double 1+2^-8+2^-40 -> BFloat16 gave 0x%04x, want 0x3F81\n", THBFloat16Tensor_get1d(b, 0).x);

  THDoubleTensor_free(d);
  THHalfTensor_free(h);
  THBFloat16Tensor_free(b);
  THFloatTensor_free(f);
  THByteTensor_free(u);
  THCharTensor_free(c);
  THLongTensor_free(l);
  THBoolTensor_free(q);
}

/* "2x3 <- 6" and friends, with explicit values; and copies between empty tensors. */
static void test_shapes(void) {
  THFloatTensor *a = THFloatTensor_newWithSize2d(2, 3);
  THIntTensor *v = THIntTensor_newWithSize1d(6);
  for (int i = 0; i < 6; i++) THIntTensor_set1d(v, i, 10 * i - 7);
  THFloatTensor_copyInt(a, v);
  CHECK(THFloatTensor_get2d(a, 0, 0) == -7.0f && THFloatTensor_get2d(a, 0, 2) == 13.0f);
  CHECK(THFloatTensor_get2d(a, 1, 0) == 23.0f && THFloatTensor_get2d(a, 1, 2) == 43.0f);
  CHECK(THFloatTensor_nDimension(a) == 2 && THFloatTensor_size(a, 1) == 3); /* no resize */
  /* 6 <- transposed 2x3 (row-major of the transposed view: 0,3,1,4,2,5) */
  THFloatTensor *at = THFloatTensor_newTranspose(a, 0, 1);
  THIntTensor_copyFloat(v, at);
  {
    static const int want[6] = {-7, 23, 3, 33, 13, 43};
    int ok = 1;
    for (int i = 0; i < 6; i++) ok &= THIntTensor_get1d(v, i) == want[i];
    CHECK(ok);
  }
  THFloatTensor *e1 = THFloatTensor_new(), *e2 = THFloatTensor_new();
  EXPECT_OK(THFloatTensor_copy(e1, e2));
  CHECK(THFloatTensor_nDimension(e1) == 0);
  THFloatTensor_free(e1);
  THFloatTensor_free(e2);
  THFloatTensor_free(at);
  THFloatTensor_free(a);
  THIntTensor_free(v);
}

int main(void) {
  th_test_install_handlers();
  test_reference();
  int calls = th_test_handler_calls;
  test_all_pairs();
  test_overlap();
  test_known_casts();
  test_shapes();
  CHECK(th_test_handler_calls == calls); /* none of the above is an error */
  test_count_mismatch();
  return TH_TEST_DONE();
}
