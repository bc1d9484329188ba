// Shared by every kernel module: launch parameters, dtypes and their conversions, index math
// and the kernel-definition macros. Header-free (NVRTC 13 ships no CUDA headers), so the same
// text compiles under NVRTC (prepended to each module's source by src/cuda/kernels/mod.rs) and
// under the host C++ compiler with -DTH_EMULATOR and csrc/cuda_emu/shim.h (the CPU emulator).
#ifndef TH_CUDA_COMMON_CUH
#define TH_CUDA_COMMON_CUH

// ---- launch parameters (mirrored #[repr(C)] in src/cuda/launch.rs; sizes checked both sides) ----

#define TH_CUDA_MAX_DIMS 16
#define TH_CUDA_MAX_OPERANDS 4
// Threads per block of the pointwise kernels (launch bounds; launch.rs uses the same number).
#define TH_BLOCK 512

// One tensor operand: its first element's address and element strides over the collapsed dims.
struct THCOperand {
  unsigned long long data;
  long long strides[TH_CUDA_MAX_DIMS];
};

// The one parameter of every pointwise kernel. Dims are outermost first (the last is fastest);
// arg[0] is the output. Scalar operand k: its bits in i[k] (see th_param), its value in f[k].
struct THCPointwise {
  long long n;
  int ndim;
  int op;  // the operation, for kernels serving several (the comparisons: pointwise.cuh)
  long long sizes[TH_CUDA_MAX_DIMS];
  THCOperand arg[TH_CUDA_MAX_OPERANDS];
  double f[2];
  long long i[2];
};

static_assert(sizeof(THCOperand) == 136, "THCOperand layout");
static_assert(sizeof(THCPointwise) == 720, "THCPointwise layout");
// Field offsets: checked by the host compiler (NVRTC has no offsetof; with the same natural
// alignment rules, equal sizes there and equal offsets here pin the layout down).
#ifdef TH_EMULATOR
static_assert(__builtin_offsetof(THCPointwise, ndim) == 8, "THCPointwise layout");
static_assert(__builtin_offsetof(THCPointwise, op) == 12, "THCPointwise layout");
static_assert(__builtin_offsetof(THCPointwise, sizes) == 16, "THCPointwise layout");
static_assert(__builtin_offsetof(THCPointwise, arg) == 144, "THCPointwise layout");
static_assert(__builtin_offsetof(THCPointwise, f) == 688, "THCPointwise layout");
static_assert(__builtin_offsetof(THCPointwise, i) == 704, "THCPointwise layout");
static_assert(__builtin_offsetof(THCOperand, strides) == 8, "THCOperand layout");
#endif

// ---- kernel definition and (emulator only) registration ----

#ifdef TH_EMULATOR
// Kinds: TH_EMU_INDEPENDENT kernels never wait on other threads of their block (run one thread
// after another on the caller's thread); TH_EMU_COOPERATIVE ones use __syncthreads or shared
// memory (each block's threads run as fibers taking turns between barriers).
// `bound`: the kernel's __launch_bounds__, which the emulator enforces as a GPU does.
#define TH_EMU_REGISTER(name, kind, bound, Params, ...)                                                \
  static const int th_emu_reg_##name = th_emu_register(#name, kind, bound, &th_emu_call<Params, __VA_ARGS__>);
#else
#define TH_EMU_REGISTER(name, kind, bound, Params, ...)
#endif

// `T name[N]` in the block's shared memory. The emulator gives each block its own array,
// poisoned (0xff bytes: NaN, -1) before the block's first use, so a read before any write of
// the block shows, as undefined shared memory would on a GPU (plain statics would start zeroed
// and carry values from block to block and launch to launch).
#ifdef TH_EMULATOR
#define TH_SHARED(T, name, N)                                                                         \
  static char th_shared_key_##name;                                                                  \
  T *const name = (T *)th_emu_shared(&th_shared_key_##name, sizeof(T) * (N))
#else
#define TH_SHARED(T, name, N) __shared__ T name[N]
#endif

// `T *name`: the launch's dynamic shared memory (the emulator's per-launch buffer).
#ifdef TH_EMULATOR
#define TH_DYNAMIC_SHARED(T, name) T *name = (T *)th_emu_dynamic_shared()
#else
#define TH_DYNAMIC_SHARED(T, name)                                                                    \
  extern __shared__ __align__(16) unsigned char th_dynamic_shared_[];                                 \
  T *name = (T *)th_dynamic_shared_
#endif

// An extern "C" kernel `name(const Params p)` whose body is the function `...(const Params &)`.
#define TH_KERNEL(name, kind, Params, ...)                                                            \
  extern "C" __global__ void __launch_bounds__(TH_BLOCK) name(const Params p) { __VA_ARGS__(p); }   \
  TH_EMU_REGISTER(name, kind, TH_BLOCK, Params, __VA_ARGS__)

// The two index widths of a pointwise kernel: `name_i32` and `name_i64`, whose body is
// `body<I, ...>` with I the unsigned index type.
#define TH_POINTWISE(name, body, ...)                                                                 \
  TH_KERNEL(name##_i32, TH_EMU_INDEPENDENT, THCPointwise, body<unsigned int, __VA_ARGS__>)          \
  TH_KERNEL(name##_i64, TH_EMU_INDEPENDENT, THCPointwise, body<unsigned long long, __VA_ARGS__>)

// ---- dtypes ----

// 16-bit floats and Bool are distinct structs so templates can tell them from integers.
struct th_half { unsigned short x; };
struct th_bfloat16 { unsigned short x; };
struct th_bool { unsigned char x; };

// Name suffix, C type. Lists by kind, as the CPU side selects ops: integers, floats computed
// natively, floats computed in f32, Bool.
#define TH_INT_TYPES(X, ...)                                                                          \
  X(byte, unsigned char, __VA_ARGS__) X(char, signed char, __VA_ARGS__) X(short, short, __VA_ARGS__) \
  X(int, int, __VA_ARGS__) X(long, long long, __VA_ARGS__)
#define TH_FLOAT_TYPES(X, ...)                                                                        \
  X(float, float, __VA_ARGS__) X(double, double, __VA_ARGS__) X(half, th_half, __VA_ARGS__)          \
  X(bfloat16, th_bfloat16, __VA_ARGS__)
#define TH_NUM_TYPES(X, ...) TH_INT_TYPES(X, __VA_ARGS__) TH_FLOAT_TYPES(X, __VA_ARGS__)
#define TH_ALL_TYPES(X, ...) TH_NUM_TYPES(X, __VA_ARGS__) X(bool, th_bool, __VA_ARGS__)

// ---- bit casts and 16-bit float conversions ----

__forceinline__ float th_f32_bits(unsigned int b) { return __int_as_float((int)b); }
__forceinline__ unsigned int th_bits_f32(float f) { return (unsigned int)__float_as_int(f); }
__forceinline__ double th_f64_bits(unsigned long long b) { return __longlong_as_double((long long)b); }
__forceinline__ unsigned long long th_bits_f64(double f) { return (unsigned long long)__double_as_longlong(f); }

// IEEE binary16 -> f32, exact (a NaN keeps its payload and becomes quiet).
__forceinline__ float th_half_to_f32(th_half h) {
#ifdef TH_EMULATOR
  unsigned int sign = (unsigned int)(h.x & 0x8000u) << 16, e = (h.x >> 10) & 0x1fu, m = h.x & 0x3ffu;
  if (e == 0x1f) return th_f32_bits(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u));
  if (e != 0) return th_f32_bits(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return th_f32_bits(sign);
  // Subnormal m * 2^-24: shift the leading 1 up to the implicit bit's place.
  unsigned int k = 0;
  while (!(m & 0x400u)) { m <<= 1; ++k; }
  return th_f32_bits(sign | ((113u - k) << 23) | ((m & 0x3ffu) << 13));
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x));
  return f;
#endif
}

// f32 -> IEEE binary16, rounded to nearest even (overflow to inf, subnormals exact).
__forceinline__ th_half th_f32_to_half(float f) {
  th_half h;
#ifdef TH_EMULATOR
  unsigned int x = th_bits_f32(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  unsigned int r, rest, tie;
  if (ax > 0x7f800000u) {  // NaN: quiet, top of the payload kept
    h.x = (unsigned short)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    return h;
  }
  if (ax >= 0x477ff000u) {  // >= 65520, half way from 65504 to 2^16: rounds to inf
    h.x = (unsigned short)(sign | 0x7c00u);
    return h;
  }
  if (ax >= 0x38800000u) {  // a normal half: rebias, round off 13 mantissa bits
    r = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
    rest = ax & 0x1fffu;
    tie = 0x1000u;
  } else if (ax <= 0x33000000u) {  // <= 2^-25 (a tie with 0, which is even)
    r = 0, rest = 0, tie = 1;
  } else {  // a subnormal half: the significand in units of 2^-24
    unsigned int m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - (ax >> 23);
    r = m >> shift;
    rest = m & ((1u << shift) - 1u);
    tie = 1u << (shift - 1u);
  }
  if (rest > tie || (rest == tie && (r & 1u))) ++r;  // a carry into the exponent is right
  h.x = (unsigned short)(sign | r);
#else
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f));
#endif
  return h;
}

// bfloat16 is the top half of an f32: exact up, rounded to nearest even down; NaN stays NaN
// (quiet), as the host's `half` crate does.
__forceinline__ float th_bfloat16_to_f32(th_bfloat16 b) {
  unsigned int x = (unsigned int)b.x;
  if ((x & 0x7fffu) > 0x7f80u) x |= 0x40u;
  return th_f32_bits(x << 16);
}

__forceinline__ th_bfloat16 th_f32_to_bfloat16(float f) {
  unsigned int x = th_bits_f32(f), r = x >> 16, rest = x & 0xffffu;
  th_bfloat16 b;
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    b.x = (unsigned short)(r | 0x40u);
    return b;
  }
  if (rest > 0x8000u || (rest == 0x8000u && (r & 1u))) ++r;
  b.x = (unsigned short)r;
  return b;
}

// f64 -> f32 rounding to odd: exact values stay, inexact ones are cut toward zero with the last
// bit set, so a second rounding to 16 bits equals one rounding of the f64 (the host's
// `f64_to_f32_round_odd`).
__forceinline__ float th_f64_to_f32_odd(double x) {
  float f = (float)x;
  if ((double)f == x || x != x) return f;
  unsigned int b = th_bits_f32(f);
  if (fabs((double)f) > fabs(x)) --b;
  return th_f32_bits(b | 1u);
}

// ---- dtype traits: kind, and a value in transit (the host's `Prim`: i64 or f64) ----

#define TH_KIND_INT 0
#define TH_KIND_FLOAT 1
#define TH_KIND_HALF 2
#define TH_KIND_BOOL 3

template <class T> struct th_traits;

#define TH_INT_TRAITS(sfx, T, ...)                                                                    \
  template <> struct th_traits<T> {                                                                   \
    enum { kind = TH_KIND_INT, is_float = 0, bits = 8 * (int)sizeof(T), is_signed = (T)-1 < (T)0 }; \
    static __forceinline__ long long to_i64(T v) { return (long long)v; }                            \
    static __forceinline__ double to_f64(T v) { return (double)v; }                                  \
  };
TH_INT_TYPES(TH_INT_TRAITS, )
#undef TH_INT_TRAITS

// Floats computed natively: R (the compute type) is the type itself.
#define TH_FLOAT_TRAITS(T)                                                                            \
  template <> struct th_traits<T> {                                                                   \
    enum { kind = TH_KIND_FLOAT, is_float = 1 };                                                      \
    typedef T R;                                                                                      \
    static __forceinline__ R to_r(T v) { return v; }                                                 \
    static __forceinline__ T from_r(R v) { return v; }                                               \
    static __forceinline__ double to_f64(T v) { return (double)v; }                                  \
  };
TH_FLOAT_TRAITS(float)
TH_FLOAT_TRAITS(double)
#undef TH_FLOAT_TRAITS

// 16-bit floats computed in f32.
#define TH_HALF_TRAITS(T, to_f32, from_f32)                                                           \
  template <> struct th_traits<T> {                                                                   \
    enum { kind = TH_KIND_HALF, is_float = 1 };                                                       \
    typedef float R;                                                                                  \
    static __forceinline__ R to_r(T v) { return to_f32(v); }                                         \
    static __forceinline__ T from_r(R v) { return from_f32(v); }                                     \
    static __forceinline__ double to_f64(T v) { return (double)to_f32(v); }                          \
  };
TH_HALF_TRAITS(th_half, th_half_to_f32, th_f32_to_half)
TH_HALF_TRAITS(th_bfloat16, th_bfloat16_to_f32, th_f32_to_bfloat16)
#undef TH_HALF_TRAITS

template <> struct th_traits<th_bool> {
  enum { kind = TH_KIND_BOOL, is_float = 0 };
  static __forceinline__ long long to_i64(th_bool v) { return v.x != 0; }
};

// Float -> integer as the host's `as`: toward zero, saturating, NaN to 0.
template <class T> __forceinline__ T th_saturate(double v) {
  // 2^(bits-1) for signed types, 2^bits for unsigned ones: the first value past the maximum.
  const double hi = (double)(1ull << (th_traits<T>::bits - 1)) * (th_traits<T>::is_signed ? 1.0 : 2.0);
  if (v != v) return (T)0;
  if (th_traits<T>::is_signed) {
    if (v >= hi) return (T)(((unsigned long long)1 << (th_traits<T>::bits - 1)) - 1);
    if (v <= -hi) return (T)((unsigned long long)1 << (th_traits<T>::bits - 1));
  } else {
    if (v >= hi) return (T)~0ull;
    if (v <= -1.0) return (T)0;
  }
  return (T)v;
}

// Value construction from the transit forms (the host's `Scalar::from_prim`).
template <class T, int K = th_traits<T>::kind> struct th_make;
template <class T> struct th_make<T, TH_KIND_INT> {
  static __forceinline__ T from_i64(long long v) { return (T)(unsigned long long)v; }  // wraps
  static __forceinline__ T from_f64(double v) { return th_saturate<T>(v); }
};
template <class T> struct th_make<T, TH_KIND_FLOAT> {
  static __forceinline__ T from_i64(long long v) { return (T)v; }
  static __forceinline__ T from_f64(double v) { return (T)v; }
};
template <class T> struct th_make<T, TH_KIND_HALF> {
  static __forceinline__ T from_i64(long long v) { return from_f64((double)v); }
  static __forceinline__ T from_f64(double v) { return th_traits<T>::from_r(th_f64_to_f32_odd(v)); }
};
template <class T> struct th_make<T, TH_KIND_BOOL> {
  static __forceinline__ T from_i64(long long v) { T b; b.x = v != 0; return b; }
  static __forceinline__ T from_f64(double v) { T b; b.x = v != 0.0; return b; }
};

// `(D)v` with the host's cast semantics (`Scalar::cast`): through i64 from integers and Bool,
// through f64 from floats.
template <class D, class S, int FloatSrc = th_traits<S>::is_float> struct th_caster;
template <class D, class S> struct th_caster<D, S, 0> {
  static __forceinline__ D cast(S v) { return th_make<D>::from_i64(th_traits<S>::to_i64(v)); }
};
template <class D, class S> struct th_caster<D, S, 1> {
  static __forceinline__ D cast(S v) { return th_make<D>::from_f64(th_traits<S>::to_f64(v)); }
};
template <class D, class S> __forceinline__ D th_cast(S v) { return th_caster<D, S>::cast(v); }

// The k-th scalar parameter as a T: i[k] holds its bits (integers and Bool as an i64 value,
// floats as their bit pattern, so NaN payloads survive); f[k] its value as an f64 (unused here).
template <class T, int K = th_traits<T>::kind> struct th_param_of {
  static __forceinline__ T get(long long i) { return th_make<T>::from_i64(i); }
};
template <> struct th_param_of<float, TH_KIND_FLOAT> {
  static __forceinline__ float get(long long i) { return th_f32_bits((unsigned int)i); }
};
template <> struct th_param_of<double, TH_KIND_FLOAT> {
  static __forceinline__ double get(long long i) { return th_f64_bits((unsigned long long)i); }
};
template <class T> struct th_param_of<T, TH_KIND_HALF> {
  static __forceinline__ T get(long long i) { T h; h.x = (unsigned short)i; return h; }
};
template <class T> __forceinline__ T th_param(const THCPointwise &p, int k) { return th_param_of<T>::get(p.i[k]); }

// ---- index math ----

// Unrolls the loop over the operands (a compile-time count).
#ifdef TH_EMULATOR
#define TH_UNROLL _Pragma("GCC unroll 4")
#else
#define TH_UNROLL _Pragma("unroll")
#endif

// a / b for index math. On a GPU a 64-bit division is a subroutine call, and the registers it
// keeps saved made ptxas spill in the reductions: operands that fit in 32 bits (nearly always)
// divide in 32 bits inline, larger ones by an inline shift-subtract loop (b < 2^63).
__forceinline__ unsigned th_udiv(unsigned a, unsigned b) { return a / b; }
__forceinline__ unsigned long long th_udiv(unsigned long long a, unsigned long long b) {
  if (((a | b) >> 32) == 0) return (unsigned)a / (unsigned)b;
  unsigned long long q = 0, r = 0;
  for (int i = 63; i >= 0; --i) {
    r = (r << 1) | ((a >> i) & 1ull);
    if (r >= b) r -= b, q |= 1ull << i;
  }
  return q;
}

// I: unsigned index type; th_offset<I>::type the signed element offset of the same width.
template <class I> struct th_offset;
template <> struct th_offset<unsigned int> { typedef int type; };
template <> struct th_offset<unsigned long long> { typedef long long type; };

// off[k] = operand k's element offset at linear index i (row-major over p.sizes).
template <class I, int N> __forceinline__ void th_offsets(const THCPointwise &p, I i, typename th_offset<I>::type *off) {
  typedef typename th_offset<I>::type O;
TH_UNROLL
  for (int k = 0; k < N; ++k) off[k] = 0;
  I r = i;
  for (int d = p.ndim - 1; d >= 0; --d) {
    const I size = (I)p.sizes[d], q = r / size, x = r - q * size;
    r = q;
TH_UNROLL
    for (int k = 0; k < N; ++k) off[k] += (O)x * (O)p.arg[k].strides[d];
  }
}

// Calls f(i, off) for every linear index i this thread owns (a grid-stride loop: any grid size
// is correct; i counts row-major over p.sizes), off[k] the element offset of operand k. Contiguous operands (one dim, unit strides:
// a branch uniform over the launch) skip the division walk.
template <class I, int N, class F> __forceinline__ void th_for_each(const THCPointwise &p, F f) {
  typedef typename th_offset<I>::type O;
  const I n = (I)p.n, step = (I)blockDim.x * (I)gridDim.x;
  I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;
  bool contiguous = p.ndim == 1;
TH_UNROLL
  for (int k = 0; k < N; ++k) contiguous = contiguous && p.arg[k].strides[0] == 1;
  O off[N];
  if (contiguous) {
    for (; i < n; i += step) {
TH_UNROLL
      for (int k = 0; k < N; ++k) off[k] = (O)i;
      f(i, off);
    }
    return;
  }
  for (; i < n; i += step) {
    th_offsets<I, N>(p, i, off);
    f(i, off);
  }
}

// Calls f(i, off) for every item i this thread's block owns (a grid-stride loop over blocks:
// every thread of a block gets the same items, for kernels whose block shares an item's work).
template <class I, int N, class F> __forceinline__ void th_for_each_block(const THCPointwise &p, F f) {
  typedef typename th_offset<I>::type O;
  O off[N];
  for (I i = (I)blockIdx.x; i < (I)p.n; i += (I)gridDim.x) {
    th_offsets<I, N>(p, i, off);
    f(i, off);
  }
}

// Typed pointer to operand k.
template <class T> __forceinline__ T *th_ptr(const THCPointwise &p, int k) {
  return (T *)p.arg[k].data;
}

#endif  // TH_CUDA_COMMON_CUH
