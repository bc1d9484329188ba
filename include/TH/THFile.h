/* THFile.h: torch7's header name for the file API. Everything is declared in TH.h (generated);
 * this header exists so code written for torch7 (#include <TH/THFile.h>) builds unchanged. */
#ifndef TH_THFILE_H
#define TH_THFILE_H
#include "TH.h"
#endif
