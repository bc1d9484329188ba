// Index, scatter/gather and mask kernels (ops::index's device engine), all line kernels
// (lines.cuh's THCLines). Index values are checked by the host against the sizes they address
// before any launch, so the kernels follow them without bounds checks.
//
// - Gather-like (indexSelect, gather): one item per output element; operand 1 (the source) has
//   its indexed dim's stride in step[1] (and 0 among its item strides), operand 2 (the index)
//   is read at the item's position.
// - Scatter-like (indexCopy/Add, scatter/Add): one item per line along the indexed dim, walked
//   in index order by one thread, so repeated indices give the host's result (the last write
//   wins; additions accumulate in index order). Long index lines with few items to spread over
//   threads are sorted first (stably) and run as one item per (line, index): the first of each
//   run of equal indices owns the slot and folds the run in index order, the same result.
//   Fills (indexFill, scatterFill) store one value, so every index element is its own item.
// - Masks and nonzero: a Long "position" tensor, row-major over the selecting shape, holds each
//   set element's rank among the set ones (-1 for unset elements): flagNonzero writes 0/1, then
//   a cumsum of the flags (sort.cuh's tiled scan past 1024 elements) and flags * counts - 1
//   turn them into positions (src/ops/index/device.rs); maskedCopy, maskedSelect and nonzero
//   write through the positions.
#ifndef TH_CUDA_INDEX_CUH
#define TH_CUDA_INDEX_CUH

// ---- gather-like ----

// Operands: out, src (item strides with the indexed dim's at 0; its line: that dim), index.
template <class I, class T> void th_lines_gather(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const T *a = th_ptr<const T>(p.it, 1);
  const long long *ix = th_ptr<const long long>(p.it, 2);
  const O sd = (O)p.step[1];
  th_for_each<I, 3>(p.it, [&](I, const O *off) { o[off[0]] = a[off[1] + (O)ix[off[2]] * sd]; });
}

// ---- scatter-like ----

struct th_set_op {
  template <class T> static __forceinline__ T at(T, T s) { return s; }
};
struct th_add_op {
  template <class T> static __forceinline__ T at(T o, T s) { return th_num<T>::add(o, s); }
};

// Operands: dst (its line: the indexed dim), src (its line: the same dim, at least as long as
// the index's), index (its line: the indices of this item, in order).
template <class I, class T, class F> void th_lines_scatter(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const T *a = th_ptr<const T>(p.it, 1);
  const long long *ix = th_ptr<const long long>(p.it, 2);
  const O so = (O)p.step[0], sa = (O)p.step[1], si = (O)p.step[2];
  const long long k = p.len[2];
  th_for_each<I, 3>(p.it, [&](I, const O *off) {
TH_LINE_LOOP
    for (long long q = 0; q < k; ++q) {
      T *slot = o + off[0] + (O)ix[off[2] + (O)q * si] * so;
      *slot = F::at(*slot, a[off[1] + (O)q * sa]);
    }
  });
}

// Operands: dst (its line: the indexed dim; 0 as the stride of the iteration's index dim), src
// (the same), keys (the index lines stably sorted: item strides over the whole iteration shape,
// its line the k sorted indices), pos (their positions in the index line, laid out as keys);
// i[0]: the number of items after the index dim in the iteration shape (the items' dims and k,
// in either order). Item (line, j) owns the slot of the j-th sorted index if j starts its run of
// equal indices, and folds the run's sources into it in position order, the host's order, so
// the bits are the host's whatever the grid.
template <class I, class T, class F> void th_lines_scatter_sorted(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const T *a = th_ptr<const T>(p.it, 1);
  const long long *key = th_ptr<const long long>(p.it, 2), *pos = th_ptr<const long long>(p.it, 3);
  const O so = (O)p.step[0], sa = (O)p.step[1], sk = (O)p.step[2], sp = (O)p.step[3];
  const I k = (I)p.len[2], inner = (I)p.it.i[0];
  th_for_each<I, 4>(p.it, [&](I r, const O *off) {
    const I outer = th_udiv(r, inner), j = outer - th_udiv(outer, k) * k;
    const long long v = key[off[2]];
    if (j > 0 && key[off[2] - sk] == v) return;
    T *slot = o + off[0] + (O)v * so;
    T acc = *slot;
    for (I q = 0; j + q < k && key[off[2] + (O)q * sk] == v; ++q)
      acc = F::at(acc, a[off[1] + (O)pos[off[3] + (O)q * sp] * sa]);
    *slot = acc;
  });
}

// A store that other threads may make to the same element with the same value: benign on a
// GPU; in the emulator a relaxed atomic store, since racing plain stores are a data race in C++
// (and a report under TSan).
template <class T> __forceinline__ void th_store_same(T *p, T v) {
#ifdef TH_EMULATOR
  std::atomic_ref<T>(*p).store(v, std::memory_order_relaxed);
#else
  *p = v;
#endif
}

// Operands: dst (its line: the indexed dim; 0 as the stride of the iteration's last dim), index
// (item strides over the whole iteration shape: the items' then the index line's); i[0] the
// value. One item per index element: every write stores the same value, so their order and
// repeated indices do not matter.
template <class I, class T> void th_lines_scatter_fill(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const long long *ix = th_ptr<const long long>(p.it, 1);
  const O so = (O)p.step[0];
  const T v = th_param<T>(p.it, 0);
  th_for_each<I, 2>(p.it, [&](I, const O *off) { th_store_same(o + off[0] + (O)ix[off[1]] * so, v); });
}

// ---- masks ----

// Whether a value is nonzero as the host's `v != T::default()` (floats: -0.0 is zero, NaN is not).
template <class T, int K = th_traits<T>::kind> struct th_nonzero {
  static __forceinline__ bool of(T v) { return v != (T)0; }
};
template <class T> struct th_nonzero<T, TH_KIND_HALF> {
  static __forceinline__ bool of(T v) { return (v.x & 0x7fffu) != 0; }
};
template <class T> struct th_nonzero<T, TH_KIND_BOOL> {
  static __forceinline__ bool of(T v) { return v.x != 0; }
};

// Operands: t, mask (M: a 0/1 Byte or a Bool); i[0] the value.
template <class I, class T, class M> void th_lines_masked_fill(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const M *m = th_ptr<const M>(p.it, 1);
  const T v = th_param<T>(p.it, 0);
  th_for_each<I, 2>(p.it, [&](I, const O *off) {
    if (th_nonzero<M>::of(m[off[1]])) o[off[0]] = v;
  });
}

// Operands: flags (Long, written 0/1), t.
template <class I, class T> void th_lines_flag_nonzero(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  long long *f = th_ptr<long long>(p.it, 0);
  const T *a = th_ptr<const T>(p.it, 1);
  th_for_each<I, 2>(p.it, [&](I, const O *off) { f[off[0]] = th_nonzero<T>::of(a[off[1]]) ? 1 : 0; });
}

// Operands: t, positions, src (contiguous; its line: its elements in row-major order).
template <class I, class T> void th_lines_masked_copy(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const long long *pos = th_ptr<const long long>(p.it, 1);
  const T *a = th_ptr<const T>(p.it, 2);
  th_for_each<I, 3>(p.it, [&](I, const O *off) {
    const long long r = pos[off[1]];
    if (r >= 0) o[off[0]] = a[off[2] + (O)r];
  });
}

// Operands: out (its line: the 1-D result), src, positions.
template <class I, class T> void th_lines_masked_select(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const T *a = th_ptr<const T>(p.it, 1);
  const long long *pos = th_ptr<const long long>(p.it, 2);
  const O so = (O)p.step[0];
  th_for_each<I, 3>(p.it, [&](I, const O *off) {
    const long long r = pos[off[2]];
    if (r >= 0) o[off[0] + (O)r * so] = a[off[1]];
  });
}

// Items: the elements of the tensor in row-major order. Operands: out (nnz x ndim; its line: a
// row's columns), positions, sizes (Long; its line: the tensor's sizes); i[0] out's row stride.
template <class I> void th_lines_nonzero(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  long long *o = th_ptr<long long>(p.it, 0);
  const long long *pos = th_ptr<const long long>(p.it, 1), *sizes = th_ptr<const long long>(p.it, 2);
  const long long nd = p.len[2], row = p.it.i[0];
  const O so = (O)p.step[0], ss = (O)p.step[2];
  th_for_each<I, 3>(p.it, [&](I i, const O *off) {
    const long long r = pos[off[1]];
    if (r < 0) return;
    unsigned long long rest = (unsigned long long)i;
TH_LINE_LOOP
    for (long long e = nd - 1; e >= 0; --e) {
      const unsigned long long s = (unsigned long long)sizes[off[2] + (O)e * ss];
      o[off[0] + (O)r * (O)row + (O)e * so] = (long long)(rest % s);
      rest /= s;
    }
  });
}

template <class I, class T> void th_lines_masked_fill_byte(const THCLines &p) {
  th_lines_masked_fill<I, T, unsigned char>(p);
}
template <class I, class T> void th_lines_masked_fill_bool(const THCLines &p) {
  th_lines_masked_fill<I, T, th_bool>(p);
}
template <class I, class T> void th_lines_scatter_set(const THCLines &p) { th_lines_scatter<I, T, th_set_op>(p); }
template <class I, class T> void th_lines_scatter_add(const THCLines &p) { th_lines_scatter<I, T, th_add_op>(p); }
template <class I, class T> void th_lines_sorted_set(const THCLines &p) { th_lines_scatter_sorted<I, T, th_set_op>(p); }
template <class I, class T> void th_lines_sorted_add(const THCLines &p) { th_lines_scatter_sorted<I, T, th_add_op>(p); }
template <class I, class T> void th_lines_nonzero_of(const THCLines &p) { th_lines_nonzero<I>(p); }

// Every dtype: the gathers, copies, fills and masks.
#define TH_INDEX_KERNELS(sfx, T)                                                                      \
  TH_LINES(th_indexSelect_##sfx, th_lines_gather, T)                                                  \
  TH_LINES(th_gather_##sfx, th_lines_gather, T)                                                       \
  TH_LINES(th_indexCopy_##sfx, th_lines_scatter_set, T)                                               \
  TH_LINES(th_scatter_##sfx, th_lines_scatter_set, T)                                                 \
  TH_LINES(th_scatterSorted_##sfx, th_lines_sorted_set, T)                                            \
  TH_LINES(th_indexFill_##sfx, th_lines_scatter_fill, T)                                              \
  TH_LINES(th_scatterFill_##sfx, th_lines_scatter_fill, T)                                            \
  TH_LINES(th_maskedFill_##sfx, th_lines_masked_fill_byte, T)                                         \
  TH_LINES(th_maskedFillBool_##sfx, th_lines_masked_fill_bool, T)                                     \
  TH_LINES(th_flagNonzero_##sfx, th_lines_flag_nonzero, T)                                            \
  TH_LINES(th_maskedCopy_##sfx, th_lines_masked_copy, T)                                              \
  TH_LINES(th_maskedSelect_##sfx, th_lines_masked_select, T)
// Every dtype but Bool: the additions.
#define TH_INDEX_NUM_KERNELS(sfx, T)                                                                  \
  TH_LINES(th_indexAdd_##sfx, th_lines_scatter_add, T)                                                \
  TH_LINES(th_scatterAdd_##sfx, th_lines_scatter_add, T)                                              \
  TH_LINES(th_scatterAddSorted_##sfx, th_lines_sorted_add, T)
// Long only: nonzero's subscripts.
#define TH_INDEX_LONG_KERNELS(sfx, T)                                                                 \
  TH_LINES(th_nonzero_##sfx, th_lines_nonzero_of, T)

#endif  // TH_CUDA_INDEX_CUH
