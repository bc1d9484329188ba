/* Includes TEST_GENERIC_FILE once per dtype, the way TH's THGenerateAllTypes.h re-includes a
 * generic file: each pass defines Real (for THStorage_(NAME)), real (the C element type) and a
 * few test macros:
 *   TEST_TO_REAL(d)    a small double -> real (as C stores it)
 *   TEST_FROM_REAL(x)  real -> double (exact; Bool gives the raw byte)
 *   TEST_NORM(d)       the value TEST_FROM_REAL reads back after storing d (Bool: 0 or 1)
 *   TEST_ELEM_SIZE     sizeof the element, by hand
 *   TEST_IS_BOOL, TEST_IS_HALFLIKE
 * Not compiled on its own: only the c_tests .c files are. */
#ifndef TEST_GENERIC_FILE
#error "define TEST_GENERIC_FILE before including generic/storage_types.h"
#endif

#define TEST_NORM(d) (d)
#define TEST_IS_BOOL 0
#define TEST_IS_HALFLIKE 0
#define TEST_FROM_REAL(x) ((double)(x))

#define Real Byte
#define real uint8_t
#define TEST_TO_REAL(d) ((uint8_t)(d))
#define TEST_ELEM_SIZE 1
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#define Real Char
#define real int8_t
#define TEST_TO_REAL(d) ((int8_t)(d))
#define TEST_ELEM_SIZE 1
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#define Real Short
#define real int16_t
#define TEST_TO_REAL(d) ((int16_t)(d))
#define TEST_ELEM_SIZE 2
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#define Real Int
#define real int32_t
#define TEST_TO_REAL(d) ((int32_t)(d))
#define TEST_ELEM_SIZE 4
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#define Real Long
#define real int64_t
#define TEST_TO_REAL(d) ((int64_t)(d))
#define TEST_ELEM_SIZE 8
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#define Real Float
#define real float
#define TEST_TO_REAL(d) ((float)(d))
#define TEST_ELEM_SIZE 4
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#define Real Double
#define real double
#define TEST_TO_REAL(d) ((double)(d))
#define TEST_ELEM_SIZE 8
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_ELEM_SIZE

#undef TEST_IS_HALFLIKE
#define TEST_IS_HALFLIKE 1
#undef TEST_FROM_REAL

#define Real Half
#define real THHalf
#define TEST_TO_REAL(d) TH_float2half((float)(d))
#define TEST_FROM_REAL(x) ((double)TH_half2float(x))
#define TEST_ELEM_SIZE 2
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_FROM_REAL
#undef TEST_ELEM_SIZE

#define Real BFloat16
#define real THBFloat16
#define TEST_TO_REAL(d) TH_float2bfloat16((float)(d))
#define TEST_FROM_REAL(x) ((double)TH_bfloat162float(x))
#define TEST_ELEM_SIZE 2
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_FROM_REAL
#undef TEST_ELEM_SIZE

#undef TEST_IS_HALFLIKE
#define TEST_IS_HALFLIKE 0
#undef TEST_IS_BOOL
#define TEST_IS_BOOL 1
#undef TEST_NORM
#define TEST_NORM(d) ((d) != 0 ? 1.0 : 0.0)

#define Real Bool
#define real THBool
#define TEST_TO_REAL(d) ((THBool)((d) != 0))
#define TEST_FROM_REAL(x) ((double)(x))
#define TEST_ELEM_SIZE 1
#include TEST_GENERIC_FILE
#undef Real
#undef real
#undef TEST_TO_REAL
#undef TEST_FROM_REAL
#undef TEST_ELEM_SIZE

#undef TEST_NORM
#undef TEST_IS_BOOL
#undef TEST_IS_HALFLIKE
