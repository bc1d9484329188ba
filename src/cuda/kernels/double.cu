// Module `double`: every kernel whose first dtype is Double (th_<op>_double...).
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

TH_BASIC_KERNELS(double, double)
TH_CMP_OWN_KERNELS(double, double)
TH_FLOAT_KERNELS(double, double)
TH_NN_KERNELS(double, double)
TH_NN_RNN_KERNELS(double, double)
TH_NN_DOUBLE_KERNELS()
TH_REDUCE_FLOAT_KERNELS(double, double)
TH_LINE_KERNELS(double, double)
TH_LINE_NUM_KERNELS(double, double)
TH_INDEX_KERNELS(double, double)
TH_INDEX_NUM_KERNELS(double, double)
TH_SORT_KERNELS(double, double)
TH_SORT_NUM_KERNELS(double, double)
TH_RANDOM_FLOAT_KERNELS(double, double)
TH_CONV_KERNELS(double, double)
TH_NN_CONV_KERNELS(double, double)
TH_NN_POOL_KERNELS(double, double)
TH_NN_SAMPLE_KERNELS(double, double)
