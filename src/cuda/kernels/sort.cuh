// Sorts, selections and scans along a dimension (line kernels on THCLines, see lines.cuh).
//
// A sort works in a device workspace; rows longer than TH_SCAN_TILE run the radix sort below
// instead of the network's global stages. The network: every element of the input is copied
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

// ---- tiled scans: long lines, a block per tile of TH_SCAN_TILE elements ----
//
// Three launches, in an order fixed by the line length alone (the bits never depend on the grid):
// - totals: block (line, tile) loads its tile (coalesced, through shared memory); thread t folds
//   its run of TH_SCAN_PER consecutive elements in order, the runs' folds are scanned across the
//   block (Hillis-Steele, a fixed tree), and the last is the tile's total, to carry[line, tile];
// - carries: one block per line turns its tiles' totals into exclusive prefixes (thread t folds a
//   run of consecutive totals in order, the runs are scanned across the block, each run rewritten
//   with its prefix);
// - tiles: as totals, then element q of thread t's run gets carry (+) prefix(t) (+) its run's
//   elements up to q, rounded to T once, written back through shared memory (coalesced).
// Integer results equal the sequential host scan; float ones differ by reassociation only.
#define TH_SCAN_BLOCK 256
#define TH_SCAN_PER 8
#define TH_SCAN_TILE (TH_SCAN_BLOCK * TH_SCAN_PER)

// The parameter of the tiled scan kernels: the lines as a line launch plans them (operands 0 the
// output, 1 the input), tiles per line, and the accreal carries (lines * tiles).
struct THCScan {
  THCLines l;
  long long tiles;
  unsigned long long carry;
};

template <class A, bool Prod> __forceinline__ A th_scan_op(A a, A b) { return Prod ? th_amul(a, b) : th_aadd(a, b); }

// Inclusive scan of s[0, TH_SCAN_BLOCK) in place, in a fixed tree; every thread of the block calls it.
template <class A, bool Prod> __forceinline__ void th_scan_block(A *s, unsigned t) {
  for (unsigned d = 1; d < TH_SCAN_BLOCK; d *= 2) {
    const A v = t >= d ? s[t - d] : s[t];
    __syncthreads();
    if (t >= d) s[t] = th_scan_op<A, Prod>(v, s[t]);
    __syncthreads();
  }
}

// Operand k's offset of the start of line `line` (its item index).
template <class I, class O> __forceinline__ O th_line_start(const THCPointwise &it, I line, int k) {
  O off = 0;
  for (int d = it.ndim - 1; d >= 0; --d) {
    const I size = (I)it.sizes[d], q = th_udiv(line, size);
    off += (O)(line - q * size) * (O)it.arg[k].strides[d];
    line = q;
  }
  return off;
}

// Loads tile `tile` of line `line` into sh (as accreal; past the line's end: the identity),
// returns thread t's run folded in order.
template <class I, class T, bool Prod>
__forceinline__ typename th_rt<T>::A th_scan_load(const THCScan &p, I line, I tile, typename th_rt<T>::A *sh, unsigned t) {
  typedef typename th_rt<T>::A A;
  typedef typename th_offset<I>::type O;
  const T *x = (const T *)p.l.it.arg[1].data;
  const I n = (I)p.l.len[1], first = tile * (I)TH_SCAN_TILE;
  const O base = th_line_start<I, O>(p.l.it, line, 1), step = (O)p.l.step[1];
  for (unsigned j = t; j < TH_SCAN_TILE; j += TH_SCAN_BLOCK) {
    const I q = first + (I)j;
    sh[j] = q < n ? th_rt<T>::acc(x[base + (O)q * step]) : (A)(Prod ? 1 : 0);
  }
  __syncthreads();
  A run = sh[t * TH_SCAN_PER];
  for (int j = 1; j < TH_SCAN_PER; ++j) run = th_scan_op<A, Prod>(run, sh[t * TH_SCAN_PER + j]);
  return run;
}

template <class I, class T, bool Prod> void th_scan_totals(const THCScan &p) {
  typedef typename th_rt<T>::A A;
  TH_SHARED(double, th_ssh, TH_SCAN_TILE + TH_SCAN_BLOCK);
  A *sh = (A *)th_ssh, *runs = sh + TH_SCAN_TILE;
  const unsigned t = threadIdx.x;
  const I tiles = (I)p.tiles, work = (I)p.l.it.n * tiles;
  for (I w = blockIdx.x; w < work; w += gridDim.x) {
    const I line = th_udiv(w, tiles);
    runs[t] = th_scan_load<I, T, Prod>(p, line, w - line * tiles, sh, t);
    __syncthreads();
    th_scan_block<A, Prod>(runs, t);
    if (t == 0) ((A *)p.carry)[w] = runs[TH_SCAN_BLOCK - 1];
    __syncthreads();  // the next tile reuses sh
  }
}

// The exclusive prefixes (sums, or products when Prod) of `per` consecutive values, in place, for
// `lines` lines: a block per line, thread t folding a run of consecutive values in order, the
// runs scanned in a fixed tree, each run rewritten from its prefix. `runs`: TH_SCAN_BLOCK values
// of shared memory.
template <class A, bool Prod> __forceinline__ void th_exclusive_lines(A *data, long long lines, long long per, A *runs) {
  const unsigned t = threadIdx.x;
  const long long each = (per + TH_SCAN_BLOCK - 1) / TH_SCAN_BLOCK;
  const A id = (A)(Prod ? 1 : 0);
  for (long long line = blockIdx.x; line < lines; line += gridDim.x) {
    A *c = data + line * per;
    const long long lo = t * each < per ? t * each : per, hi = lo + each < per ? lo + each : per;
    A run = id;
    for (long long j = lo; j < hi; ++j) run = th_scan_op<A, Prod>(run, c[j]);
    runs[t] = run;
    __syncthreads();
    th_scan_block<A, Prod>(runs, t);
    A acc = t > 0 ? runs[t - 1] : id;
    for (long long j = lo; j < hi; ++j) {
      const A v = c[j];
      c[j] = acc;
      acc = th_scan_op<A, Prod>(acc, v);
    }
    __syncthreads();  // the next line reuses runs
  }
}

template <class T, bool Prod> void th_scan_carries(const THCScan &p) {
  typedef typename th_rt<T>::A A;
  TH_SHARED(double, th_ssh, TH_SCAN_BLOCK);
  th_exclusive_lines<A, Prod>((A *)p.carry, p.l.it.n, p.tiles, (A *)th_ssh);
}

template <class I, class T, bool Prod> void th_scan_tiles(const THCScan &p) {
  typedef typename th_rt<T>::A A;
  typedef typename th_offset<I>::type O;
  TH_SHARED(double, th_ssh, TH_SCAN_TILE + TH_SCAN_BLOCK);
  A *sh = (A *)th_ssh, *runs = sh + TH_SCAN_TILE;
  T *out = (T *)p.l.it.arg[0].data;
  const unsigned t = threadIdx.x;
  const I tiles = (I)p.tiles, work = (I)p.l.it.n * tiles, n = (I)p.l.len[0];
  for (I w = blockIdx.x; w < work; w += gridDim.x) {
    const I line = th_udiv(w, tiles), tile = w - line * tiles;
    runs[t] = th_scan_load<I, T, Prod>(p, line, tile, sh, t);
    __syncthreads();
    th_scan_block<A, Prod>(runs, t);
    const A carry = ((const A *)p.carry)[w];
    A acc = t > 0 ? th_scan_op<A, Prod>(carry, runs[t - 1]) : carry;
    for (int j = 0; j < TH_SCAN_PER; ++j) {
      acc = th_scan_op<A, Prod>(acc, sh[t * TH_SCAN_PER + j]);
      sh[t * TH_SCAN_PER + j] = acc;
    }
    __syncthreads();
    const O base = th_line_start<I, O>(p.l.it, line, 0), step = (O)p.l.step[0];
    const I first = tile * (I)TH_SCAN_TILE;
    for (unsigned j = t; j < TH_SCAN_TILE && first + (I)j < n; j += TH_SCAN_BLOCK)
      out[base + (O)(first + (I)j) * step] = th_from_acc<T>::get(sh[j]);
    __syncthreads();
  }
}

// ---- radix sort: rows longer than a tile ----
//
// A stable LSD radix sort of every row's first n workspace elements, TH_RADIX_BITS bits a pass,
// from the keys' order-preserving unsigned form (th_radix_key: the host's order, NaN last, -0.0
// equal to 0.0; inverted for a descending sort, NaN first); stability keeps equal keys in position order,
// as the bitonic network's tie rule. Each pass: count (a block per (row, tile) of TH_SCAN_TILE
// elements: each digit's count in the tile, to hist[row][digit][tile]), offsets (a block per row:
// the exclusive scan of its counts in (digit, tile) order), scatter (each element to its row's
// offset for (digit, tile) plus its rank among the tile's elements of that digit, in order).
// Everything is counted, never raced: the result is the same bits whatever the grid.
#define TH_RADIX_BITS 4
#define TH_RADIX_DIGITS 16

struct THCRadix {
  unsigned long long keys[2], pos[2];  // [0] read, [1] written
  unsigned long long hist;             // rows x TH_RADIX_DIGITS x tiles counts (long long)
  long long rows, n, row, tiles;       // rows of n elements, `row` apart; tiles per row
  int shift, desc;                     // the pass's digit; a descending sort
};

template <int S> struct th_radix_u { typedef unsigned int U; };
template <> struct th_radix_u<8> { typedef unsigned long long U; };

// The order-preserving unsigned form of a key (ascending): integers with the sign bit flipped,
// floats with the sign bit set or (negatives) every bit flipped, -0.0 as 0.0, every NaN the
// largest form; Bool 0/1.
template <class T, int K = th_traits<T>::kind> struct th_radix_key;
template <class T> struct th_radix_key<T, TH_KIND_INT> {
  typedef typename th_radix_u<sizeof(T)>::U U;
  static __forceinline__ U get(T x) {
    const int bits = 8 * (int)sizeof(T);
    U u = (U)x;
    if (bits < 8 * (int)sizeof(U)) u &= ((U)1 << bits) - 1;
    if ((T)-1 < (T)0) u ^= (U)1 << (bits - 1);
    return u;
  }
};
template <class T> struct th_radix_key<T, TH_KIND_FLOAT> {
  typedef typename th_radix_u<sizeof(T)>::U U;
  static __forceinline__ U get(T x) {
    if (x != x) return ~(U)0;
    U u = sizeof(T) == 8 ? (U)th_bits_f64((double)(x == (T)0 ? (T)0 : x)) : (U)th_bits_f32((float)(x == (T)0 ? (T)0 : x));
    const U sign = (U)1 << (8 * sizeof(T) - 1);
    return (u & sign) ? ~u : (u | sign);
  }
};
template <class T> struct th_radix_key<T, TH_KIND_HALF> {
  typedef unsigned int U;
  static __forceinline__ U get(T x) {
    const float f = th_traits<T>::to_r(x);
    if (f != f) return 0xffffu;
    const U u = f == 0.0f ? 0u : (U)x.x;
    return (u & 0x8000u) ? (~u & 0xffffu) : (u | 0x8000u);
  }
};
template <class T> struct th_radix_key<T, TH_KIND_BOOL> {
  typedef unsigned int U;
  static __forceinline__ U get(T x) { return x.x != 0; }
};

// A key's digit for this pass (a descending sort inverts every key: NaN first, as the network).
template <class T> __forceinline__ unsigned th_radix_digit(const THCRadix &p, T x) {
  typedef typename th_radix_key<T>::U U;
  U u = th_radix_key<T>::get(x);
  if (p.desc) u = ~u;
  return (unsigned)(u >> p.shift) & (TH_RADIX_DIGITS - 1);
}

// Thread t's counts of each digit in its run of TH_SCAN_PER consecutive elements of block w's
// tile, to cnt[digit * TH_SCAN_BLOCK + t]; returns the tile's first element's index in its row.
template <class T> __forceinline__ long long th_radix_count(const THCRadix &p, long long w, unsigned *cnt, unsigned t, long long *row) {
  const long long r = w / p.tiles, first = (w - r * p.tiles) * TH_SCAN_TILE;
  const T *keys = (const T *)p.keys[0] + r * p.row;
  for (int d = 0; d < TH_RADIX_DIGITS; ++d) cnt[d * TH_SCAN_BLOCK + t] = 0;
  for (int j = 0; j < TH_SCAN_PER; ++j) {
    const long long q = first + t * TH_SCAN_PER + j;
    if (q < p.n) ++cnt[th_radix_digit<T>(p, keys[q]) * TH_SCAN_BLOCK + t];
  }
  *row = r;
  return first;
}

template <class T> void th_radix_count_body(const THCRadix &p) {
  TH_SHARED(unsigned, cnt, TH_RADIX_DIGITS * TH_SCAN_BLOCK);
  const unsigned t = threadIdx.x;
  for (long long w = blockIdx.x; w < p.rows * p.tiles; w += gridDim.x) {
    long long r;
    th_radix_count<T>(p, w, cnt, t, &r);
    __syncthreads();
    if (t < TH_RADIX_DIGITS) {
      long long c = 0;
      for (int u = 0; u < TH_SCAN_BLOCK; ++u) c += cnt[t * TH_SCAN_BLOCK + u];
      ((long long *)p.hist)[(r * TH_RADIX_DIGITS + t) * p.tiles + (w - r * p.tiles)] = c;
    }
    __syncthreads();
  }
}

template <class T> void th_radix_offsets_body(const THCRadix &p) {
  TH_SHARED(long long, runs, TH_SCAN_BLOCK);
  th_exclusive_lines<long long, false>((long long *)p.hist, p.rows, TH_RADIX_DIGITS * p.tiles, runs);
}

template <class T> void th_radix_scatter_body(const THCRadix &p) {
  TH_SHARED(unsigned, cnt, TH_RADIX_DIGITS * TH_SCAN_BLOCK);
  TH_SHARED(unsigned, runs, TH_SCAN_BLOCK);
  const unsigned t = threadIdx.x;
  for (long long w = blockIdx.x; w < p.rows * p.tiles; w += gridDim.x) {
    long long r;
    const long long first = th_radix_count<T>(p, w, cnt, t, &r);
    __syncthreads();
    // Exclusive scan of cnt in (digit, thread) order: thread t takes entries [16 t, 16 t + 16).
    unsigned run = 0;
    for (int j = 0; j < 16; ++j) run += cnt[t * 16 + j];
    runs[t] = run;
    __syncthreads();
    th_scan_block<unsigned, false>(runs, t);
    unsigned acc = t > 0 ? runs[t - 1] : 0u;
    for (int j = 0; j < 16; ++j) {
      const unsigned v = cnt[t * 16 + j];
      cnt[t * 16 + j] = acc;
      acc += v;
    }
    __syncthreads();
    // Now cnt[d * B + t] = the tile's elements before thread t's run with a smaller digit, or
    // the same digit in an earlier run; minus cnt[d * B] (those with a smaller digit) it is the
    // rank among digit d. Each element goes to its row's offset for (d, tile) plus that rank.
    const T *keys = (const T *)p.keys[0] + r * p.row;
    const long long *pos = (const long long *)p.pos[0] + r * p.row;
    T *ko = (T *)p.keys[1] + r * p.row;
    long long *po = (long long *)p.pos[1] + r * p.row;
    const long long *off = (const long long *)p.hist + r * TH_RADIX_DIGITS * p.tiles + (w - r * p.tiles);
    unsigned seen[TH_RADIX_DIGITS];
    for (int d = 0; d < TH_RADIX_DIGITS; ++d) seen[d] = 0;
    for (int j = 0; j < TH_SCAN_PER; ++j) {
      const long long q = first + t * TH_SCAN_PER + j;
      if (q >= p.n) break;
      const T x = keys[q];
      const unsigned d = th_radix_digit<T>(p, x);
      const long long to = off[d * p.tiles] + (cnt[d * TH_SCAN_BLOCK + t] - cnt[d * TH_SCAN_BLOCK]) + seen[d]++;
      ko[to] = x;
      po[to] = pos[q];
    }
    __syncthreads();
  }
}

#define TH_RADIX_KERNELS(sfx, T)                                                                     \
  TH_KERNEL(th_radixCount_##sfx, TH_EMU_COOPERATIVE, THCRadix, th_radix_count_body<T>)              \
  TH_KERNEL(th_radixOffsets_##sfx, TH_EMU_COOPERATIVE, THCRadix, th_radix_offsets_body<T>)          \
  TH_KERNEL(th_radixScatter_##sfx, TH_EMU_COOPERATIVE, THCRadix, th_radix_scatter_body<T>)

#define TH_SCAN_KERNELS(sfx, T, name, Prod)                                                          \
  TH_KERNEL(th_##name##Totals_##sfx##_i32, TH_EMU_COOPERATIVE, THCScan, th_scan_totals<unsigned int, T, Prod>) \
  TH_KERNEL(th_##name##Totals_##sfx##_i64, TH_EMU_COOPERATIVE, THCScan, th_scan_totals<unsigned long long, T, Prod>) \
  TH_KERNEL(th_##name##Carries_##sfx, TH_EMU_COOPERATIVE, THCScan, th_scan_carries<T, Prod>)       \
  TH_KERNEL(th_##name##Tiles_##sfx##_i32, TH_EMU_COOPERATIVE, THCScan, th_scan_tiles<unsigned int, T, Prod>) \
  TH_KERNEL(th_##name##Tiles_##sfx##_i64, TH_EMU_COOPERATIVE, THCScan, th_scan_tiles<unsigned long long, T, Prod>)

#define TH_SORT_KERNELS(sfx, T)                                                                     \
  TH_KERNEL(th_sortLocal_##sfx, TH_EMU_COOPERATIVE, THCSortLocal, th_sort_local<T>)                \
  TH_RADIX_KERNELS(sfx, T)                                                                          \
  TH_LINES(th_sortInit_##sfx, th_lines_sortInit, T)                                                 \
  TH_LINES(th_sortStep_##sfx, th_lines_sortStep, T)                                                 \
  TH_LINES(th_sortCopy_##sfx, th_lines_sortCopy, T)                                                 \
  TH_LINES(th_sortPermute_##sfx, th_lines_sortPermute, T)
#define TH_SORT_NUM_KERNELS(sfx, T)                                                                 \
  TH_LINES(th_sortMode_##sfx, th_lines_sortMode, T)                                                 \
  TH_LINES(th_cumsum_##sfx, th_lines_scan, T, false)                                                \
  TH_LINES(th_cumprod_##sfx, th_lines_scan, T, true)                                                \
  TH_SCAN_KERNELS(sfx, T, cumsum, false)                                                            \
  TH_SCAN_KERNELS(sfx, T, cumprod, true)

#endif  // TH_CUDA_SORT_CUH
