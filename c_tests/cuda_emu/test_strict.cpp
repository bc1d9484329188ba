// Planted bugs the emulator must catch as a GPU would (see csrc/cuda_emu/emulator.cpp): each
// kernel here is wrong in one way, and each check fails on an emulator that lets the bug pass
// (a block's threads running freely, zeroed or persistent shared memory, no launch bounds, a
// misregistered kernel).
#include <string>
#include <vector>

#include "common.cuh"
#include "harness.h"

namespace {

// Reads its block's shared slot before anything wrote it, then writes it: on an emulator with
// plain static arrays the first block reads 0 and every later block (or launch) the 1 an earlier
// one left.
void uninit_static_body(const THCPointwise &p) {
  TH_SHARED(float, sh, 512);
  float *out = (float *)p.arg[0].data;
  out[blockIdx.x * blockDim.x + threadIdx.x] = sh[threadIdx.x];
  sh[threadIdx.x] = 1.0f;
}
// The same with the launch's dynamic shared memory.
void uninit_dynamic_body(const THCPointwise &p) {
  TH_DYNAMIC_SHARED(float, sh);
  float *out = (float *)p.arg[0].data;
  out[blockIdx.x * blockDim.x + threadIdx.x] = sh[threadIdx.x];
  sh[threadIdx.x] = 2.0f;
}
// Each thread writes its slot, then reads its neighbour's: with p.i[0] == 0 the barrier between
// is missing, and which neighbours were written depends on the schedule.
void neighbour_body(const THCPointwise &p) {
  TH_SHARED(float, sh, 64);
  float *out = (float *)p.arg[0].data;
  const unsigned t = threadIdx.x;
  sh[t] = (float)(t + 1);
  if (p.i[0]) __syncthreads();
  out[blockIdx.x * blockDim.x + t] = sh[(t + 1) % blockDim.x];
}
// Registered independent, yet waits at a barrier / uses shared memory.
void barrier_body(const THCPointwise &) { __syncthreads(); }
void shared_body(const THCPointwise &p) {
  TH_SHARED(int, sh, 4);
  sh[threadIdx.x % 4] = (int)p.n;
}

}  // namespace

TH_KERNEL(test_strict_uninit_static, TH_EMU_COOPERATIVE, THCPointwise, uninit_static_body)
TH_KERNEL(test_strict_uninit_dynamic, TH_EMU_COOPERATIVE, THCPointwise, uninit_dynamic_body)
TH_KERNEL(test_strict_neighbour, TH_EMU_COOPERATIVE, THCPointwise, neighbour_body)
TH_KERNEL(test_strict_barrier, TH_EMU_INDEPENDENT, THCPointwise, barrier_body)
TH_KERNEL(test_strict_shared, TH_EMU_INDEPENDENT, THCPointwise, shared_body)

namespace {

int launch(const char *kernel, unsigned blocks, unsigned threads, unsigned shared, std::vector<float> *out,
           std::string *err, long long i0 = 0) {
  THCPointwise p;
  std::memset(&p, 0, sizeof p);
  p.i[0] = i0;
  p.n = (long long)blocks * threads;
  p.arg[0].data = (unsigned long long)out->data();
  const unsigned g[3] = {blocks, 1, 1}, b[3] = {threads, 1, 1};
  void *args[1] = {&p};
  char msg[256] = "";
  const int rc = th_emu_launch(kernel, g, b, shared, args, msg, sizeof msg);
  *err = msg;
  return rc;
}

}  // namespace

void strict_emulator() {
  // Every block of every launch reads poison (NaN) where it wrote nothing.
  for (const char *k : {"test_strict_uninit_static", "test_strict_uninit_dynamic"}) {
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<float> out(3 * 64, 5.0f);
      std::string err;
      CHECK(launch(k, 3, 64, 64 * sizeof(float), &out, &err) == 0, "%s: %s", k, err.c_str());
      for (size_t i = 0; i < out.size(); ++i)
        CHECK(bits(out[i]) == 0xffffffffu, "%s (launch %d): element %zu read %g, not the poison", k, rep, i, out[i]);
    }
  }
  // A missing barrier: every block reads some neighbour unwritten (thread order in even blocks,
  // reverse in odd ones), every run; with the barrier every read is right.
  for (long long sync : {0, 1}) {
    std::vector<float> out(4 * 64);
    std::string err;
    CHECK(launch("test_strict_neighbour", 4, 64, 0, &out, &err, sync) == 0, "%s", err.c_str());
    for (unsigned b = 0; b < 4; ++b) {
      unsigned poisoned = 0, right = 0;
      for (unsigned t = 0; t < 64; ++t) {
        const float v = out[b * 64 + t];
        poisoned += bits(v) == 0xffffffffu;
        right += v == (float)((t + 1) % 64 + 1);
      }
      if (sync) CHECK(right == 64, "block %u with its barrier: %u of 64 reads right", b, right);
      else CHECK(poisoned > 0 && poisoned + right == 64, "block %u without its barrier: %u poisoned reads", b, poisoned);
    }
  }
  // 1024 threads are within CUDA's per-block limit, not within the kernels' __launch_bounds__(512).
  std::vector<float> out(1024);
  std::string err;
  CHECK(launch("test_strict_uninit_static", 1, 1024, 0, &out, &err) != 0 && err.find("__launch_bounds__(512)") != std::string::npos,
        "a launch past the kernel's bounds: '%s'", err.c_str());
  CHECK(launch("test_strict_uninit_static", 1, 512, 0, &out, &err) == 0, "%s", err.c_str());
  // An independent kernel's threads run one after another: a barrier or shared memory in one is
  // a registration bug, reported by its launch.
  CHECK(launch("test_strict_barrier", 2, 8, 0, &out, &err) != 0 && err.find("__syncthreads") != std::string::npos,
        "a barrier in an independent kernel: '%s'", err.c_str());
  CHECK(launch("test_strict_shared", 2, 8, 0, &out, &err) != 0 && err.find("shared memory") != std::string::npos,
        "shared memory in an independent kernel: '%s'", err.c_str());
  // ... and the next launch on this thread is clean again.
  CHECK(launch("th_fill_float_i32", 1, 8, 0, &out, &err) == 0, "%s", err.c_str());
}
