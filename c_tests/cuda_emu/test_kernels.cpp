// The kernels through the CPU emulator's th_emu_launch on host buffers, checked against naive
// references, under the sanitizers (run.sh builds it with ASan+UBSan, then TSan):
// - every registered kernel on random bytes, contiguous and strided/broadcast, both widths (a
//   sanitizer report is a failure: overflow, bad shifts, float->int out of range, OOB);
// - 16-bit float conversions exhaustively or densely against GCC's _Float16 and a nearest-value
//   search; float->integer saturation; integer arithmetic against wide-integer references;
//   comparisons with NaN; 3-d strided/broadcast geometry; grid-stride loops; bad launches;
// - concurrent launches from two threads, and a cooperative kernel (shared memory, barriers,
//   threads leaving early) defined here;
// - every reduction and combine kernel (reduce.cuh) on random bytes, and sums / first-index
//   max / counts against loops over strided and multi-chunk geometry, from two threads at once;
// - the convolution kernels (conv.cuh: unfold in every mode, the connection-table map) on
//   strided operands against loops; THCUNN's im2col / col2im (nn_conv.cuh) likewise; THCUNN's
//   max / average pooling and the average's backward (nn_pool.cuh) likewise;
// - the index, mask, sort and scan kernels on valid inputs (test_lines.cpp);
// - THC_sleep's kernel (sleep.cuh): spins at least its cycle count (the shim's clock64), returns.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "common.cuh"
#include "num.cuh"
#include "pointwise.cuh"
#include "reduce.cuh"
#include "lines.cuh"
#include "blas.cuh"
#include "random.cuh"
#include "conv.cuh"
#include "nn_conv.cuh"
#include "sleep.cuh"
#include "nn.cuh"
#include "nn_rnn.cuh"
#include "nn_pool.cuh"
#include "nn_sample.cuh"
#include "harness.h"

static THCPointwise params_1d(long long n) {
  THCPointwise p;
  std::memset(&p, 0, sizeof p);
  p.n = n, p.ndim = 1, p.sizes[0] = n;
  for (auto &a : p.arg) a.strides[0] = 1;
  return p;
}

// Launches `kernel` over p.n elements with 512-thread blocks (or the given shape); `param`: the
// kernel's parameter when it is not `p` itself (a THCLines holding `p`).
static int launch(const std::string &kernel, THCPointwise &p, unsigned grid = 0, unsigned block = 512,
                  std::string *err_out = nullptr, void *param = nullptr) {
  unsigned g[3] = {grid ? grid : (unsigned)((p.n + block - 1) / block), 1, 1}, b[3] = {block, 1, 1};
  if (!g[0]) g[0] = 1;
  void *args[1] = {param ? param : &p};
  char err[256] = "";
  int rc = th_emu_launch(kernel.c_str(), g, b, 0, args, err, sizeof err);
  if (err_out) *err_out = err;
  else CHECK(rc == 0, "%s: %s", kernel.c_str(), err);
  return rc;
}

// Every kernel, random bytes in every operand and value: contiguous and strided/broadcast.
static void every_kernel() {
  std::vector<const char *> all(th_emu_kernel_names(nullptr, 0)), names;
  th_emu_kernel_names(all.data(), all.size());
  size_t reductions = 0, gemms = 0, randoms = 0, convs = 0, nn_convs = 0, sleeps = 0, scans = 0, radix = 0;
  size_t rnns = 0, pools = 0, samples = 0;
  for (const char *k : all) {
    if (std::strncmp(k, "th_reduce_", 10) == 0 || std::strncmp(k, "th_combine_", 11) == 0) ++reductions;
    else if (std::strncmp(k, "th_gemm_", 8) == 0) ++gemms;  // THCGemm kernels: gemm_kernels()
    else if (std::strncmp(k, "th_rand_", 8) == 0) ++randoms;  // THCRandom: every_random_kernel()
    else if (std::strncmp(k, "th_conv", 7) == 0) ++convs;     // THCConv: conv_kernels()
    else if (std::strncmp(k, "th_nnIm2col_", 12) == 0 || std::strncmp(k, "th_nnCol2im_", 12) == 0)
      ++nn_convs;  // THNNConv: nn_conv_kernels()
    else if (std::strcmp(k, "th_sleep") == 0) ++sleeps;        // THCSleep: sleep_kernel()
    else if (std::strncmp(k, "th_rnn", 6) == 0) ++rnns;        // THCRnn: rnn_kernels()
    else if (std::strncmp(k, "th_pool", 7) == 0) ++pools;      // THNNPool: pool_kernels()
    else if (std::strncmp(k, "th_nnSample", 11) == 0) ++samples;  // THCSample: sample_kernels()
    // THCScan, the tiled cumsum/cumprod: ops::reduce's device tests (cargo test, emulator).
    else if (std::strstr(k, "Totals_") || std::strstr(k, "Carries_") || std::strstr(k, "Tiles_")) ++scans;
    // THCRadix, the radix sort's passes: the sort suites (cargo test, pytest on the emulator).
    else if (std::strncmp(k, "th_radix", 8) == 0) ++radix;
    // Not this file's own kernel; of the line kernels, those whose addresses do not depend on
    // the data (tri, cross): the index, mask and sort ones follow values read from their
    // operands, so random bytes would send them out of bounds (test_lines.cpp runs them).
    else if (std::strncmp(k, "th_", 3) == 0 && (!line_kernel(k) || data_independent_line_kernel(k)))
      names.push_back(k);
  }
  size_t lines = 0;
  for (const char *k : names) lines += line_kernel(k);
  // (1116 of TH's; THCUNN's nn.cuh: 38 ops for Float, Double and Half and 8 for Double, twice)
  CHECK(names.size() - lines == 1360, "%zu pointwise kernels registered", names.size() - lines);
  // tri, cross; nnSoftMax(Back), nnSoftMaxRows(Back), nnMultiMargin(Back), nnMultiLabel(Back):
  // 3 dtypes
  CHECK(lines == 86, "%zu line kernels registered", lines);
  CHECK(reductions == 214, "%zu reduction kernels registered", reductions);
  CHECK(gemms == 5, "%zu gemm kernels registered", gemms);
  CHECK(randoms == 100, "%zu random kernels registered", randoms);
  CHECK(convs == 12, "%zu convolution kernels registered", convs);
  CHECK(nn_convs == 12, "%zu THCUNN convolution kernels registered", nn_convs);
  CHECK(sleeps == 1, "%zu sleep kernels registered", sleeps);
  CHECK(rnns == 24, "%zu fused rnn kernels registered", rnns);
  CHECK(pools == 30, "%zu THCUNN pooling kernels registered", pools);
  CHECK(samples == 12, "%zu padding/upsampling kernels registered", samples);
  CHECK(scans == 90, "%zu tiled scan kernels registered", scans);
  CHECK(radix == 30, "%zu radix sort kernels registered", radix);
  const int cap = 80;
  std::vector<uint64_t> buf[4];
  for (auto &b : buf) b.resize(cap);
  for (const char *k : names) {
    for (int layout = 0; layout < 2; ++layout) {
      for (auto &b : buf)
        for (auto &x : b) x = rnd();
      THCPointwise p = params_1d(37);
      if (layout) {  // 5 x 7: contiguous, transposed, broadcast row, every other element
        p.n = 35, p.ndim = 2, p.sizes[0] = 5, p.sizes[1] = 7;
        const long long st[4][2] = {{7, 1}, {1, 5}, {0, 1}, {14, 2}};
        for (int a = 0; a < 4; ++a) p.arg[a].strides[0] = st[a][0], p.arg[a].strides[1] = st[a][1];
      }
      for (int a = 0; a < 4; ++a) p.arg[a].data = (unsigned long long)buf[a].data();
      p.i[0] = (long long)rnd(), p.i[1] = (long long)rnd(), p.op = (int)(rnd() & 15);
      // Every kernel gets a THCLines (a THCPointwise first, so the pointwise kernels read what
      // they expect); line kernels walk lines of 3 elements, inside the buffers. Their scalar
      // operands stay small (the host clamps them: tri's diagonal, index bounds).
      THCLines l;
      std::memset(&l, 0, sizeof l);
      for (int a = 0; a < 4; ++a) l.len[a] = 3, l.step[a] = layout ? 2 : 1;
      l.it = p;
      if (line_kernel(k)) l.it.i[0] = (long long)(rnd() % 7) - 3, l.it.i[1] = (long long)(rnd() & 1);
      launch(k, p, layout ? 2 : 0, layout ? 16 : 512, nullptr, &l);
    }
  }
}

// f16 <-> f32 against GCC's _Float16 (libgcc's conversions); bf16 against a nearest search.
static void half_conversions() {
  const long long n = 65536;
  std::vector<uint16_t> h(n);
  std::vector<float> f(n);
  for (long long i = 0; i < n; ++i) h[i] = (uint16_t)i;
  THCPointwise p = params_1d(n);
  p.arg[0].data = (unsigned long long)f.data(), p.arg[1].data = (unsigned long long)h.data();
  launch("th_copy_float_half_i32", p);
  for (long long i = 0; i < n; ++i) {
    const float want = (float)from_bits<_Float16>((uint64_t)i);
    if (std::isnan(want)) CHECK(std::isnan(f[i]) && std::signbit(f[i]) == std::signbit(want), "half %#llx", i);
    else CHECK(bits(f[i]) == bits(want), "half %#llx -> %a, want %a", i, f[i], want);
  }
  // f32 -> f16: every finite half, the midpoints to its neighbours and one f32 ulp around them,
  // the specials, random bit patterns.
  std::vector<float> src;
  for (long long i = 0; i < n; ++i) {
    const float a = (float)from_bits<_Float16>((uint64_t)i), b = (float)from_bits<_Float16>((uint64_t)(i + 1));
    if (!std::isfinite(a)) continue;
    src.push_back(a);
    if ((i & 0x7fff) != 0x7fff && std::isfinite(b) && std::signbit(a) == std::signbit(b)) {
      const float mid = (float)(((double)a + (double)b) / 2);
      src.insert(src.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f), std::nextafter(mid, -1e30f)});
    }
  }
  src.insert(src.end(), {65504.0f, 65519.99f, 65520.0f, 1e30f, -65520.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-25f,
                         0x1.000002p-25f, -0x1p-25f, 0x1p-26f, 5.9604645e-08f, 1e-45f});
  for (int i = 0; i < 100000; ++i) src.push_back(from_bits<float>(rnd() & 0xffffffffu));
  std::vector<uint16_t> out(src.size());
  p = params_1d((long long)src.size());
  p.arg[0].data = (unsigned long long)out.data(), p.arg[1].data = (unsigned long long)src.data();
  launch("th_copy_half_float_i64", p);
  for (size_t i = 0; i < src.size(); ++i) {
    const uint16_t want = (uint16_t)bits((_Float16)src[i]);
    if (std::isnan(src[i])) CHECK((out[i] & 0x7fff) > 0x7c00 && (out[i] >> 15) == (want >> 15), "nan %a", src[i]);
    else CHECK(out[i] == want, "%a -> half %#x, want %#x", src[i], out[i], want);
  }
  // bf16: the nearer of the two bf16 neighbours of x (ties to the even one).
  std::vector<uint16_t> bo(src.size());
  p.arg[0].data = (unsigned long long)bo.data();
  launch("th_copy_bfloat16_float_i32", p);
  for (size_t i = 0; i < src.size(); ++i) {
    const uint32_t x = (uint32_t)bits(src[i]);
    if (std::isnan(src[i])) {
      CHECK((bo[i] & 0x7fff) > 0x7f80, "bf16 of nan");
      continue;
    }
    const uint32_t lo = x & 0xffff0000u, hi = lo + 0x10000u;
    const double dl = std::fabs((double)src[i] - (double)from_bits<float>(lo));
    // Past the largest bf16 the next value up is 2^128 (rounding to it overflows to inf).
    const double hv = (hi & 0x7fffffffu) == 0x7f800000u ? std::copysign(0x1p128, (double)src[i]) : (double)from_bits<float>(hi);
    const double dh = std::fabs(hv - (double)src[i]);
    const uint32_t pick = (x & 0xffffu) == 0 ? lo : dl < dh ? lo : dh < dl ? hi : ((lo >> 16) & 1) ? hi : lo;
    CHECK(bo[i] == (uint16_t)(pick >> 16), "%a -> bf16 %#x, want %#x", src[i], bo[i], pick >> 16);
  }
}

// double -> integers: toward zero, saturating, NaN to 0 (long double references).
template <class T> static void saturation(const char *kernel) {
  const double v[] = {NAN, INFINITY, -INFINITY, 0x1p63, -0x1p63, 0x1p63 - 1024, 1e19, -1e19, 0x1p31, -0x1p31,
                      0x1p31 - 0.5, -0x1p31 - 0.5, 255.9, 256.0, -0.9, -1.0, 127.5, -128.9, -129.0, 65535.5,
                      -32768.7, 32767.99, 4294967295.9, 4294967296.0, 0.0, -0.0, 1e-300};
  const long long n = sizeof v / sizeof v[0];
  std::vector<T> out(n);
  THCPointwise p = params_1d(n);
  p.arg[0].data = (unsigned long long)out.data(), p.arg[1].data = (unsigned long long)v;
  launch(kernel, p);
  const long double lo = (long double)std::numeric_limits<T>::min(), hi = (long double)std::numeric_limits<T>::max();
  for (long long i = 0; i < n; ++i) {
    const long double t = std::truncl((long double)v[i]);
    const T want = std::isnan(v[i]) ? 0 : t <= lo ? (T)lo : t >= hi ? (T)hi : (T)t;
    CHECK(out[i] == want, "%s(%a) = %lld, want %lld", kernel, v[i], (long long)out[i], (long long)want);
  }
}

// Integer arithmetic of Int and Char against 64-bit references.
template <class T> static void int_ops(const char *sfx) {
  std::vector<T> a, b;
  const T specials[] = {0, 1, 2, 7, (T)-1, (T)-2, (T)-7, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
  for (T x : specials)
    for (T y : specials) a.push_back(x), b.push_back(y);
  for (int i = 0; i < 200; ++i) a.push_back((T)rnd()), b.push_back((T)(rnd() >> (rnd() % 60)));
  const long long n = (long long)a.size();
  std::vector<T> out(n);
  struct Case {
    const char *op;
    long long (*ref)(long long, long long, int bits);
    bool nonzero;  // the host rejects a zero divisor before launching
  };
  // The low w bits of v, sign-extended (T's wrapping).
  const auto wrap = [](long long v, int w) { return (long long)(((unsigned long long)v << (64 - w))) >> (64 - w); };
  typedef unsigned long long U;
  static const Case cases[] = {
      {"cadd", [](long long x, long long y, int) { return (long long)((U)x + (U)y); }, false},
      {"csub", [](long long x, long long y, int) { return (long long)((U)x - (U)y); }, false},
      {"cmul", [](long long x, long long y, int) { return (long long)((U)x * (U)y); }, false},
      {"cdiv", [](long long x, long long y, int) { return y == -1 ? (long long)(0 - (U)x) : x / y; }, true},
      {"cfmod", [](long long x, long long y, int) { return y == -1 ? 0 : x % y; }, true},
      {"cremainder", [](long long x, long long y, int) {
         long long q = y == -1 ? (long long)(0 - (U)x) : x / y;
         if (y != -1 && x % y != 0 && ((x < 0) != (y < 0))) --q;
         return (long long)((unsigned long long)x - (unsigned long long)y * (unsigned long long)q);
       }, true},
      // Shifts in C's promoted width (32 bits for the types narrower than int), the count modulo it.
      {"clshift", [](long long x, long long y, int w) { return (long long)((unsigned long long)x << (y & ((w < 32 ? 32 : w) - 1))); }, false},
      {"crshift", [](long long x, long long y, int w) {
         return (long long)(((unsigned long long)x & (~0ull >> (64 - w))) >> (y & ((w < 32 ? 32 : w) - 1)));
       }, false},
      {"cmax", [](long long x, long long y, int) { return x > y ? x : y; }, false},
      {"cbitxor", [](long long x, long long y, int) { return x ^ y; }, false},
  };
  const int w = 8 * (int)sizeof(T);
  for (const Case &c : cases) {
    std::vector<T> d = b;
    if (c.nonzero)
      for (T &x : d) x = x ? x : (T)1;
    THCPointwise p = params_1d(n);
    p.i[0] = 1;  // cadd/csub: value 1
    p.arg[0].data = (unsigned long long)out.data(), p.arg[1].data = (unsigned long long)a.data();
    p.arg[2].data = (unsigned long long)d.data();
    for (const char *width : {"_i32", "_i64"}) {
      launch(std::string("th_") + c.op + "_" + sfx + width, p);
      for (long long i = 0; i < n; ++i) {
        const long long want = wrap(c.ref(a[i], d[i], w), w);
        CHECK(out[i] == (T)want, "%s_%s(%lld, %lld) = %lld, want %lld", c.op, sfx, (long long)a[i], (long long)d[i],
              (long long)out[i], want);
      }
    }
  }
}

// Comparisons of floats with NaN and signed zeros, into Byte.
static void compare_nan() {
  const float a[] = {NAN, 1.0f, -0.0f, NAN, 2.0f, -INFINITY};
  const float b[] = {1.0f, NAN, 0.0f, NAN, 3.0f, -INFINITY};
  const struct { const char *name; int mask; bool want[6]; } cases[] = {
      {"lt", 1, {0, 0, 0, 0, 1, 0}}, {"le", 3, {0, 0, 1, 0, 1, 1}}, {"gt", 4, {0, 0, 0, 0, 0, 0}},
      {"ge", 6, {0, 0, 1, 0, 0, 1}}, {"eq", 2, {0, 0, 1, 0, 0, 1}}, {"ne", 13, {1, 1, 0, 1, 1, 0}}};
  uint8_t out[6];
  for (const auto &c : cases) {
    THCPointwise p = params_1d(6);
    p.op = c.mask;
    p.arg[0].data = (unsigned long long)out, p.arg[1].data = (unsigned long long)a, p.arg[2].data = (unsigned long long)b;
    launch("th_cmpTensor_float_byte_i32", p);
    for (int i = 0; i < 6; ++i) CHECK(out[i] == c.want[i], "%s(%g, %g) = %d", c.name, a[i], b[i], out[i]);
  }
}

// r = a + 0.5 b over a 3 x 5 x 7 shape: r transposed, a every third element, b broadcast
// along dim 1; small grids exercise the grid-stride loop.
static void geometry() {
  const long long S[3] = {3, 5, 7};
  const long long ro[3] = {1, 3, 15}, ao[3] = {105, 21, 3}, bo[3] = {7, 0, 1};
  std::vector<double> r(105, -1), a(315), b(21);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (double)i;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 1000.0 * (double)i;
  for (unsigned grid : {0u, 1u, 3u})
    for (const char *k : {"th_cadd_double_i32", "th_cadd_double_i64"}) {
      THCPointwise p = params_1d(105);
      p.ndim = 3;
      for (int d = 0; d < 3; ++d)
        p.sizes[d] = S[d], p.arg[0].strides[d] = ro[d], p.arg[1].strides[d] = ao[d], p.arg[2].strides[d] = bo[d];
      p.arg[0].data = (unsigned long long)r.data(), p.arg[1].data = (unsigned long long)a.data();
      p.arg[2].data = (unsigned long long)b.data();
      p.i[0] = (long long)bits(0.5);
      std::fill(r.begin(), r.end(), -1.0);
      launch(k, p, grid, grid ? 32 : 512);
      for (long long i = 0; i < 3; ++i)
        for (long long j = 0; j < 5; ++j)
          for (long long l = 0; l < 7; ++l) {
            const double want = a[i * 105 + j * 21 + l * 3] + 0.5 * b[i * 7 + l];
            CHECK(r[i + 3 * j + 15 * l] == want, "%s grid %u at (%lld, %lld, %lld)", k, grid, i, j, l);
          }
    }
}

static void bad_launches() {
  THCPointwise p = params_1d(0);
  std::string err;
  CHECK(launch("th_nonesuch_i32", p, 1, 1, &err) != 0 && err.find("no kernel") != std::string::npos, "%s", err.c_str());
  CHECK(launch("th_fill_float_i32", p, 1, 1025, &err) != 0 && err.find("1024") != std::string::npos, "%s", err.c_str());
  unsigned g[3] = {1, 0, 1}, b[3] = {1, 1, 1};
  void *args[1] = {&p};
  char msg[128];
  CHECK(th_emu_launch("th_fill_float_i32", g, b, 0, args, msg, sizeof msg) != 0, "zero grid dimension accepted");
}

// Two host threads launching at once: each has its own threadIdx & co.
static void concurrent() {
  std::vector<int> x(300001), y(300001);
  auto fill = [](std::vector<int> *v, int value) {
    THCPointwise p = params_1d((long long)v->size());
    p.arg[0].data = (unsigned long long)v->data();
    p.i[0] = value;
    launch("th_fill_int_i32", p, 7, 256);
  };
  std::thread t1(fill, &x, 11), t2(fill, &y, -5);
  t1.join(), t2.join();
  for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == 11 && y[i] == -5, "concurrent fill at %zu", i);
}

// A cooperative kernel: each block sums its 64 elements by a shared-memory tree; threads past
// the block's live count return before the barriers; every live thread also counts itself
// with atomics.
static void block_sum_body(const THCPointwise &p) {
  TH_SHARED(long long, partial, 64);
  const long long *in = (const long long *)p.arg[1].data;
  long long *out = (long long *)p.arg[0].data;
  const unsigned t = threadIdx.x, live = (unsigned)p.i[0];
  if (t >= live) return;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  TH_DYNAMIC_SHARED(unsigned char, scratch);
  scratch[t] = 1;
  atomicAdd((unsigned long long *)p.arg[2].data, 1ull);
  atomicAdd((double *)p.arg[3].data, 0.5);
  __syncthreads();
  for (unsigned s = 32; s > 0; s >>= 1) {
    if (t < s && t + s < live) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0] + scratch[live - 1];
}
TH_KERNEL(test_block_sum, TH_EMU_COOPERATIVE, THCPointwise, block_sum_body)

static void cooperative() {
  std::vector<long long> in(3 * 64), out(3);
  for (size_t i = 0; i < in.size(); ++i) in[i] = (long long)(i * i);
  for (unsigned live : {64u, 40u}) {
    THCPointwise p = params_1d(0);
    p.arg[0].data = (unsigned long long)out.data(), p.arg[1].data = (unsigned long long)in.data();
    p.i[0] = live;
    unsigned long long count = 0;
    double halves = 0;
    p.arg[2].data = (unsigned long long)&count, p.arg[3].data = (unsigned long long)&halves;
    unsigned g[3] = {3, 1, 1}, b[3] = {64, 1, 1};
    void *args[1] = {&p};
    char err[128] = "";
    CHECK(th_emu_launch("test_block_sum", g, b, 64, args, err, sizeof err) == 0, "%s", err);
    for (int k = 0; k < 3; ++k) {
      long long want = 1;
      for (unsigned t = 0; t < live; ++t) want += in[k * 64 + t];
      CHECK(out[k] == want, "block %d (%u live): %lld, want %lld", k, live, out[k], want);
    }
    CHECK(count == 3 * live && halves == 1.5 * live, "atomics: %llu, %g", count, halves);
  }
}

// A THCReduce over m x k, operands at strides (ks, rs), lanes and chunks as cuda::reduce plans.
static THCReduce reduce_params(long long m, long long k, long long ks, long long rs) {
  THCReduce p;
  std::memset(&p, 0, sizeof p);
  p.m = m, p.k = k, p.kdim = 1, p.rdim = 1, p.ksizes[0] = m, p.rsizes[0] = k, p.op = 5, p.p = 3.5;
  long long lanes = 1;
  while (lanes < TH_RBLOCK && lanes * TH_RPER < k) lanes *= 2;
  p.lanes = (int)lanes;
  p.nchunks = (k + lanes * TH_RPER - 1) / (lanes * TH_RPER);
  for (int q = 0; q < 2; ++q) p.kstrides[q][0] = ks, p.rstrides[q][0] = rs;
  return p;
}

static int reduce_launch(const char *kernel, THCReduce &p, unsigned grid) {
  unsigned g[3] = {grid, 1, 1}, b[3] = {TH_RBLOCK, 1, 1};
  void *args[1] = {&p};
  char err[256] = "";
  const int rc = th_emu_launch(kernel, g, b, 0, args, err, sizeof err);
  CHECK(rc == 0, "%s: %s", kernel, err);
  return rc;
}

// Every reduction kernel on random bytes: 3 outputs of 37 (4 lanes, one chunk each),
// transposed operands; the combines over 3 x 37 random accumulators.
static void every_reduction() {
  std::vector<const char *> all(th_emu_kernel_names(nullptr, 0));
  th_emu_kernel_names(all.data(), all.size());
  std::vector<uint64_t> in[2], out(3 * 37 * 3);
  for (auto &b : in) b.resize(3 * 37 * 3);
  for (const char *k : all) {
    const bool combine = std::strncmp(k, "th_combine_", 11) == 0;
    if (!combine && std::strncmp(k, "th_reduce_", 10) != 0) continue;
#ifdef TH_EMU_SAMPLE_DTYPES
    // Under TSan (~1 s a kernel): the float and long instances of
    // every template. A race lives in a template's synchronization, which every dtype shares.
    if (!std::strstr(k, "_float") && !std::strstr(k, "_long")) continue;
#endif
    for (auto &b : in)
      for (auto &x : b) x = rnd();
    THCReduce p = reduce_params(3, 37, 1, 3);
    p.data[0] = (unsigned long long)in[0].data(), p.data[1] = (unsigned long long)in[1].data();
    p.out = (unsigned long long)out.data();
    reduce_launch(k, p, 2);
  }
}

// Sums, counts and first-index max of long against loops: transposed 5 x 7 and 2 x 9000 (three
// chunks per output, then a combine pass), with grids of 1 and 8 blocks giving the same bits.
static void reductions_checked() {
  for (const auto &shape : {std::pair<long long, long long>{5, 7}, {2, 9000}}) {
    const long long m = shape.first, k = shape.second;
    std::vector<long long> x(m * k);
    uint64_t state = 0x9e3779b97f4a7c15ull;  // local: two threads run this at once
    for (auto &v : x) state = state * 6364136223846793005ull + 1442695040888963407ull, v = (long long)((state >> 33) % 1000) - 500;
    x[(k / 2) * m] = 100000, x[(k - 1) * m] = 100000;  // output 0's max, twice: the first one wins
    THCReduce p = reduce_params(m, k, 1, m);  // element (o, r) at o + r * m
    p.data[0] = (unsigned long long)x.data();
    std::vector<long long> sums(m * p.nchunks, -1), counts(m * p.nchunks, -1), sums8(m * p.nchunks, -2);
    std::vector<th_best<long long>> best(m * p.nchunks);
    p.out = (unsigned long long)sums.data();
    reduce_launch("th_reduce_sum_long_i32", p, 1);
    p.out = (unsigned long long)sums8.data();
    reduce_launch("th_reduce_sum_long_i64", p, 8);
    CHECK(sums == sums8, "sums differ between grids / index widths");
    p.out = (unsigned long long)counts.data();
    reduce_launch("th_reduce_count_long_i32", p, 3);
    p.out = (unsigned long long)best.data();
    reduce_launch("th_reduce_max_long_i32", p, 1);
    if (p.nchunks > 1) {  // one combine pass over each output's partials
      THCReduce c = reduce_params(m, p.nchunks, 0, 0);
      CHECK(c.nchunks == 1, "combine chunks %lld", c.nchunks);
      std::vector<long long> s1(m), c1(m);
      std::vector<th_best<long long>> b1(m);
      const std::pair<const char *, std::pair<void *, void *>> passes[] = {
          {"th_combine_sum_long", {sums.data(), s1.data()}},
          {"th_combine_count_long", {counts.data(), c1.data()}},
          {"th_combine_max_long", {best.data(), b1.data()}}};
      for (const auto &pass : passes) {
        c.data[0] = (unsigned long long)pass.second.first, c.out = (unsigned long long)pass.second.second;
        reduce_launch(pass.first, c, 1);
      }
      sums = s1, counts = c1, best = b1;
    }
    for (long long o = 0; o < m; ++o) {
      long long s = 0, n = 0, bi = 0;
      for (long long r = 0; r < k; ++r) {
        const long long v = x[o + r * m];
        s += v, n += v != 0;
        if (v > x[o + bi * m]) bi = r;
      }
      CHECK(sums[o] == s, "sum %lld x %lld output %lld: %lld, want %lld", m, k, o, sums[o], s);
      CHECK(counts[o] == n, "count output %lld: %lld, want %lld", o, counts[o], n);
      CHECK(best[o].i == bi && best[o].v == x[o + bi * m], "max output %lld at %lld, want %lld", o, best[o].i, bi);
    }
  }
}

// The column layout (threads across outputs) finishing into outputs: sums and max with positions
// of long over 300 x 7 (element (o, r) at o + r * 300, one chunk per output: the fold finishes)
// and 3 x 9000 (five chunks per output, then a combine pass that finishes), against loops.
static void column_reductions_finish() {
  for (const auto &shape : {std::pair<long long, long long>{300, 7}, {3, 9000}}) {
    const long long m = shape.first, k = shape.second, nch = k > 1000 ? 5 : 1;
    std::vector<long long> x(m * k), sums(m, -1), pos(m, -1), maxes(m, -1);
    uint64_t state = 0x2545f4914f6cdd1dull;
    for (auto &v : x) state = state * 6364136223846793005ull + 1442695040888963407ull, v = (long long)((state >> 33) % 1000) - 500;
    for (int max = 0; max < 2; ++max) {
      THCReduce p = reduce_params(m, k, 1, m);
      p.column = 1, p.lanes = 1, p.nchunks = nch, p.fin = max ? TH_FIN_BEST : TH_FIN_CAST;
      p.data[0] = (unsigned long long)x.data();
      p.outs[0] = (unsigned long long)(max ? maxes.data() : sums.data()), p.outs[1] = (unsigned long long)pos.data();
      std::vector<th_best<long long>> partials(m * nch);
      p.out = (unsigned long long)partials.data();  // room for either fold's partials
      reduce_launch(max ? "th_reduce_max_long_i32" : "th_reduce_sum_long_i32", p, 2);
      if (nch > 1) {
        THCReduce c = reduce_params(m, nch, 0, 0);
        c.fin = p.fin, c.outs[0] = p.outs[0], c.outs[1] = p.outs[1], c.data[0] = p.out;
        reduce_launch(max ? "th_combine_max_long" : "th_combine_sum_long", c, 1);
      }
    }
    for (long long o = 0; o < m; ++o) {
      long long s = 0, bi = 0;
      for (long long r = 0; r < k; ++r) {
        s += x[o + r * m];
        if (x[o + r * m] > x[o + bi * m]) bi = r;
      }
      CHECK(sums[o] == s, "column sum %lld x %lld output %lld: %lld, want %lld", m, k, o, sums[o], s);
      CHECK(pos[o] == bi && maxes[o] == x[o + bi * m], "column max output %lld at %lld, want %lld", o, pos[o], bi);
    }
  }
}

// The integer GEMM (blas.cuh) on strided batches (A transposed, B with a padded row stride,
// C column-major) against a naive loop in the type's wrapping arithmetic.
template <class T> static void gemm_kernel(const char *name) {
  const long long m = 3, n = 4, k = 5, nb = 2;
  std::vector<T> a(nb * m * k), b(nb * k * (n + 2)), c(nb * m * n), want(c.size());
  for (auto *v : {&a, &b, &c})
    for (auto &x : *v) x = (T)rnd();
  THCGemm p{};
  p.a = (unsigned long long)a.data(), p.b = (unsigned long long)b.data(), p.c = (unsigned long long)c.data();
  p.m = m, p.n = n, p.k = k, p.batch = nb, p.alpha = 7, p.beta = -3;
  const long long sa[3] = {1, m, m * k}, sb[3] = {n + 2, 1, k * (n + 2)}, sc[3] = {1, m, m * n};
  for (int d = 0; d < 3; ++d) p.sa[d] = sa[d], p.sb[d] = sb[d], p.sc[d] = sc[d];
  for (long long z = 0; z < nb; ++z)
    for (long long i = 0; i < m; ++i)
      for (long long j = 0; j < n; ++j) {
        unsigned long long s = 0;
        for (long long l = 0; l < k; ++l)
          s += (unsigned long long)(long long)a[z * sa[2] + i * sa[0] + l * sa[1]] *
               (unsigned long long)(long long)b[z * sb[2] + l * sb[0] + j * sb[1]];
        const long long ci = z * sc[2] + i * sc[0] + j * sc[1];
        want[ci] = (T)(7ull * s + (unsigned long long)-3ll * (unsigned long long)(long long)c[ci]);
      }
  const unsigned grid[3] = {1, 1, 1}, block[3] = {16, 1, 1};  // grid-stride: 24 outputs, 16 threads
  void *args[] = {&p};
  char err[256];
  CHECK(th_emu_launch(name, grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name, err);
  CHECK(std::memcmp(c.data(), want.data(), c.size() * sizeof(T)) == 0, "%s: wrong products", name);
}

// Every random kernel (THCRandom) under the sanitizers: random bytes in the outputs and the
// probability/means inputs, valid alias tables (K = 1) and multinomial shapes, both layouts.
static void every_random_kernel() {
  std::vector<const char *> all(th_emu_kernel_names(nullptr, 0));
  th_emu_kernel_names(all.data(), all.size());
  std::vector<uint64_t> buf[4];
  for (auto &b : buf) b.resize(80);
  for (const char *k : all) {
    if (std::strncmp(k, "th_rand_", 8) != 0) continue;
    const bool multi = std::strstr(k, "multinomial") != nullptr, alias = std::strstr(k, "alias") != nullptr;
    for (int layout = 0; layout < 2; ++layout) {
      for (auto &b : buf)
        for (auto &x : b) x = rnd();
      THCRandom r;
      std::memset(&r, 0, sizeof r);
      r.g = params_1d(37);
      r.g.arg[1].strides[0] = 1;  // the row-major index operand
      if (layout) {
        r.g.n = 35, r.g.ndim = 2, r.g.sizes[0] = 5, r.g.sizes[1] = 7;
        const long long st[4][2] = {{1, 5}, {7, 1}, {0, 1}, {14, 2}};
        for (int a = 0; a < 4; ++a) r.g.arg[a].strides[0] = st[a][0], r.g.arg[a].strides[1] = st[a][1];
      }
      for (int a = 0; a < 4; ++a) r.g.arg[a].data = a == 1 ? 0 : (unsigned long long)buf[a].data();
      r.seed = rnd(), r.offset = rnd(), r.a = 0.5, r.b = 2.0, r.c = 1.5, r.lo = -3, r.range = 7;
      r.dist = (int)(rnd() % 5), r.words = std::strstr(k, "double") ? 2 : 1;
      if (alias) {
        r.lo = 1;
        std::memset(buf[2].data(), 0, 80 * 8);
      }
      if (multi) {  // 2 rows x 3 samples from 4 categories; scratch of 8 doubles
        std::memset(&r.g, 0, sizeof r.g);
        r.g.sizes[0] = 2, r.g.sizes[1] = 3, r.g.sizes[2] = 4;
        r.g.arg[0].data = (unsigned long long)buf[0].data(), r.g.arg[0].strides[0] = 3, r.g.arg[0].strides[1] = 1;
        r.g.arg[2].data = (unsigned long long)buf[2].data(), r.g.arg[2].strides[0] = 4, r.g.arg[2].strides[1] = 1;
        r.g.arg[3].data = (unsigned long long)buf[3].data();
        r.dist = layout;
      }
      unsigned g[3] = {layout ? 2u : 1u, 1, 1}, b[3] = {layout ? 16u : 512u, 1, 1};
      void *args[1] = {&r};
      char err[256] = "";
      CHECK(th_emu_launch(k, g, b, 0, args, err, sizeof err) == 0, "%s: %s", k, err);
    }
  }
}

// The convolution kernels (conv.cuh) on a transposed, padded input: the unfolded columns in
// each mode against the definition (valid: input (o*step + e*dil); full: input ((o - e)/step)
// where exact; e the tap, reversed when flipping), and the connection-table map against a loop.
template <class T> static void conv_kernels(const char *sfx) {
  const long long B = 2, C = 3, H = 5, W = 6, KH = 2, KW = 3;
  std::vector<T> in(B * C * W * (H + 1));  // [b][c][x][y] with a padded y: a transposed view
  for (auto &v : in) v = (T)(int)(rnd() % 19 - 9);
  const long long is[4] = {C * W * (H + 1), W * (H + 1), 1, H + 1};
  struct Mode { int full, flip; long long step[2], dil[2]; };
  const Mode modes[] = {{0, 0, {1, 1}, {1, 1}}, {0, 1, {2, 1}, {1, 1}}, {1, 0, {1, 2}, {1, 1}},
                        {1, 1, {2, 3}, {1, 1}}, {0, 0, {1, 1}, {2, 1}}};
  for (const Mode &m : modes) {
    long long o[2];
    const long long k[2] = {KH, KW}, i[2] = {H, W};
    for (int d = 0; d < 2; ++d)
      o[d] = m.full ? (i[d] - 1) * m.step[d] + k[d] : (i[d] - (k[d] - 1) * m.dil[d] - 1) / m.step[d] + 1;
    const long long taps = KH * KW, pos = o[0] * o[1], n = B * C * taps * pos;
    std::vector<T> cols(n + 1, (T)77), want(n + 1, (T)77);  // one guard element
    for (long long b = 0; b < B; ++b)
      for (long long c = 0; c < C; ++c)
        for (long long ky = 0; ky < KH; ++ky)
          for (long long kx = 0; kx < KW; ++kx)
            for (long long oy = 0; oy < o[0]; ++oy)
              for (long long ox = 0; ox < o[1]; ++ox) {
                const long long ey = m.flip ? KH - 1 - ky : ky, ex = m.flip ? KW - 1 - kx : kx;
                long long y = oy * m.step[0] + ey * m.dil[0], x = ox * m.step[1] + ex * m.dil[1];
                bool ok = true;
                if (m.full) {
                  ok = (oy - ey) % m.step[0] == 0 && (ox - ex) % m.step[1] == 0 && oy >= ey && ox >= ex;
                  y = (oy - ey) / m.step[0], x = (ox - ex) / m.step[1];
                }
                ok = ok && y < H && x < W;
                want[(((b * C + c) * taps + ky * KW + kx) * pos) + oy * o[1] + ox] =
                    ok ? in[b * is[0] + c * is[1] + y * is[2] + x * is[3]] : (T)0;
              }
    THCConv p;
    std::memset(&p, 0, sizeof p);
    p.n = n, p.out = (unsigned long long)cols.data(), p.in = (unsigned long long)in.data();
    p.g[0] = B, p.g[1] = C, p.k[0] = KH, p.k[1] = KW, p.o[0] = o[0], p.o[1] = o[1], p.i[0] = H, p.i[1] = W;
    for (int d = 0; d < 4; ++d) p.is[d] = is[d];
    p.os[0] = C * taps * pos, p.os[1] = taps * pos, p.full = m.full, p.flip = m.flip;
    for (int d = 0; d < 2; ++d) p.step[d] = m.step[d], p.dil[d] = m.dil[d];
    for (const char *w : {"i32", "i64"}) {
      std::fill(cols.begin(), cols.end(), (T)77);
      const std::string name = std::string("th_convUnfold_") + sfx + "_" + w;
      const unsigned grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};  // grid-stride
      void *args[] = {&p};
      char err[256];
      CHECK(th_emu_launch(name.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
      CHECK(std::memcmp(cols.data(), want.data(), cols.size() * sizeof(T)) == 0, "%s: wrong columns (full %d flip %d)",
            name.c_str(), m.full, m.flip);
    }
  }
  // map: 2 output planes, fanin 2, stride (2, 1), kernel 4 x 2 x 3
  const long long NO = 2, FAN = 2, NK = 4, sy = 2, sx = 1, OH = (H - KH) / sy + 1, OW = (W - KW) / sx + 1;
  std::vector<T> ker(NK * KH * KW), table(NO * FAN * 2), out(OW * OH * NO), want(out.size());
  for (auto &v : ker) v = (T)(int)(rnd() % 7 - 3);
  for (long long r = 0; r < NO * FAN; ++r) table[2 * r] = (T)(1 + rnd() % C), table[2 * r + 1] = (T)(1 + rnd() % NK);
  for (auto &v : out) v = (T)(int)(rnd() % 5);
  want = out;
  const long long os[3] = {1, NO, NO * OH};  // [x][y][plane]: a permuted output
  for (long long oo = 0; oo < NO; ++oo)
    for (long long y = 0; y < OH; ++y)
      for (long long x = 0; x < OW; ++x) {
        double acc = 0;
        for (long long f = 0; f < FAN; ++f) {
          const long long pl = (long long)table[2 * (oo * FAN + f)] - 1, kp = (long long)table[2 * (oo * FAN + f) + 1] - 1;
          for (long long a = 0; a < KH; ++a)
            for (long long c = 0; c < KW; ++c)
              acc += (double)in[pl * is[1] + (y * sy + a) * is[2] + (x * sx + c) * is[3]] * (double)ker[(kp * KH + a) * KW + c];
        }
        T &dst = want[oo * os[0] + y * os[1] + x * os[2]];
        dst = (T)((double)dst + acc);
      }
  THCConv p;
  std::memset(&p, 0, sizeof p);
  p.n = NO * OH * OW, p.out = (unsigned long long)out.data(), p.in = (unsigned long long)in.data();
  p.ker = (unsigned long long)ker.data(), p.table = (unsigned long long)table.data();
  p.g[0] = NO, p.g[1] = FAN, p.k[0] = KH, p.k[1] = KW, p.o[0] = OH, p.o[1] = OW, p.i[0] = H, p.i[1] = W;
  p.lim[0] = C, p.lim[1] = NK;
  for (int d = 0; d < 4; ++d) p.is[d] = is[d];
  for (int d = 0; d < 3; ++d) p.os[d] = os[d];
  p.ks[0] = KH * KW, p.ks[1] = KW, p.ks[2] = 1, p.ts[0] = 2, p.ts[1] = 1, p.step[0] = sy, p.step[1] = sx;
  const std::string name = std::string("th_convMap_") + sfx + "_i32";
  const unsigned grid[3] = {1, 1, 1}, block[3] = {5, 1, 1};
  void *args[] = {&p};
  char err[256];
  CHECK(th_emu_launch(name.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
  CHECK(std::memcmp(out.data(), want.data(), out.size() * sizeof(T)) == 0, "%s: wrong outputs", name.c_str());
}

// THCUNN's im2col and col2im (nn_conv.cuh) on a 3-D image stored permuted ([c][b][t][h][w]),
// with padding, stride and dilation, against loops: the columns exactly, then the image folded
// back from random columns (the owner sums, plus a bias) exactly (small integers).
template <class T> static void nn_conv_kernels(const char *sfx) {
  const long long B = 2, C = 2, I[3] = {3, 4, 5}, K[3] = {2, 2, 3}, S[3] = {1, 2, 1}, P[3] = {1, 0, 2}, D[3] = {1, 2, 1};
  long long O[3];
  for (int d = 0; d < 3; ++d) O[d] = (I[d] + 2 * P[d] - D[d] * (K[d] - 1) - 1) / S[d] + 1;
  const long long plane = I[0] * I[1] * I[2], taps = K[0] * K[1] * K[2], cols = O[0] * O[1] * O[2];
  const long long rows = C * taps, is[5] = {plane, B * plane, I[1] * I[2], I[2], 1};
  std::vector<T> img(B * C * plane), col(B * rows * cols), want(col.size()), bias = {(T)3, (T)-2};
  for (auto &v : img) v = (T)(int)(rnd() % 9 - 4);
  // image offset read by column element (b, r, j), or -1 in the padding
  auto at = [&](long long b, long long r, long long j) -> long long {
    const long long c = r / taps, kt = r / (K[1] * K[2]) % K[0], kh = r / K[2] % K[1], kw = r % K[2];
    const long long ot = j / (O[1] * O[2]), oh = j / O[2] % O[1], ow = j % O[2];
    const long long t = ot * S[0] - P[0] + kt * D[0], h = oh * S[1] - P[1] + kh * D[1], w = ow * S[2] - P[2] + kw * D[2];
    if (t < 0 || h < 0 || w < 0 || t >= I[0] || h >= I[1] || w >= I[2]) return -1;
    return b * is[0] + c * is[1] + t * is[2] + h * is[3] + w * is[4];
  };
  for (long long b = 0; b < B; ++b)
    for (long long r = 0; r < rows; ++r)
      for (long long j = 0; j < cols; ++j) {
        const long long o = at(b, r, j);
        want[(b * rows + r) * cols + j] = o < 0 ? (T)0 : img[o];
      }
  THNNConv p;
  std::memset(&p, 0, sizeof p);
  p.n = B * rows * cols, p.img = (unsigned long long)img.data(), p.col = (unsigned long long)col.data();
  p.nb = B, p.c = C, p.cs[0] = rows * cols, p.cs[1] = cols;
  for (int d = 0; d < 3; ++d) p.i[d] = I[d], p.o[d] = O[d], p.k[d] = K[d], p.s[d] = S[d], p.p[d] = P[d], p.d[d] = D[d];
  for (int d = 0; d < 5; ++d) p.is[d] = is[d];
  const unsigned grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};  // grid-stride
  void *args[] = {&p};
  char err[256];
  for (const char *w : {"i32", "i64"}) {
    std::fill(col.begin(), col.end(), (T)77);
    const std::string name = std::string("th_nnIm2col_") + sfx + "_" + w;
    CHECK(th_emu_launch(name.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
    CHECK(std::memcmp(col.data(), want.data(), col.size() * sizeof(T)) == 0, "%s: wrong columns", name.c_str());
  }
  for (auto &v : col) v = (T)(int)(rnd() % 9 - 4);
  std::vector<T> fold(img.size(), (T)0);
  for (long long b = 0; b < B; ++b)
    for (long long r = 0; r < rows; ++r)
      for (long long j = 0; j < cols; ++j) {
        const long long o = at(b, r, j);
        if (o >= 0) fold[o] += col[(b * rows + r) * cols + j];
      }
  for (long long b = 0; b < B; ++b)
    for (long long c = 0; c < C; ++c)
      for (long long e = 0; e < plane; ++e) fold[b * is[0] + c * is[1] + e] += bias[c];
  p.n = B * C * plane, p.bias = (unsigned long long)bias.data(), p.bs = 1;
  for (const char *w : {"i32", "i64"}) {
    std::fill(img.begin(), img.end(), (T)77);
    const std::string name = std::string("th_nnCol2im_") + sfx + "_" + w;
    CHECK(th_emu_launch(name.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
    CHECK(std::memcmp(img.data(), fold.data(), img.size() * sizeof(T)) == 0, "%s: wrong image", name.c_str());
  }
}

// THCUNN's max pooling, average pooling and its backward (nn_pool.cuh) on 2-D planes stored
// permuted ([c][b][h][w]), padded overlapping windows from host-style tables, against loops:
// values and indices exactly (small integers, ties: the first wins), the averages and the
// owner-per-input gradient exactly (the loops divide and add in the kernels' order).
template <class T> static void pool_kernels(const char *sfx) {
  const long long B = 2, C = 3, I[2] = {5, 6}, K[2] = {2, 3}, S[2] = {2, 2}, P[2] = {1, 1};
  long long O[2];
  for (int d = 0; d < 2; ++d) O[d] = (I[d] + 2 * P[d] - K[d]) / S[d] + 1;
  const long long plane = I[0] * I[1], ss[5] = {plane, B * plane, 0, I[1], 1};
  std::vector<long long> tab = {0, 1, 1};  // t: start 0, count 1, divisor 1
  long long ts[3] = {0, 0, 0}, tc[3] = {1, 0, 0}, td[3] = {2, 0, 0}, tlo[3], thi[3];
  std::vector<long long> st[2], ct[2];
  for (int d = 0; d < 2; ++d) {
    for (long long o = 0; o < O[d]; ++o) {
      const long long a = std::max(o * S[d] - P[d], 0LL), e = std::min(o * S[d] - P[d] + K[d], I[d]);
      st[d].push_back(a), ct[d].push_back(e - a);
    }
    ts[d + 1] = (long long)tab.size(), tab.insert(tab.end(), st[d].begin(), st[d].end());
    tc[d + 1] = (long long)tab.size(), tab.insert(tab.end(), ct[d].begin(), ct[d].end());
    td[d + 1] = tc[d + 1];  // divide by the counts
  }
  tlo[0] = (long long)tab.size(), tab.push_back(0), thi[0] = (long long)tab.size(), tab.push_back(1);
  for (int d = 0; d < 2; ++d) {
    tlo[d + 1] = (long long)tab.size();
    for (long long x = 0; x < I[d]; ++x) {
      long long lo = 0;
      while (lo < O[d] && st[d][lo] + ct[d][lo] <= x) ++lo;
      tab.push_back(lo);
    }
    thi[d + 1] = (long long)tab.size();
    for (long long x = 0; x < I[d]; ++x) {
      long long hi = 0;
      while (hi < O[d] && st[d][hi] <= x) ++hi;
      tab.push_back(hi);
    }
  }
  std::vector<T> x(B * C * plane), y(B * C * O[0] * O[1]), want(y.size()), avg(y.size());
  std::vector<long long> ind(y.size()), wind(y.size());
  for (auto &v : x) v = (T)(int)(rnd() % 5 - 2);
  for (long long b = 0; b < B; ++b)
    for (long long c = 0; c < C; ++c)
      for (long long i = 0; i < O[0]; ++i)
        for (long long j = 0; j < O[1]; ++j) {
          const T *xp = x.data() + b * ss[0] + c * ss[1];
          const long long q = ((b * C + c) * O[0] + i) * O[1] + j;
          long long at = st[0][i] * I[1] + st[1][j];
          T best = xp[at];
          using R = typename th_traits<T>::R;
          R sum = 0;
          for (long long h = st[0][i]; h < st[0][i] + ct[0][i]; ++h)
            for (long long w = st[1][j]; w < st[1][j] + ct[1][j]; ++w) {
              if (xp[h * I[1] + w] > best) best = xp[h * I[1] + w], at = h * I[1] + w;
              sum += xp[h * I[1] + w];
            }
          want[q] = best, wind[q] = at, avg[q] = (T)(sum / (R)(ct[0][i] * ct[1][j]));
        }
  THNNPool p;
  std::memset(&p, 0, sizeof p);
  p.n = (long long)y.size(), p.src = (unsigned long long)x.data(), p.dst = (unsigned long long)y.data();
  p.ind = (unsigned long long)ind.data(), p.tab = (unsigned long long)tab.data(), p.c = C;
  p.i[0] = 1, p.o[0] = 1, p.step[0] = p.step[1] = p.step[2] = 1;
  for (int d = 0; d < 2; ++d) p.i[d + 1] = I[d], p.o[d + 1] = O[d];
  for (int d = 0; d < 5; ++d) p.ss[d] = ss[d];
  p.ds[0] = C * O[0] * O[1], p.ds[1] = O[0] * O[1], p.ds[3] = O[1], p.ds[4] = 1;
  for (int d = 0; d < 3; ++d) p.ts[d] = ts[d], p.tc[d] = tc[d], p.td[d] = td[d], p.tlo[d] = tlo[d], p.thi[d] = thi[d];
  const unsigned grid[3] = {2, 1, 1}, block[3] = {8, 1, 1};  // grid-stride
  void *args[] = {&p};
  char err[256];
  for (const char *w : {"i32", "i64"}) {
    std::fill(y.begin(), y.end(), (T)77);
    std::string name = std::string("th_poolMax_") + sfx + "_" + w;
    CHECK(th_emu_launch(name.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
    CHECK(y == want && ind == wind, "%s: wrong max or indices", name.c_str());
    name = std::string("th_poolAvg_") + sfx + "_" + w;
    CHECK(th_emu_launch(name.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
    CHECK(std::memcmp(y.data(), avg.data(), y.size() * sizeof(T)) == 0, "%s: wrong averages", name.c_str());
  }
  // backward: gradOutput (y's layout) -> gradInput (x's layout); the loop adds in output order
  std::vector<T> go(y.size()), gin(x.size()), gwant(x.size(), (T)0);
  for (auto &v : go) v = (T)(int)(rnd() % 9 - 4);
  for (long long b = 0; b < B; ++b)
    for (long long c = 0; c < C; ++c)
      for (long long i = 0; i < O[0]; ++i)
        for (long long j = 0; j < O[1]; ++j) {
          const long long q = ((b * C + c) * O[0] + i) * O[1] + j;
          using R = typename th_traits<T>::R;
          for (long long h = st[0][i]; h < st[0][i] + ct[0][i]; ++h)
            for (long long w = st[1][j]; w < st[1][j] + ct[1][j]; ++w) {
              T &g = gwant[b * ss[0] + c * ss[1] + h * I[1] + w];
              g = (T)((R)g + (R)go[q] / (R)(ct[0][i] * ct[1][j]));
            }
        }
  THNNPool r = p;
  r.n = (long long)x.size(), r.src = (unsigned long long)go.data(), r.dst = (unsigned long long)gin.data();
  // the plane sizes keep their meaning (i: gradInput's, o: gradOutput's); the strides swap roles
  for (int d = 0; d < 5; ++d) std::swap(r.ss[d], r.ds[d]);
  void *rargs[] = {&r};
  for (const char *w : {"i32", "i64"}) {
    std::fill(gin.begin(), gin.end(), (T)77);
    const std::string name = std::string("th_poolAvgBack_") + sfx + "_" + w;
    CHECK(th_emu_launch(name.c_str(), grid, block, 0, rargs, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
    CHECK(std::memcmp(gin.data(), gwant.data(), gin.size() * sizeof(T)) == 0, "%s: wrong gradInput", name.c_str());
  }
}

// th_sleep: one thread spinning `cycles` of the shim's clock64 (nanoseconds); 0 returns at once.
static void sleep_kernel() {
  for (long long cycles : {0LL, 1LL, 2000000LL}) {
    THCSleep p{cycles};
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    void *args[] = {&p};
    char err[256];
    const long long t0 = clock64();
    CHECK(th_emu_launch("th_sleep", grid, block, 0, args, err, sizeof err) == 0, "th_sleep: %s", err);
    CHECK(clock64() - t0 >= cycles, "th_sleep(%lld) returned early", cycles);
  }
}

// The padding/upsampling table map (nn_sample.cuh) against its loop in double: 2 planes of 1 x 3 x
// 4 mapped to 1 x 5 x 2 by two-tap rows (height) and a reflected one-tap row (width), both forms; the output ends in a guard element that must stay intact.
template <class T> static void sample_kernels(const char *sfx) {
  const int ih = 3, iw = 4, oh = 5, ow = 2, P = 2;
  const double tol = sizeof(T) == 4 ? 1e-6 : 1e-14;
  std::vector<T> x(P * ih * iw), y(P * oh * ow + 1);
  for (auto &v : x) v = (T)((double)(int)(rnd() % 4001 - 2000) / 1000.0);
  // the tables in one int buffer (depth, height, width: row pointers then positions) and one
  // weight buffer
  const int rh[oh + 1] = {0, 2, 4, 6, 8, 10}, ch[10] = {0, 1, 0, 1, 1, 2, 1, 2, 2, 2}, cw[2] = {3, 1};
  const double whv[10] = {1, 0, 0.5, 0.5, 1, 0, 0.5, 0.5, 1, 0}, ww[2] = {1, 2};
  std::vector<int> ints = {0, 1, 0};  // depth: rows {0, 1}, position {0}
  std::vector<T> wts = {(T)1};
  const int rp1 = (int)ints.size();
  ints.insert(ints.end(), rh, rh + oh + 1);
  const int col1 = (int)ints.size();
  ints.insert(ints.end(), ch, ch + 10);
  const int rp2 = (int)ints.size();
  ints.insert(ints.end(), {0, 1, 2});
  const int col2 = (int)ints.size();
  ints.insert(ints.end(), cw, cw + 2);
  for (double v : whv) wts.push_back((T)v);
  for (double v : ww) wts.push_back((T)v);
  for (const char *w : {"i32", "i64"})
    for (const char *op : {"th_nnSample_", "th_nnSampleBack_"}) {
      y[P * oh * ow] = (T)1234;
      THCSample p{};
      p.n = P * oh * ow, p.o[0] = 1, p.o[1] = oh, p.o[2] = ow, p.i[0] = 1, p.i[1] = ih, p.i[2] = iw;
      p.x = (unsigned long long)x.data(), p.y = (unsigned long long)y.data();
      p.ints = (unsigned long long)ints.data(), p.wts = (unsigned long long)wts.data();
      p.rp[0] = 0, p.col[0] = 2, p.w[0] = 0, p.rp[1] = rp1, p.col[1] = col1, p.w[1] = 1, p.rp[2] = rp2,
      p.col[2] = col2, p.w[2] = 11;
      const unsigned grid[3] = {2, 1, 1}, block[3] = {4, 1, 1};  // grid-stride over 20 elements
      char err[256];
      std::string k = std::string(op) + sfx + "_" + w;
      void *args[] = {&p};
      CHECK(th_emu_launch(k.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", k.c_str(), err);
      for (int q = 0; q < P; ++q)
        for (int o = 0; o < oh; ++o)
          for (int j = 0; j < ow; ++j) {
            double want = 0;
            for (int a = rh[o]; a < rh[o + 1]; ++a)
              want += whv[a] * ww[j] * (double)x[(q * ih + ch[a]) * iw + cw[j]];
            const double got = (double)y[(q * oh + o) * ow + j];
            CHECK(std::fabs(got - want) <= tol * (1.0 + std::fabs(want)), "%s: y[%d,%d,%d] = %g, want %g", k.c_str(), q,
                  o, j, got, want);
          }
      CHECK((double)y[P * oh * ow] == 1234, "%s wrote past its output", k.c_str());
    }
}

// The fused GRU and LSTM cells (nn_rnn.cuh) against the formulas in double, 3 rows of hidden
// size 5, one bias absent in each; every buffer ends in a guard element that must stay intact.
template <class T> static void rnn_kernels(const char *sfx) {
  const long long R = 3, H = 5, N = R * H;
  const double tol = sizeof(T) == 4 ? 2e-6 : 1e-14;
  auto buf = [](long long n) {
    std::vector<T> v(n + 1);
    for (auto &x : v) x = (T)((double)(int)(rnd() % 4001 - 2000) / 1000.0);
    v[n] = (T)1234;
    return v;
  };
  auto sig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  auto near = [&](const std::vector<T> &got, long long i, double want, const char *what, const std::string &k) {
    CHECK(std::fabs((double)got[i] - want) <= tol * (1.0 + std::fabs(want)), "%s: %s[%lld] = %g, want %g", k.c_str(),
          what, i, (double)got[i], want);
  };
  for (const char *w : {"i32", "i64"}) {
    const unsigned grid[3] = {2, 1, 1}, block[3] = {4, 1, 1};  // grid-stride over 15 elements
    char err[256];
    // GRU: input, hidden, (no bias1), bias2, hx -> hy, storage; then the backward from storage
    auto gi = buf(3 * N), gh = buf(3 * N), b2 = buf(3 * H), hx = buf(N), hy = buf(N), st = buf(5 * N);
    THCRnn p{N, H, {(unsigned long long)gi.data(), (unsigned long long)gh.data(), 0, (unsigned long long)b2.data(),
                    (unsigned long long)hx.data(), (unsigned long long)hy.data(), (unsigned long long)st.data()}};
    std::string k = std::string("th_rnnGru_") + sfx + "_" + w;
    void *args[] = {&p};
    CHECK(th_emu_launch(k.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", k.c_str(), err);
    for (long long r = 0; r < R; ++r)
      for (long long i = 0; i < H; ++i) {
        const long long g = 3 * H * r, e = r * H + i;
        const double rg = sig((double)gi[g + i] + (double)gh[g + i] + (double)b2[i]);
        const double zg = sig((double)gi[g + H + i] + (double)gh[g + H + i] + (double)b2[H + i]);
        const double hn = (double)gh[g + 2 * H + i] + (double)b2[2 * H + i];
        const double ng = std::tanh((double)gi[g + 2 * H + i] + rg * hn);
        near(hy, e, ng + zg * ((double)hx[e] - ng), "hy", k);
        near(st, 5 * H * r + 4 * H + i, hn, "storage", k);
      }
    CHECK((double)hy[N] == 1234 && (double)st[5 * N] == 1234, "%s wrote past its outputs", k.c_str());
    auto go = buf(N), dgi = buf(3 * N), dgh = buf(3 * N), dhx = buf(N);
    THCRnn q{N, H, {(unsigned long long)dgi.data(), (unsigned long long)dgh.data(), (unsigned long long)go.data(),
                    (unsigned long long)dhx.data(), (unsigned long long)st.data(), 0, 0}};
    k = std::string("th_rnnGruBack_") + sfx + "_" + w;
    args[0] = &q;
    CHECK(th_emu_launch(k.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", k.c_str(), err);
    for (long long e = 0; e < N; ++e) {
      const long long r = e / H, i = e % H, s = 5 * H * r;
      const double zg = (double)st[s + H + i], ng = (double)st[s + 2 * H + i], rg = (double)st[s + i];
      const double gn = (double)go[e] * (1 - zg) * (1 - ng * ng);
      near(dhx, e, (double)go[e] * zg, "gradInputHx", k);
      near(dgh, 3 * H * r + 2 * H + i, gn * rg, "gradInHidden", k);
    }
    CHECK((double)dgi[3 * N] == 1234 && (double)dgh[3 * N] == 1234 && (double)dhx[N] == 1234, "%s overran", k.c_str());
    // LSTM: gates (rewritten), hidden, bias1, (no bias2), cx -> hy, cy; then the backward
    auto x = buf(4 * N), x0 = x, lh = buf(4 * N), b1 = buf(4 * H), cx = buf(N), lhy = buf(N), cy = buf(N);
    THCRnn l{N, H, {(unsigned long long)x.data(), (unsigned long long)lh.data(), (unsigned long long)b1.data(), 0,
                    (unsigned long long)cx.data(), (unsigned long long)lhy.data(), (unsigned long long)cy.data()}};
    k = std::string("th_rnnLstm_") + sfx + "_" + w;
    args[0] = &l;
    CHECK(th_emu_launch(k.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", k.c_str(), err);
    for (long long e = 0; e < N; ++e) {
      const long long r = e / H, i = e % H, g = 4 * H * r;
      double a[4];
      for (int j = 0; j < 4; ++j) a[j] = (double)x0[g + j * H + i] + (double)lh[g + j * H + i] + (double)b1[j * H + i];
      const double c1 = sig(a[1]) * (double)cx[e] + sig(a[0]) * std::tanh(a[2]);
      near(cy, e, c1, "cy", k);
      near(lhy, e, sig(a[3]) * std::tanh(c1), "hy", k);
      near(x, g + 2 * H + i, std::tanh(a[2]), "gates", k);
    }
    CHECK((double)x[4 * N] == 1234 && (double)cy[N] == 1234, "%s overran", k.c_str());
    auto lgo = buf(N), lgoc = buf(N), gg = buf(4 * N), gcx = buf(N);
    THCRnn lb{N, H, {(unsigned long long)x.data(), (unsigned long long)gg.data(), (unsigned long long)cx.data(),
                     (unsigned long long)cy.data(), (unsigned long long)lgo.data(), (unsigned long long)lgoc.data(),
                     (unsigned long long)gcx.data()}};
    k = std::string("th_rnnLstmBack_") + sfx + "_" + w;
    args[0] = &lb;
    CHECK(th_emu_launch(k.c_str(), grid, block, 0, args, err, sizeof err) == 0, "%s: %s", k.c_str(), err);
    for (long long e = 0; e < N; ++e) {
      const long long r = e / H, i = e % H, g = 4 * H * r;
      const double t = std::tanh((double)cy[e]);
      const double gc = (double)lgo[e] * (double)x[g + 3 * H + i] * (1 - t * t) + (double)lgoc[e];
      near(gcx, e, gc * (double)x[g + H + i], "gradInputCx", k);
    }
    CHECK((double)gg[4 * N] == 1234 && (double)gcx[N] == 1234, "%s overran", k.c_str());
  }
}

int main() {
  every_kernel();
  gemm_kernel<signed char>("th_gemm_char");
  gemm_kernel<unsigned char>("th_gemm_byte");
  gemm_kernel<long long>("th_gemm_long");
  every_random_kernel();
  conv_kernels<float>("float");
  conv_kernels<double>("double");
  rnn_kernels<float>("float");
  rnn_kernels<double>("double");
  sample_kernels<float>("float");
  sample_kernels<double>("double");
  nn_conv_kernels<float>("float");
  nn_conv_kernels<double>("double");
  pool_kernels<float>("float");
  pool_kernels<double>("double");
  sleep_kernel();
  every_reduction();
  reductions_checked();
  column_reductions_finish();
  {  // two threads reducing at once (the cooperative launches share the static block buffer)
    std::thread t(reductions_checked);
    reductions_checked();
    t.join();
  }
  half_conversions();
  saturation<unsigned char>("th_copy_byte_double_i32");
  saturation<signed char>("th_copy_char_double_i32");
  saturation<short>("th_copy_short_double_i64");
  saturation<int>("th_copy_int_double_i32");
  saturation<long long>("th_copy_long_double_i64");
  int_ops<int>("int");
  int_ops<signed char>("char");
  int_ops<long long>("long");
  compare_nan();
  geometry();
  bad_launches();
  concurrent();
  cooperative();
  data_dependent_kernels();
  strict_emulator();
  if (failures) {
    std::fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  std::printf("cuda_emu: all checks passed\n");
  return 0;
}
