/* Per-dtype helpers for test_storage.c, included once per dtype by generic/storage_types.h.
 * They touch element memory directly (through THStorage_(data)), not through get/set, so the
 * checks built on them do not depend on the accessors under test. */

/* A new storage holding v[0..n), written straight into its memory. */
static THStorage *TEST_(make)(const double *v, ptrdiff_t n) {
  THStorage *s = THStorage_(newWithSize)(n);
  real *p = THStorage_(data)(s);
  for (ptrdiff_t i = 0; i < n; i++) p[i] = TEST_TO_REAL(v[i]);
  return s;
}

/* Element i read straight from memory, as a double. */
static double TEST_(at)(THStorage *s, ptrdiff_t i) {
  return TEST_FROM_REAL(THStorage_(data)(s)[i]);
}

/* What reading back a stored small value `d` gives for this dtype. */
static double TEST_(norm)(double d) {
  return TEST_NORM(d);
}
