// Module `bool`: every kernel whose first dtype is Bool (th_<op>_bool...).
#ifdef TH_EMULATOR
#include "common.cuh"
#include "num.cuh"
#include "pointwise.cuh"
#include "arith.cuh"
#endif

TH_BASIC_KERNELS(bool, th_bool)
