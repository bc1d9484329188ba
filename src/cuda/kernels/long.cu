// Module `long`: every kernel whose first dtype is Long (th_<op>_long...).
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

TH_BASIC_KERNELS(long, long long)
TH_CMP_OWN_KERNELS(long, long long)
TH_INT_KERNELS(long, long long)
TH_REDUCE_NUM_KERNELS(long, long long)
TH_LINE_KERNELS(long, long long)
TH_LINE_NUM_KERNELS(long, long long)
TH_INDEX_KERNELS(long, long long)
TH_INDEX_NUM_KERNELS(long, long long)
TH_INDEX_LONG_KERNELS(long, long long)
TH_SORT_KERNELS(long, long long)
TH_SORT_NUM_KERNELS(long, long long)
TH_GEMM_KERNELS(long, long long)
TH_RANDOM_NUM_KERNELS(long, long long)
