/* The quick-start example: build a 2x3 tensor, view it transposed, copy it to another dtype,
 * and see an error reported instead of a crash.
 *
 *   cargo build --release
 *   cc -std=c99 -Iinclude ffi_examples/basic.c -Ltarget/release -lth -Wl,-rpath,target/release -o basic
 *   ./basic */
#include <TH/TH.h>
#include <stdio.h>

int main(void) {
  THFloatTensor *a = THFloatTensor_newWithSize2d(2, 3);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++) THFloatTensor_set2d(a, i, j, (float)(10 * i + j));

  THFloatTensor *at = THFloatTensor_newTranspose(a, 0, 1); /* a view: shares a's storage */
  THDescBuff d = THFloatTensor_desc(at);
  printf("%s, contiguous: %d, at[2][1] = %g\n", d.str, THFloatTensor_isContiguous(at),
         THFloatTensor_get2d(at, 2, 1));

  THDoubleTensor *b = THDoubleTensor_newWithSize2d(3, 2);
  THDoubleTensor_copyFloat(b, at); /* element-wise copy with conversion, any strides */
  printf("b[2][1] = %g\n", THDoubleTensor_get2d(b, 2, 1));

  THFloatTensor_narrow(a, NULL, 1, 2, 5); /* out of range: an error, not a crash */
  printf("error %d: %s\n", THGetLastErrorCode(), THGetLastError());
  printf("a is still %s\n", THFloatTensor_sizeDesc(a).str);

  THDoubleTensor_free(b);
  THFloatTensor_free(at);
  THFloatTensor_free(a);
  return THGetLastErrorCode() == TH_ERR_INDEX ? 0 : 1;
}
