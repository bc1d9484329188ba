// Element arithmetic with the CPU engine's semantics (src/ops/num.rs): integers wrap, divide
// truncating (a zero divisor gives 0: the host rejects it first), shift through the unsigned
// type in C's promoted width (32 bits for the types narrower than int) with the count taken
// modulo that width; floats as IEEE (NVRTC runs with --fmad=false so
// nothing is fused); Half and BFloat16 compute each operation in f32 and round back.
#ifndef TH_CUDA_NUM_CUH
#define TH_CUDA_NUM_CUH

// ---- f32/f64 functions (the host's `Real`): the C library's, under one name per function ----

#define TH_LIBM1(name)                                                                                \
  __forceinline__ float th_##name(float x) { return ::name##f(x); }                                  \
  __forceinline__ double th_##name(double x) { return ::name(x); }
TH_LIBM1(log1p) TH_LIBM1(cos) TH_LIBM1(acos) TH_LIBM1(cosh) TH_LIBM1(sin) TH_LIBM1(asin)
TH_LIBM1(sinh) TH_LIBM1(tan) TH_LIBM1(atan) TH_LIBM1(sqrt) TH_LIBM1(ceil) TH_LIBM1(floor)
TH_LIBM1(round) TH_LIBM1(trunc) TH_LIBM1(fabs)
#undef TH_LIBM1
__forceinline__ float th_pow(float x, float y) { return ::powf(x, y); }
__forceinline__ double th_pow(double x, double y) { return ::pow(x, y); }
__forceinline__ float th_fmod(float x, float y) { return ::fmodf(x, y); }
__forceinline__ double th_fmod(double x, double y) { return ::fmod(x, y); }
__forceinline__ float th_atan2(float x, float y) { return ::atan2f(x, y); }
__forceinline__ double th_atan2(double x, double y) { return ::atan2(x, y); }
__forceinline__ float th_fma(float a, float b, float c) { return ::fmaf(a, b, c); }
__forceinline__ double th_fma(double a, double b, double c) { return ::fma(a, b, c); }
__forceinline__ float th_copysign(float x, float y) { return ::copysignf(x, y); }
__forceinline__ double th_copysign(double x, double y) { return ::copysign(x, y); }
#ifdef TH_EMULATOR
// The reentrant forms: plain lgamma writes the global signgam (a data race across threads).
__forceinline__ float th_lgamma(float x) { int s; return ::lgammaf_r(x, &s); }
__forceinline__ double th_lgamma(double x) { int s; return ::lgamma_r(x, &s); }
#else
__forceinline__ float th_lgamma(float x) { return ::lgammaf(x); }
__forceinline__ double th_lgamma(double x) { return ::lgamma(x); }
#endif

// ---- exp, ln, tanh, sigmoid: src/kernels/vmath/mod.rs operation for operation, as its `Fused`
// evaluation (the host's FMA kernel copies: the same bits there). Except f32 ln and tanh and
// f64 ln on AVX-512 hosts, whose contiguous runs take the slice kernels of
// src/kernels/vmath/avx512.rs (register tables, no division): the device keeps this code, so
// those differ from the host in the last bits, each within the same bound (the emulator tests
// compare them within 3 / 4 ulp instead of bit for bit) ----

// c0 + t (c1 + t (c2 + ...)), innermost first as vmath's `horner`, each step one fma.
template <class F> __forceinline__ F th_horner(F, F c) { return c; }
template <class F, class... C> __forceinline__ F th_horner(F t, F c, C... rest) {
  return th_fma(t, th_horner(t, rest...), c);
}

template <class F> struct th_vm;
template <> struct th_vm<float> {
  typedef int I;
  typedef unsigned int U;
  enum { MANT = 23, BIAS = 127 };
  static __forceinline__ float of(U b) { return th_f32_bits(b); }
  static __forceinline__ U bits(float f) { return th_bits_f32(f); }
  static __forceinline__ float log2e() { return of(0x3fb8aa3bu); }
  static __forceinline__ float ln2_hi() { return of(0x3f317000u); }
  static __forceinline__ float ln2_lo() { return of(0x3805fdf4u); }
  static __forceinline__ I sqrt_half() { return 0x3f3504f3; }
  static __forceinline__ float min_positive() { return of(0x00800000u); }
  static __forceinline__ float inf() { return of(0x7f800000u); }
  static __forceinline__ float nan() { return of(0x7fc00000u); }
  static __forceinline__ float exp_lo() { return -104.0f; }
  static __forceinline__ float exp_hi() { return 89.0f; }
  static __forceinline__ float tanh_cap() { return 10.0f; }
  static __forceinline__ float exp_series(float r) {
    return th_horner(r, 0.5f, of(0x3e2aaa5cu), of(0x3d2aaadeu), of(0x3c09116cu), of(0x3ab62967u));
  }
  static __forceinline__ float expm1_series(float r) {
    return th_horner(r, 0.5f, of(0x3e2aaaaau), of(0x3d2aaa7cu), of(0x3c08896eu), of(0x3ab69d2au), of(0x394f3376u));
  }
  static __forceinline__ float ln_series(float z) { return th_horner(z, 2.0f / 3.0f, 2.0f / 5.0f, 2.0f / 7.0f, 2.0f / 9.0f); }
};
template <> struct th_vm<double> {
  typedef long long I;
  typedef unsigned long long U;
  enum { MANT = 52, BIAS = 1023 };
  static __forceinline__ double of(U b) { return th_f64_bits(b); }
  static __forceinline__ U bits(double f) { return th_bits_f64(f); }
  static __forceinline__ double log2e() { return of(0x3ff71547652b82feull); }
  static __forceinline__ double ln2_hi() { return of(0x3fe62e42fee00000ull); }
  static __forceinline__ double ln2_lo() { return of(0x3dea39ef35793c76ull); }
  static __forceinline__ I sqrt_half() { return 0x3fe6a09e667f3bcdll; }
  static __forceinline__ double min_positive() { return of(0x0010000000000000ull); }
  static __forceinline__ double inf() { return of(0x7ff0000000000000ull); }
  static __forceinline__ double nan() { return of(0x7ff8000000000000ull); }
  static __forceinline__ double exp_lo() { return -746.0; }
  static __forceinline__ double exp_hi() { return 710.0; }
  static __forceinline__ double tanh_cap() { return 20.0; }
  static __forceinline__ double exp_series(double r) { return expm1_series(r); }
  static __forceinline__ double expm1_series(double r) {
    return th_horner(r, 1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0,
                     1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0);
  }
  static __forceinline__ double ln_series(double z) {
    return th_horner(z, 2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0, 2.0 / 11.0, 2.0 / 13.0, 2.0 / 15.0, 2.0 / 17.0,
                     2.0 / 19.0, 2.0 / 21.0);
  }
};

// x = n ln2 + r, n from the bits of a magic-number rounding.
template <class F> __forceinline__ F th_vm_reduce(F x, typename th_vm<F>::I &n) {
  typedef th_vm<F> C;
  const F magic = (F)(3ull << (C::MANT - 1));
  const F t = th_fma(x, C::log2e(), magic);
  const F nf = t - magic;
  n = (typename C::I)(C::bits(t) - C::bits(magic));
  return th_fma(-nf, C::ln2_lo(), th_fma(-nf, C::ln2_hi(), x));
}
template <class F> __forceinline__ F th_vm_pow2(typename th_vm<F>::I n) {
  typedef th_vm<F> C;
  return C::of(((typename C::U)n + (typename C::U)C::BIAS) << C::MANT);
}
// r + r^2 q(r), q = `series` (expm1's coefficients).
template <class F> __forceinline__ F th_vm_expm1_poly(F r, F series) { return th_fma(r * r, series, r); }

template <class F> __forceinline__ F th_exp(F x) {
  typedef th_vm<F> C;
  F xc = x < C::exp_lo() ? C::exp_lo() : x;
  xc = xc > C::exp_hi() ? C::exp_hi() : xc;
  typename C::I n;
  const F r = th_vm_reduce(xc, n);
  // 1 + r (1 + r q(r)).
  const F p = th_fma(r, th_fma(r, C::exp_series(r), (F)1), (F)1);
  const typename C::I h = n >> 1;
  return p * th_vm_pow2<F>(h) * th_vm_pow2<F>(n - h);
}

template <class F> __forceinline__ F th_vm_expm1(F x) {
  typename th_vm<F>::I n;
  const F r = th_vm_reduce(x, n);
  const F q = th_vm_expm1_poly(r, th_vm<F>::expm1_series(r));
  const F s = th_vm_pow2<F>(n);
  return th_fma(s, q, s - (F)1);
}

template <class F> __forceinline__ F th_tanh(F x) {
  F a = th_fabs(x);
  a = a > th_vm<F>::tanh_cap() ? th_vm<F>::tanh_cap() : a;
  const F e = th_vm_expm1(a + a);
  return th_copysign(e / (e + (F)2), x);
}

template <class F> __forceinline__ F th_log(F x) {
  typedef th_vm<F> C;
  typedef typename C::I I;
  typedef typename C::U U;
  const bool sub = x < C::min_positive();
  const F xs = sub ? x * (F)(1ull << C::MANT) : x;
  const I ix = (I)C::bits(xs);
  const I k = (I)((U)ix - (U)C::sqrt_half()) >> C::MANT;
  const F m = C::of((U)ix - ((U)k << C::MANT));
  const F kf = (F)(k - (sub ? (I)C::MANT : (I)0));
  const F f = m - (F)1;
  const F s = f / ((F)2 + f);
  const F z = s * s;
  const F lnm = th_fma(s * z, C::ln_series(z), s + s);
  const F y = th_fma(kf, C::ln2_hi(), th_fma(kf, C::ln2_lo(), lnm));
  // ln 0 = -inf, ln of a negative or NaN = NaN, ln inf = inf.
  if (x == (F)0) return -C::inf();
  if (x < (F)0 || x != x) return C::nan();
  return x == C::inf() ? x : y;
}

__forceinline__ float th_sigmoid(float x) {
  // One f32 division, the numerator selected (as vmath's sigmoid_f32).
  const float e = th_exp(-th_fabs(x));
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}
__forceinline__ double th_sigmoid(double x) {
  const double e = th_exp(-th_fabs(x));
  const double s = 1.0 / (1.0 + e);
  return x < 0.0 ? e * s : s;
}

// ---- th_num<T>: the host's `Num` per kind ----

// Integer powers as the host computes them, (T)pow((double)a, (double)b) with libm's pow, which
// is exact wherever the power is an integer a double holds. CUDA's pow may miss such a power by
// an ulp (seen on an H200: 3^4 as 80.99..), and the truncating cast makes that off by one. So
// for b >= 0 and |a| <= 2^53 the power is taken by squaring in 64-bit unsigned magnitudes and
// rounded to double once; a magnitude past 2^64 returns 2^65, which every integer type saturates.
__forceinline__ double th_ipow(double a, double b) {
  if (b == 0) return 1;
  if (b == 1) return a;
  if (b < 0 || !(th_fabs(a) <= 9007199254740992.0)) return th_pow(a, b);
  const bool neg = a < 0 && th_fmod(b, 2.0) == 1.0;
  unsigned long long base = (unsigned long long)th_fabs(a), r = 1;
  if (base <= 1) return neg ? -(double)base : (double)base;
  if (b >= 64) return neg ? -0x1p65 : 0x1p65;  // base >= 2
  for (unsigned e = (unsigned)b;;) {
    if (e & 1) {
      if (r > ~0ull / base) return neg ? -0x1p65 : 0x1p65;
      r *= base;
    }
    e >>= 1;
    if (!e) break;
    if (base > ~0ull / base) return neg ? -0x1p65 : 0x1p65;  // a later bit needs the square
    base *= base;
  }
  return neg ? -(double)r : (double)r;
}

template <class T, int K = th_traits<T>::kind> struct th_num;

template <class T> struct th_num<T, TH_KIND_INT> {
  typedef unsigned long long U;
  enum { BITS = th_traits<T>::bits, SIGNED = th_traits<T>::is_signed, C_BITS = BITS < 32 ? 32 : BITS };
  static __forceinline__ T one() { return (T)1; }
  static __forceinline__ bool isnan(T) { return false; }
  // Wrapping: computed in 64-bit unsigned, cut to T.
  static __forceinline__ T add(T a, T b) { return (T)((U)a + (U)b); }
  static __forceinline__ T sub(T a, T b) { return (T)((U)a - (U)b); }
  static __forceinline__ T mul(T a, T b) { return (T)((U)a * (U)b); }
  static __forceinline__ T neg(T a) { return (T)(0ull - (U)a); }
  // MIN / -1 wraps to MIN (and MIN % -1 is 0) instead of trapping.
  static __forceinline__ T div(T a, T b) { return b == 0 ? (T)0 : SIGNED && b == (T)-1 ? neg(a) : (T)(a / b); }
  static __forceinline__ T fmod(T a, T b) { return b == 0 || (SIGNED && b == (T)-1) ? (T)0 : (T)(a % b); }
  static __forceinline__ T remainder(T a, T b) {
    const T r = fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? add(r, b) : r;
  }
  static __forceinline__ T abs(T a) { return a < 0 ? neg(a) : a; }
  static __forceinline__ T shl(T a, T b) { return (T)((U)a << ((unsigned)b & (C_BITS - 1))); }
  static __forceinline__ T shr(T a, T b) {
    return (T)(((U)a & (~0ull >> (64 - BITS))) >> ((unsigned)b & (C_BITS - 1)));
  }
  // C's `x + v * a / b`: in int for the types narrower than int (no 8/16-bit wrap).
  static __forceinline__ T addcdiv(T x, T v, T a, T b) {
    if (BITS < 32) {
      const int d = (int)b;
      return (T)(unsigned)((int)x + (d == 0 ? 0 : (int)v * (int)a / d));
    }
    return add(x, div(mul(v, a), b));
  }
  static __forceinline__ T bitand_(T a, T b) { return (T)(a & b); }
  static __forceinline__ T bitor_(T a, T b) { return (T)(a | b); }
  static __forceinline__ T bitxor_(T a, T b) { return (T)(a ^ b); }
  // Computed in double (exactly where libm's pow is exact), cast back saturating.
  static __forceinline__ T pow(T a, T b) { return th_saturate<T>(th_ipow((double)a, (double)b)); }
  static __forceinline__ T pow_value(T a, T b) { return pow(a, b); }
  static __forceinline__ bool lt(T a, T b) { return a < b; }
  static __forceinline__ bool eq(T a, T b) { return a == b; }
};

template <class T> struct th_num<T, TH_KIND_FLOAT> {
  static __forceinline__ T one() { return (T)1; }
  static __forceinline__ bool isnan(T a) { return a != a; }
  static __forceinline__ T add(T a, T b) { return a + b; }
  static __forceinline__ T sub(T a, T b) { return a - b; }
  static __forceinline__ T mul(T a, T b) { return a * b; }
  static __forceinline__ T neg(T a) { return -a; }
  static __forceinline__ T div(T a, T b) { return a / b; }
  static __forceinline__ T fmod(T a, T b) { return th_fmod(a, b); }
  // Python's: the sign of the divisor; NaN for a zero divisor. C's `a - b * floor(a / b)` with
  // the double floor: the product and difference in double.
  static __forceinline__ T remainder(T a, T b) {
    return b == (T)0 ? th_vm<T>::nan() : (T)((double)a - (double)b * (double)th_floor(a / b));
  }
  static __forceinline__ T abs(T a) { return th_fabs(a); }
  static __forceinline__ T shl(T a, T b) { return a * th_pow((T)2, b); }
  static __forceinline__ T shr(T a, T b) { return a / th_pow((T)2, b); }
  // cpow / tpow: C's double pow. pow(t, value): TH's special values, else the type's own pow.
  static __forceinline__ T pow(T a, T b) { return (T)th_pow((double)a, (double)b); }
  static __forceinline__ T pow_value(T a, T v) {
    return v == (T)1 ? a : v == (T)2 ? a * a : v == (T)3 ? a * a * a : v == (T)0.5 ? th_sqrt(a)
         : v == (T)-0.5 ? (T)1 / th_sqrt(a) : v == (T)-1 ? (T)1 / a : v == (T)-2 ? (T)1 / (a * a) : th_pow(a, v);
  }
  static __forceinline__ T addcdiv(T x, T v, T a, T b) { return add(x, div(mul(v, a), b)); }
  static __forceinline__ bool lt(T a, T b) { return a < b; }
  static __forceinline__ bool eq(T a, T b) { return a == b; }
};

template <class T> struct th_num<T, TH_KIND_HALF> {
  typedef th_traits<T> X;
  typedef th_num<float> F;
  static __forceinline__ T one() { return X::from_r(1.0f); }
  static __forceinline__ bool isnan(T a) { return F::isnan(X::to_r(a)); }
  static __forceinline__ T add(T a, T b) { return X::from_r(X::to_r(a) + X::to_r(b)); }
  static __forceinline__ T sub(T a, T b) { return X::from_r(X::to_r(a) - X::to_r(b)); }
  static __forceinline__ T mul(T a, T b) { return X::from_r(X::to_r(a) * X::to_r(b)); }
  static __forceinline__ T div(T a, T b) { return X::from_r(X::to_r(a) / X::to_r(b)); }
  static __forceinline__ T fmod(T a, T b) { return X::from_r(F::fmod(X::to_r(a), X::to_r(b))); }
  static __forceinline__ T remainder(T a, T b) { return X::from_r(F::remainder(X::to_r(a), X::to_r(b))); }
  static __forceinline__ T shl(T a, T b) { return X::from_r(F::shl(X::to_r(a), X::to_r(b))); }
  static __forceinline__ T shr(T a, T b) { return X::from_r(F::shr(X::to_r(a), X::to_r(b))); }
  static __forceinline__ T pow(T a, T b) { return X::from_r(th_pow(X::to_r(a), X::to_r(b))); }
  static __forceinline__ T pow_value(T a, T v) { return X::from_r(F::pow_value(X::to_r(a), X::to_r(v))); }
  static __forceinline__ T addcdiv(T x, T v, T a, T b) { return add(x, div(mul(v, a), b)); }
  // Sign and magnitude on the bits, as the host's `half` types do.
  static __forceinline__ T neg(T a) { a.x ^= 0x8000u; return a; }
  static __forceinline__ T abs(T a) { a.x &= 0x7fffu; return a; }
  static __forceinline__ bool lt(T a, T b) { return X::to_r(a) < X::to_r(b); }
  static __forceinline__ bool eq(T a, T b) { return X::to_r(a) == X::to_r(b); }
};

// Bool has only comparisons (of the stored bytes, as the host's derived order).
template <class T> struct th_num<T, TH_KIND_BOOL> {
  static __forceinline__ bool lt(T a, T b) { return a.x < b.x; }
  static __forceinline__ bool eq(T a, T b) { return a.x == b.x; }
};

// The host's `Num` provided methods, on every numeric kind.
template <class T> struct th_ops : th_num<T> {
  typedef th_num<T> N;
  static __forceinline__ bool gt(T a, T b) { return N::lt(b, a); }
  // max / min with a NaN winning (the first one if both are).
  static __forceinline__ T max_nan(T a, T b) {
    return N::isnan(a) || N::isnan(b) ? (N::isnan(a) ? a : b) : (N::lt(a, b) ? b : a);
  }
  static __forceinline__ T min_nan(T a, T b) {
    return N::isnan(a) || N::isnan(b) ? (N::isnan(a) ? a : b) : (N::lt(b, a) ? b : a);
  }
  // TH's cmax / cmin: `a > b ? a : b` / `a < b ? a : b` (a NaN in b propagates, one in a not).
  static __forceinline__ T th_max(T a, T b) { return N::lt(b, a) ? a : b; }
  static __forceinline__ T th_min(T a, T b) { return N::lt(a, b) ? a : b; }
  // TH's `a > 0 ? 1 : (a < 0 ? -1 : 0)`: NaN and -0 give +0.
  static __forceinline__ T sign(T a) {
    const T zero = N::sub(N::one(), N::one());
    return N::lt(zero, a) ? N::one() : N::lt(a, zero) ? N::neg(N::one()) : zero;
  }
  // TH's `x < lo ? lo : (x > hi ? hi : x)`.
  static __forceinline__ T clamp(T x, T lo, T hi) { return N::lt(x, lo) ? lo : N::lt(hi, x) ? hi : x; }
};

#endif  // TH_CUDA_NUM_CUH
