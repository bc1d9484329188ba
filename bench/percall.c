/* Per-call cost of small libth operations called from C: the median over batches of the time
 * per call, in nanoseconds, as wall-clock time and as this thread's CPU time (the latter is not
 * inflated when other processes take the core away mid-batch). Prints one JSON object:
 * {"cadd16": wall ns, ..., "cpu": {"cadd16": cpu ns, ...}}. Usage: percall [calls_per_batch=200000]
 *
 * Built with -DPERCALL_TORCH7 it also compiles against torch7's own TH (lib/TH of torch/torch7,
 * built with cmake on the same machine), the reference for the per-call cost: see
 * scripts/percall_torch7.sh. */
#define _POSIX_C_SOURCE 199309L
#include <TH/TH.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef PERCALL_TORCH7 /* torch7's TH has no last-error state (its errors longjmp) */
static int THGetLastErrorCode(void) { return 0; }
static const char *THGetLastError(void) { return ""; }
#endif

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

#define BATCHES 15

/* Median ns per call of `stmt` over BATCHES batches of `calls` calls: wall and CPU time. */
#define TIME_NS(out, cpu, calls, stmt)                                            \
    do {                                                                          \
        double t_[BATCHES], c_[BATCHES];                                          \
        for (long w_ = 0; w_ < (calls) / 10; w_++) { stmt; }                      \
        for (int b_ = 0; b_ < BATCHES; b_++) {                                    \
            double t0_ = clock_s(CLOCK_MONOTONIC);                                \
            double c0_ = clock_s(CLOCK_THREAD_CPUTIME_ID);                        \
            for (long i_ = 0; i_ < (calls); i_++) { stmt; }                       \
            c_[b_] = (clock_s(CLOCK_THREAD_CPUTIME_ID) - c0_) / (double)(calls) * 1e9; \
            t_[b_] = (clock_s(CLOCK_MONOTONIC) - t0_) / (double)(calls) * 1e9;    \
        }                                                                         \
        qsort(t_, BATCHES, sizeof(double), cmp_double);                           \
        qsort(c_, BATCHES, sizeof(double), cmp_double);                           \
        (out) = t_[BATCHES / 2];                                                  \
        (cpu) = c_[BATCHES / 2];                                                  \
    } while (0)

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    THFloatTensor *a = THFloatTensor_newWithSize1d(16);
    THFloatTensor *b = THFloatTensor_newWithSize1d(16);
    THFloatTensor *r = THFloatTensor_newWithSize1d(16);
    THFloatTensor *a2 = THFloatTensor_newWithSize2d(4, 4);
    THFloatTensor *b2 = THFloatTensor_newWithSize2d(4, 4);
    THFloatTensor *r2 = THFloatTensor_newWithSize2d(4, 4);
    for (int i = 0; i < 16; i++) {
        THFloatTensor_set1d(a, i, (float)i);
        THFloatTensor_set1d(b, i, 0.5f);
        THFloatTensor_set2d(a2, i / 4, i % 4, (float)i);
        THFloatTensor_set2d(b2, i / 4, i % 4, 0.5f);
    }
    double w[6], c[6];
    TIME_NS(w[0], c[0], calls, THFloatTensor_cadd(r, a, 1.0f, b));
    TIME_NS(w[1], c[1], calls, THFloatTensor_cmul(r, a, b));
    TIME_NS(w[2], c[2], calls, THFloatTensor_add(r, a, 1.0f));
    TIME_NS(w[3], c[3], calls, THFloatTensor_cadd(r2, a2, 1.0f, b2));
    TIME_NS(w[4], c[4], calls, THFloatTensor_exp(r, b));
    TIME_NS(w[5], c[5], calls, (void)THFloatTensor_nDimension(r));
    if (THGetLastErrorCode() != 0) {
        fprintf(stderr, "error: %s\n", THGetLastError());
        return 1;
    }
    if (THFloatTensor_get1d(r, 3) < 1.0f) return 1;
    static const char *names[6] = {"cadd16", "cmul16", "add16", "cadd4x4", "exp16", "nDimension"};
    printf("{");
    for (int i = 0; i < 6; i++) printf("\"%s\": %.1f, ", names[i], w[i]);
    printf("\"cpu\": {");
    for (int i = 0; i < 6; i++) printf("\"%s\": %.1f%s", names[i], c[i], i < 5 ? ", " : "");
    printf("}}\n");
    THFloatTensor_free(a); THFloatTensor_free(b); THFloatTensor_free(r);
    THFloatTensor_free(a2); THFloatTensor_free(b2); THFloatTensor_free(r2);
    return 0;
}
