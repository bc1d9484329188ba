/* Smoke test: a storage, a tensor view on it, refcounts. */
#include "th_test.h"

int main(void) {
  th_test_install_handlers();
  THFloatStorage *s = THFloatStorage_newWithSize(6);
  for (ptrdiff_t i = 0; i < 6; i++) THFloatStorage_set(s, i, (float)i);
  THFloatTensor *t = THFloatTensor_newWithStorage2d(s, 0, 2, 3, 3, 1);
  CHECK(THFloatTensor_get2d(t, 1, 2) == 5.0f);
  THFloatTensor *tr = THFloatTensor_newTranspose(t, 0, 1);
  CHECK(THFloatTensor_get2d(tr, 2, 1) == 5.0f);
  CHECK(THFloatTensor_storage(tr) == s);
  THFloatTensor_free(tr);
  THFloatTensor_free(t);
  THFloatStorage_free(s);
  EXPECT_ERROR(THFloatTensor_newWithSize1d(-7));
  return TH_TEST_DONE();
}
