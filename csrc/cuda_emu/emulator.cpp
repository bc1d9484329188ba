// The CPU emulator's launcher: a table of the kernels (filled by TH_KERNEL's static
// registrations in each module) and th_emu_launch, which runs a grid on the caller's thread.
// Independent kernels run thread after thread; cooperative ones run each block's threads as
// fibers (ucontext), one block at a time.
//
// It is as strict as a GPU where that is cheap:
// - A cooperative block's threads take turns: each fiber runs from its start or a barrier to
//   the next barrier or its end, in thread order in even blocks and in reverse in odd ones, and
//   a barrier lets the block on once every live thread has reached it. So a read of what another
//   thread writes in the same phase (a missing __syncthreads) sees it unwritten in one of the
//   two orders, every run, instead of now and then. (Host threads taking turns cost a futex
//   hand-off per CUDA thread per phase, 4x slower than fibers here.)
// - A block's shared memory (static and dynamic) is its own and poisoned (0xff bytes) when the
//   block starts, so reading what the block did not write shows.
// - A kernel's __launch_bounds__ and CUDA's per-block limits refuse a launch; an independent
//   kernel that waits at a barrier or uses shared memory fails its launch (its registration is
//   wrong, and its threads would not meet).
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <unordered_map>
#include <vector>

#include "shim.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

thread_local uint3 threadIdx, blockIdx;
thread_local dim3 blockDim, gridDim;

namespace {

struct Kernel {
  int kind;
  unsigned bound;
  void (*fn)(void **);
};

std::unordered_map<std::string, Kernel> &table() {
  static std::unordered_map<std::string, Kernel> t;
  return t;
}

// The byte every shared array starts with: NaN in any float, -1 in any integer.
const unsigned char POISON = 0xff;

// One cooperative block's shared memory: static arrays by TH_SHARED key, the dynamic buffer.
struct Block {
  explicit Block(size_t dynamic_bytes) : dynamic(dynamic_bytes ? dynamic_bytes : 1, POISON) {}
  std::unordered_map<const void *, std::unique_ptr<unsigned char[]>> arrays;
  std::vector<unsigned char> dynamic;
};

// The shared memory of the block running on this host thread.
thread_local Block *block_memory = nullptr;
// What an independent kernel running on this thread did that only a cooperative one may.
thread_local const char *misuse = nullptr;

// ---- fibers: a cooperative block's CUDA threads on the launching host thread ----

// A fiber's stack: kernels keep little on theirs, but sanitizer builds at -O0 much more.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
const size_t STACK = 1 << 20;
#else
const size_t STACK = 256 << 10;
#endif

struct Fiber {
  ucontext_t ctx;
  unsigned t = 0;  // the CUDA thread's linear index in its block
  bool done = false;
  void *stack = nullptr;
#if defined(__SANITIZE_THREAD__)
  void *tsan = nullptr;
#endif
};

// This host thread's fibers: the scheduler's context, the running fiber, the kernel they run,
// and stacks kept for the next blocks (unmapped when the thread ends).
struct Fibers {
  ~Fibers() {
    for (void *s : stacks) munmap(s, STACK);
  }
  ucontext_t main;
  Fiber *cur = nullptr;
  void (*fn)(void **) = nullptr;
  void **params = nullptr;
  std::vector<void *> stacks;
#if defined(__SANITIZE_ADDRESS__)
  const void *main_bottom = nullptr;
  size_t main_size = 0;
#endif
#if defined(__SANITIZE_THREAD__)
  void *main_tsan = nullptr;
#endif
};
thread_local Fibers fibers;

// Switches from the running fiber back to the scheduler; `dying`: the fiber will not resume.
void to_main(Fiber *f, bool dying) {
#if defined(__SANITIZE_ADDRESS__)
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(dying ? nullptr : &fake, fibers.main_bottom, fibers.main_size);
#endif
#if defined(__SANITIZE_THREAD__)
  __tsan_switch_to_fiber(fibers.main_tsan, 0);
#endif
  swapcontext(&f->ctx, &fibers.main);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  (void)dying;
}

// Switches from the scheduler into fiber f (until its next barrier or its end).
void into(Fiber *f) {
  fibers.cur = f;
#if defined(__SANITIZE_ADDRESS__)
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f->stack, STACK);
#endif
#if defined(__SANITIZE_THREAD__)
  __tsan_switch_to_fiber(f->tsan, 0);
#endif
  swapcontext(&fibers.main, &f->ctx);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  fibers.cur = nullptr;
}

void fiber_entry() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, &fibers.main_bottom, &fibers.main_size);
#endif
  Fiber *f = fibers.cur;
  fibers.fn(fibers.params);
  f->done = true;
  to_main(f, true);
}

// Runs one block of `n` threads (shape b) as fibers taking turns, `reverse`d in odd blocks.
void run_block(unsigned n, const dim3 &b, bool reverse) {
  while (fibers.stacks.size() < n) {
    void *s = mmap(nullptr, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED) {
      std::fprintf(stderr, "CUDA emulator: cannot map a fiber stack\n");
      std::abort();
    }
    fibers.stacks.push_back(s);
  }
  std::vector<Fiber> fs(n);
  // The live threads in the block's order (a phase runs them front to back).
  std::vector<Fiber *> live(n);
  for (unsigned p = 0; p < n; ++p) {
    Fiber &f = fs[p];
    f.t = p;
    f.stack = fibers.stacks[p];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = STACK;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_entry, 0);
#if defined(__SANITIZE_THREAD__)
    f.tsan = __tsan_create_fiber(0);
#endif
    live[reverse ? n - 1 - p : p] = &f;
  }
#if defined(__SANITIZE_THREAD__)
  fibers.main_tsan = __tsan_get_current_fiber();
#endif
  while (!live.empty()) {
    for (Fiber *f : live) {
      threadIdx.x = f->t % b.x, threadIdx.y = f->t / b.x % b.y, threadIdx.z = f->t / (b.x * b.y);
      into(f);
    }
    live.erase(std::remove_if(live.begin(), live.end(), [](Fiber *f) { return f->done; }), live.end());
  }
#if defined(__SANITIZE_THREAD__)
  for (Fiber &f : fs) __tsan_destroy_fiber(f.tsan);
#endif
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
  if (fibers.cur) to_main(fibers.cur, false);
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

  if (fibers.fn)
    return fail(err, err_len, name + ": launched from inside a kernel (the emulator has no dynamic parallelism)");
  gridDim = g, blockDim = b;
  fibers.fn = k.fn, fibers.params = params;
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        Block memory(shared_bytes);
        block_memory = &memory;
        blockIdx.x = bx, blockIdx.y = by, blockIdx.z = bz;
        run_block((unsigned)threads, b, (bx + by + bz) & 1);
        block_memory = nullptr;
      }
  fibers.fn = nullptr;
  return 0;
}
