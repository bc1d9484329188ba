// Sorts, selections and scans along a dimension (line kernels on THCLines, see lines.cuh).
//
// A sort runs a bitonic network over a device workspace: every element of the input is copied
// (sortInit, one thread per element) into a row of `keys` (T) and `pos` (int64, the source
// position) padded to a power of two P; each stage of the network is one launch of sortStep, one thread per
// compare-exchange; the rows are then copied out (sortCopy) or permute another tensor
// (sortPermute), both launched with the line as an item dim (one thread per element), or are
// scanned for the most frequent value (sortMode). The network compares
// (key, position) pairs with the host's order (numbers ascending or descending, NaN after every
// number, -0.0 == 0.0, Bool false < true), ties broken by position, and padding (negative
// positions) after everything: a total order, so the result is the host's stable sort whatever
// the grid. The network itself is data-oblivious and each launch's pairs are disjoint, so the
// launches need no synchronisation beyond their order on the stream.
//
// Scans (cumsum, cumprod) give one thread a whole line, accumulating in TH's accreal in order,
// as the host does, so their results have the host's bits.
#ifndef TH_CUDA_SORT_CUH
#define TH_CUDA_SORT_CUH

// Loops along a line stay rolled (TH_LINE_LOOP, lines.cuh).

// -1, 0, 1 as a is before, equal to, after b in ascending order (th_rt's rules: NaN last and
// equal to NaN; floats compare as numbers, so -0.0 == 0.0).
template <class T> __forceinline__ int th_key_cmp(T a, T b) {
  const bool na = th_rt<T>::isnan(a), nb = th_rt<T>::isnan(b);
  if (na || nb) return (int)na - (int)nb;
  return th_rt<T>::lt(a, b) ? -1 : (th_rt<T>::lt(b, a) ? 1 : 0);
}

// Whether (ka, pa) comes after (kb, pb): padding (negative positions) last, then the key in the
// sort's direction, then the position.
template <class T> __forceinline__ bool th_sort_after(T ka, long long pa, T kb, long long pb, bool desc) {
  if (pa < 0 || pb < 0) return pa < 0 && (pb >= 0 || pa < pb);
  int c = th_key_cmp<T>(ka, kb);
  if (desc) c = -c;
  return c > 0 || (c == 0 && pa > pb);
}

// One compare-exchange of the network: elements a and b of a row (keys, pos) put in order,
// ascending when `up`.
template <class T, class J>
__forceinline__ void th_sort_exchange(T *keys, long long *pos, J a, J b, bool up, bool desc) {
  const T x = keys[a], y = keys[b];
  const long long u = pos[a], v = pos[b];
  if (th_sort_after<T>(x, u, y, v, desc) == up) {
    keys[a] = y;
    keys[b] = x;
    pos[a] = v;
    pos[b] = u;
  }
}

// One item per workspace element: items (row, q) row-major, q < P = i[1]; operands keys (T),
// pos (int64), the input (its offset the line's element q, its step p.step[2]); n = i[0]
// elements per line. Padding (q >= n) gets position -1 - q and a copy of the line's first
// element as its key (never compared: th_sort_after orders padding by position alone).
template <class I, class T> void th_lines_sortInit(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *keys = th_ptr<T>(p.it, 0);
  long long *pos = th_ptr<long long>(p.it, 1);
  const T *x = th_ptr<const T>(p.it, 2);
  const I n = (I)p.it.i[0], P = (I)p.it.i[1];
  const O step = (O)p.step[2];
  th_for_each<I, 3>(p.it, [&](I r, const O *off) {
    const I q = r % P;
    const bool real = q < n;
    keys[off[0]] = x[real ? off[2] : off[2] - (O)q * step];
    pos[off[1]] = real ? (long long)q : -1 - (long long)q;
  });
}

// One stage of the bitonic network: i[0] = the size of the sequences being merged (negated for
// a descending sort), i[1] = the compare distance. Items: (row, pair) row-major, P/2 pairs per
// row (the rows' operands have stride 0 over the pair dim).
template <class I, class T> void th_lines_sortStep(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *keys = th_ptr<T>(p.it, 0);
  long long *pos = th_ptr<long long>(p.it, 1);
  const bool desc = p.it.i[0] < 0;
  const I size = (I)(desc ? -p.it.i[0] : p.it.i[0]), dist = (I)p.it.i[1], half = (I)(p.len[0] / 2);
  th_for_each<I, 2>(p.it, [&](I r, const O *off) {
    const I t = r % half;
    const I a = (t / dist) * 2 * dist + t % dist, b = a + dist;
    th_sort_exchange<T>(keys + off[0], pos + off[1], a, b, (a & size) == 0, desc);
  });
}

// ---- the network's short-distance stages in shared memory ----

// Workspace elements one block holds in shared memory (positions, then keys).
#define TH_SORT_TILE 2048

// th_sortLocal's parameter: a contiguous workspace of `total` elements (rows of `row`, a power
// of two P), the merge sizes size0, 2 size0, .., size1 (powers of two, at most P) to run, each from
// compare distance min(size / 2, TH_SORT_TILE / 2) down to 1, ascending or descending.
struct THCSortLocal {
  unsigned long long keys, pos;
  long long total, row, size0, size1;
  int desc, pad;
};

// Every stage whose pairs lie within one aligned tile of TH_SORT_TILE elements runs here, one
// tile per block at a time (a grid-stride loop over the tiles), loaded into shared memory once:
// the stages are the ones sortStep would run, in the same order, on the same pairs, so the
// result is the same bits. A tile holds whole rows when P is smaller (P divides the tile); the
// direction comes from the element's index within its row, as in sortStep. Launched with
// TH_SORT_TILE * (8 + sizeof(T)) bytes of dynamic shared memory.
template <class T> void th_sort_local(const THCSortLocal &p) {
  TH_DYNAMIC_SHARED(unsigned char, sh);
  long long *spos = (long long *)sh;
  T *skeys = (T *)(sh + TH_SORT_TILE * sizeof(long long));
  T *keys = (T *)p.keys;
  long long *pos = (long long *)p.pos;
  const bool desc = p.desc != 0;
  const long long tiles = (p.total + TH_SORT_TILE - 1) / TH_SORT_TILE;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long base = tile * TH_SORT_TILE;
    const int count = (int)(p.total - base < TH_SORT_TILE ? p.total - base : TH_SORT_TILE);
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      skeys[i] = keys[base + i];
      spos[i] = pos[base + i];
    }
    __syncthreads();
    for (long long size = p.size0; size <= p.size1; size *= 2) {
      for (int dist = (int)(size / 2 < TH_SORT_TILE / 2 ? size / 2 : TH_SORT_TILE / 2); dist > 0; dist /= 2) {
        for (int t = threadIdx.x; t < count / 2; t += blockDim.x) {
          const int a = (t / dist) * 2 * dist + t % dist, b = a + dist;
          th_sort_exchange<T>(skeys, spos, a, b, ((base + a) & (p.row - 1) & size) == 0, desc);
        }
        __syncthreads();
      }
    }
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      keys[base + i] = skeys[i];
      pos[base + i] = spos[i];
    }
    __syncthreads();  // the next tile reuses shared memory
  }
}

// The operands of the kernels that read sorted workspace rows: values out (T), indices out
// (int64), keys, pos.
template <class T> struct th_sorted_rows {
  T *vo;
  long long *io;
  const T *keys;
  const long long *pos;
  __forceinline__ explicit th_sorted_rows(const THCPointwise &it)
      : vo(th_ptr<T>(it, 0)), io(th_ptr<long long>(it, 1)), keys(th_ptr<const T>(it, 2)),
        pos(th_ptr<const long long>(it, 3)) {}
};

// Operands: th_sorted_rows: copies len[0] sorted elements of a row (the caller offsets the
// workspace to the first one it wants).
template <class I, class T> void th_lines_sortCopy(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  const th_sorted_rows<T> r(p.it);
  const long long k = p.len[0];
  const O sv = (O)p.step[0], si = (O)p.step[1];
  th_for_each<I, 4>(p.it, [&](I, const O *off) {
    TH_LINE_LOOP
    for (long long q = 0; q < k; ++q) {
      r.vo[off[0] + (O)q * sv] = r.keys[off[2] + (O)q];
      r.io[off[1] + (O)q * si] = r.pos[off[3] + (O)q];
    }
  });
}

// Operands: out (T), src (T), pos: out[q] = src[pos[q]] along each line (src a copy of what
// out held, so sortKeyValueInplace's values follow their keys).
template <class I, class T> void th_lines_sortPermute(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  T *o = th_ptr<T>(p.it, 0);
  const T *src = th_ptr<const T>(p.it, 1);
  const long long *pos = th_ptr<const long long>(p.it, 2);
  const long long n = p.len[0];
  const O so = (O)p.step[0], ss = (O)p.step[1];
  th_for_each<I, 3>(p.it, [&](I, const O *off) {
    TH_LINE_LOOP
    for (long long q = 0; q < n; ++q) o[off[0] + (O)q * so] = src[off[1] + (O)pos[off[2] + (O)q] * ss];
  });
}

// Operands: th_sorted_rows of an ascending sorted row of len[2] elements: the longest run of
// equal keys (the first, so the smallest value, on ties), its last element's value and
// position (the host's mode).
template <class I, class T> void th_lines_sortMode(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  const th_sorted_rows<T> r(p.it);
  const T *keys = r.keys;
  const long long n = p.len[2];
  th_for_each<I, 4>(p.it, [&](I, const O *off) {
    long long best = 0, best_n = 0, run = 0;
    TH_LINE_LOOP
    for (long long q = 0; q < n; ++q) {
      ++run;
      if (q + 1 == n || th_key_cmp<T>(keys[off[2] + (O)q], keys[off[2] + (O)q + 1]) != 0) {
        if (run > best_n) {
          best = q;
          best_n = run;
        }
        run = 0;
      }
    }
    r.vo[off[0]] = keys[off[2] + (O)best];
    r.io[off[1]] = r.pos[off[3] + (O)best];
  });
}

// ---- scans: out[q] = accreal fold of in[0..=q], rounded to T ----

// The accreal result back in T (the host's from_acc: wrapping for integers, one rounding for
// floats).
template <class T, int K = th_traits<T>::kind> struct th_from_acc {
  static __forceinline__ T get(typename th_rt<T>::A a) { return th_make<T>::from_i64(a); }
};
template <class T> struct th_from_acc<T, TH_KIND_FLOAT> {
  static __forceinline__ T get(double a) { return (T)a; }
};
template <class T> struct th_from_acc<T, TH_KIND_HALF> {
  static __forceinline__ T get(float a) { return th_traits<T>::from_r(a); }
};

// Operands: out, in (lines of the same length); Prod selects cumprod.
template <class I, class T, bool Prod> void th_lines_scan(const THCLines &p) {
  typedef typename th_offset<I>::type O;
  typedef typename th_rt<T>::A A;
  T *o = th_ptr<T>(p.it, 0);
  const T *x = th_ptr<const T>(p.it, 1);
  const long long n = p.len[0];
  const O so = (O)p.step[0], sx = (O)p.step[1];
  th_for_each<I, 2>(p.it, [&](I, const O *off) {
    A acc = (A)(Prod ? 1 : 0);
    TH_LINE_LOOP
    for (long long q = 0; q < n; ++q) {
      const A v = th_rt<T>::acc(x[off[1] + (O)q * sx]);
      acc = Prod ? th_amul(acc, v) : th_aadd(acc, v);
      o[off[0] + (O)q * so] = th_from_acc<T>::get(acc);
    }
  });
}

#define TH_SORT_KERNELS(sfx, T)                                                                     \
  TH_KERNEL(th_sortLocal_##sfx, TH_EMU_COOPERATIVE, THCSortLocal, th_sort_local<T>)                \
  TH_LINES(th_sortInit_##sfx, th_lines_sortInit, T)                                                 \
  TH_LINES(th_sortStep_##sfx, th_lines_sortStep, T)                                                 \
  TH_LINES(th_sortCopy_##sfx, th_lines_sortCopy, T)                                                 \
  TH_LINES(th_sortPermute_##sfx, th_lines_sortPermute, T)
#define TH_SORT_NUM_KERNELS(sfx, T)                                                                 \
  TH_LINES(th_sortMode_##sfx, th_lines_sortMode, T)                                                 \
  TH_LINES(th_cumsum_##sfx, th_lines_scan, T, false)                                                \
  TH_LINES(th_cumprod_##sfx, th_lines_scan, T, true)

#endif  // TH_CUDA_SORT_CUH
