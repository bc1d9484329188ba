// THC_sleep's kernel (`THCSleep.h`): one thread spinning until `cycles` clock cycles have
// passed since it started (tests use it to keep a stream busy).
#ifndef TH_CUDA_SLEEP_CUH
#define TH_CUDA_SLEEP_CUH

struct THCSleep {
  long long cycles;
};

// The SM's 64-bit cycle counter (the emulator shim's clock64 counts nanoseconds).
__device__ __forceinline__ long long th_clock64() {
#ifdef TH_EMULATOR
  return clock64();
#else
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
  return t;
#endif
}

__device__ inline void th_sleep_body(const THCSleep &p) {
  const long long start = th_clock64();
  while (th_clock64() - start < p.cycles) {
  }
}

// Registered once, in the `float` module (the kernel has no dtype).
#define TH_SLEEP_KERNELS() TH_KERNEL(th_sleep, TH_EMU_INDEPENDENT, THCSleep, th_sleep_body)

#endif  // TH_CUDA_SLEEP_CUH
