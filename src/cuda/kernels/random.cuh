// Random fills (THCTensorRandom.h) from a counter-based generator, Philox4x32-10 (Salmon, Moraes,
// Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11). The stream contract, kept by
// src/cuda/random.rs (which reserves each call's blocks):
// - block b of a generator (seed s) is Philox4x32-10 of the counter (lo32(b), hi32(b), 0, 0) under
//   the key (lo32(s), hi32(s)): four 32-bit words, lanes 0..3;
// - a call starts at block `offset`; its 32-bit word j is lane j % 4 of block offset + j / 4;
// - element i (its row-major position in the output's logical shape, whatever the strides, the
//   grid or the block size) uses words i*W .. i*W+W-1 (W = 1 or 2 divides 4: one block);
// - a uniform from one word is w * 2^-32, from two words (hi, lo) the top 53 bits of hi:lo times
//   2^-53 (Double's float distributions use two words per uniform);
// - Box-Muller pairs: elements 2k and 2k+1 share the uniforms (x, y) of words 2k*W ..
//   2k*W+2W-1, rho = sqrt(-2 log(1 - y)), element 2k gets rho cos(2 pi x), 2k+1 rho sin(2 pi x);
// - values are computed in double and rounded once to the element type.
#ifndef TH_CUDA_RANDOM_CUH
#define TH_CUDA_RANDOM_CUH

// The parameter of every random kernel (mirrored #[repr(C)] in src/cuda/random.rs). For the
// pointwise ones g is the launch geometry: arg[0] the output, arg[1] the element's row-major
// index (data 0, the logical shape's contiguous strides), arg[2] and arg[3] tensor inputs shaped
// like the output. multinomial uses g differently (see th_rand_multinomial).
struct THCRandom {
  THCPointwise g;
  unsigned long long seed;
  unsigned long long offset;  // the call's first Philox block
  double a, b, c;             // distribution parameters
  long long lo;               // integer draws: the smallest value (random, clampedRandom)
  unsigned long long range;   // integer draws: the modulus
  int dist;                   // TH_RAND_* (dist kernels), mode bits (normal_tensor), replacement
  int words;                  // W: 32-bit words per element (1 or 2)
};
static_assert(sizeof(THCRandom) == 784, "THCRandom layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCRandom, seed) == 720, "THCRandom layout");
static_assert(__builtin_offsetof(THCRandom, a) == 736, "THCRandom layout");
static_assert(__builtin_offsetof(THCRandom, lo) == 760, "THCRandom layout");
static_assert(__builtin_offsetof(THCRandom, dist) == 776, "THCRandom layout");
#endif

#define TH_RAND_UNIFORM 0
#define TH_RAND_NORMAL 1
#define TH_RAND_LOGNORMAL 2
#define TH_RAND_EXPONENTIAL 3
#define TH_RAND_CAUCHY 4

// One Philox4x32-10 block: 10 rounds, the key bumped between rounds.
struct th_philox {
  unsigned int v0, v1, v2, v3;
  __forceinline__ th_philox(unsigned long long block, unsigned long long seed) {
    unsigned int c0 = (unsigned int)block, c1 = (unsigned int)(block >> 32), c2 = 0u, c3 = 0u;
    unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
    for (int r = 0; r < 10; ++r) {
      const unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
      const unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0, n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
      c1 = (unsigned int)p1;
      c3 = (unsigned int)p0;
      c0 = n0;
      c2 = n2;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    v0 = c0, v1 = c1, v2 = c2, v3 = c3;
  }
  // Lane k (selects, not an indexed array: the words stay in registers).
  __forceinline__ unsigned int lane(int k) const { return k == 0 ? v0 : k == 1 ? v1 : k == 2 ? v2 : v3; }
};

// The words of one element: word j of the call from its block.
struct th_words {
  th_philox x;
  int at;
  __forceinline__ th_words(const THCRandom &p, unsigned long long j) : x(p.offset + (j >> 2), p.seed), at((int)(j & 3u)) {}
  __forceinline__ unsigned int w(int k) const { return x.lane(at + k); }
  // A uniform in [0, 1) from words k (W = 1) or k, k+1 (W = 2).
  __forceinline__ double u(int k, int W) const {
    if (W == 1) return (double)w(k) * 0x1p-32;
    return (double)(((unsigned long long)w(k) << 32 | w(k + 1)) >> 11) * 0x1p-53;
  }
};

// The standard normal of element i (Box-Muller pairs, see the top).
__forceinline__ double th_rand_std_normal(const THCRandom &p, unsigned long long i) {
  const th_words ws(p, (i & ~1ull) * (unsigned long long)p.words);
  const double x = ws.u(0, p.words), y = ws.u(p.words, p.words);
  const double rho = ::sqrt(-2.0 * ::log(1.0 - y)), t = 2.0 * 3.141592653589793 * x;
  return (i & 1) ? rho * ::sin(t) : rho * ::cos(t);
}

// ---- pointwise bodies: o[i] = f(p, i, inputs) over the launch, i the row-major index ----

// uniform / normal / logNormal / exponential / cauchy (a, b: the distribution's two parameters;
// uniform: [a, b), and when lo is 1, c (the largest element value below b) replaces values that
// rounded up to b).
template <class I, class T> void th_rand_dist_body(const THCRandom &p) {
  T *o = th_ptr<T>(p.g, 0);
  th_for_each<I, 2>(p.g, [&](I, const typename th_offset<I>::type *off) {
    const unsigned long long i = (unsigned long long)off[1];
    double v;
    if (p.dist == TH_RAND_NORMAL || p.dist == TH_RAND_LOGNORMAL) {
      v = th_rand_std_normal(p, i) * p.b + p.a;
      if (p.dist == TH_RAND_LOGNORMAL) v = ::exp(v);
    } else {
      const double u = th_words(p, i * (unsigned long long)p.words).u(0, p.words);
      if (p.dist == TH_RAND_EXPONENTIAL) v = (-1.0 / p.a) * ::log(1.0 - u);
      else if (p.dist == TH_RAND_CAUCHY) v = p.a + p.b * ::tan(3.141592653589793 * (u - 0.5));
      else v = u * (p.b - p.a) + p.a;
    }
    T r = th_make<T>::from_f64(v);
    if (p.dist == TH_RAND_UNIFORM && p.lo != 0 && th_traits<T>::to_f64(r) >= p.b) r = th_make<T>::from_f64(p.c);
    o[off[0]] = r;
  });
}

// normal with tensor parameters, computed in T as the host: mode bit 0: means (arg[2]) + a
// normal(0, b) draw; bit 1: a standard draw times stddevs (arg[3]) plus the means or the scalar a.
template <class I, class T> void th_rand_normal_tensor_body(const THCRandom &p) {
  typedef th_num<T> N;
  T *o = th_ptr<T>(p.g, 0);
  const T *means = th_ptr<const T>(p.g, 2), *sd = th_ptr<const T>(p.g, 3);
  const T mean = th_make<T>::from_f64(p.a);
  th_for_each<I, 4>(p.g, [&](I, const typename th_offset<I>::type *off) {
    const unsigned long long i = (unsigned long long)off[1];
    T x = th_make<T>::from_f64(th_rand_std_normal(p, i) * ((p.dist & 2) ? 1.0 : p.b) + 0.0);
    if (p.dist & 2) x = N::mul(x, sd[off[3]]);
    o[off[0]] = N::add(x, (p.dist & 1) ? means[off[2]] : mean);
  });
}

// random / clampedRandom / cappedRandom: lo + w % range (one word, as the host's 32-bit draws).
template <class I, class T> void th_rand_int_body(const THCRandom &p) {
  T *o = th_ptr<T>(p.g, 0);
  th_for_each<I, 2>(p.g, [&](I, const typename th_offset<I>::type *off) {
    const unsigned long long w = th_words(p, (unsigned long long)off[1]).w(0);
    o[off[0]] = th_make<T>::from_i64((long long)((unsigned long long)p.lo + w % p.range));
  });
}

// geometric(a): trunc(log(1 - u) / log(a)) + 1 (torch7's convention), cast as the host's.
template <class I, class T> void th_rand_geometric_body(const THCRandom &p) {
  T *o = th_ptr<T>(p.g, 0);
  const double lp = ::log(p.a);
  th_for_each<I, 2>(p.g, [&](I, const typename th_offset<I>::type *off) {
    const double u = th_words(p, (unsigned long long)off[1]).u(0, 1);
    o[off[0]] = th_make<T>::from_f64(::trunc(::log(1.0 - u) / lp) + 1.0);
  });
}

// bernoulli: 1 when u <= prob and prob > 0; prob the P element of arg[2], or the scalar a when
// arg[2].data is 0.
template <class I, class T, class P> void th_rand_bernoulli_body(const THCRandom &p) {
  T *o = th_ptr<T>(p.g, 0);
  const P *prob = th_ptr<const P>(p.g, 2);
  th_for_each<I, 3>(p.g, [&](I, const typename th_offset<I>::type *off) {
    const double u = th_words(p, (unsigned long long)off[1]).u(0, 1);
    const double q = prob ? (double)prob[off[2]] : p.a;
    o[off[0]] = th_make<T>::from_i64(u <= q && q > 0.0);
  });
}

// Alias draws (Walker): k = floor(u0 * K) (at most K-1), then k if u1 <= q[k] (and q[k] > 0), else
// J[k]. J (long) at arg[2].data and q (T) at arg[3].data are contiguous, K = lo. Two words.
template <class I, class T> void th_rand_alias_body(const THCRandom &p) {
  long long *o = th_ptr<long long>(p.g, 0);
  const long long *J = th_ptr<const long long>(p.g, 2);
  const T *q = th_ptr<const T>(p.g, 3);
  const long long K = p.lo;
  th_for_each<I, 2>(p.g, [&](I, const typename th_offset<I>::type *off) {
    const th_words ws(p, 2ull * (unsigned long long)off[1]);
    long long k = (long long)(ws.u(0, 1) * (double)K);
    if (k > K - 1) k = K - 1;
    const double keep = th_traits<T>::to_f64(q[k]);
    o[off[0]] = ws.u(1, 1) <= keep && keep > 0.0 ? k : J[k];
  });
}

// The first category with weight whose cumulative weight reaches u * total, the last one with
// weight taking the rest (torch7's forced last bucket). A product, not the host's division by the
// total: NVRTC's double division made ptxas spill here. w(k): category k's weight.
template <class W> __forceinline__ long long th_rand_pick(const W &w, long long nc, double u) {
  double total = 0.0;
  long long last = 0;
  for (long long k = 0; k < nc; ++k) {
    const double x = w(k);
    total += x;
    if (x > 0.0) last = k;
  }
  double acc = 0.0;
  for (long long k = 0; k < nc; ++k) {
    const double x = w(k);
    acc += x;
    if (x > 0.0 && (acc >= u * total || k == last)) return k;
  }
  return last;
}

// multinomial: g.sizes = {rows, n_sample, n_cat}; arg[0] the Long output (strides[0] per row,
// strides[1] per sample), arg[2] the weights (strides[0] per row, strides[1] per category),
// arg[3] a scratch of rows * n_cat doubles (without replacement). Sample s of row r uses word
// r * n_sample + s. With replacement (dist 1) one item per sample; without, one item per row
// drawing its samples in order, each drawn category's weight zeroed in the scratch.
template <class T> void th_rand_multinomial(const THCRandom &p) {
  const long long rows = p.g.sizes[0], ns = p.g.sizes[1], nc = p.g.sizes[2];
  const bool repl = p.dist != 0;
  long long *o = th_ptr<long long>(p.g, 0);
  const T *prob = th_ptr<const T>(p.g, 2);
  double *scratch = th_ptr<double>(p.g, 3);
  const long long ors = p.g.arg[0].strides[0], oss = p.g.arg[0].strides[1];
  const long long prs = p.g.arg[2].strides[0], pcs = p.g.arg[2].strides[1];
  const unsigned long long items = repl ? (unsigned long long)(rows * ns) : (unsigned long long)rows;
  const unsigned long long step = (unsigned long long)blockDim.x * gridDim.x;
  for (unsigned long long it = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; it < items; it += step) {
    const long long r = repl ? (long long)(it / (unsigned long long)ns) : (long long)it;
    const T *row = prob + r * prs;
    if (repl) {
      const long long s = (long long)(it - (unsigned long long)(r * ns));
      const double u = th_words(p, it).u(0, 1);
      o[r * ors + s * oss] = th_rand_pick([&](long long k) { return th_traits<T>::to_f64(row[k * pcs]); }, nc, u);
      continue;
    }
    double *w = scratch + r * nc;
    for (long long k = 0; k < nc; ++k) w[k] = th_traits<T>::to_f64(row[k * pcs]);
    for (long long s = 0; s < ns; ++s) {
      const double u = th_words(p, (unsigned long long)(r * ns + s)).u(0, 1);
      const long long k = th_rand_pick([&](long long c) { return w[c]; }, nc, u);
      o[r * ors + s * oss] = k;
      w[k] = 0.0;
    }
  }
}

// ---- kernels ----

#define TH_RAND_I(body, ...) body<unsigned int, __VA_ARGS__>
#define TH_RAND_L(body, ...) body<unsigned long long, __VA_ARGS__>
#define TH_RAND_BOTH(name, body, ...)                                                                \
  TH_KERNEL(name##_i32, TH_EMU_INDEPENDENT, THCRandom, TH_RAND_I(body, __VA_ARGS__))                 \
  TH_KERNEL(name##_i64, TH_EMU_INDEPENDENT, THCRandom, TH_RAND_L(body, __VA_ARGS__))

// Every dtype but Bool: th_rand_{int,geometric}_<T>, th_rand_bernoulli_<T>_{float,double} (the
// float one also serves a scalar probability: arg[2].data 0).
#define TH_RANDOM_NUM_KERNELS(sfx, T)                                                                \
  TH_RAND_BOTH(th_rand_int_##sfx, th_rand_int_body, T)                                               \
  TH_RAND_BOTH(th_rand_geometric_##sfx, th_rand_geometric_body, T)                                   \
  TH_RAND_BOTH(th_rand_bernoulli_##sfx##_float, th_rand_bernoulli_body, T, float)                    \
  TH_RAND_BOTH(th_rand_bernoulli_##sfx##_double, th_rand_bernoulli_body, T, double)
// Floating dtypes: also th_rand_{dist,normal_tensor,alias}_<T>, th_rand_multinomial_<T>.
#define TH_RANDOM_FLOAT_KERNELS(sfx, T)                                                              \
  TH_RANDOM_NUM_KERNELS(sfx, T)                                                                      \
  TH_RAND_BOTH(th_rand_dist_##sfx, th_rand_dist_body, T)                                             \
  TH_RAND_BOTH(th_rand_normal_tensor_##sfx, th_rand_normal_tensor_body, T)                           \
  TH_RAND_BOTH(th_rand_alias_##sfx, th_rand_alias_body, T)                                           \
  TH_KERNEL(th_rand_multinomial_##sfx, TH_EMU_INDEPENDENT, THCRandom, th_rand_multinomial<T>)

#endif  // TH_CUDA_RANDOM_CUH
