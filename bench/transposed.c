/* The transposed operand from C: time of `r = A.T + B` against `r = A + B` on the same
 * tensors (same bytes), per dtype, with nothing else running between the samples (bench.py
 * times the same ops from Python, each sample right after numpy's: see docs/performance.md).
 *
 *   cc -std=c99 -O2 -Iinclude bench/transposed.c -Ltarget/release -lth \
 *      -Wl,-rpath,$PWD/target/release -o target/bench/transposed
 *   target/bench/transposed [n=4096] [samples=21] [threads=2]
 *
 * The two ops alternate, sample by sample (drift hits both alike); printed: the median and the
 * best time of each and the ratio of the medians (A.T+B / A+B; 1 would be no cost at all). */
#define _POSIX_C_SOURCE 199309L
#include <TH/TH.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_SAMPLES 101

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, long n, double t[2][MAX_SAMPLES], int samples) {
    qsort(t[0], (size_t)samples, sizeof(double), by_value);
    qsort(t[1], (size_t)samples, sizeof(double), by_value);
    double m0 = t[0][samples / 2], m1 = t[1][samples / 2];
    printf("%-7s %ld^2  A+B %8.3f ms (best %8.3f)  A.T+B %8.3f ms (best %8.3f)  ratio %.2f\n", name, n,
           m0 * 1e3, t[0][0] * 1e3, m1 * 1e3, t[1][0] * 1e3, m1 / m0);
}

/* One dtype: n x n tensors A, B, r filled with small values, A.T a view. */
#define CASE(Real, real)                                                                    \
    static void case_##Real(long n, int samples) {                                          \
        TH##Real##Tensor *a = TH##Real##Tensor_newWithSize2d(n, n);                           \
        TH##Real##Tensor *b = TH##Real##Tensor_newWithSize2d(n, n);                           \
        TH##Real##Tensor *r = TH##Real##Tensor_newWithSize2d(n, n);                           \
        real *pa = TH##Real##Tensor_data(a), *pb = TH##Real##Tensor_data(b);                  \
        for (long i = 0; i < n * n; i++) {                                                  \
            pa[i] = (real)(i % 100);                                                        \
            pb[i] = (real)(i % 27);                                                         \
        }                                                                                   \
        TH##Real##Tensor *at = TH##Real##Tensor_newTranspose(a, 0, 1);                        \
        double t[2][MAX_SAMPLES];                                                           \
        for (int k = 0; k < samples; k++) {                                                 \
            for (int c = 0; c < 2; c++) {                                                   \
                double t0 = now();                                                          \
                TH##Real##Tensor_cadd(r, c ? at : a, (real)1, b);                             \
                t[c][k] = now() - t0;                                                       \
            }                                                                               \
        }                                                                                   \
        report(#Real, n, t, samples);                                                       \
        TH##Real##Tensor_free(at);                                                          \
        TH##Real##Tensor_free(a);                                                           \
        TH##Real##Tensor_free(b);                                                           \
        TH##Real##Tensor_free(r);                                                           \
    }

CASE(Float, float)
CASE(Double, double)
CASE(Int, int32_t)
CASE(Short, int16_t)
CASE(Byte, uint8_t)

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 4096;
    int samples = argc > 2 ? atoi(argv[2]) : 21;
    int threads = argc > 3 ? atoi(argv[3]) : 2;
    if (n < 1 || samples < 1 || samples > MAX_SAMPLES || threads < 1) {
        fprintf(stderr, "usage: %s [n >= 1] [samples 1..%d] [threads >= 1]\n", argv[0], MAX_SAMPLES);
        return 2;
    }
    THSetNumThreads(threads);
    printf("n=%ld, %d samples, %d threads (median of each; ratio = A.T+B / A+B)\n", n, samples, threads);
    case_Float(n, samples);
    case_Double(n, samples);
    case_Int(n, samples);
    case_Short(n, samples);
    case_Byte(n, samples);
    return 0;
}
