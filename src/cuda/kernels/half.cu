// Module `half`: every kernel whose first dtype is Half (th_<op>_half...).
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
#include "conv.cuh"
#include "nn.cuh"
#include "nn_rnn.cuh"
#include "nn_conv.cuh"
#include "nn_pool.cuh"
#include "nn_sample.cuh"
#endif

TH_BASIC_KERNELS(half, th_half)
TH_CMP_OWN_KERNELS(half, th_half)
TH_FLOAT_KERNELS(half, th_half)
TH_NN_KERNELS(half, th_half)
TH_NN_RNN_KERNELS(half, th_half)
TH_REDUCE_FLOAT_KERNELS(half, th_half)
TH_LINE_KERNELS(half, th_half)
TH_LINE_NUM_KERNELS(half, th_half)
TH_INDEX_KERNELS(half, th_half)
TH_INDEX_NUM_KERNELS(half, th_half)
TH_SORT_KERNELS(half, th_half)
TH_SORT_NUM_KERNELS(half, th_half)
TH_RANDOM_FLOAT_KERNELS(half, th_half)
TH_CONV_KERNELS(half, th_half)
TH_NN_CONV_KERNELS(half, th_half)
TH_NN_POOL_KERNELS(half, th_half)
TH_NN_SAMPLE_KERNELS(half, th_half)
