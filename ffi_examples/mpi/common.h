/* Shared by the MPI examples: the seeded data formula (the same on every rank, so each rank makes
 * only its own shard) and the shard bounds. */
#ifndef TH_MPI_EXAMPLES_COMMON_H
#define TH_MPI_EXAMPLES_COMMON_H

#include <stdint.h>

/* splitmix64: a well-mixed 64-bit hash of (seed, index). */
static inline uint64_t mix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A value in [-1, 1) on a 2^-23 grid: exactly representable in float, so every rank and the
 * single-process reference see bit-identical data. */
static inline float uniform_pm1(uint64_t seed, uint64_t i) {
  return (float)(mix64(seed, i) >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* Rows [*lo, *hi) of n for `rank` of `size`: the first n % size ranks get one more. */
static inline void shard(int64_t n, int rank, int size, int64_t *lo, int64_t *hi) {
  int64_t q = n / size, r = n % size;
  *lo = rank * q + (rank < r ? rank : r);
  *hi = *lo + q + (rank < r ? 1 : 0);
}

#endif
