/* th: cunn's THCUNN header name. th declares THCUNN (THNN_CudaThreshold_updateOutput, ..., on
 * THCState and THCuda*Tensor) in <TH/TH.h>; this header only includes it, so code written for
 * cunn (#include <THCUNN/THCUNN.h>) builds unchanged. */
#ifndef TH_THCUNN_THCUNN_H
#define TH_THCUNN_THCUNN_H
#include <TH/TH.h>
#endif
