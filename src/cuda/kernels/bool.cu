// Module `bool`: every kernel whose first dtype is Bool (th_<op>_bool...).
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

TH_BASIC_KERNELS(bool, th_bool)
TH_REDUCE_ALL_KERNELS(bool, th_bool)
TH_LINE_KERNELS(bool, th_bool)
TH_INDEX_KERNELS(bool, th_bool)
TH_SORT_KERNELS(bool, th_bool)
