// The pointwise kernels' bodies (`o = op(a, b, c)` over the launch's elements, the op a functor
// built once per thread from the parameters), and the kernels every dtype has: fill, copy from
// every dtype, comparisons.
#ifndef TH_CUDA_POINTWISE_CUH
#define TH_CUDA_POINTWISE_CUH

template <class I, class To, class Op> void th_body0(const THCPointwise &p) {
  To *o = th_ptr<To>(p, 0);
  const Op op(p);
  th_for_each<I, 1>(p, [&](I, const typename th_offset<I>::type *off) { o[off[0]] = op(); });
}

template <class I, class To, class Ta, class Op> void th_body1(const THCPointwise &p) {
  To *o = th_ptr<To>(p, 0);
  const Ta *a = th_ptr<const Ta>(p, 1);
  const Op op(p);
  th_for_each<I, 2>(p, [&](I, const typename th_offset<I>::type *off) { o[off[0]] = op(a[off[1]]); });
}

template <class I, class To, class Ta, class Op> void th_body2(const THCPointwise &p) {
  To *o = th_ptr<To>(p, 0);
  const Ta *a = th_ptr<const Ta>(p, 1), *b = th_ptr<const Ta>(p, 2);
  const Op op(p);
  th_for_each<I, 3>(p, [&](I, const typename th_offset<I>::type *off) { o[off[0]] = op(a[off[1]], b[off[2]]); });
}

template <class I, class T, class Op> void th_body3(const THCPointwise &p) {
  T *o = th_ptr<T>(p, 0);
  const T *a = th_ptr<const T>(p, 1), *b = th_ptr<const T>(p, 2), *c = th_ptr<const T>(p, 3);
  const Op op(p);
  th_for_each<I, 4>(p, [&](I, const typename th_offset<I>::type *off) { o[off[0]] = op(a[off[1]], b[off[2]], c[off[3]]); });
}

// ---- fill and copy ----

template <class T> struct th_op_fill {
  T v;
  __forceinline__ th_op_fill(const THCPointwise &p) : v(th_param<T>(p, 0)) {}
  __forceinline__ T operator()() const { return v; }
};

// A cast (the host's `Scalar::cast`), or the bits when both dtypes are the same (as the host's
// memcpy: a NaN's payload survives), except Bool, whose bytes become 0 or 1.
template <class D, class S> struct th_op_copy {
  __forceinline__ th_op_copy(const THCPointwise &) {}
  __forceinline__ D operator()(S x) const { return th_cast<D>(x); }
};
template <class T> struct th_op_copy<T, T> {
  __forceinline__ th_op_copy(const THCPointwise &) {}
  __forceinline__ T operator()(T x) const { return x; }
};
template <> struct th_op_copy<th_bool, th_bool> {
  __forceinline__ th_op_copy(const THCPointwise &) {}
  __forceinline__ th_bool operator()(th_bool x) const { return th_cast<th_bool>(x); }
};

// ---- comparisons ----

// Against a value (`cmpValue`, param 0) or a tensor (`cmpTensor`), writing 1 or 0 as Byte, Bool
// or the input's own dtype (TH's `*T` forms). Which comparison is `p.op`, a mask of the outcomes
// that give 1: TH_CMP_LT | TH_CMP_EQ | TH_CMP_GT | TH_CMP_UNORDERED (lt 1, le 3, gt 4, ge 6, eq 2,
// ne 13). One kernel serves the six (the selection is a shift, uniform over the launch) rather
// than six times as many kernels for NVRTC to compile.
#define TH_CMP_LT 1
#define TH_CMP_EQ 2
#define TH_CMP_GT 4
#define TH_CMP_UNORDERED 8

template <class T, class O> struct th_cmp {
  typedef th_num<T> N;
  T v;
  int mask;
  O one, zero;
  __forceinline__ th_cmp(const THCPointwise &p)
      : v(th_param<T>(p, 0)), mask(p.op), one(th_make<O>::from_i64(1)), zero(th_make<O>::from_i64(0)) {}
  __forceinline__ O operator()(T a, T b) const {
    // The outcome's bit: a < b, a == b, a > b, or none of them (a NaN).
    const int outcome = N::lt(a, b) ? 0 : N::eq(a, b) ? 1 : N::lt(b, a) ? 2 : 3;
    return (mask >> outcome) & 1 ? one : zero;
  }
  __forceinline__ O operator()(T a) const { return (*this)(a, v); }
};

// ---- the kernels of every dtype (sfx, T: one row of TH_ALL_TYPES) ----

#define TH_COPY_FROM(ssfx, S, dsfx, D) TH_POINTWISE(th_copy_##dsfx##_##ssfx, th_body1, D, S, th_op_copy<D, S>)
#define TH_CMP_KERNELS(isfx, T, osfx, O)                                                              \
  TH_POINTWISE(th_cmpValue_##isfx##_##osfx, th_body1, O, T, th_cmp<T, O>)                             \
  TH_POINTWISE(th_cmpTensor_##isfx##_##osfx, th_body2, O, T, th_cmp<T, O>)

// th_fill_<T>, th_copy_<T>_<src> for every source, comparisons into Byte and Bool.
#define TH_BASIC_KERNELS(sfx, T)                                                                      \
  TH_POINTWISE(th_fill_##sfx, th_body0, T, th_op_fill<T>)                                             \
  TH_ALL_TYPES(TH_COPY_FROM, sfx, T)                                                                  \
  TH_CMP_KERNELS(sfx, T, byte, unsigned char) TH_CMP_KERNELS(sfx, T, bool, th_bool)
// Comparisons into the input's own dtype (not for Byte and Bool: those are above).
#define TH_CMP_OWN_KERNELS(sfx, T) TH_CMP_KERNELS(sfx, T, sfx, T)

#endif  // TH_CUDA_POINTWISE_CUH
