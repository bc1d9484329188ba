// Module `float`: every kernel whose first dtype is Float (th_<op>_float...).
#ifdef TH_EMULATOR
#include "common.cuh"
#include "num.cuh"
#include "pointwise.cuh"
#include "arith.cuh"
#include "reduce.cuh"
#include "random.cuh"
#endif

TH_BASIC_KERNELS(float, float)
TH_CMP_OWN_KERNELS(float, float)
TH_FLOAT_KERNELS(float, float)
TH_REDUCE_FLOAT_KERNELS(float, float)
TH_RANDOM_FLOAT_KERNELS(float, float)
