// The CUDA C subset the kernel sources use, for the host C++ compiler: force-included (-include)
// before every src/cuda/kernels/*.cu when building the CPU emulator (-DTH_EMULATOR). Kernels run
// through th_emu_launch (emulator.cpp): threadIdx/blockIdx/blockDim/gridDim are per host thread.
#ifndef TH_CUDA_EMU_SHIM_H
#define TH_CUDA_EMU_SHIM_H

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
};
typedef dim3 uint3;

extern thread_local uint3 threadIdx, blockIdx;
extern thread_local dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
// Registration (TH_EMU_REGISTER) carries each kernel's bound; the launcher enforces it.
#define __launch_bounds__(...)
// No __shared__: kernels declare shared arrays with common.cuh's TH_SHARED, which the emulator
// gives each block afresh and poisoned (th_emu_shared).

// Waits for every thread of the block (cooperative kernels only: their threads are real
// threads; an independent kernel calling it fails its launch).
void __syncthreads();
// The block's dynamic shared memory (`extern __shared__` on a device), poisoned at block start.
unsigned char *th_emu_dynamic_shared();
// The block's static shared array `key` (TH_SHARED), `bytes` long, 0xff bytes until written.
void *th_emu_shared(const void *key, size_t bytes);

template <class T> inline T __ldg(const T *p) { return *p; }

// The SM cycle counter: a monotonic clock in nanoseconds (one "cycle" per ns, a ~1 GHz SM).
inline long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}
inline double __longlong_as_double(long long i) {
  double f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}
inline long long __double_as_longlong(double f) {
  long long i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

// Device atomics: read-modify-write on host memory, returning the old value.
template <class T> inline T atomicAdd(T *p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> inline T atomicExch(T *p, T v) { return std::atomic_ref<T>(*p).exchange(v); }
template <class T> inline T atomicMax(T *p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <class T> inline T atomicMin(T *p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (v < old && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <class T> inline T atomicCAS(T *p, T expected, T desired) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
  return expected;
}

// Registration (common.cuh's TH_KERNEL): `fn` runs one thread of kernel `name` given the
// cuLaunchKernel-style parameter array; `bound`: its __launch_bounds__ (threads per block).
#define TH_EMU_INDEPENDENT 0
#define TH_EMU_COOPERATIVE 1
int th_emu_register(const char *name, int kind, unsigned bound, void (*fn)(void **params));
template <class P, void (*K)(const P &)> void th_emu_call(void **params) { K(*static_cast<const P *>(params[0])); }

#endif
