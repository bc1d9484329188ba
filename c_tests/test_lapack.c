/* LAPACK wrappers (THTensorLapack.h): hand-computed 2x2 cases (values and TH's column-major
 * output layout), in-place calls, and errors: singular / not positive definite / bad shapes /
 * bad option strings / NULL handles raise exactly one error with a clear message and leave
 * every output untouched. */
#include "th_test.h"

static THFloatTensor *mat2f(float a, float b, float c, float d) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(2, 2);
  THFloatTensor_set2d(t, 0, 0, a);
  THFloatTensor_set2d(t, 0, 1, b);
  THFloatTensor_set2d(t, 1, 0, c);
  THFloatTensor_set2d(t, 1, 1, d);
  return t;
}

static THDoubleTensor *mat2d(double a, double b, double c, double d) {
  THDoubleTensor *t = THDoubleTensor_newWithSize2d(2, 2);
  THDoubleTensor_set2d(t, 0, 0, a);
  THDoubleTensor_set2d(t, 0, 1, b);
  THDoubleTensor_set2d(t, 1, 0, c);
  THDoubleTensor_set2d(t, 1, 1, d);
  return t;
}

static int is_colmajor_d(THDoubleTensor *t) {
  return THDoubleTensor_nDimension(t) == 2 && THDoubleTensor_stride(t, 0) == 1 &&
         THDoubleTensor_stride(t, 1) == THDoubleTensor_size(t, 0);
}

static void hand_computed(void) {
  /* A = [2 1; 1 3], b = [3 5]: x = [0.8 1.4]; LU: pivot 2, l = 0.5, u22 = 2.5 */
  THDoubleTensor *a = mat2d(2, 1, 1, 3);
  THDoubleTensor *b = THDoubleTensor_newWithSize1d(2);
  THDoubleTensor_set1d(b, 0, 3);
  THDoubleTensor_set1d(b, 1, 5);
  THDoubleTensor *rb = THDoubleTensor_new(), *ra = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_gesv(rb, ra, b, a));
  CHECK(THDoubleTensor_nDimension(rb) == 2 && THDoubleTensor_size(rb, 0) == 2 && THDoubleTensor_size(rb, 1) == 1);
  CHECK_CLOSE(THDoubleTensor_get2d(rb, 0, 0), 0.8, 1e-14);
  CHECK_CLOSE(THDoubleTensor_get2d(rb, 1, 0), 1.4, 1e-14);
  CHECK(is_colmajor_d(ra) && is_colmajor_d(rb));
  CHECK(THDoubleTensor_get2d(ra, 0, 0) == 2 && THDoubleTensor_get2d(ra, 0, 1) == 1);
  CHECK(THDoubleTensor_get2d(ra, 1, 0) == 0.5 && THDoubleTensor_get2d(ra, 1, 1) == 2.5);
  /* the inputs are untouched */
  CHECK(THDoubleTensor_get2d(a, 1, 0) == 1 && THDoubleTensor_get1d(b, 1) == 5);

  /* inverse: 1/5 [3 -1; -1 2] */
  EXPECT_OK(THDoubleTensor_getri(ra, a));
  CHECK_CLOSE(THDoubleTensor_get2d(ra, 0, 0), 0.6, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(ra, 0, 1), -0.2, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(ra, 1, 1), 0.4, 1e-15);

  /* Cholesky of [4 2; 2 3]: L = [2 0; 1 sqrt 2], U = L^T; potri gives 1/8 [3 -2; -2 4] */
  THDoubleTensor *s = mat2d(4, 2, 2, 3);
  EXPECT_OK(THDoubleTensor_potrf(ra, s, "L"));
  CHECK(THDoubleTensor_get2d(ra, 0, 0) == 2 && THDoubleTensor_get2d(ra, 0, 1) == 0);
  CHECK(THDoubleTensor_get2d(ra, 1, 0) == 1);
  CHECK_CLOSE(THDoubleTensor_get2d(ra, 1, 1), sqrt(2.0), 1e-15);
  THDoubleTensor *inv = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_potri(inv, ra, "L"));
  CHECK_CLOSE(THDoubleTensor_get2d(inv, 0, 0), 0.375, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(inv, 0, 1), -0.25, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(inv, 1, 0), -0.25, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(inv, 1, 1), 0.5, 1e-15);
  EXPECT_OK(THDoubleTensor_potrf(ra, s, "u")); /* lower case accepted, as LAPACK does */
  CHECK(THDoubleTensor_get2d(ra, 0, 1) == 1 && THDoubleTensor_get2d(ra, 1, 0) == 0);

  /* symmetric eigenvalues of [2 1; 1 2]: 1, 3 (ascending) */
  THDoubleTensor *e = THDoubleTensor_new(), *v = THDoubleTensor_new();
  THDoubleTensor *sy = mat2d(2, 1, 1, 2);
  EXPECT_OK(THDoubleTensor_syev(e, v, sy, "V", "U"));
  CHECK_CLOSE(THDoubleTensor_get1d(e, 0), 1.0, 1e-14);
  CHECK_CLOSE(THDoubleTensor_get1d(e, 1), 3.0, 1e-14);
  CHECK_CLOSE(fabs(THDoubleTensor_get2d(v, 0, 1)), sqrt(0.5), 1e-14);

  /* rotation by 90 degrees: eigenvalues +-i, positive imaginary part first */
  THDoubleTensor *rot = mat2d(0, -1, 1, 0);
  EXPECT_OK(THDoubleTensor_geev(e, v, rot, "N"));
  CHECK(THDoubleTensor_size(e, 0) == 2 && THDoubleTensor_size(e, 1) == 2);
  CHECK_CLOSE(THDoubleTensor_get2d(e, 0, 0), 0, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(e, 0, 1), 1, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(e, 1, 1), -1, 1e-15);

  /* QR of the column (3, 4): LAPACK's sign convention gives R = -5, Q = -(0.6, 0.8) */
  THDoubleTensor *col = THDoubleTensor_newWithSize2d(2, 1);
  THDoubleTensor_set2d(col, 0, 0, 3);
  THDoubleTensor_set2d(col, 1, 0, 4);
  THDoubleTensor *q = THDoubleTensor_new(), *r = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_qr(q, r, col));
  CHECK(THDoubleTensor_size(q, 0) == 2 && THDoubleTensor_size(q, 1) == 1);
  CHECK(THDoubleTensor_size(r, 0) == 1 && THDoubleTensor_size(r, 1) == 1);
  CHECK_CLOSE(THDoubleTensor_get2d(r, 0, 0), -5, 1e-14);
  CHECK_CLOSE(THDoubleTensor_get2d(q, 0, 0), -0.6, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get2d(q, 1, 0), -0.8, 1e-15);
  /* geqrf: v = (1, 4/8) with tau = 1.6 (H = I - tau v v^T maps (3,4) to (-5,0)) */
  THDoubleTensor *tau = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_geqrf(ra, tau, col));
  CHECK_CLOSE(THDoubleTensor_get2d(ra, 1, 0), 0.5, 1e-15);
  CHECK_CLOSE(THDoubleTensor_get1d(tau, 0), 1.6, 1e-15);

  /* gesv in place (b_ and a_ NULL): the results replace rb_ and ra_ */
  THDoubleTensor *a2 = mat2d(2, 1, 1, 3);
  THDoubleTensor *b2 = THDoubleTensor_newWithSize2d(2, 1);
  THDoubleTensor_set2d(b2, 0, 0, 3);
  THDoubleTensor_set2d(b2, 1, 0, 5);
  EXPECT_OK(THDoubleTensor_gesv(b2, a2, NULL, NULL));
  CHECK_CLOSE(THDoubleTensor_get2d(b2, 1, 0), 1.4, 1e-14);
  CHECK(THDoubleTensor_get2d(a2, 1, 1) == 2.5);

  /* pivoted Cholesky: the larger diagonal is chosen first (0-based pivots) */
  THDoubleTensor *p = mat2d(1, 1, 1, 4);
  THIntTensor *piv = THIntTensor_new();
  EXPECT_OK(THDoubleTensor_pstrf(ra, piv, p, "U", -1));
  CHECK(THIntTensor_get1d(piv, 0) == 1 && THIntTensor_get1d(piv, 1) == 0);
  CHECK(THDoubleTensor_get2d(ra, 0, 0) == 2 && THDoubleTensor_get2d(ra, 0, 1) == 0.5);

  /* batched LU: 1-based LAPACK pivots; solve with them */
  THDoubleTensor *batch = THDoubleTensor_newWithSize3d(1, 2, 2);
  THDoubleTensor_set3d(batch, 0, 0, 0, 1);
  THDoubleTensor_set3d(batch, 0, 0, 1, 2);
  THDoubleTensor_set3d(batch, 0, 1, 0, 3);
  THDoubleTensor_set3d(batch, 0, 1, 1, 4);
  THDoubleTensor *lu = THDoubleTensor_new();
  THIntTensor *pivots = THIntTensor_new(), *info = THIntTensor_new();
  EXPECT_OK(THDoubleTensor_btrifact(lu, pivots, info, 1, batch));
  CHECK(THIntTensor_get2d(pivots, 0, 0) == 2 && THIntTensor_get2d(pivots, 0, 1) == 2);
  CHECK(THIntTensor_get1d(info, 0) == 0);
  CHECK(THDoubleTensor_get3d(lu, 0, 0, 0) == 3 && THDoubleTensor_get3d(lu, 0, 0, 1) == 4);
  CHECK_CLOSE(THDoubleTensor_get3d(lu, 0, 1, 0), 1.0 / 3, 1e-15);
  THDoubleTensor *rhs = THDoubleTensor_newWithSize2d(1, 2);
  THDoubleTensor_set2d(rhs, 0, 0, 5);
  THDoubleTensor_set2d(rhs, 0, 1, 11);
  THDoubleTensor *sol = THDoubleTensor_new();
  EXPECT_OK(THDoubleTensor_btrisolve(sol, rhs, lu, pivots));
  CHECK_CLOSE(THDoubleTensor_get2d(sol, 0, 0), 1, 1e-14);
  CHECK_CLOSE(THDoubleTensor_get2d(sol, 0, 1), 2, 1e-14);

  THDoubleTensor *all[] = {a, b, rb, ra, s, inv, e, v, sy, rot, col, q, r, tau, a2, b2, p, batch, lu, rhs, sol};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) THDoubleTensor_free(all[i]);
  THIntTensor_free(piv);
  THIntTensor_free(pivots);
  THIntTensor_free(info);
}

/* out is the 2x3 row-major 0..5 it was made as */
static int untouched(THFloatTensor *out) {
  if (THFloatTensor_nDimension(out) != 2 || THFloatTensor_size(out, 0) != 2 || THFloatTensor_size(out, 1) != 3 ||
      THFloatTensor_stride(out, 0) != 3 || THFloatTensor_stride(out, 1) != 1)
    return 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      if (THFloatTensor_get2d(out, i, j) != (float)(3 * i + j)) return 0;
  return 1;
}

static THFloatTensor *marker(void) {
  THFloatTensor *t = THFloatTensor_newWithSize2d(2, 3);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) THFloatTensor_set2d(t, i, j, (float)(3 * i + j));
  return t;
}

static void errors(void) {
  THFloatTensor *rb = marker(), *ra = marker();
  THFloatTensor *sing = mat2f(1, 2, 2, 4);
  THFloatTensor *b = THFloatTensor_newWithSize1d(2);
  THFloatTensor_fill(b, 1);

  EXPECT_ERROR(THFloatTensor_gesv(rb, ra, b, sing));
  CHECK(THGetLastErrorCode() == TH_ERR_INVALID_ARG);
  CHECK(strstr(THGetLastError(), "THFloatTensor_gesv") != NULL);
  CHECK(strstr(THGetLastError(), "U(2,2) is zero, singular U") != NULL);
  CHECK(untouched(rb) && untouched(ra));

  EXPECT_ERROR(THFloatTensor_getri(ra, sing));
  CHECK(untouched(ra));

  THFloatTensor *notpd = mat2f(1, 2, 2, 1);
  EXPECT_ERROR(THFloatTensor_potrf(ra, notpd, "U"));
  CHECK(strstr(THGetLastError(), "leading minor of order 2 is not positive definite") != NULL);
  CHECK(untouched(ra));
  THIntTensor *piv = THIntTensor_new();
  EXPECT_ERROR(THFloatTensor_pstrf(ra, piv, sing, "L", -1.0f));
  CHECK(untouched(ra) && THIntTensor_nDimension(piv) == 0);

  /* shape errors go to the argument handler with TH's argument numbers */
  THFloatTensor *b3 = THFloatTensor_newWithSize1d(3);
  THFloatTensor_fill(b3, 1);
  th_test_last_arg = 0;
  EXPECT_ERROR(THFloatTensor_gesv(rb, ra, b3, sing));
  CHECK(THGetLastErrorCode() == TH_ERR_SIZE && th_test_last_arg == 2);
  CHECK(strstr(THGetLastError(), "A,B size incompatible") != NULL);
  EXPECT_ERROR(THFloatTensor_getri(ra, rb)); /* 2x3: not square */
  CHECK(strstr(THGetLastError(), "square") != NULL);
  CHECK(untouched(rb) && untouched(ra));

  /* option strings: unknown characters and NULL are errors */
  THFloatTensor *eye = mat2f(1, 0, 0, 1);
  EXPECT_ERROR(THFloatTensor_potrf(ra, eye, "X"));
  CHECK(THGetLastErrorCode() == TH_ERR_INVALID_ARG && strstr(THGetLastError(), "uplo") != NULL);
  EXPECT_ERROR(THFloatTensor_syev(rb, ra, eye, NULL, "U"));
  EXPECT_ERROR(THFloatTensor_trtrs(rb, ra, b, eye, "U", "Q", "N"));
  CHECK(untouched(rb) && untouched(ra));

  /* NULL outputs */
  EXPECT_ERROR(THFloatTensor_gesv(NULL, ra, b, eye));
  CHECK(THGetLastErrorCode() == TH_ERR_NULL_ARG);
  EXPECT_ERROR(THFloatTensor_qr(rb, NULL, eye));
  EXPECT_ERROR(THFloatTensor_btrifact(ra, NULL, NULL, 1, eye));
  CHECK(untouched(rb) && untouched(ra));

  /* btrifact of a singular batch without rinfo_: an error naming the element */
  THFloatTensor *batch = THFloatTensor_newWithSize3d(2, 2, 2);
  THFloatTensor_fill(batch, 1);
  THIntTensor *pv = THIntTensor_new();
  EXPECT_ERROR(THFloatTensor_btrifact(ra, pv, NULL, 1, batch));
  CHECK(strstr(THGetLastError(), "batch element 0") != NULL);
  CHECK(untouched(ra) && THIntTensor_nDimension(pv) == 0);

  THFloatTensor *fl[] = {rb, ra, sing, b, notpd, b3, eye, batch};
  for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) THFloatTensor_free(fl[i]);
  THIntTensor_free(piv);
  THIntTensor_free(pv);
}

int main(void) {
  th_test_install_handlers();
  hand_computed();
  errors();
  return TH_TEST_DONE();
}
