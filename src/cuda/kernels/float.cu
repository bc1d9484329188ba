// Module `float`: every kernel whose first dtype is Float (th_<op>_float...).
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
#include "sleep.cuh"
#include "nn.cuh"
#include "nn_rnn.cuh"
#include "nn_conv.cuh"
#include "nn_pool.cuh"
#include "nn_sample.cuh"
#endif

TH_BASIC_KERNELS(float, float)
TH_CMP_OWN_KERNELS(float, float)
TH_FLOAT_KERNELS(float, float)
TH_NN_KERNELS(float, float)
TH_NN_RNN_KERNELS(float, float)
TH_REDUCE_FLOAT_KERNELS(float, float)
TH_LINE_KERNELS(float, float)
TH_LINE_NUM_KERNELS(float, float)
TH_INDEX_KERNELS(float, float)
TH_INDEX_NUM_KERNELS(float, float)
TH_SORT_KERNELS(float, float)
TH_SORT_NUM_KERNELS(float, float)
TH_RANDOM_FLOAT_KERNELS(float, float)
TH_CONV_KERNELS(float, float)
TH_NN_CONV_KERNELS(float, float)
TH_NN_POOL_KERNELS(float, float)
TH_NN_SAMPLE_KERNELS(float, float)
TH_SLEEP_KERNELS()
