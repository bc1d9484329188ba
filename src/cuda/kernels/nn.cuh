// THCUNN's elementwise layers (src/nn/activation): each op is the host closure's expression,
// operation for operation, in the compute type R (f32 for Half), rounded once on store. The
// scalar options v (param 0) and w (param 1) arrive rounded to the element type, as the host's.
#ifndef TH_CUDA_NN_CUH
#define TH_CUDA_NN_CUH

// The C library's exp and expm1, as the host's closures call them (`Real::exp`, `exp_m1`).
__forceinline__ float th_cexp(float x) { return ::expf(x); }
__forceinline__ double th_cexp(double x) { return ::exp(x); }
__forceinline__ float th_expm1(float x) { return ::expm1f(x); }
__forceinline__ double th_expm1(double x) { return ::expm1(x); }

// One input x: name, expression of x, v, w.
#define TH_NN_OPS1(X, ...)                                                                            \
  X(nnElu, x <= (R)0 ? th_expm1(x) * v : x, __VA_ARGS__)                                             \
  X(nnHardShrink, (x > v || x < -v) ? x : (R)0, __VA_ARGS__)                                          \
  X(nnHardTanh, x < v ? v : (x > w ? w : x), __VA_ARGS__)                                             \
  X(nnLeakyRelu, x > (R)0 ? x : x * v, __VA_ARGS__)                                                   \
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
  X(nnSigmoidBack, g * ((R)1 - x) * x, __VA_ARGS__)                                                   \
  X(nnShrinkBack, (x > v || x < -v) ? g : (R)0, __VA_ARGS__)                                          \
  X(nnSqrtBack, x == (R)0 ? (R)0 : (R)0.5 * (g / x), __VA_ARGS__)                                    \
  X(nnSquareBack, (R)2 * g * x, __VA_ARGS__)                                                          \
  X(nnTanhBack, g * ((R)1 - x * x), __VA_ARGS__)                                                      \
  X(nnThresholdBack, x <= v ? (R)0 : g, __VA_ARGS__)

// Three inputs x, y (output), g: SoftPlus's gradient.
#define TH_NN_OPS3(X, ...) X(nnSoftPlusBack, x * v > w ? g : -g * th_expm1(-(y * v)), __VA_ARGS__)

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
#define TH_NN_DEF2(name, expr, _) TH_NN_OP(name, (T x_, T g_), const R x = X::to_r(x_); const R g = X::to_r(g_), expr)
#define TH_NN_DEF3(name, expr, _)                                                                     \
  TH_NN_OP(name, (T x_, T y_, T g_), const R x = X::to_r(x_); const R y = X::to_r(y_); const R g = X::to_r(g_), expr)
TH_NN_OPS1(TH_NN_DEF1, )
TH_NN_OPS2(TH_NN_DEF2, )
TH_NN_OPS3(TH_NN_DEF3, )
#undef TH_NN_DEF1
#undef TH_NN_DEF2
#undef TH_NN_DEF3
#undef TH_NN_OP

// ---- the float modules' kernel list (sfx, T) ----
#define TH_NN_KERNELS(sfx, T) TH_NN_OPS1(TH_K1, sfx, T) TH_NN_OPS2(TH_K2, sfx, T) TH_NN_OPS3(TH_K3, sfx, T)

#endif  // TH_CUDA_NN_CUH
