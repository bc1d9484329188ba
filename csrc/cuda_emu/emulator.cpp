// The CPU emulator's launcher: a table of the kernels (filled by TH_KERNEL's static
// registrations in each module) and th_emu_launch, which runs a grid on host threads.
// Independent kernels run thread after thread on the caller's thread; cooperative ones run each
// block's threads as real threads, one block at a time, on a pool of workers kept between
// launches (starting a thread per CUDA thread per block made launches of many small blocks cost
// more than the kernels).
//
// It is as strict as a GPU where that is cheap:
// - A cooperative block's threads take turns (`Turns`): one runs from its start or a barrier to
//   the next barrier or its end, in thread order in even blocks and in reverse in odd ones, and
//   a barrier lets the block on once every live thread has reached it. So a read of what another
//   thread writes in the same phase (a missing __syncthreads) sees it unwritten in one of the
//   two orders, every run, instead of now and then.
// - A block's shared memory (static and dynamic) is its own and poisoned (0xff bytes) when the
//   block starts, so reading what the block did not write shows.
// - A kernel's __launch_bounds__ and CUDA's per-block limits refuse a launch; an independent
//   kernel that waits at a barrier or uses shared memory fails its launch (its registration is
//   wrong, and its threads would not meet).
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "shim.h"

thread_local uint3 threadIdx, blockIdx;
thread_local dim3 blockDim, gridDim;

namespace {

struct Kernel {
  int kind;
  unsigned bound;
  void (*fn)(void **);
};

// The byte every shared array starts with: NaN in any float, -1 in any integer.
const unsigned char POISON = 0xff;

// One cooperative block's shared memory: static arrays by TH_SHARED key, the dynamic buffer.
struct Block {
  explicit Block(size_t dynamic_bytes) : dynamic(dynamic_bytes ? dynamic_bytes : 1, POISON) {}
  std::mutex m;
  std::unordered_map<const void *, std::unique_ptr<unsigned char[]>> arrays;
  std::vector<unsigned char> dynamic;
};

std::unordered_map<std::string, Kernel> &table() {
  static std::unordered_map<std::string, Kernel> t;
  return t;
}

// The turns of a cooperative block's threads (see the top of this file): thread t (its linear
// index in the block) waits for its first turn in start(t), hands the turn on at each barrier
// (barrier(t), which returns at its next turn, in the next phase) and at its end (finish(t)).
// The live threads, in the block's order, form a list; a turn passes to the next live one,
// or at the end of a phase to the first.
class Turns {
 public:
  Turns(unsigned n, bool reverse) : order_(n), at_(n), next_(n), prev_(n), cv_(n) {
    for (unsigned p = 0; p < n; ++p) {
      order_[p] = reverse ? n - 1 - p : p;
      at_[order_[p]] = p;
      next_[p] = p + 1 < n ? (int)p + 1 : -1;
      prev_[p] = (int)p - 1;
    }
    turn_ = (int)order_[0];
  }
  void start(unsigned t) {
    std::unique_lock<std::mutex> lk(m_);
    cv_[t].wait(lk, [&] { return turn_ == (int)t; });
  }
  void barrier(unsigned t) {
    std::unique_lock<std::mutex> lk(m_);
    pass(t, false);
    cv_[t].wait(lk, [&] { return turn_ == (int)t; });
  }
  void finish(unsigned t) {
    std::lock_guard<std::mutex> lk(m_);
    pass(t, true);
  }

 private:
  // Hands the turn from t to the next live thread of the phase, or the first of the next phase
  // (t itself when it is the only one left); `done`: t leaves the list.
  void pass(unsigned t, bool done) {
    const int p = (int)at_[t], after = next_[p];
    if (done) {
      if (prev_[p] >= 0) next_[prev_[p]] = after;
      else head_ = after;
      if (after >= 0) prev_[after] = prev_[p];
    }
    const int to = after >= 0 ? after : head_;
    turn_ = to >= 0 ? (int)order_[to] : -1;
    if (to >= 0) cv_[turn_].notify_one();
  }
  std::mutex m_;
  std::vector<unsigned> order_, at_;  // thread at each position; position of each thread
  std::vector<int> next_, prev_;      // the live list over positions (-1: none)
  std::vector<std::condition_variable> cv_;
  int head_ = 0, turn_;
};

thread_local Turns *block_turns = nullptr;
thread_local unsigned block_thread = 0;
thread_local Block *block_memory = nullptr;
// What an independent kernel running on this thread did that only a cooperative one may.
thread_local const char *misuse = nullptr;

// The worker pool runs one cooperative block at a time, process-wide.
std::mutex cooperative_lock;

// Host threads that run a cooperative block's CUDA threads: worker w runs job(w) for w < n in
// each round; run() returns when every one has. Workers are started as rounds need them and
// live for the process (idle on a condition variable).
class Pool {
 public:
  void run(unsigned n, const std::function<void(unsigned)> &job) {
    std::unique_lock<std::mutex> lk(m_);
    while (workers_.size() < n) {
      const unsigned w = (unsigned)workers_.size();
      workers_.emplace_back([this, w] { loop(w); });
      workers_.back().detach();
    }
    job_ = &job, n_ = n, left_ = n, ++round_;
    start_.notify_all();
    done_.wait(lk, [&] { return left_ == 0; });
    job_ = nullptr;
  }

 private:
  void loop(unsigned w) {
    unsigned long long seen = 0;
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      start_.wait(lk, [&] { return round_ != seen; });
      seen = round_;
      if (w >= n_) continue;
      const std::function<void(unsigned)> *job = job_;
      lk.unlock();
      (*job)(w);
      lk.lock();
      if (--left_ == 0) done_.notify_one();
    }
  }
  std::mutex m_;
  std::condition_variable start_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(unsigned)> *job_ = nullptr;
  unsigned n_ = 0, left_ = 0;
  unsigned long long round_ = 0;
};

Pool &pool() {
  static Pool *p = new Pool;  // never destroyed: its detached workers outlive static destruction
  return *p;
}

// CUDA's limits on a launch shape.
const unsigned long long MAX_BLOCK_THREADS = 1024, MAX_SHARED = 48 * 1024;

int fail(char *err, size_t err_len, const std::string &msg) {
  if (err && err_len) std::snprintf(err, err_len, "%s", msg.c_str());
  return 1;
}

}  // namespace

int th_emu_register(const char *name, int kind, unsigned bound, void (*fn)(void **)) {
  table().emplace(name, Kernel{kind, bound, fn});
  return 0;
}

void __syncthreads() {
  if (block_turns) block_turns->barrier(block_thread);
  else misuse = "waits at __syncthreads";
}

// Outside a cooperative block (a misregistered kernel): a poisoned block of this thread's own,
// so the kernel runs on and its launch reports the misuse.
static Block &own_block() {
  thread_local Block b(0);
  return b;
}

unsigned char *th_emu_dynamic_shared() {
  if (block_memory) return block_memory->dynamic.data();
  misuse = "uses dynamic shared memory";
  return own_block().dynamic.data();
}

void *th_emu_shared(const void *key, size_t bytes) {
  Block *b = block_memory;
  if (!b) misuse = "uses static shared memory", b = &own_block();
  std::lock_guard<std::mutex> lk(b->m);
  std::unique_ptr<unsigned char[]> &a = b->arrays[key];
  if (!a) {
    a.reset(new unsigned char[bytes ? bytes : 1]);
    std::memset(a.get(), POISON, bytes);
  }
  return a.get();
}

// The registered kernels' names, sorted: fills `out` with up to `cap` of them, returns how many
// there are (for tests that run every kernel).
extern "C" size_t th_emu_kernel_names(const char **out, size_t cap) {
  static const std::vector<const char *> names = [] {
    std::vector<const char *> v;
    for (auto &e : table()) v.push_back(e.first.c_str());
    std::sort(v.begin(), v.end(), [](const char *a, const char *b) { return std::strcmp(a, b) < 0; });
    return v;
  }();
  for (size_t i = 0; i < names.size() && i < cap; ++i) out[i] = names[i];
  return names.size();
}

extern "C" int th_emu_launch(const char *kernel, const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void **params, char *err, size_t err_len) {
  const std::string name = kernel ? kernel : "";
  auto it = table().find(name);
  if (it == table().end()) return fail(err, err_len, "no kernel named '" + name + "' in the CUDA emulator");
  const unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
  const auto shape = [&] {
    return "grid (" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " + std::to_string(grid[2]) +
           ") block (" + std::to_string(block[0]) + ", " + std::to_string(block[1]) + ", " +
           std::to_string(block[2]) + ")";
  };
  if (!grid[0] || !grid[1] || !grid[2] || !threads)
    return fail(err, err_len, name + ": invalid launch shape " + shape() + ": every dimension must be >= 1");
  if (threads > MAX_BLOCK_THREADS || block[2] > 64 || grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535)
    return fail(err, err_len,
                name + ": invalid launch shape " + shape() +
                    ": at most 1024 threads per block (z <= 64), grid y and z <= 65535");
  if (shared_bytes > MAX_SHARED)
    return fail(err, err_len, name + ": " + std::to_string(shared_bytes) + " bytes of dynamic shared memory (at most 49152)");
  const Kernel k = it->second;
  if (threads > k.bound)
    return fail(err, err_len,
                name + ": a block of " + std::to_string(threads) + " threads exceeds the kernel's __launch_bounds__(" +
                    std::to_string(k.bound) + "), which a GPU refuses");
  dim3 g, b;
  g.x = grid[0], g.y = grid[1], g.z = grid[2];
  b.x = block[0], b.y = block[1], b.z = block[2];

  if (k.kind == TH_EMU_INDEPENDENT) {
    misuse = nullptr;
    gridDim = g, blockDim = b;
    for (unsigned bz = 0; bz < g.z; ++bz)
      for (unsigned by = 0; by < g.y; ++by)
        for (unsigned bx = 0; bx < g.x; ++bx) {
          blockIdx.x = bx, blockIdx.y = by, blockIdx.z = bz;
          for (unsigned tz = 0; tz < b.z; ++tz)
            for (unsigned ty = 0; ty < b.y; ++ty)
              for (unsigned tx = 0; tx < b.x; ++tx) {
                threadIdx.x = tx, threadIdx.y = ty, threadIdx.z = tz;
                k.fn(params);
              }
        }
    if (misuse)
      return fail(err, err_len,
                  name + " " + misuse + " but is registered TH_EMU_INDEPENDENT (its threads run one after another)");
    return 0;
  }

  std::lock_guard<std::mutex> guard(cooperative_lock);
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        Turns turns((unsigned)threads, (bx + by + bz) & 1);
        Block memory(shared_bytes);
        pool().run((unsigned)threads, [&](unsigned t) {
          gridDim = g, blockDim = b;
          blockIdx.x = bx, blockIdx.y = by, blockIdx.z = bz;
          threadIdx.x = t % b.x, threadIdx.y = t / b.x % b.y, threadIdx.z = t / (b.x * b.y);
          block_turns = &turns, block_thread = t;
          block_memory = &memory;
          turns.start(t);
          k.fn(params);
          // A finished thread no longer holds the others up at __syncthreads.
          turns.finish(t);
          block_turns = nullptr;
          block_memory = nullptr;
        });
      }
  return 0;
}
