// The arithmetic of the numeric dtypes (src/ops/arith.rs) and the float functions of the
// floating ones, as functors and per-dtype kernel lists.
#ifndef TH_CUDA_ARITH_CUH
#define TH_CUDA_ARITH_CUH

// With a value: name, expression of the element x and the values v (param 0), w (param 1).
#define TH_VALUE_OPS(X, ...)                                                                          \
  X(add, N::add(x, v), __VA_ARGS__) X(sub, N::sub(x, v), __VA_ARGS__) X(mul, N::mul(x, v), __VA_ARGS__) \
  X(div, N::div(x, v), __VA_ARGS__) X(lshift, N::shl(x, v), __VA_ARGS__)                              \
  X(rshift, N::shr(x, v), __VA_ARGS__) X(fmod, N::fmod(x, v), __VA_ARGS__)                            \
  X(remainder, N::remainder(x, v), __VA_ARGS__) X(cmaxValue, N::th_max(x, v), __VA_ARGS__)           \
  X(cminValue, N::th_min(x, v), __VA_ARGS__) X(pow, N::pow_value(x, v), __VA_ARGS__)                       \
  X(tpow, N::pow(v, x), __VA_ARGS__) X(clamp, N::clamp(x, v, w), __VA_ARGS__) X(neg, N::neg(x), __VA_ARGS__) \
  X(abs, N::abs(x), __VA_ARGS__) X(sign, N::sign(x), __VA_ARGS__) X(cinv, N::div(N::one(), x), __VA_ARGS__)
#define TH_INT_VALUE_OPS(X, ...)                                                                      \
  X(bitand, N::bitand_(x, v), __VA_ARGS__) X(bitor, N::bitor_(x, v), __VA_ARGS__)                     \
  X(bitxor, N::bitxor_(x, v), __VA_ARGS__)

// With a tensor: name, expression of the elements x, y and the value v (cadd: t + value * src).
#define TH_TENSOR_OPS(X, ...)                                                                         \
  X(cadd, N::add(x, N::mul(v, y)), __VA_ARGS__) X(csub, N::sub(x, N::mul(v, y)), __VA_ARGS__)         \
  X(cmul, N::mul(x, y), __VA_ARGS__) X(cdiv, N::div(x, y), __VA_ARGS__) X(cpow, N::pow(x, y), __VA_ARGS__) \
  X(clshift, N::shl(x, y), __VA_ARGS__) X(crshift, N::shr(x, y), __VA_ARGS__)                         \
  X(cfmod, N::fmod(x, y), __VA_ARGS__) X(cremainder, N::remainder(x, y), __VA_ARGS__)                 \
  X(cmax, N::th_max(x, y), __VA_ARGS__) X(cmin, N::th_min(x, y), __VA_ARGS__)
#define TH_INT_TENSOR_OPS(X, ...)                                                                     \
  X(cbitand, N::bitand_(x, y), __VA_ARGS__) X(cbitor, N::bitor_(x, y), __VA_ARGS__)                   \
  X(cbitxor, N::bitxor_(x, y), __VA_ARGS__)

// t + value * s1 * s2 (each step rounded in T) and t + value * s1 / s2 (C's promotions, as the
// host's `Num::addcdiv`).
#define TH_TERNARY_OPS(X, ...)                                                                        \
  X(addcmul, N::add(x, N::mul(N::mul(v, y), z)), __VA_ARGS__)                                         \
  X(addcdiv, N::addcdiv(x, v, y, z), __VA_ARGS__)

// Float functions: name, expression of r, the element in the compute type R.
#define TH_FLOAT_FNS(X, ...)                                                                          \
  X(sigmoid, th_sigmoid(r), __VA_ARGS__) X(log, th_log(r), __VA_ARGS__) X(lgamma, th_lgamma(r), __VA_ARGS__) \
  X(log1p, th_log1p(r), __VA_ARGS__) X(exp, th_exp(r), __VA_ARGS__) X(cos, th_cos(r), __VA_ARGS__)   \
  X(acos, th_acos(r), __VA_ARGS__) X(cosh, th_cosh(r), __VA_ARGS__) X(sin, th_sin(r), __VA_ARGS__)    \
  X(asin, th_asin(r), __VA_ARGS__) X(sinh, th_sinh(r), __VA_ARGS__) X(tan, th_tan(r), __VA_ARGS__)    \
  X(atan, th_atan(r), __VA_ARGS__) X(tanh, th_tanh(r), __VA_ARGS__) X(sqrt, th_sqrt(r), __VA_ARGS__)  \
  X(rsqrt, (R)1 / th_sqrt(r), __VA_ARGS__) X(ceil, th_ceil(r), __VA_ARGS__)                           \
  X(floor, th_floor(r), __VA_ARGS__) X(round, th_round(r), __VA_ARGS__) X(trunc, th_trunc(r), __VA_ARGS__) \
  X(frac, r - th_trunc(r), __VA_ARGS__)

// Functor `th_op_<name><T>`: `operator() params` returns expr, with N = th_ops<T>, the values
// v, w and, for the float functions, X = th_traits<T> and R its compute type.
#define TH_OP(name, params, expr)                                                                     \
  template <class T> struct th_op_##name {                                                            \
    typedef th_ops<T> N;                                                                              \
    T v, w;                                                                                           \
    __forceinline__ th_op_##name(const THCPointwise &p) : v(th_param<T>(p, 0)), w(th_param<T>(p, 1)) {} \
    __forceinline__ T operator() params const { return expr; }                                       \
  };
#define TH_DEF1(name, expr, _) TH_OP(name, (T x), expr)
#define TH_DEF2(name, expr, _) TH_OP(name, (T x, T y), expr)
#define TH_DEF3(name, expr, _) TH_OP(name, (T x, T y, T z), expr)
#define TH_DEF_FN(name, expr, _)                                                                      \
  template <class T> struct th_op_##name {                                                            \
    typedef th_traits<T> X;                                                                           \
    typedef typename X::R R;                                                                          \
    __forceinline__ th_op_##name(const THCPointwise &) {}                                             \
    __forceinline__ T operator()(T x) const {                                                         \
      const R r = X::to_r(x);                                                                         \
      return X::from_r(expr);                                                                         \
    }                                                                                                 \
  };
TH_VALUE_OPS(TH_DEF1, )
TH_INT_VALUE_OPS(TH_DEF1, )
TH_TENSOR_OPS(TH_DEF2, )
TH_INT_TENSOR_OPS(TH_DEF2, )
TH_TERNARY_OPS(TH_DEF3, )
TH_FLOAT_FNS(TH_DEF_FN, )

// atan2(a, b) in C order (a is "y"); lerp: a + weight * (b - a), the weight in param 0.
template <class T> struct th_op_atan2 {
  typedef th_traits<T> X;
  __forceinline__ th_op_atan2(const THCPointwise &) {}
  __forceinline__ T operator()(T a, T b) const { return X::from_r(th_atan2(X::to_r(a), X::to_r(b))); }
};
template <class T> struct th_op_lerp {
  typedef th_traits<T> X;
  typename X::R w;
  __forceinline__ th_op_lerp(const THCPointwise &p) : w(X::to_r(th_param<T>(p, 0))) {}
  __forceinline__ T operator()(T a, T b) const {
    const typename X::R x = X::to_r(a), y = X::to_r(b);
    return X::from_r(x + w * (y - x));
  }
};

// ---- per-dtype kernel lists (sfx, T: one row of TH_NUM_TYPES) ----

#define TH_K1(name, expr, sfx, T) TH_POINTWISE(th_##name##_##sfx, th_body1, T, T, th_op_##name<T>)
#define TH_K2(name, expr, sfx, T) TH_POINTWISE(th_##name##_##sfx, th_body2, T, T, th_op_##name<T>)
#define TH_K3(name, expr, sfx, T) TH_POINTWISE(th_##name##_##sfx, th_body3, T, th_op_##name<T>)

#define TH_NUM_KERNELS(sfx, T)                                                                        \
  TH_VALUE_OPS(TH_K1, sfx, T) TH_TENSOR_OPS(TH_K2, sfx, T) TH_TERNARY_OPS(TH_K3, sfx, T)
#define TH_INT_KERNELS(sfx, T)                                                                        \
  TH_NUM_KERNELS(sfx, T) TH_INT_VALUE_OPS(TH_K1, sfx, T) TH_INT_TENSOR_OPS(TH_K2, sfx, T)
#define TH_FLOAT_KERNELS(sfx, T)                                                                      \
  TH_NUM_KERNELS(sfx, T) TH_FLOAT_FNS(TH_K1, sfx, T) TH_K2(atan2, , sfx, T) TH_K2(lerp, , sfx, T)

#endif  // TH_CUDA_ARITH_CUH
