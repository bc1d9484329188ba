// Module `int`: every kernel whose first dtype is Int (th_<op>_int...).
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

TH_BASIC_KERNELS(int, int)
TH_CMP_OWN_KERNELS(int, int)
TH_INT_KERNELS(int, int)
TH_REDUCE_NUM_KERNELS(int, int)
TH_LINE_KERNELS(int, int)
TH_LINE_NUM_KERNELS(int, int)
TH_INDEX_KERNELS(int, int)
TH_INDEX_NUM_KERNELS(int, int)
TH_SORT_KERNELS(int, int)
TH_SORT_NUM_KERNELS(int, int)
TH_GEMM_KERNELS(int, int)
TH_RANDOM_NUM_KERNELS(int, int)
