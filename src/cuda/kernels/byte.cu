// Module `byte`: every kernel whose first dtype is Byte (th_<op>_byte...).
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

TH_BASIC_KERNELS(byte, unsigned char)
TH_INT_KERNELS(byte, unsigned char)
TH_REDUCE_NUM_KERNELS(byte, unsigned char)
TH_LINE_KERNELS(byte, unsigned char)
TH_LINE_NUM_KERNELS(byte, unsigned char)
TH_INDEX_KERNELS(byte, unsigned char)
TH_INDEX_NUM_KERNELS(byte, unsigned char)
TH_SORT_KERNELS(byte, unsigned char)
TH_SORT_NUM_KERNELS(byte, unsigned char)
TH_GEMM_KERNELS(byte, unsigned char)
TH_RANDOM_NUM_KERNELS(byte, unsigned char)
