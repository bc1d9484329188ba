/* th: torch7's THNN header name. th declares THNN (THNN_FloatLinear_updateOutput, ..., the
 * THNN_(NAME) macro and THNNState) in <TH/TH.h>; this header only includes it, so code written
 * for torch7 (#include <THNN/THNN.h>) builds unchanged. */
#ifndef TH_THNN_THNN_H
#define TH_THNN_THNN_H
#include <TH/TH.h>
#endif
