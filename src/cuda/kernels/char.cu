// Module `char`: every kernel whose first dtype is Char (th_<op>_char...).
#ifdef TH_EMULATOR
#include "common.cuh"
#include "num.cuh"
#include "pointwise.cuh"
#include "arith.cuh"
#include "reduce.cuh"
#include "lines.cuh"
#include "index.cuh"
#include "sort.cuh"
#include "blas.cuh"
#include "random.cuh"
#endif

TH_BASIC_KERNELS(char, signed char)
TH_CMP_OWN_KERNELS(char, signed char)
TH_INT_KERNELS(char, signed char)
TH_REDUCE_NUM_KERNELS(char, signed char)
TH_LINE_KERNELS(char, signed char)
TH_LINE_NUM_KERNELS(char, signed char)
TH_INDEX_KERNELS(char, signed char)
TH_INDEX_NUM_KERNELS(char, signed char)
TH_SORT_KERNELS(char, signed char)
TH_SORT_NUM_KERNELS(char, signed char)
TH_GEMM_KERNELS(char, signed char)
TH_RANDOM_NUM_KERNELS(char, signed char)
