// THCUNN's poolings (src/nn/pool/device.rs) for Float, Double and Half, launched by
// src/cuda/nn/pool.rs (the THNNPool parameter). A pooled tensor is `nb` samples of `c` planes of
// t x h x w (a spatial plane has depth 1, TemporalMaxPooling's and FeatureLPPooling's planes are
// lines along w), addressed by five strides (sample, plane, t, h, w), so strided operands are
// read and written in place. The windows come from the host as tables of 64-bit integers in
// `tab` (per axis: the window start and element count of each output, the divisor of each
// output, and, for the backward passes, the outputs [lo, hi) whose windows hold each input
// position); a window of axis a reads the positions start + j * step[a], j < count.
// - th_poolMax_<dtype>: one output element per thread: the window's first largest element in
//   row-major order (t, h, w), NaN winning (`e > best || e != e`, the host's rule), stored with
//   its 0-based offset in the input plane ((t * i1 + h) * i2 + w) at the same offset of `ind`.
//   Fractional pooling has its own tables per plane (`ps`: the tables' stride per plane).
// - th_poolAvg_<dtype>: one output element per thread: the window's sum in row-major order in
//   the compute type R (float for Half) over the product of the axes' divisors; FeatureLPPooling
//   (th_poolLp_<dtype>) sums x^power in double and stores the sum^(1/power).
// - th_poolAvgBack_<dtype>: one gradInput element per thread (owner per output element, no
//   atomics): the sum, in ascending output order (row-major), of gradOutput / divisor over the
//   outputs whose windows hold it, each term and the sum in R (the host's order and operations).
//   th_poolLpBack_<dtype>: the terms gradOutput * (input / output)^(power - 1) in double, each
//   rounded to R (zero where the output is zero), reading the forward's output (`aux`, laid out
//   as gradOutput) and the input (`aux2`, laid out as gradInput).
// `n` comes first so that a launch with n == 0 touches nothing.
#ifndef TH_CUDA_NN_POOL_CUH
#define TH_CUDA_NN_POOL_CUH

// The window loops stay rolled: their trip counts are small and data-dependent, and unrolled
// copies cost registers (the budget is 80, no spills).
#ifdef TH_EMULATOR
#define TH_POOL_LOOP _Pragma("GCC unroll 1")
#else
#define TH_POOL_LOOP _Pragma("unroll 1")
#endif

struct THNNPool {
  long long n;                   // work items: elements written (dst)
  unsigned long long src, dst;   // device addresses: read, written
  unsigned long long ind;        // poolMax: the indices written (laid out as dst)
  unsigned long long aux, aux2;  // poolLpBack: the forward's output (as src), the input (as dst)
  unsigned long long tab;        // the window tables (long long)
  long long c;                   // planes per sample
  long long i[3], o[3];          // input and output plane sizes (t, h, w)
  long long ss[5], ds[5];        // src and dst strides: sample, plane, t, h, w
  long long step[3];             // the windows' dilation per axis
  long long ts[3], tc[3], td[3]; // table offsets per axis: starts, counts, divisors (by output)
  long long tlo[3], thi[3];      // table offsets per axis: the covering outputs (by input)
  long long ps;                  // the table stride per plane (fractional), else 0
  double power;                  // FeatureLPPooling's p
};
static_assert(sizeof(THNNPool) == 352, "THNNPool layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THNNPool, c) == 56, "THNNPool layout");
static_assert(__builtin_offsetof(THNNPool, ss) == 112, "THNNPool layout");
static_assert(__builtin_offsetof(THNNPool, ts) == 216, "THNNPool layout");
static_assert(__builtin_offsetof(THNNPool, power) == 344, "THNNPool layout");
#endif

// Splits work item e of planes of sizes (s0, s1, s2) into (plane p, x0, x1, x2).
template <class I> __device__ __forceinline__ I th_pool_split(I e, const long long *s, I &x0, I &x1, I &x2) {
  const I s1 = (I)s[1], s2 = (I)s[2];
  x2 = e % s2;
  e /= s2;
  x1 = e % s1;
  e /= s1;
  x0 = e % (I)s[0];
  return e / (I)s[0];
}

// The offset of plane p's element (x0, x1, x2) under five strides st (c planes per sample).
template <class O, class I>
__device__ __forceinline__ O th_pool_at(const long long *st, I p, I c, O x0, O x1, O x2) {
  return (O)(p / c) * (O)st[0] + (O)(p % c) * (O)st[1] + x0 * (O)st[2] + x1 * (O)st[3] + x2 * (O)st[4];
}

template <class I, class T> __device__ void th_pool_max(const THNNPool &q) {
  typedef typename th_offset<I>::type O;
  typedef typename th_traits<T>::R R;
  const T *x = (const T *)q.src;
  const long long *tab = (const long long *)q.tab;
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x, c = (I)q.c;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    I o0, o1, o2;
    const I p = th_pool_split<I>(e, q.o, o0, o1, o2);
    const O pt = (O)p * (O)q.ps;
    const O s0 = (O)tab[pt + (O)q.ts[0] + (O)o0], n0 = (O)tab[pt + (O)q.tc[0] + (O)o0];
    const O s1 = (O)tab[pt + (O)q.ts[1] + (O)o1], n1 = (O)tab[pt + (O)q.tc[1] + (O)o1];
    const O s2 = (O)tab[pt + (O)q.ts[2] + (O)o2], n2 = (O)tab[pt + (O)q.tc[2] + (O)o2];
    const T *xp = x + th_pool_at<O, I>(q.ss, p, c, 0, 0, 0);
    // where the results go, formed first: fewer values live across the window loops
    const O d = th_pool_at<O, I>(q.ds, p, c, (O)o0, (O)o1, (O)o2);
    R best = th_traits<T>::to_r(xp[s0 * (O)q.ss[2] + s1 * (O)q.ss[3] + s2 * (O)q.ss[4]]);
    O at = (s0 * (O)q.i[1] + s1) * (O)q.i[2] + s2;
TH_POOL_LOOP
    for (O a = 0; a < n0; ++a) {
      const O t = s0 + a * (O)q.step[0];
TH_POOL_LOOP
      for (O b = 0; b < n1; ++b) {
        const O h = s1 + b * (O)q.step[1];
        const T *row = xp + t * (O)q.ss[2] + h * (O)q.ss[3];
        const O rat = (t * (O)q.i[1] + h) * (O)q.i[2];
TH_POOL_LOOP
        for (O j = 0; j < n2; ++j) {
          const O w = s2 + j * (O)q.step[2];
          const R v = th_traits<T>::to_r(row[w * (O)q.ss[4]]);
          if (v > best || v != v) {
            best = v;
            at = rat + w;
          }
        }
      }
    }
    ((T *)q.dst)[d] = th_traits<T>::from_r(best);
    ((long long *)q.ind)[d] = (long long)at;
  }
}

// The accumulator of the average (R) and of FeatureLPPooling (double).
template <int LP, class R> struct th_pool_acc { typedef R type; };
template <class R> struct th_pool_acc<1, R> { typedef double type; };

template <int LP, class I, class T> __device__ void th_pool_avg(const THNNPool &q) {
  typedef typename th_offset<I>::type O;
  typedef typename th_traits<T>::R R;
  typedef typename th_pool_acc<LP, R>::type A;
  const T *x = (const T *)q.src;
  const long long *tab = (const long long *)q.tab;
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x, c = (I)q.c;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    I o0, o1, o2;
    const I p = th_pool_split<I>(e, q.o, o0, o1, o2);
    const O s0 = (O)tab[(O)q.ts[0] + (O)o0], n0 = (O)tab[(O)q.tc[0] + (O)o0];
    const O s1 = (O)tab[(O)q.ts[1] + (O)o1], n1 = (O)tab[(O)q.tc[1] + (O)o1];
    const O s2 = (O)tab[(O)q.ts[2] + (O)o2], n2 = (O)tab[(O)q.tc[2] + (O)o2];
    const T *xp = x + th_pool_at<O, I>(q.ss, p, c, 0, 0, 0);
    A s = (A)0;
TH_POOL_LOOP
    for (O t = s0; t < s0 + n0; ++t) {
TH_POOL_LOOP
      for (O h = s1; h < s1 + n1; ++h) {
        const T *row = xp + t * (O)q.ss[2] + h * (O)q.ss[3];
TH_POOL_LOOP
        for (O w = s2; w < s2 + n2; ++w) {
          const A v = (A)th_traits<T>::to_r(row[w * (O)q.ss[4]]);
          if (LP) s += th_pow((double)v, q.power);
          else s += v;
        }
      }
    }
    R r;
    if (LP) {
      r = (R)th_pow((double)s, 1.0 / q.power);
    } else {
      const long long dv = tab[q.td[0] + (long long)o0] * tab[q.td[1] + (long long)o1] * tab[q.td[2] + (long long)o2];
      r = (R)s / (R)dv;
    }
    ((T *)q.dst)[th_pool_at<O, I>(q.ds, p, c, (O)o0, (O)o1, (O)o2)] = th_traits<T>::from_r(r);
  }
}

template <int LP, class I, class T> __device__ void th_pool_avg_back(const THNNPool &q) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  const T *go = (const T *)q.src;
  const long long *tab = (const long long *)q.tab;
  const I n = (I)q.n, stride = (I)blockDim.x * (I)gridDim.x, c = (I)q.c;
  for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += stride) {
    I x0, x1, x2;
    const I p = th_pool_split<I>(e, q.i, x0, x1, x2);
    const O lo0 = (O)tab[(O)q.tlo[0] + (O)x0], hi0 = (O)tab[(O)q.thi[0] + (O)x0];
    const O lo1 = (O)tab[(O)q.tlo[1] + (O)x1], hi1 = (O)tab[(O)q.thi[1] + (O)x1];
    const O lo2 = (O)tab[(O)q.tlo[2] + (O)x2], hi2 = (O)tab[(O)q.thi[2] + (O)x2];
    const O d = th_pool_at<O, I>(q.ds, p, c, (O)x0, (O)x1, (O)x2);
    const O gp = th_pool_at<O, I>(q.ss, p, c, 0, 0, 0);
    double xv = 0;
    if (LP) xv = (double)X::to_r(((const T *)q.aux2)[d]);
    R acc = (R)0;
TH_POOL_LOOP
    for (O a = lo0; a < hi0; ++a) {
      const long long da = tab[(O)q.td[0] + a];
TH_POOL_LOOP
      for (O b = lo1; b < hi1; ++b) {
        const long long dab = da * tab[(O)q.td[1] + b];
        const O row = gp + a * (O)q.ss[2] + b * (O)q.ss[3];
TH_POOL_LOOP
        for (O j = lo2; j < hi2; ++j) {
          const O at = row + j * (O)q.ss[4];
          const R g = X::to_r(go[at]);
          if (LP) {
            const R y = X::to_r(((const T *)q.aux)[at]);
            if (y != (R)0) acc += (R)((double)g * th_pow(xv / (double)y, q.power - 1.0));
          } else {
            acc += g / (R)(dab * tab[(O)q.td[2] + j]);
          }
        }
      }
    }
    ((T *)q.dst)[d] = X::from_r(acc);
  }
}

#define TH_NN_POOL_KERNELS(sfx, T)                                                                        \
  TH_KERNEL(th_poolMax_##sfx##_i32, TH_EMU_INDEPENDENT, THNNPool, th_pool_max<unsigned int, T>)           \
  TH_KERNEL(th_poolMax_##sfx##_i64, TH_EMU_INDEPENDENT, THNNPool, th_pool_max<unsigned long long, T>)     \
  TH_KERNEL(th_poolAvg_##sfx##_i32, TH_EMU_INDEPENDENT, THNNPool, th_pool_avg<0, unsigned int, T>)        \
  TH_KERNEL(th_poolAvg_##sfx##_i64, TH_EMU_INDEPENDENT, THNNPool, th_pool_avg<0, unsigned long long, T>)  \
  TH_KERNEL(th_poolAvgBack_##sfx##_i32, TH_EMU_INDEPENDENT, THNNPool, th_pool_avg_back<0, unsigned int, T>) \
  TH_KERNEL(th_poolAvgBack_##sfx##_i64, TH_EMU_INDEPENDENT, THNNPool,                                      \
            th_pool_avg_back<0, unsigned long long, T>)                                                   \
  TH_KERNEL(th_poolLp_##sfx##_i32, TH_EMU_INDEPENDENT, THNNPool, th_pool_avg<1, unsigned int, T>)         \
  TH_KERNEL(th_poolLp_##sfx##_i64, TH_EMU_INDEPENDENT, THNNPool, th_pool_avg<1, unsigned long long, T>)   \
  TH_KERNEL(th_poolLpBack_##sfx##_i32, TH_EMU_INDEPENDENT, THNNPool, th_pool_avg_back<1, unsigned int, T>) \
  TH_KERNEL(th_poolLpBack_##sfx##_i64, TH_EMU_INDEPENDENT, THNNPool,                                       \
            th_pool_avg_back<1, unsigned long long, T>)

#endif  // TH_CUDA_NN_POOL_CUH
