// Module `short`: every kernel whose first dtype is Short (th_<op>_short...).
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

TH_BASIC_KERNELS(short, short)
TH_CMP_OWN_KERNELS(short, short)
TH_INT_KERNELS(short, short)
TH_REDUCE_NUM_KERNELS(short, short)
TH_LINE_KERNELS(short, short)
TH_LINE_NUM_KERNELS(short, short)
TH_INDEX_KERNELS(short, short)
TH_INDEX_NUM_KERNELS(short, short)
TH_SORT_KERNELS(short, short)
TH_SORT_NUM_KERNELS(short, short)
TH_GEMM_KERNELS(short, short)
TH_RANDOM_NUM_KERNELS(short, short)
