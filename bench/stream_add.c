/* STREAM-style "add" bandwidth (c[i] = a[i] + b[i] over float arrays much larger than the
 * last-level cache), with ordinary stores and with non-temporal (streaming) stores, on 1 thread
 * and on every thread (OpenMP). Bytes are counted STREAM's way: 3 * 4 bytes per element
 * (write-allocate traffic is not counted). Prints one JSON object:
 *   {"n": ..., "add_1t": GB/s, "add_nt_1t": ..., "add_mt": ..., "add_nt_mt": ..., "threads": T}
 * each the median over the repetitions (the first repetition is a warm-up).
 *
 * Usage: stream_add [n_floats=67108864] [reps=11]
 * Built by scripts/bench.sh with -O2 -fopenmp (no -march: the vector paths are chosen at run time).
 */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Plain stores: the compiler vectorizes this loop with whatever -O2 gives (SSE2 baseline);
 * a 16-byte loop already saturates DRAM on one core. */
static void add_plain(float *restrict c, const float *restrict a, const float *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) c[i] = a[i] + b[i];
}

__attribute__((target("avx2"))) static void add_nt_avx2(float *restrict c, const float *restrict a,
                                                        const float *restrict b, size_t n) {
    size_t i = 0;
    while (i < n && ((uintptr_t)(c + i) & 31)) { c[i] = a[i] + b[i]; i++; }
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(c + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; i++) c[i] = a[i] + b[i];
}

__attribute__((target("avx512f"))) static void add_nt_avx512(float *restrict c, const float *restrict a,
                                                             const float *restrict b, size_t n) {
    size_t i = 0;
    while (i < n && ((uintptr_t)(c + i) & 63)) { c[i] = a[i] + b[i]; i++; }
    for (; i + 16 <= n; i += 16)
        _mm512_stream_ps(c + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
    for (; i < n; i++) c[i] = a[i] + b[i];
}

static void add_nt_sse(float *restrict c, const float *restrict a, const float *restrict b, size_t n) {
    size_t i = 0;
    while (i < n && ((uintptr_t)(c + i) & 15)) { c[i] = a[i] + b[i]; i++; }
    for (; i + 4 <= n; i += 4) _mm_stream_ps(c + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
    for (; i < n; i++) c[i] = a[i] + b[i];
}

typedef void (*add_fn)(float *restrict, const float *restrict, const float *restrict, size_t);

static add_fn pick_nt(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return add_nt_avx512;
    if (__builtin_cpu_supports("avx2")) return add_nt_avx2;
    return add_nt_sse;
}

/* One timed pass over the arrays, split into `threads` contiguous pieces. */
static double pass(add_fn f, int nt_fence, float *c, const float *a, const float *b, size_t n, int threads) {
    double t0 = now();
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        size_t lo = n * (size_t)t / (size_t)T, hi = n * (size_t)(t + 1) / (size_t)T;
        f(c + lo, a + lo, b + lo, hi - lo);
        if (nt_fence) _mm_sfence();
    }
    return now() - t0;
}

static double median_gbs(add_fn f, int nt, float *c, const float *a, const float *b, size_t n, int threads, int reps) {
    double *gbs = malloc(sizeof(double) * (size_t)reps);
    pass(f, nt, c, a, b, n, threads); /* warm-up */
    for (int r = 0; r < reps; r++) gbs[r] = 3.0 * 4.0 * (double)n / pass(f, nt, c, a, b, n, threads) / 1e9;
    qsort(gbs, (size_t)reps, sizeof(double), cmp_double);
    double m = gbs[reps / 2];
    free(gbs);
    return m;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)1 << 26;
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    if (reps < 1) reps = 1;
    float *a = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    float *b = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    float *c = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    if (!a || !b || !c) { fprintf(stderr, "out of memory\n"); return 1; }
    int T = omp_get_max_threads();
#pragma omp parallel for num_threads(T) schedule(static)
    for (size_t i = 0; i < n; i++) { a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.0f; } /* first touch */
    add_fn nt = pick_nt();
    /* Interleave the four measurements so slow drift affects them alike. */
    double r[4] = {0, 0, 0, 0};
    int rounds = 3;
    double acc[4][3];
    for (int k = 0; k < rounds; k++) {
        acc[0][k] = median_gbs(add_plain, 0, c, a, b, n, 1, reps);
        acc[1][k] = median_gbs(nt, 1, c, a, b, n, 1, reps);
        acc[2][k] = median_gbs(add_plain, 0, c, a, b, n, T, reps);
        acc[3][k] = median_gbs(nt, 1, c, a, b, n, T, reps);
    }
    for (int j = 0; j < 4; j++) {
        qsort(acc[j], (size_t)rounds, sizeof(double), cmp_double);
        r[j] = acc[j][rounds / 2];
    }
    if (c[n / 2] != 3.0f) { fprintf(stderr, "wrong result\n"); return 1; }
    printf("{\"n\": %zu, \"threads\": %d, \"add_1t\": %.2f, \"add_nt_1t\": %.2f, \"add_mt\": %.2f, \"add_nt_mt\": %.2f}\n",
           n, T, r[0], r[1], r[2], r[3]);
    free(a); free(b); free(c);
    return 0;
}
