// Module `bfloat16`: every kernel whose first dtype is BFloat16 (th_<op>_bfloat16...).
#ifdef TH_EMULATOR
#include "common.cuh"
#include "num.cuh"
#include "pointwise.cuh"
#include "arith.cuh"
#include "reduce.cuh"
#include "lines.cuh"
#include "index.cuh"
#include "sort.cuh"
#include "random.cuh"
#endif

TH_BASIC_KERNELS(bfloat16, th_bfloat16)
TH_CMP_OWN_KERNELS(bfloat16, th_bfloat16)
TH_FLOAT_KERNELS(bfloat16, th_bfloat16)
TH_REDUCE_FLOAT_KERNELS(bfloat16, th_bfloat16)
TH_LINE_KERNELS(bfloat16, th_bfloat16)
TH_LINE_NUM_KERNELS(bfloat16, th_bfloat16)
TH_INDEX_KERNELS(bfloat16, th_bfloat16)
TH_INDEX_NUM_KERNELS(bfloat16, th_bfloat16)
TH_SORT_KERNELS(bfloat16, th_bfloat16)
TH_SORT_NUM_KERNELS(bfloat16, th_bfloat16)
TH_RANDOM_FLOAT_KERNELS(bfloat16, th_bfloat16)
