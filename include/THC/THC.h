/* th: THC, the CUDA half of the TH API (THCState, THCuda{Real}Storage/Tensor, copies, the caching
 * allocators). Everything is declared in TH/TH.h, which needs no CUDA header: CUDA types such as
 * cudaStream_t are opaque pointers there. This header exists so THC programs can keep their
 * `#include <THC/THC.h>`. */
#ifndef TH_THC_H
#define TH_THC_H
#include <TH/TH.h>
#endif
