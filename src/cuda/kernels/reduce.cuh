// Reductions: folds over the reduced dims of one or two operands into one accumulator per output
// (src/exec/reduce.rs's Reducers, on the device), and the combination of chunk partials.
//
// Geometry (THCReduce, mirrored in src/cuda/reduce.rs): m outputs over the kept dims (row-major,
// the last fastest), k reduced elements per output over the reduced dims (outermost first, the
// last fastest), both already merged by exec::reduce::Geometry. Offsets are I-bit (32 when every
// offset and m * k fit in an int, else 64), as THCPointwise.
//
// Deterministic order (the bits depend on the shape and layout only, never on the grid size or
// the GPU):
// - `lanes` L = the smallest power of two >= ceil(k / TH_RPER), at most TH_RBLOCK, so a chunk is
//   L * TH_RPER reduced positions and output o has nchunks = ceil(k / chunk) of them; a work item
//   is one (output, chunk) pair, item = o * nchunks + c;
// - a block takes TH_RBLOCK / L consecutive items at a time (blocks stride over the items, so any
//   grid is correct), L threads per item; lane j folds positions c * chunk + j, + L, + 2L, ...
//   in increasing order with `step`;
// - the L lane results are combined by a fixed shared-memory tree: for s = L/2, L/4, ..., 1,
//   lane j < s takes combine(lane j, lane j + s); lane 0 writes the item's accumulator;
// - when nchunks > 1, th_combine_* runs the same scheme over each output's nchunks partials
//   (lanes and chunks chosen from nchunks), pass after pass, until one is left.
// - column layout (THCReduce::column, chosen by src/cuda/reduce.rs when a kept dim is innermost):
//   nchunks is fixed by (m, k), a chunk is ceil(k / nchunks) positions, item (c, o) = c * m + o
//   is one thread that folds its chunk in increasing order; partials go to o * nchunks + c and
//   th_combine_* combines them as above.
// - finishing (THCReduce::fin != TH_FIN_NONE): the pass that leaves one accumulator per output
//   writes the finished value (F::store) to output o instead of the accumulator.
// Positions are passed to `step` (arg-max/min report the first one), and the combinations do not
// assume adjacent ranges: max/min break ties by the smaller position.
#ifndef TH_CUDA_REDUCE_CUH
#define TH_CUDA_REDUCE_CUH

#define TH_RBLOCK 256
#define TH_RPER 16

// How the last pass finishes output o from its accumulator a (THCReduce::fin, src/cuda/reduce.rs's
// Finish): written to element o of the contiguous outputs, rounded once to the element type as
// the host's ops::reduce does.
#define TH_FIN_NONE 0
#define TH_FIN_CAST 1        // sum, prod: a
#define TH_FIN_MEAN 2        // a / scale (C division for integers)
#define TH_FIN_VAR 3         // moments: m2 / n
#define TH_FIN_VAR_UNB 4     // m2 / (n - 1)
#define TH_FIN_STD 5         // sqrt(m2 / n)
#define TH_FIN_STD_UNB 6     // sqrt(m2 / (n - 1))
#define TH_FIN_ROOT 7        // norm: sqrt for p = 2, a^(1/p) for the general p, else a
#define TH_FIN_BEST 8        // max/min: the value, and its position to outs[1]

// The one parameter of every reduction kernel. A combine pass reads `k` partials per output,
// contiguous, from data[0] (dims unused).
struct THCReduce {
  long long m, k, nchunks;
  int lanes, kdim, rdim;
  int op;    // the p-norm's form (th_rnorm)
  double p;  // the p-norm's exponent
  unsigned long long out;  // m * nchunks accumulators
  unsigned long long data[2];
  long long ksizes[TH_CUDA_MAX_DIMS];
  long long rsizes[TH_CUDA_MAX_DIMS];
  long long kstrides[2][TH_CUDA_MAX_DIMS];
  long long rstrides[2][TH_CUDA_MAX_DIMS];
  int fin;     // 0: accumulators to `out`; else the last pass finishes into `outs` (TH_FIN_*)
  int column;  // the fold's layout: 0 lanes across a reduced range, 1 threads across outputs
  double scale;  // a mean's divisor
  unsigned long long outs[2];  // finished outputs, contiguous: values, and positions (i64)
};
static_assert(sizeof(THCReduce) == 872, "THCReduce layout");
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCReduce, lanes) == 24, "THCReduce layout");
static_assert(__builtin_offsetof(THCReduce, p) == 40, "THCReduce layout");
static_assert(__builtin_offsetof(THCReduce, out) == 48, "THCReduce layout");
static_assert(__builtin_offsetof(THCReduce, ksizes) == 72, "THCReduce layout");
static_assert(__builtin_offsetof(THCReduce, kstrides) == 328, "THCReduce layout");
static_assert(__builtin_offsetof(THCReduce, fin) == 840, "THCReduce layout");
static_assert(__builtin_offsetof(THCReduce, outs) == 856, "THCReduce layout");
#endif

// ---- element rules of the reductions (ops::reduce's Elem, Scalar::Acc) ----

// A: TH's accreal; acc(x): the element in it; lt/same/nonzero/isnan as the host's Elem.
template <class T, int K = th_traits<T>::kind> struct th_rt;
template <class T> struct th_rt<T, TH_KIND_INT> {
  typedef long long A;
  static __forceinline__ A acc(T x) { return (A)x; }
  static __forceinline__ T from(A a) { return th_make<T>::from_i64(a); }
  static __forceinline__ bool isnan(T) { return false; }
  static __forceinline__ bool lt(T a, T b) { return a < b; }
  static __forceinline__ bool same(T a, T b) { return a == b; }
  static __forceinline__ bool nonzero(T x) { return x != 0; }
};
template <class T> struct th_rt<T, TH_KIND_FLOAT> {
  typedef double A;
  static __forceinline__ A acc(T x) { return (A)x; }
  static __forceinline__ T from(A a) { return (T)a; }
  static __forceinline__ bool isnan(T x) { return x != x; }
  static __forceinline__ bool lt(T a, T b) { return a < b; }
  static __forceinline__ bool same(T a, T b) { return a == b; }
  static __forceinline__ bool nonzero(T x) { return x != (T)0; }
};
template <class T> struct th_rt<T, TH_KIND_HALF> {
  typedef float A;
  static __forceinline__ A acc(T x) { return th_traits<T>::to_r(x); }
  static __forceinline__ T from(A a) { return th_traits<T>::from_r(a); }
  static __forceinline__ bool isnan(T x) { return acc(x) != acc(x); }
  static __forceinline__ bool lt(T a, T b) { return acc(a) < acc(b); }
  static __forceinline__ bool same(T a, T b) { return acc(a) == acc(b); }
  static __forceinline__ bool nonzero(T x) { return acc(x) != 0.0f; }
};
template <class T> struct th_rt<T, TH_KIND_BOOL> {
  typedef long long A;
  static __forceinline__ T from(A a) { return th_make<T>::from_i64(a); }
  static __forceinline__ bool isnan(T) { return false; }
  static __forceinline__ bool lt(T a, T b) { return a.x == 0 && b.x != 0; }
  static __forceinline__ bool same(T a, T b) { return (a.x != 0) == (b.x != 0); }
  static __forceinline__ bool nonzero(T x) { return x.x != 0; }
};

// accreal arithmetic: integers wrap (through unsigned), floats as IEEE.
__forceinline__ long long th_aadd(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
__forceinline__ long long th_amul(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
__forceinline__ double th_aadd(double a, double b) { return a + b; }
__forceinline__ double th_amul(double a, double b) { return a * b; }
__forceinline__ float th_aadd(float a, float b) { return a + b; }
__forceinline__ float th_amul(float a, float b) { return a * b; }
__forceinline__ unsigned th_aadd(unsigned a, unsigned b) { return a + b; }  // counts (sort.cuh's radix)
__forceinline__ unsigned th_amul(unsigned a, unsigned b) { return a * b; }

// ---- the folds: identity, step(acc, elements x[N], position), combine ----

template <class T> struct th_rsum {
  typedef typename th_rt<T>::A A;
  __forceinline__ th_rsum(const THCReduce &) {}
  __forceinline__ A identity() const { return (A)0; }
  __forceinline__ A step(A a, const T *x, long long) const { return th_aadd(a, th_rt<T>::acc(x[0])); }
  __forceinline__ A combine(A a, A b) const { return th_aadd(a, b); }
  // TH_FIN_CAST, TH_FIN_MEAN (the divisor is at least 1).
  __forceinline__ void store(const THCReduce &p, unsigned long long o, A a) const {
    ((T *)p.outs[0])[o] = th_rt<T>::from(p.fin == TH_FIN_MEAN ? a / (A)p.scale : a);
  }
};

template <class T> struct th_rprod {
  typedef typename th_rt<T>::A A;
  __forceinline__ th_rprod(const THCReduce &) {}
  __forceinline__ A identity() const { return (A)1; }
  __forceinline__ A step(A a, const T *x, long long) const { return th_amul(a, th_rt<T>::acc(x[0])); }
  __forceinline__ A combine(A a, A b) const { return th_amul(a, b); }
  __forceinline__ void store(const THCReduce &p, unsigned long long o, A a) const { ((T *)p.outs[0])[o] = th_rt<T>::from(a); }
};

// sum(x * y) in accreal (products rounded in accreal, as the host's acc_mul).
template <class T> struct th_rdot : th_rsum<T> {
  typedef typename th_rt<T>::A A;
  __forceinline__ th_rdot(const THCReduce &p) : th_rsum<T>(p) {}
  __forceinline__ A step(A a, const T *x, long long) const {
    return th_aadd(a, th_amul(th_rt<T>::acc(x[0]), th_rt<T>::acc(x[1])));
  }
};

// Counts: non-zero elements, or (equal) pairs that differ.
template <class T> struct th_rcount {
  typedef long long A;
  __forceinline__ th_rcount(const THCReduce &) {}
  __forceinline__ A identity() const { return 0; }
  __forceinline__ A step(A a, const T *x, long long) const { return a + (th_rt<T>::nonzero(x[0]) ? 1 : 0); }
  __forceinline__ A combine(A a, A b) const { return th_aadd(a, b); }
  __forceinline__ void store(const THCReduce &p, unsigned long long o, A a) const { ((long long *)p.outs[0])[o] = a; }
};
template <class T> struct th_requal : th_rcount<T> {
  __forceinline__ th_requal(const THCReduce &p) : th_rcount<T>(p) {}
  __forceinline__ long long step(long long a, const T *x, long long) const { return a + (th_rt<T>::same(x[0], x[1]) ? 0 : 1); }
};

// max / min with the position of the first occurrence; the first NaN wins. i < 0: no element.
template <class T> struct th_best {
  T v;
  long long i;
};
template <class T, bool MAX> struct th_rbest {
  typedef th_best<T> A;
  typedef th_rt<T> R;
  __forceinline__ th_rbest(const THCReduce &) {}
  __forceinline__ A identity() const {
    A a;
    a.v = th_make<T>::from_i64(0);
    a.i = -1;
    return a;
  }
  // Whether value x beats value y (NaN beats everything).
  static __forceinline__ bool beats(T x, T y) { return !R::isnan(y) && (R::isnan(x) || (MAX ? R::lt(y, x) : R::lt(x, y))); }
  __forceinline__ A step(A a, const T *x, long long pos) const {
    if (a.i < 0 || beats(x[0], a.v)) a.v = x[0], a.i = pos;
    return a;
  }
  __forceinline__ A combine(A a, A b) const {
    // b wins when a is empty, b's value beats a's, or they tie (equal, or both NaN) and b's
    // position is first. Selected field by field (no struct select: it spilled on sm_80).
    const bool take = b.i >= 0 && (a.i < 0 || beats(b.v, a.v) || (!beats(a.v, b.v) && b.i < a.i));
    a.v = take ? b.v : a.v;
    a.i = take ? b.i : a.i;
    return a;
  }
  __forceinline__ void store(const THCReduce &p, unsigned long long o, A a) const {
    ((T *)p.outs[0])[o] = a.v;
    ((long long *)p.outs[1])[o] = a.i < 0 ? 0 : a.i;
  }
};

// Count, mean and sum of squared deviations (Welford per lane, Chan's formula to combine), in
// accreal, as ops::reduce::Moments.
template <class A> struct th_mom {
  A n, mean, m2;
};
template <class T> struct th_rmoments {
  typedef typename th_rt<T>::A S;
  typedef th_mom<S> A;
  __forceinline__ th_rmoments(const THCReduce &) {}
  __forceinline__ A identity() const {
    A a;
    a.n = 0, a.mean = 0, a.m2 = 0;
    return a;
  }
  __forceinline__ A step(A a, const T *x, long long) const {
    const S v = th_rt<T>::acc(x[0]), n1 = a.n + (S)1, d = v - a.mean;
    const S mean1 = a.mean + d / n1;
    a.m2 = a.m2 + d * (v - mean1);
    a.n = n1, a.mean = mean1;
    return a;
  }
  __forceinline__ A combine(A a, A b) const {
    if (a.n == (S)0) return b;
    if (b.n == (S)0) return a;
    A r;
    r.n = a.n + b.n;
    const S d = b.mean - a.mean;
    r.mean = a.mean + d * b.n / r.n;
    r.m2 = a.m2 + b.m2 + d * d * a.n * b.n / r.n;
    return r;
  }
  // TH_FIN_VAR .. TH_FIN_STD_UNB (n == 1 unbiased is 0 / 0: NaN, as the host).
  __forceinline__ void store(const THCReduce &p, unsigned long long o, A a) const {
    const bool unbiased = p.fin == TH_FIN_VAR_UNB || p.fin == TH_FIN_STD_UNB;
    const S v = a.m2 / (unbiased ? a.n - (S)1 : a.n);
    ((T *)p.outs[0])[o] = th_rt<T>::from(p.fin >= TH_FIN_STD ? th_sqrt(v) : v);
  }
};

// The p-norm's accumulation (the root is taken on the host), by THCReduce::op:
// 0 count of non-zeros, 1 sum |x|, 2 sum x^2, 3 max |x|, 4 min |x|, 5 sum |x|^p; NaN propagates
// through max/min.
template <class T> struct th_rnorm {
  typedef typename th_rt<T>::A A;
  int op;
  A p;
  __forceinline__ th_rnorm(const THCReduce &r) : op(r.op), p((A)r.p) {}
  __forceinline__ A identity() const { return op == 4 ? th_vm<A>::inf() : (A)0; }
  __forceinline__ A g(T x) const {
    const A v = th_rt<T>::acc(x), a = th_fabs(v);
    return op == 0 ? (th_rt<T>::nonzero(x) ? (A)1 : (A)0) : op == 2 ? v * v : op == 5 ? th_pow(a, p) : a;
  }
  __forceinline__ A combine(A a, A b) const {
    if (op == 3 || op == 4) {
      if (a != a || b != b) return a != a ? a : b;
      return op == 3 ? (b > a ? b : a) : (b < a ? b : a);
    }
    return a + b;
  }
  __forceinline__ A step(A a, const T *x, long long) const { return combine(a, g(x[0])); }
  // TH_FIN_ROOT: the root of the p-norm (1/p rounded in accreal, as the host).
  __forceinline__ void store(const THCReduce &r, unsigned long long o, A a) const {
    ((T *)r.outs[0])[o] = th_rt<T>::from(op == 2 ? th_sqrt(a) : op == 5 ? th_pow(a, (A)1 / p) : a);
  }
};
// The p-norm of x - y, the difference rounded to T (as the host's dist).
template <class T> struct th_rdist : th_rnorm<T> {
  typedef typename th_rt<T>::A A;
  __forceinline__ th_rdist(const THCReduce &r) : th_rnorm<T>(r) {}
  __forceinline__ A step(A a, const T *x, long long) const { return this->combine(a, this->g(th_num<T>::sub(x[0], x[1]))); }
};

// ---- kernel bodies ----

// One offset per operand, passed by value (arrays passed by pointer went to local memory, a
// stack frame and spills, on sm_80/sm_90).
template <class O, int N> struct th_roffs {
  O v[N];
};

// Each operand's offset of output o's first element (the kept dims' part).
template <class I, int N, class O> __forceinline__ th_roffs<O, N> th_rkept(const THCReduce &p, I o) {
  th_roffs<O, N> ko;
TH_UNROLL
  for (int q = 0; q < N; ++q) ko.v[q] = 0;
  for (int dd = p.kdim - 1; dd >= 0; --dd) {
    const I size = (I)p.ksizes[dd], qq = th_udiv(o, size), x = o - qq * size;
    o = qq;
TH_UNROLL
    for (int q = 0; q < N; ++q) ko.v[q] += (O)x * (O)p.kstrides[q][dd];
  }
  return ko;
}

// Folds reduced positions r, r + by, ... below end of the output at offsets ko into acc, in
// increasing order. Over one reduced dim the loads are issued B at a time before they are
// folded: the same order, more loads in flight (B = 4 for one operand, 2 for two; 1 with 64-bit
// indexing, whose divisions are subroutine calls that already keep many registers saved).
template <class I, int N, class T, class F, class O>
__forceinline__ typename F::A th_rrange(const F &f, const THCReduce &p, const th_roffs<O, N> kept, typename F::A acc, I r,
                                        I end, I by) {
  const O *ko = kept.v;
  const T *d[N];
TH_UNROLL
  for (int q = 0; q < N; ++q) d[q] = (const T *)p.data[q];
  if (p.rdim == 1) {
    O rs[N];
TH_UNROLL
    for (int q = 0; q < N; ++q) rs[q] = (O)p.rstrides[q][0];
    const int B = sizeof(I) == 8 ? 1 : N == 1 ? 4 : 2;
    for (; B > 1 && r + (I)(B - 1) * by < end; r += (I)B * by) {
      T x[B][N];
TH_UNROLL
      for (int j = 0; j < B; ++j)
TH_UNROLL
        for (int q = 0; q < N; ++q) x[j][q] = d[q][ko[q] + (O)(r + (I)j * by) * rs[q]];
TH_UNROLL
      for (int j = 0; j < B; ++j) acc = f.step(acc, x[j], (long long)(r + (I)j * by));
    }
    for (; r < end; r += by) {
      T x[N];
TH_UNROLL
      for (int q = 0; q < N; ++q) x[q] = d[q][ko[q] + (O)r * rs[q]];
      acc = f.step(acc, x, (long long)r);
    }
    return acc;
  }
  for (; r < end; r += by) {
    O off[N];
TH_UNROLL
    for (int q = 0; q < N; ++q) off[q] = ko[q];
    I rr = r;
    for (int dd = p.rdim - 1; dd >= 0; --dd) {
      const I size = (I)p.rsizes[dd], qq = th_udiv(rr, size), x = rr - qq * size;
      rr = qq;
TH_UNROLL
      for (int q = 0; q < N; ++q) off[q] += (O)x * (O)p.rstrides[q][dd];
    }
    T x[N];
TH_UNROLL
    for (int q = 0; q < N; ++q) x[q] = d[q][off[q]];
    acc = f.step(acc, x, (long long)r);
  }
  return acc;
}

// Where an item's result goes: finished into the outputs by the last pass, else a partial.
template <class F> __forceinline__ void th_rput(const F &f, const THCReduce &p, unsigned long long o,
                                                unsigned long long item, typename F::A a) {
  if (p.fin != TH_FIN_NONE && p.nchunks == 1)
    f.store(p, o, a);
  else
    ((typename F::A *)p.out)[item] = a;
}

// Folds work items into p.out, or finishes them into p.outs (see the header comment). Rows: L
// lanes per item across a reduced range, item = o * nchunks + c. Columns (lanes == 1): item =
// c * m + o, so neighbouring threads take neighbouring outputs, and each folds its chunk of
// ceil(k / nchunks) positions alone. Either way item (o, c)'s partial goes to o * nchunks + c,
// the layout th_combine_* reads. (One loop for both: two loops in one kernel made ptxas spill.)
template <class I, int N, class T, class F> void th_reduce_body(const THCReduce &p) {
  typedef typename F::A A;
  typedef typename th_offset<I>::type O;
  static_assert(sizeof(A) <= 3 * sizeof(double), "accumulator too large for the shared buffer");
  TH_SHARED(double, th_rsh, TH_RBLOCK * 3);
  A *sh = (A *)th_rsh;
  const F f(p);
  const bool col = p.column != 0;
  const I L = (I)p.lanes, t = (I)threadIdx.x, lane = t & (L - 1), groups = (I)TH_RBLOCK / L;
  const I m = (I)p.m, k = (I)p.k, nch = (I)p.nchunks, items = m * nch;
  const I chunk = col ? th_udiv(k + nch - 1, nch) : L * (I)TH_RPER;
  for (I base = (I)blockIdx.x * groups; base < items; base += (I)gridDim.x * groups) {
    const I item = base + th_udiv(t, L);
    const I dv = col ? m : nch, qd = th_udiv(item, dv), rd = item - qd * dv;
    const I o = col ? rd : qd, c = col ? qd : rd;
    A acc = f.identity();
    if (item < items) {
      const I end = c * chunk + chunk < k ? c * chunk + chunk : k;
      acc = th_rrange<I, N, T, F, O>(f, p, th_rkept<I, N, O>(p, o), acc, c * chunk + lane, end, L);
    }
    sh[t] = acc;
    __syncthreads();
    for (I s = L / 2; s > 0; s /= 2) {
      if (lane < s) sh[t] = f.combine(sh[t], sh[t + s]);
      __syncthreads();
    }
    if (lane == 0 && item < items) th_rput(f, p, o, o * nch + c, sh[t]);
    __syncthreads();  // the next items reuse sh
  }
}

// One combine pass: output o's p.k partials at data[0] + o * k become p.nchunks partials (or,
// when that is one, the finished output).
template <class F> void th_combine_body(const THCReduce &p) {
  typedef typename F::A A;
  typedef unsigned long long I;
  TH_SHARED(double, th_rsh, TH_RBLOCK * 3);
  A *sh = (A *)th_rsh;
  const F f(p);
  const A *in = (const A *)p.data[0];
  const I L = (I)p.lanes, t = (I)threadIdx.x, lane = t & (L - 1), groups = (I)TH_RBLOCK / L;
  const I k = (I)p.k, nch = (I)p.nchunks, chunk = L * (I)TH_RPER, items = (I)p.m * nch;
  for (I base = (I)blockIdx.x * groups; base < items; base += (I)gridDim.x * groups) {
    const I item = base + th_udiv(t, L), o = th_udiv(item, nch);
    A acc = f.identity();
    if (item < items) {
      const I c = item - o * nch;
      const I end = c * chunk + chunk < k ? c * chunk + chunk : k;
      for (I r = c * chunk + lane; r < end; r += L) acc = f.combine(acc, in[o * k + r]);
    }
    sh[t] = acc;
    __syncthreads();
    for (I s = L / 2; s > 0; s /= 2) {
      if (lane < s) sh[t] = f.combine(sh[t], sh[t + s]);
      __syncthreads();
    }
    if (lane == 0 && item < items) th_rput(f, p, o, item, sh[t]);
    __syncthreads();
  }
}

// ---- kernels: th_reduce_<op>_<dtype>_<i32|i64>, th_combine_<op>_<dtype> ----

#define TH_RKERNEL(name, ...)                                                                         \
  extern "C" __global__ void __launch_bounds__(TH_RBLOCK) name(const THCReduce p) { __VA_ARGS__(p); } \
  TH_EMU_REGISTER(name, TH_EMU_COOPERATIVE, TH_RBLOCK, THCReduce, __VA_ARGS__)
#define TH_REDUCE(name, N, T, ...)                                                                    \
  TH_RKERNEL(name##_i32, th_reduce_body<unsigned int, N, T, __VA_ARGS__>)                             \
  TH_RKERNEL(name##_i64, th_reduce_body<unsigned long long, N, T, __VA_ARGS__>)

// Every dtype: max, min, count (non-zeros), equal; their combines (equal's is count's).
#define TH_REDUCE_ALL_KERNELS(sfx, T)                                                                 \
  TH_REDUCE(th_reduce_max_##sfx, 1, T, th_rbest<T, true>)                                             \
  TH_REDUCE(th_reduce_min_##sfx, 1, T, th_rbest<T, false>)                                            \
  TH_REDUCE(th_reduce_count_##sfx, 1, T, th_rcount<T>)                                                \
  TH_REDUCE(th_reduce_equal_##sfx, 2, T, th_requal<T>)                                                \
  TH_RKERNEL(th_combine_max_##sfx, th_combine_body<th_rbest<T, true>>)                                \
  TH_RKERNEL(th_combine_min_##sfx, th_combine_body<th_rbest<T, false>>)                               \
  TH_RKERNEL(th_combine_count_##sfx, th_combine_body<th_rcount<T>>)
// Numeric dtypes: also sum, prod, dot (dot's combine is sum's).
#define TH_REDUCE_NUM_KERNELS(sfx, T)                                                                 \
  TH_REDUCE_ALL_KERNELS(sfx, T)                                                                       \
  TH_REDUCE(th_reduce_sum_##sfx, 1, T, th_rsum<T>)                                                    \
  TH_REDUCE(th_reduce_prod_##sfx, 1, T, th_rprod<T>)                                                  \
  TH_REDUCE(th_reduce_dot_##sfx, 2, T, th_rdot<T>)                                                    \
  TH_RKERNEL(th_combine_sum_##sfx, th_combine_body<th_rsum<T>>)                                       \
  TH_RKERNEL(th_combine_prod_##sfx, th_combine_body<th_rprod<T>>)
// Floating dtypes: also moments, norm, dist (dist's combine is norm's).
#define TH_REDUCE_FLOAT_KERNELS(sfx, T)                                                               \
  TH_REDUCE_NUM_KERNELS(sfx, T)                                                                       \
  TH_REDUCE(th_reduce_moments_##sfx, 1, T, th_rmoments<T>)                                            \
  TH_REDUCE(th_reduce_norm_##sfx, 1, T, th_rnorm<T>)                                                  \
  TH_REDUCE(th_reduce_dist_##sfx, 2, T, th_rdist<T>)                                                  \
  TH_RKERNEL(th_combine_moments_##sfx, th_combine_body<th_rmoments<T>>)                               \
  TH_RKERNEL(th_combine_norm_##sfx, th_combine_body<th_rnorm<T>>)

#endif  // TH_CUDA_REDUCE_CUH
