// What the kernel test files (test_kernels.cpp, test_lines.cpp, test_strict.cpp) share: the failure counter and
// CHECK, the random stream, bit casts, the emulator's entry points and the line-kernel list.
#ifndef TH_CUDA_EMU_HARNESS_H
#define TH_CUDA_EMU_HARNESS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int th_emu_launch(const char *kernel, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                             void **params, char *err, size_t err_len);
extern "C" size_t th_emu_kernel_names(const char **out, size_t cap);

inline int failures = 0;
#define CHECK(cond, ...)                                                                              \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                       \
      std::fprintf(stderr, __VA_ARGS__);                                                              \
      std::fprintf(stderr, "\n");                                                                     \
      if (++failures > 20) std::exit(1);                                                              \
    }                                                                                                 \
  } while (0)

// xorshift64: the same sequence every run (a failure reproduces).
inline uint64_t rng_state = 0x243f6a8885a308d3ull;
inline uint64_t rnd() {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

template <class T> inline T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}
template <class T> inline uint64_t bits(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

// Line kernels (lines.cuh and the families built on it) take a THCLines, not a THCPointwise.
inline bool line_kernel(const char *k) {
  static const char *const ops[] = {"tri", "cross", "indexSelect", "gather", "indexCopy", "scatter", "indexAdd",
                                    "scatterAdd", "scatterSorted", "scatterAddSorted", "indexFill", "scatterFill", "maskedFill", "maskedFillBool",
                                    "flagNonzero", "maskedCopy", "maskedSelect", "nonzero", "sortInit", "sortPermute", "sortStep", "sortCopy",
                                    "sortMode", "cumsum", "cumprod", "sortLocal", "nnSoftMax", "nnSoftMaxBack", "nnSoftMaxRows",
                                    "nnSoftMaxRowsBack", "nnMultiMargin", "nnMultiMarginBack", "nnMultiLabel",
                                    "nnMultiLabelBack"};
  for (const char *op : ops) {
    const size_t n = std::strlen(op);
    // th_<op>_<dtype>...: the op must be followed by '_' (scatter vs scatterAdd).
    if (std::strncmp(k + 3, op, n) == 0 && k[3 + n] == '_') return true;
  }
  return false;
}

// (sortLocal takes a THCSortLocal, not a THCLines; it is listed here so every_kernel leaves it
// to test_lines.cpp, which gives it a real workspace.)
// Line kernels whose addresses do not depend on the data, or stay inside their lines whatever
// the data (every_kernel runs them on random bytes: the margin criterions' classes are bounded
// by the line); the others follow indices, positions or masks (test_lines.cpp gives them valid
// ones).
inline bool data_independent_line_kernel(const char *k) {
  return !std::strncmp(k, "th_tri_", 7) || !std::strncmp(k, "th_cross_", 9) || !std::strncmp(k, "th_nnSoftMax", 12) ||
         !std::strncmp(k, "th_nnMulti", 10);
}

// test_lines.cpp: every data-dependent line kernel on valid inputs against naive references.
void data_dependent_kernels();
// test_strict.cpp: planted bugs the emulator must catch.
void strict_emulator();

#endif  // TH_CUDA_EMU_HARNESS_H
