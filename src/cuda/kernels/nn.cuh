// THCUNN's kernels. The elementwise layers (src/nn/activation): each op is the host closure's expression,
// operation for operation, in the compute type R (f32 for Half), rounded once on store. The
// scalar options v (param 0) and w (param 1) arrive rounded to the element type, as the host's.
#ifndef TH_CUDA_NN_CUH
#define TH_CUDA_NN_CUH

// The C library's exp and expm1, as the host's closures call them (`Real::exp`, `exp_m1`).
__forceinline__ float th_cexp(float x) { return ::expf(x); }
__forceinline__ double th_cexp(double x) { return ::exp(x); }
__forceinline__ float th_expm1(float x) { return ::expm1f(x); }
__forceinline__ double th_expm1(double x) { return ::expm1(x); }
__forceinline__ double th_clog(double x) { return ::log(x); }

// One input x: name, expression of x, v, w.
#define TH_NN_OPS1(X, ...)                                                                            \
  X(nnElu, x <= (R)0 ? th_expm1(x) * v : x, __VA_ARGS__)                                             \
  X(nnHardShrink, (x > v || x < -v) ? x : (R)0, __VA_ARGS__)                                          \
  X(nnHardTanh, x < v ? v : (x > w ? w : x), __VA_ARGS__)                                             \
  X(nnLeakyRelu, x > (R)0 ? x : x * v, __VA_ARGS__)                                                   \
  X(nnRrelu, x <= (R)0 ? x * v : x, __VA_ARGS__)                                                      \
  X(nnLogSigmoid, (x < (R)0 ? x : (R)0) - th_log1p(th_cexp(-th_fabs(x))), __VA_ARGS__)               \
  X(nnSoftPlus, x * v > w ? x : th_log1p(th_cexp(x * v)) / v, __VA_ARGS__)                           \
  X(nnSoftShrink, x > v ? x - v : (x < -v ? x + v : (R)0), __VA_ARGS__)                               \
  X(nnSquare, x * x, __VA_ARGS__)                                                                     \
  X(nnThreshold, x <= v ? w : x, __VA_ARGS__)

// Two inputs, x (the layer's input or output) and g (gradOutput): the gradient.
#define TH_NN_OPS2(X, ...)                                                                            \
  X(nnAbsBack, x >= (R)0 ? g : -g, __VA_ARGS__)                                                       \
  X(nnEluBack, x <= (R)0 ? g * (x + v) : g, __VA_ARGS__)                                              \
  X(nnHardTanhBack, (x <= v || x >= w) ? (R)0 : g, __VA_ARGS__)                                       \
  X(nnLeakyReluBack, x > (R)0 ? g : g * v, __VA_ARGS__)                                               \
  X(nnLogSigmoidBack, th_nn_log_sigmoid_back(x, g), __VA_ARGS__)                                      \
  X(nnRreluBack, x <= (R)0 ? g * v : g, __VA_ARGS__)                                                  \
  X(nnRreluNoise, x <= (R)0 ? g : (R)1, __VA_ARGS__)                                                  \
  X(nnSigmoidBack, g * ((R)1 - x) * x, __VA_ARGS__)                                                   \
  X(nnShrinkBack, (x > v || x < -v) ? g : (R)0, __VA_ARGS__)                                          \
  X(nnSqrtBack, x == (R)0 ? (R)0 : (R)0.5 * (g / x), __VA_ARGS__)                                    \
  X(nnSquareBack, (R)2 * g * x, __VA_ARGS__)                                                          \
  X(nnTanhBack, g * ((R)1 - x * x), __VA_ARGS__)                                                      \
  X(nnThresholdBack, x <= v ? (R)0 : g, __VA_ARGS__)

// Three inputs x, y (output), g: SoftPlus's gradient.
#define TH_NN_OPS3(X, ...) X(nnSoftPlusBack, x * v > w ? g : -g * th_expm1(-(y * v)), __VA_ARGS__)

// GatedLinear (a, b the halves of the input; g gradOutput) and PReLU (x, w the plane's weight
// broadcast; g gradOutput), as param.rs computes them.
#define TH_NN_PARAM_OPS2(X, ...)                                                                      \
  X(nnGlu, x * th_nn_gsig(g), __VA_ARGS__)                                                            \
  X(nnPrelu, x > (R)0 ? x : g * x, __VA_ARGS__)
#define TH_NN_PARAM_OPS3(X, ...)                                                                      \
  X(nnGluBackA, th_nn_gsig(y) * g, __VA_ARGS__)                                                       \
  X(nnGluBackB, ((R)1 - th_nn_gsig(y)) * th_nn_gsig(y) * g * x, __VA_ARGS__)                          \
  X(nnPreluBack, x > (R)0 ? y : g * y, __VA_ARGS__)
// PReLU's weight-gradient terms, for double operands: x <= 0 ? x * g : 0.
#define TH_NN_PARAM_TERMS(X, ...) X(nnPreluTerm, x <= (R)0 ? x * g : (R)0, __VA_ARGS__)

// The criterions' gradients: x = input, g = target; v = the 1/n of sizeAverage (else 1).
#define TH_NN_CRIT_BACK(X, ...)                                                                       \
  X(nnAbsCritBack, th_nn_signed(x - g, v), __VA_ARGS__)                                               \
  X(nnMseCritBack, v * (x - g), __VA_ARGS__)                                                          \
  X(nnSmoothL1CritBack, (x - g) < -(R)1 ? -v : ((x - g) > (R)1 ? v : v * (x - g)), __VA_ARGS__)      \
  X(nnSoftMarginCritBack, -v * g * th_nn_sigmoid(-(x * g)), __VA_ARGS__)                             \
  X(nnMarginCritBack, x * g < w ? -v * g : (R)0, __VA_ARGS__)                                         \
  X(nnKlDivCritBack, g > (R)0 ? -v * g : (R)0, __VA_ARGS__)                                           \
  X(nnBceCritBack, th_nn_bce_back(x, g, v), __VA_ARGS__)
// The criterions' loss terms, for double operands (the host sums them in f64): x input, g target.
#define TH_NN_CRIT_TERMS(X, ...)                                                                      \
  X(nnAbsCrit, th_fabs(x - g), __VA_ARGS__)                                                           \
  X(nnMseCrit, (x - g) * (x - g), __VA_ARGS__)                                                        \
  X(nnSmoothL1Crit, th_fabs(x - g) < (R)1 ? (R)0.5 * th_fabs(x - g) * th_fabs(x - g) : th_fabs(x - g) - (R)0.5, __VA_ARGS__) \
  X(nnSoftMarginCrit, th_nn_softplus(-(x * g)), __VA_ARGS__)                                          \
  X(nnMarginCrit, th_nn_max0(v - x * g), __VA_ARGS__)                                                 \
  X(nnKlDivCrit, g > (R)0 ? g * (th_clog(g) - x) : (R)0, __VA_ARGS__)                                 \
  X(nnBceCrit, th_nn_bce(x, g), __VA_ARGS__)

// param.rs's sigmoid: one division, the numerator selected.
template <class R> __forceinline__ R th_nn_gsig(R x) {
  const R e = th_cexp(-th_fabs(x)), r = (R)1 / ((R)1 + e);
  return x >= (R)0 ? r : e * r;
}
// `d > 0 ? n : d < 0 ? -n : d * n` (NaN stays NaN; the host's `signed`).
template <class R> __forceinline__ R th_nn_signed(R d, R n) { return d > (R)0 ? n : (d < (R)0 ? -n : d * n); }
template <class R> __forceinline__ R th_nn_max0(R v) { return v > (R)0 ? v : (R)0; }
// The host criterions' sigmoid and softplus, without overflow.
template <class R> __forceinline__ R th_nn_sigmoid(R v) {
  if (v >= (R)0) return (R)1 / ((R)1 + th_cexp(-v));
  const R e = th_cexp(v);
  return e / ((R)1 + e);
}
__forceinline__ double th_nn_softplus(double v) { return (v > 0.0 ? v : 0.0) + th_log1p(th_cexp(-th_fabs(v))); }
// BCE: logarithms floored at -100 (PyTorch's), the gradient's denominator at 1e-12 in R.
__forceinline__ double th_nn_bce(double x, double y) {
  const double a = th_clog(x), b = th_log1p(-x);
  return -(y * (a > -100.0 ? a : -100.0) + (1.0 - y) * (b > -100.0 ? b : -100.0));
}
template <class R> __forceinline__ R th_nn_bce_back(R x, R y, R n) {
  const R d = ((R)1 - x) * x, eps = (R)1e-12;
  return n * (x - y) / (d > eps ? d : eps);
}

template <class R> __forceinline__ R th_nn_log_sigmoid_back(R x, R g) {
  const R e = th_cexp(-th_fabs(x));
  const R d = x < (R)0 ? (R)1 : e;
  return g * d / ((R)1 + e);
}

// Functor `th_op_<name><T>`: the elements widened to R, the options v, w in R.
#define TH_NN_OP(name, params, args, expr)                                                            \
  template <class T> struct th_op_##name {                                                            \
    typedef th_traits<T> X;                                                                           \
    typedef typename X::R R;                                                                          \
    R v, w;                                                                                           \
    __forceinline__ th_op_##name(const THCPointwise &p)                                               \
        : v(X::to_r(th_param<T>(p, 0))), w(X::to_r(th_param<T>(p, 1))) {}                             \
    __forceinline__ T operator() params const {                                                       \
      args;                                                                                           \
      return X::from_r(expr);                                                                         \
    }                                                                                                 \
  };
#define TH_NN_DEF1(name, expr, _) TH_NN_OP(name, (T x_), const R x = X::to_r(x_), expr)
// (every element widened, used or not: `(void)` keeps the unused ones quiet)
#define TH_NN_DEF2(name, expr, _)                                                                     \
  TH_NN_OP(name, (T x_, T g_), const R x = X::to_r(x_); const R g = X::to_r(g_); (void)x; (void)g, expr)
#define TH_NN_DEF3(name, expr, _)                                                                     \
  TH_NN_OP(name, (T x_, T y_, T g_),                                                                  \
           const R x = X::to_r(x_); const R y = X::to_r(y_); const R g = X::to_r(g_); (void)x; (void)y; (void)g, expr)
TH_NN_OPS1(TH_NN_DEF1, )
TH_NN_OPS2(TH_NN_DEF2, )
TH_NN_OPS3(TH_NN_DEF3, )
TH_NN_CRIT_BACK(TH_NN_DEF2, )
TH_NN_CRIT_TERMS(TH_NN_DEF2, )
TH_NN_PARAM_OPS2(TH_NN_DEF2, )
TH_NN_PARAM_OPS3(TH_NN_DEF3, )
TH_NN_PARAM_TERMS(TH_NN_DEF2, )
TH_NN_OP(nnL1CostBack, (T x_), const R x = X::to_r(x_), th_nn_signed(x, (R)1))
TH_NN_OP(nnBceCritBackW, (T x_, T g_, T c_), const R x = X::to_r(x_); const R g = X::to_r(g_); const R c = X::to_r(c_),
         c * th_nn_bce_back(x, g, v))
#undef TH_NN_DEF1
#undef TH_NN_DEF2
#undef TH_NN_DEF3
#undef TH_NN_OP

// ---- SoftMax and LogSoftMax along a line (the normalized dimension; lines.cuh) ----

// One thread per line: items are the other positions, so over a 3-D/4-D input's h x w positions
// neighbouring threads read neighbouring elements. Sums run in the compute type in line order
// (the host sums in 16 lanes: results agree within the sums' rounding). i[0] = 1 for
// LogSoftMax. Forward operands: out, x; backward: gradInput, output, gradOutput.
template <class I, class T> void th_lines_nn_softmax(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  T *o = th_ptr<T>(p.it, 0);
  const T *x = th_ptr<const T>(p.it, 1);
  const O so = (O)p.step[0], sx = (O)p.step[1];
  const long long n = p.len[1];
  const bool log = p.it.i[0] != 0;
  th_for_each<I, 2>(p.it, [&](I, const O *off) {
    // the maximum, NaNs skipped (the host's `v > m` scan)
    R m = -th_vm<R>::inf();
TH_LINE_LOOP
    for (long long c = 0; c < n; ++c) {
      const R v = X::to_r(x[off[1] + (O)c * sx]);
      m = v > m ? v : m;
    }
    R s = (R)0;
TH_LINE_LOOP
    for (long long c = 0; c < n; ++c) s += th_exp(X::to_r(x[off[1] + (O)c * sx]) - m);
    const R k = log ? th_log(s) : (R)1 / s;
TH_LINE_LOOP
    for (long long c = 0; c < n; ++c) {
      const R v = X::to_r(x[off[1] + (O)c * sx]) - m;
      o[off[0] + (O)c * so] = X::from_r(log ? v - k : th_exp(v) * k);
    }
  });
}

template <class I, class T> void th_lines_nn_softmax_back(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  T *o = th_ptr<T>(p.it, 0);
  const T *y = th_ptr<const T>(p.it, 1), *g = th_ptr<const T>(p.it, 2);
  const O so = (O)p.step[0], sy = (O)p.step[1], sg = (O)p.step[2];
  const long long n = p.len[0];
  const bool log = p.it.i[0] != 0;
  th_for_each<I, 3>(p.it, [&](I, const O *off) {
    R a = (R)0;
TH_LINE_LOOP
    for (long long c = 0; c < n; ++c) {
      const R gv = X::to_r(g[off[2] + (O)c * sg]);
      a += log ? gv : gv * X::to_r(y[off[1] + (O)c * sy]);
    }
TH_LINE_LOOP
    for (long long c = 0; c < n; ++c) {
      const R yv = X::to_r(y[off[1] + (O)c * sy]), gv = X::to_r(g[off[2] + (O)c * sg]);
      o[off[0] + (O)c * so] = X::from_r(log ? gv - th_exp(yv) * a : yv * (gv - a));
    }
  });
}

// ---- SoftMax and LogSoftMax, a block per line (long lines; lines.cuh's THCLines) ----

// The same passes with a block per line: each thread folds the elements t, t + blockDim.x, ...
// of the line, then the block combines the partials in a fixed tree (blockDim.x a power of two,
// chosen by the host from the line length alone: the same call gives the same bits whatever the
// grid). For lines too few or too long for a thread each (a 2-D input's rows: neighbouring
// threads of the line kernel would read a row apart). Kernels of kind TH_EMU_COOPERATIVE.

// The block's combine of `v` (every thread's partial) by `f`, returned to every thread.
template <class R, class F> __forceinline__ R th_block_fold(R v, R *sh, F f) {
  const unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) sh[t] = f(sh[t], sh[t + s]);
    __syncthreads();
  }
  const R r = sh[0];
  __syncthreads();  // sh is reused by the next fold
  return r;
}

template <class I, class T> void th_rows_nn_softmax(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  TH_SHARED(double, th_smsh, TH_BLOCK);
  R *sh = (R *)th_smsh;
  T *o = th_ptr<T>(p.it, 0);
  const T *x = th_ptr<const T>(p.it, 1);
  const O so = (O)p.step[0], sx = (O)p.step[1];
  const long long n = p.len[1], t0 = threadIdx.x, nt = blockDim.x;
  const bool log = p.it.i[0] != 0;
  th_for_each_block<I, 2>(p.it, [&](I, const O *off) {
    R m = -th_vm<R>::inf();
TH_LINE_LOOP
    for (long long c = t0; c < n; c += nt) {
      const R v = X::to_r(x[off[1] + (O)c * sx]);
      m = v > m ? v : m;
    }
    m = th_block_fold(m, sh, [](R a, R b) { return b > a ? b : a; });
    R s = (R)0;
TH_LINE_LOOP
    for (long long c = t0; c < n; c += nt) s += th_exp(X::to_r(x[off[1] + (O)c * sx]) - m);
    s = th_block_fold(s, sh, [](R a, R b) { return a + b; });
    const R k = log ? th_log(s) : (R)1 / s;
TH_LINE_LOOP
    for (long long c = t0; c < n; c += nt) {
      const R v = X::to_r(x[off[1] + (O)c * sx]) - m;
      o[off[0] + (O)c * so] = X::from_r(log ? v - k : th_exp(v) * k);
    }
  });
}

template <class I, class T> void th_rows_nn_softmax_back(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  TH_SHARED(double, th_smsh, TH_BLOCK);
  R *sh = (R *)th_smsh;
  T *o = th_ptr<T>(p.it, 0);
  const T *y = th_ptr<const T>(p.it, 1), *g = th_ptr<const T>(p.it, 2);
  const O so = (O)p.step[0], sy = (O)p.step[1], sg = (O)p.step[2];
  const long long n = p.len[0], t0 = threadIdx.x, nt = blockDim.x;
  const bool log = p.it.i[0] != 0;
  th_for_each_block<I, 3>(p.it, [&](I, const O *off) {
    R a = (R)0;
TH_LINE_LOOP
    for (long long c = t0; c < n; c += nt) {
      const R gv = X::to_r(g[off[2] + (O)c * sg]);
      a += log ? gv : gv * X::to_r(y[off[1] + (O)c * sy]);
    }
    a = th_block_fold(a, sh, [](R u, R v) { return u + v; });
TH_LINE_LOOP
    for (long long c = t0; c < n; c += nt) {
      const R yv = X::to_r(y[off[1] + (O)c * sy]), gv = X::to_r(g[off[2] + (O)c * sg]);
      o[off[0] + (O)c * so] = X::from_r(log ? gv - th_exp(yv) * a : yv * (gv - a));
    }
  });
}

// ---- MultiMargin and MultiLabelMargin: one thread per frame (lines.cuh) ----

// Each item is a frame (a row of `dim` scores, the line of the score operands). The host checked
// the targets; a class outside [0, dim) still never leaves the line (MultiMargin's frame gets
// NaN, MultiLabel's list ends there). The loss terms are the host's: hinge values in R, squared
// and summed over the frame in double, times the target's weight; the frames' losses are summed
// by the device reduction. MultiMargin: f[0] = margin, i[1] flags (1: p == 2, 2: weighted, 4:
// sizeAverage).
// The gradient's scale 1 / (dim, times the frames with sizeAverage) is rounded to R, the host's
// `from_f64` in the compute type.
template <class R> __forceinline__ R th_nn_margin_scale(long long frames, long long dim, bool average) {
  return (R)(1.0 / (double)(average ? frames * dim : dim));
}

// Operands: loss (double, one per frame), x (line), target (long long, one per frame), weights
// (line; read only when weighted).
template <class I, class T> void th_lines_nn_multi_margin(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  double *loss = th_ptr<double>(p.it, 0);
  const T *x = th_ptr<const T>(p.it, 1), *w = th_ptr<const T>(p.it, 3);
  const long long *tg = th_ptr<const long long>(p.it, 2);
  const O sx = (O)p.step[1], sw = (O)p.step[3];
  const long long n = p.len[1], flags = p.it.i[1];
  const R m = (R)p.it.f[0];
  th_for_each<I, 4>(p.it, [&](I, const O *off) {
    const long long t = tg[off[2]];
    if (t < 0 || t >= n || ((flags & 2) && t >= p.len[3])) {
      loss[off[0]] = th_vm<double>::nan();
      return;
    }
    const R xt = X::to_r(x[off[1] + (O)t * sx]);
    double s = 0.0;
TH_LINE_LOOP
    for (long long d = 0; d < n; ++d) {
      const R z = m - xt + X::to_r(x[off[1] + (O)d * sx]);
      if (d != t && z > (R)0) s += (flags & 1) ? (double)z * (double)z : (double)z;
    }
    loss[off[0]] = s * ((flags & 2) ? (double)X::to_r(w[off[3] + (O)t * sw]) : 1.0);
  });
}

// Operands: gradInput (line), x (line), target (one per frame), weights (line).
template <class I, class T> void th_lines_nn_multi_margin_back(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  T *o = th_ptr<T>(p.it, 0);
  const T *x = th_ptr<const T>(p.it, 1), *w = th_ptr<const T>(p.it, 3);
  const long long *tg = th_ptr<const long long>(p.it, 2);
  const O so = (O)p.step[0], sx = (O)p.step[1], sw = (O)p.step[3];
  const long long n = p.len[1] < p.len[0] ? p.len[1] : p.len[0], flags = p.it.i[1];
  const R m = (R)p.it.f[0], g = th_nn_margin_scale<R>(p.it.n, n, (flags & 4) != 0);
  th_for_each<I, 4>(p.it, [&](I, const O *off) {
    const long long t = tg[off[2]];
    if (t < 0 || t >= n || ((flags & 2) && t >= p.len[3])) return;
    const R xt = X::to_r(x[off[1] + (O)t * sx]), wt = (flags & 2) ? X::to_r(w[off[3] + (O)t * sw]) : (R)1;
    R gt = (R)0;
TH_LINE_LOOP
    for (long long d = 0; d < n; ++d) {
      const R z = m - xt + X::to_r(x[off[1] + (O)d * sx]);
      R h = (R)0;
      if (d != t && z > (R)0) {
        h = ((flags & 1) ? (R)2 * g * z : g) * wt;
        gt -= h;
      }
      o[off[0] + (O)d * so] = X::from_r(h);
    }
    o[off[0] + (O)t * so] = X::from_r(gt);
  });
}

// Operands: loss (double, one per frame), isTarget (line, written), x (line), target (line: the
// frame's classes up to the first -1).
template <class I, class T> void th_lines_nn_multi_label(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  double *loss = th_ptr<double>(p.it, 0);
  T *is = th_ptr<T>(p.it, 1);
  const T *x = th_ptr<const T>(p.it, 2);
  const long long *tg = th_ptr<const long long>(p.it, 3);
  const O si = (O)p.step[1], sx = (O)p.step[2], st = (O)p.step[3];
  long long n = p.len[1] < p.len[2] ? p.len[1] : p.len[2];
  n = n < p.len[3] ? n : p.len[3];
  const T zero = X::from_r((R)0), one = X::from_r((R)1);
  th_for_each<I, 4>(p.it, [&](I, const O *off) {
TH_LINE_LOOP
    for (long long d = 0; d < n; ++d) is[off[1] + (O)d * si] = zero;
    long long labels = 0;
TH_LINE_LOOP
    for (; labels < n; ++labels) {
      const long long j = tg[off[3] + (O)labels * st];
      if (j < 0 || j >= n) break;
      is[off[1] + (O)j * si] = one;
    }
    double s = 0.0;
TH_LINE_LOOP
    for (long long k = 0; k < labels; ++k) {
      const R xj = X::to_r(x[off[2] + (O)tg[off[3] + (O)k * st] * sx]);
TH_LINE_LOOP
      for (long long d = 0; d < n; ++d) {
        const R z = (R)1 - xj + X::to_r(x[off[2] + (O)d * sx]);
        if (X::to_r(is[off[1] + (O)d * si]) == (R)0 && z > (R)0) s += (double)z;
      }
    }
    loss[off[0]] = s;
  });
}

// Operands: gradInput (line), x (line), isTarget (line), target (line); i[0] = sizeAverage.
// Element d of the frame gets, for each listed class j in list order, +g where d is not a target
// and 1 - x[j] + x[d] > 0, then, where d == j, -g times the count of such d for j: the host's
// sequence of additions for that element, accumulated in R.
template <class I, class T> void th_lines_nn_multi_label_back(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef th_traits<T> X;
  typedef typename X::R R;
  T *o = th_ptr<T>(p.it, 0);
  const T *x = th_ptr<const T>(p.it, 1), *is = th_ptr<const T>(p.it, 2);
  const long long *tg = th_ptr<const long long>(p.it, 3);
  const O so = (O)p.step[0], sx = (O)p.step[1], si = (O)p.step[2], st = (O)p.step[3];
  long long n = p.len[0] < p.len[1] ? p.len[0] : p.len[1];
  n = n < p.len[2] ? n : p.len[2];
  n = n < p.len[3] ? n : p.len[3];
  const R g = th_nn_margin_scale<R>(p.it.n, n, p.it.i[0] != 0);
  th_for_each<I, 4>(p.it, [&](I, const O *off) {
    long long labels = 0;
TH_LINE_LOOP
    for (; labels < n; ++labels) {
      const long long j = tg[off[3] + (O)labels * st];
      if (j < 0 || j >= n) break;
    }
TH_LINE_LOOP
    for (long long d = 0; d < n; ++d) {
      const R xd = X::to_r(x[off[1] + (O)d * sx]);
      const bool open = X::to_r(is[off[2] + (O)d * si]) == (R)0;
      R a = (R)0;
TH_LINE_LOOP
      for (long long k = 0; k < labels; ++k) {
        const long long j = tg[off[3] + (O)k * st];
        const R xj = X::to_r(x[off[1] + (O)j * sx]);
        if (open && (R)1 - xj + xd > (R)0) a += g;
        if (j == d) {
          long long count = 0;
TH_LINE_LOOP
          for (long long e = 0; e < n; ++e)
            count += X::to_r(is[off[2] + (O)e * si]) == (R)0 && (R)1 - xj + X::to_r(x[off[1] + (O)e * sx]) > (R)0;
          a -= g * (R)count;
        }
      }
      o[off[0] + (O)d * so] = X::from_r(a);
    }
  });
}

// ---- the float modules' kernel list (sfx, T) ----
#define TH_NN_KERNELS(sfx, T)                                                                         \
  TH_NN_OPS1(TH_K1, sfx, T) TH_NN_OPS2(TH_K2, sfx, T) TH_NN_OPS3(TH_K3, sfx, T)                        \
  TH_NN_CRIT_BACK(TH_K2, sfx, T) TH_K1(nnL1CostBack, , sfx, T) TH_K3(nnBceCritBackW, , sfx, T)         \
  TH_NN_PARAM_OPS2(TH_K2, sfx, T) TH_NN_PARAM_OPS3(TH_K3, sfx, T)                                      \
  TH_LINES(th_nnSoftMax_##sfx, th_lines_nn_softmax, T) TH_LINES(th_nnSoftMaxBack_##sfx, th_lines_nn_softmax_back, T) \
  TH_LINES_COOPERATIVE(th_nnSoftMaxRows_##sfx, th_rows_nn_softmax, T)                                \
  TH_LINES_COOPERATIVE(th_nnSoftMaxRowsBack_##sfx, th_rows_nn_softmax_back, T)                       \
  TH_LINES(th_nnMultiMargin_##sfx, th_lines_nn_multi_margin, T)                                       \
  TH_LINES(th_nnMultiMarginBack_##sfx, th_lines_nn_multi_margin_back, T)                              \
  TH_LINES(th_nnMultiLabel_##sfx, th_lines_nn_multi_label, T)                                         \
  TH_LINES(th_nnMultiLabelBack_##sfx, th_lines_nn_multi_label_back, T)
// The criterions' loss terms and PReLU's weight-gradient terms, double only.
#define TH_NN_DOUBLE_KERNELS() TH_NN_CRIT_TERMS(TH_K2, double, double) TH_NN_PARAM_TERMS(TH_K2, double, double)

#endif  // TH_CUDA_NN_CUH
