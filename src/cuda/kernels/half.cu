// Module `half`: every kernel whose first dtype is Half (th_<op>_half...).
#ifdef TH_EMULATOR
#include "common.cuh"
#include "num.cuh"
#include "pointwise.cuh"
#include "arith.cuh"
#include "reduce.cuh"
#include "random.cuh"
#endif

TH_BASIC_KERNELS(half, th_half)
TH_CMP_OWN_KERNELS(half, th_half)
TH_FLOAT_KERNELS(half, th_half)
TH_REDUCE_FLOAT_KERNELS(half, th_half)
TH_RANDOM_FLOAT_KERNELS(half, th_half)
