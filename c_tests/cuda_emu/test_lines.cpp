// The data-dependent line kernels (index.cuh, sort.cuh) of every dtype on valid inputs, under
// the sanitizers, against naive references. Each case draws a random shape (1 to 3 dims),
// random layouts (permuted dims, gaps, broadcast read operands), then builds the operands as
// the Rust side does (src/ops/index/device.rs, src/cuda/sort.rs): indices in range, 0/1 masks,
// positions from 0/1 flags, a sort workspace of rows padded to a power of two. Outputs
// are compared whole, buffer against a reference buffer: a stray write is a failure too.
//
// A launch with more than one block runs each block on its own host thread (calling the
// kernel's extern "C" symbol), so under TSan two items writing the same element are a report;
// single-block launches go through th_emu_launch, the registered path.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.cuh"
#include "num.cuh"
#include "reduce.cuh"
#include "lines.cuh"
#include "sort.cuh"
#include "harness.h"

namespace {

typedef std::vector<long long> Dims;

// A dtype: its kernel suffix, values from small integers, values as numbers (NaN included).
template <class T> struct Ty {
  static T make(long long v) { return th_make<T>::from_i64(v); }
  static double num(T v) { return th_traits<T>::to_f64(v); }
  static bool special(T *out) {  // NaN or -0.0 for the floats
    if constexpr (th_traits<T>::kind == TH_KIND_INT) return false;
    else {
      *out = rnd() & 1 ? th_make<T>::from_f64(NAN) : th_make<T>::from_f64(-0.0);
      return true;
    }
  }
  // The scalar parameter's bits as th_param reads them.
  static long long param(T v) {
    if constexpr (th_traits<T>::kind == TH_KIND_INT) return (long long)v;
    else return (long long)bits(v);
  }
};
template <> struct Ty<th_bool> {
  static th_bool make(long long v) { return th_make<th_bool>::from_i64(v & 1); }
  static double num(th_bool v) { return v.x; }
  static bool special(th_bool *) { return false; }
  static long long param(th_bool v) { return v.x; }
};
template <class T> const char *sfx();
#define TH_SFX(s, T, ...) \
  template <> const char *sfx<T>() { return #s; }
TH_ALL_TYPES(TH_SFX, )
#undef TH_SFX

template <class T> bool same(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

long long pick(long long lo, long long hi) { return lo + (long long)(rnd() % (uint64_t)(hi - lo + 1)); }

// Values in [-10, 10] (NaN and -0.0 now and then when `specials`): sums and short products stay
// exact in every dtype, so references computed on integers are exact.
template <class T> std::vector<T> values(long long n, bool specials, long long lo = -10, long long hi = 10) {
  std::vector<T> v(n);
  for (auto &x : v)
    if (!(specials && rnd() % 5 == 0 && Ty<T>::special(&x))) x = Ty<T>::make(pick(lo, hi));
  return v;
}

// A view of `sizes` in a buffer: dims in a random order, some with gaps, a read-only one maybe
// broadcast (stride 0).
struct Layout {
  Dims sizes, strides;
  long long extent = 1;  // elements the buffer needs
  long long at(const Dims &ix) const {
    long long o = 0;
    for (size_t d = 0; d < ix.size(); ++d) o += ix[d] * strides[d];
    return o;
  }
};
Layout layout(const Dims &sizes, bool broadcast_ok) {
  Layout l{sizes, Dims(sizes.size()), 1};
  std::vector<size_t> order(sizes.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  for (size_t d = order.size(); d > 1; --d) std::swap(order[d - 1], order[rnd() % d]);
  long long s = 1;
  for (size_t d : order) l.strides[d] = s, s *= sizes[d] * (rnd() % 4 == 0 ? 2 : 1);
  if (broadcast_ok && !sizes.empty() && rnd() % 4 == 0) l.strides[rnd() % sizes.size()] = 0;
  for (size_t d = 0; d < sizes.size(); ++d) l.extent += (sizes[d] - 1) * l.strides[d];
  return l;
}
Layout contiguous(const Dims &sizes) {
  Layout l{sizes, Dims(sizes.size()), 1};
  for (size_t d = sizes.size(); d-- > 0;) l.strides[d] = l.extent, l.extent *= sizes[d];
  return l;
}

// `it` (an item: the other dims' index) with q inserted at dim d.
Dims with(const Dims &it, size_t d, long long q) {
  Dims r = it;
  r.insert(r.begin() + (long)d, q);
  return r;
}
Dims without(const Dims &v, size_t d) {
  Dims r = v;
  r.erase(r.begin() + (long)d);
  return r;
}
Dims shape(int max_dims = 3, long long max_size = 5) {
  Dims s((size_t)pick(1, max_dims));
  for (auto &x : s) x = pick(1, max_size);
  return s;
}
long long numel(const Dims &s) {
  long long n = 1;
  for (long long x : s) n *= x;
  return n;
}
// Calls f(ix) for every index of `sizes` in row-major order (one empty index for no dims).
void each(const Dims &sizes, const std::function<void(const Dims &)> &f) {
  Dims ix(sizes.size(), 0);
  for (long long i = 0, n = numel(sizes); i < n; ++i) {
    f(ix);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++ix[d] < sizes[d]) break;
      ix[d] = 0;
    }
  }
}

// One operand of a line launch (lines.rs's LineOperand).
struct Op {
  const void *data;
  Dims st;
  long long len = 0, step = 0;
};
std::set<std::string> &covered() {
  static std::set<std::string> s;
  return s;
}

// Runs line op `op` for dtype `sfx` over the items of `items` (strides per operand in that
// order; no items: one), with scalar parameters i0, i1; either index width, a random grid.
void run(const std::string &op, const char *sfx, const Dims &items, const std::vector<Op> &ops, long long i0 = 0,
         long long i1 = 0) {
  THCLines l;
  std::memset(&l, 0, sizeof l);
  l.it.n = numel(items), l.it.ndim = items.empty() ? 1 : (int)items.size();
  for (size_t d = 0; d < items.size(); ++d) l.it.sizes[d] = items[d];
  if (items.empty()) l.it.sizes[0] = 1;
  for (size_t k = 0; k < ops.size(); ++k) {
    l.it.arg[k].data = (unsigned long long)ops[k].data;
    for (size_t d = 0; d < items.size(); ++d) l.it.arg[k].strides[d] = ops[k].st[d];
    l.len[k] = ops[k].len, l.step[k] = ops[k].step;
  }
  l.it.i[0] = i0, l.it.i[1] = i1;
  // The two index widths in turn, so both run for every kernel.
  static std::map<std::string, int> uses;
  const std::string base = "th_" + op + "_" + sfx, name = base + (uses[base]++ & 1 ? "_i64" : "_i32");
  covered().insert(name);
  static const unsigned blocks_of[] = {1, 2, 7, 32};
  const unsigned grid = (unsigned)pick(1, 4), block = blocks_of[rnd() % 4];
  if (grid == 1) {
    const unsigned g[3] = {1, 1, 1}, b[3] = {block, 1, 1};
    void *args[1] = {&l};
    char err[256] = "";
    CHECK(th_emu_launch(name.c_str(), g, b, 0, args, err, sizeof err) == 0, "%s: %s", name.c_str(), err);
    return;
  }
  typedef void (*Kernel)(THCLines);
  const Kernel fn = (Kernel)dlsym(RTLD_DEFAULT, name.c_str());
  CHECK(fn, "%s: no such symbol (linked without -rdynamic?)", name.c_str());
  if (!fn) return;
  std::vector<std::thread> blocks;
  for (unsigned bx = 0; bx < grid; ++bx)
    blocks.emplace_back([&, bx] {
      gridDim.x = grid, blockDim.x = block, blockIdx.x = bx;
      for (unsigned t = 0; t < block; ++t) threadIdx.x = t, fn(l);
    });
  for (auto &t : blocks) t.join();
}

// ---- index ops ----

// indexSelect (index broadcast over the other dims) and gather (index at the output's shape).
template <class T> void gather(const char *op, bool full_index) {
  const Dims s = shape();
  const size_t d = rnd() % s.size();
  Dims ss = s;
  ss[d] = pick(1, 6);
  const Layout lo = layout(s, false), ls = layout(ss, true);
  Layout li = contiguous(s);
  if (!full_index)
    for (size_t e = 0; e < s.size(); ++e) li.strides[e] = e == d ? 1 : 0;
  std::vector<T> out = values<T>(lo.extent, true), src = values<T>(ls.extent, true), want = out;
  std::vector<long long> idx(li.extent);
  for (auto &x : idx) x = pick(0, ss[d] - 1);
  each(s, [&](const Dims &ix) {
    Dims at = ix;
    at[d] = idx[li.at(ix)];
    want[lo.at(ix)] = src[ls.at(at)];
  });
  Dims sst = ls.strides;
  sst[d] = 0;
  run(op, sfx<T>(), s, {{out.data(), lo.strides}, {src.data(), sst, ss[d], ls.strides[d]}, {idx.data(), li.strides}});
  CHECK(same(out, want), "%s_%s: wrong values", op, sfx<T>());
}

enum Scatter { SET, ADD, FILL };

// indexCopy/Add/Fill (one index line for every item) and scatter/Add/Fill (an index line per
// item); repeated indices: the last write wins, additions in index order. `sorted`: the set and
// add forms' sorted kernels (`op`: scatterSorted, scatterAddSorted) with the index lines sorted
// stably here, laid out as src/cuda/sort.rs's workspace (row r: item r's line, padded to a power
// of two; one row when every item shares the line); fills run one item per index element.
template <class T> void scatter(const char *op, Scatter kind, bool full_index, bool sorted = false) {
  const Dims s = shape();
  const size_t d = rnd() % s.size();
  Dims is = s;  // the index: at most the output's size in the other dims
  for (size_t e = 0; e < s.size(); ++e) is[e] = e == d ? pick(1, sorted ? 12 : 6) : (full_index ? pick(1, s[e]) : s[e]);
  Dims ss = is;
  ss[d] += pick(0, 1);
  const Layout lo = layout(s, false), ls = layout(ss, true);
  Layout li = layout(is, false);
  if (!full_index)
    for (size_t e = 0; e < s.size(); ++e) li.strides[e] = e == d ? li.strides[e] : 0;
  std::vector<T> out = values<T>(lo.extent, kind != ADD), src = values<T>(ls.extent, kind != ADD), want = out;
  std::vector<long long> idx(li.extent);
  for (auto &x : idx) x = pick(0, s[d] - 1);
  const T v = values<T>(1, true)[0];
  each(is, [&](const Dims &ix) {
    Dims at = ix;
    at[d] = idx[li.at(ix)];
    T &slot = want[lo.at(at)];
    if (kind == FILL) slot = v;
    else if (kind == SET) slot = src[ls.at(ix)];
    else if constexpr (th_traits<T>::kind != TH_KIND_BOOL)
      slot = Ty<T>::make((long long)Ty<T>::num(slot) + (long long)Ty<T>::num(src[ls.at(ix)]));
  });
  const Dims items = without(is, d);
  const long long k = is[d];
  // The iteration shape of fills and sorted kernels: the index line's dim first when every item
  // shares the line, else last (device.rs's `spread`).
  const auto spread = [&](Dims v, long long along) {
    v.insert(full_index ? v.end() : v.begin(), along);
    return v;
  };
  const Dims all = spread(items, k), ost = spread(without(lo.strides, d), 0), sst = spread(without(ls.strides, d), 0),
             ist = spread(without(li.strides, d), li.strides[d]);
  if (kind == FILL) {
    run(op, sfx<T>(), all, {{out.data(), ost, s[d], lo.strides[d]}, {idx.data(), ist, k, li.strides[d]}}, Ty<T>::param(v));
  } else if (sorted) {
    long long p = 1;
    while (p < k) p *= 2;
    const long long rows = full_index ? numel(items) : 1;
    std::vector<long long> keys(rows * p, -5), pos(rows * p, -5);
    long long r = 0;
    each(full_index ? items : Dims{}, [&](const Dims &it) {
      std::vector<long long> q(k);
      for (long long j = 0; j < k; ++j) q[j] = j;
      const auto at = [&](long long j) { return idx[li.at(with(full_index ? it : Dims(items.size(), 0), d, j))]; };
      std::stable_sort(q.begin(), q.end(), [&](long long a, long long b) { return at(a) < at(b); });
      for (long long j = 0; j < k; ++j) keys[r * p + j] = at(q[j]), pos[r * p + j] = q[j];
      ++r;
    });
    Dims kst = full_index ? contiguous(items).strides : Dims(items.size(), 0);
    for (auto &x : kst) x *= p;
    kst = spread(kst, 1);
    run(op, sfx<T>(), all,
        {{out.data(), ost, s[d], lo.strides[d]}, {src.data(), sst, ss[d], ls.strides[d]}, {keys.data(), kst, k, 1},
         {pos.data(), kst, k, 1}},
        full_index ? 1 : numel(items));
  } else {
    const Op o{out.data(), without(lo.strides, d), s[d], lo.strides[d]};
    const Op i{idx.data(), without(li.strides, d), is[d], li.strides[d]};
    run(op, sfx<T>(), items, {o, {src.data(), without(ls.strides, d), ss[d], ls.strides[d]}, i});
  }
  CHECK(same(out, want), "%s_%s: wrong values", op, sfx<T>());
}

// ---- masks: fill, positions (flags, then their ranks), copy, select, nonzero ----

template <class T, class M> void masked_fill(const char *op) {
  const Dims s = shape();
  const Layout lt = layout(s, false), lm = layout(s, true);
  std::vector<T> t = values<T>(lt.extent, true), want = t;
  std::vector<M> m(lm.extent);
  for (auto &x : m) x = from_bits<M>(rnd() & 1);
  const T v = values<T>(1, true)[0];
  each(s, [&](const Dims &ix) {
    if (bits(m[lm.at(ix)])) want[lt.at(ix)] = v;
  });
  run(op, sfx<T>(), s, {{t.data(), lt.strides}, {m.data(), lm.strides}}, Ty<T>::param(v));
  CHECK(same(t, want), "%s_%s: wrong values", op, sfx<T>());
}

// device.rs's positions(): each nonzero element of `t` (layout l) gets its row-major rank among
// the nonzero ones, the others -1. The flags are flagNonzero's (checked here); the ranks come
// from a cumsum there (the scan kernels are tested by the Rust suites), computed here directly.
template <class T> std::vector<long long> positions(const std::vector<T> &t, const Layout &l, long long *count) {
  const long long n = numel(l.sizes);
  const Layout flat = contiguous(l.sizes);
  std::vector<long long> flags(n, -7), want_flags, want;
  run("flagNonzero", sfx<T>(), l.sizes, {{flags.data(), flat.strides}, {t.data(), l.strides}});
  *count = 0;
  each(l.sizes, [&](const Dims &ix) {
    const bool set = Ty<T>::num(t[l.at(ix)]) != 0;
    want_flags.push_back(set);
    want.push_back(set ? (*count)++ : -1);
  });
  CHECK(flags == want_flags, "flagNonzero of %s (%lld elements): wrong flags", sfx<T>(), n);
  return want;
}

// maskedCopy, maskedSelect and nonzero through the positions of a random T tensor.
template <class T> void mask_ops() {
  const Dims s = shape();
  const Layout lm = layout(s, true), flat = contiguous(s);
  const std::vector<T> mask = values<T>(lm.extent, true, -1, 1);
  long long count = 0;
  const std::vector<long long> pos = positions(mask, lm, &count);
  const Dims zeros(s.size(), 0);
  {  // maskedCopy: t takes the next element of a contiguous src where set
    const Layout lt = layout(s, false);
    std::vector<T> t = values<T>(lt.extent, true), want = t;
    const std::vector<T> src = values<T>(count + pick(0, 2), true);
    each(s, [&](const Dims &ix) {
      const long long r = pos[flat.at(ix)];
      if (r >= 0) want[lt.at(ix)] = src[r];
    });
    run("maskedCopy", sfx<T>(), s,
        {{t.data(), lt.strides}, {pos.data(), flat.strides}, {src.data(), zeros, (long long)src.size(), 1}});
    CHECK(same(t, want), "maskedCopy_%s: wrong values", sfx<T>());
  }
  if (count > 0) {  // maskedSelect: a 1-D output with a stride of 1 or 2
    const Layout ls = layout(s, true);
    const std::vector<T> src = values<T>(ls.extent, true);
    const long long step = pick(1, 2);
    std::vector<T> out = values<T>((count - 1) * step + 1, true), want = out;
    each(s, [&](const Dims &ix) {
      const long long r = pos[flat.at(ix)];
      if (r >= 0) want[r * step] = src[ls.at(ix)];
    });
    run("maskedSelect", sfx<T>(), s,
        {{out.data(), zeros, count, step}, {src.data(), ls.strides}, {pos.data(), flat.strides}});
    CHECK(same(out, want), "maskedSelect_%s: wrong values", sfx<T>());
    // nonzero: count x ndim subscripts, row-major or column-major
    const long long nd = (long long)s.size();
    const bool rows = rnd() & 1;
    const long long rs = rows ? nd : 1, cs = rows ? 1 : count;
    std::vector<long long> sub(count * nd, -7), want_sub(sub.size());
    each(s, [&](const Dims &ix) {
      const long long r = pos[flat.at(ix)];
      for (long long e = 0; r >= 0 && e < nd; ++e) want_sub[r * rs + e * cs] = ix[e];
    });
    run("nonzero", "long", s, {{sub.data(), zeros, nd, cs}, {pos.data(), flat.strides}, {s.data(), zeros, nd, 1}}, rs);
    CHECK(sub == want_sub, "nonzero of %s: wrong subscripts", sfx<T>());
  }
}

// ---- sorts and scans ----

// The host's order: numbers ascending or descending, NaN after every number (before them when
// descending), -0.0 == 0.0, ties by position.
int key_cmp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return (int)std::isnan(a) - (int)std::isnan(b);
  return a < b ? -1 : (b < a ? 1 : 0);
}

// sortInit + the bitonic stages into a workspace of rows padded to a power of two, checked
// against std::stable_sort; then sortCopy (a window of k sorted elements), sortPermute, and
// sortMode (ascending sorts of the numeric dtypes).
template <class T> void sort(bool desc) {
  const Dims s = shape(3, 9);
  const size_t d = rnd() % s.size();
  const long long n = s[d];
  long long P = 1;
  while (P < n) P *= 2;
  const Layout lt = layout(s, true);
  const std::vector<T> t = values<T>(lt.extent, true, -4, 4);  // few distinct keys: ties, runs
  const Dims items = without(s, d);
  const long long m = numel(items);
  std::vector<T> keys(m * P);
  std::vector<long long> pos(m * P, -7);
  Dims rows = contiguous(items).strides;
  for (auto &r : rows) r *= P;
  // sortInit: one item per workspace element (the row's element dim last).
  Dims elems = items, erow = rows, ein = without(lt.strides, d);
  elems.push_back(P), erow.push_back(1), ein.push_back(lt.strides[d]);
  run("sortInit", sfx<T>(), elems,
      {{keys.data(), erow, 1, 0}, {pos.data(), erow, 1, 0}, {t.data(), ein, 1, lt.strides[d]}}, n, P);
  Dims pairs = items, prow = rows;
  pairs.push_back(P / 2), prow.push_back(0);
  static int turn = 0;  // every other network of a dtype in shared memory, the others by stages
  if (P >= 2 && turn++ % 2 == 0) {
    // The whole network in shared memory (P is within one tile here), a random grid and block.
    THCSortLocal sl = {(unsigned long long)keys.data(), (unsigned long long)pos.data(), m * P, P, 2, P, desc, 0};
    const std::string name = std::string("th_sortLocal_") + sfx<T>();
    covered().insert(name);
    const unsigned g[3] = {(unsigned)pick(1, 3), 1, 1}, b[3] = {(unsigned)pick(1, 9), 1, 1};
    void *args[1] = {&sl};
    char err[256] = "";
    CHECK(th_emu_launch(name.c_str(), g, b, TH_SORT_TILE * (8 + sizeof(T)), args, err, sizeof err) == 0, "%s: %s",
          name.c_str(), err);
  } else {
    for (long long size = 2; size <= P; size *= 2)
      for (long long dist = size / 2; dist > 0; dist /= 2)
        run("sortStep", sfx<T>(), pairs, {{keys.data(), prow, P, 1}, {pos.data(), prow, P, 1}}, desc ? -size : size,
            dist);
  }
  // The reference: each line's positions, stably sorted by key.
  std::vector<std::vector<long long>> order;
  each(items, [&](const Dims &it) {
    std::vector<long long> o(n);
    for (long long q = 0; q < n; ++q) o[q] = q;
    const auto key = [&](long long q) { return Ty<T>::num(t[lt.at(with(it, d, q))]); };
    std::stable_sort(o.begin(), o.end(), [&](long long a, long long b) {
      const int c = key_cmp(key(a), key(b));
      return desc ? c > 0 : c < 0;
    });
    const long long row = (long long)order.size() * P;
    bool ok = true;
    for (long long q = 0; q < P; ++q) {
      if (q >= n) ok &= pos[row + q] < 0;
      else ok &= pos[row + q] == o[q] && bits(keys[row + q]) == bits(t[lt.at(with(it, d, o[q]))]);
    }
    CHECK(ok, "sort_%s (%s, line %zu of %lld, n %lld): wrong order", sfx<T>(), desc ? "desc" : "asc", order.size(), m, n);
    order.push_back(o);
  });
  // sortCopy: elements first..first+k of each row into (values, indices) lines along d.
  const long long k = pick(1, n), first = pick(0, n - k);
  Dims ks = s;
  ks[d] = k;
  const Layout lv = layout(ks, false), lx = layout(ks, false);
  std::vector<T> vo = values<T>(lv.extent, false), want_v = vo;
  std::vector<long long> io(lx.extent, -7), want_i = io;
  const Layout lk = contiguous(items);
  each(ks, [&](const Dims &ix) {
    const long long row = lk.at(without(ix, d)), q = first + ix[d];
    want_v[lv.at(ix)] = keys[row * P + q], want_i[lx.at(ix)] = order[row][q];
  });
  run("sortCopy", sfx<T>(), items,
      {{vo.data(), without(lv.strides, d), k, lv.strides[d]}, {io.data(), without(lx.strides, d), k, lx.strides[d]},
       {keys.data() + first, rows, k, 1}, {pos.data() + first, rows, k, 1}});
  CHECK(same(vo, want_v) && io == want_i, "sortCopy_%s: wrong window %lld + %lld", sfx<T>(), first, k);
  // sortPermute: out[q] = src[pos[q]] along each line.
  const Layout lo = layout(s, false), ls = layout(s, true);
  std::vector<T> out = values<T>(lo.extent, true), want = out;
  const std::vector<T> src = values<T>(ls.extent, true);
  each(s, [&](const Dims &ix) {
    Dims at = ix;
    at[d] = order[lk.at(without(ix, d))][ix[d]];
    want[lo.at(ix)] = src[ls.at(at)];
  });
  run("sortPermute", sfx<T>(), items,
      {{out.data(), without(lo.strides, d), n, lo.strides[d]}, {src.data(), without(ls.strides, d), n, ls.strides[d]},
       {pos.data(), rows, n, 1}});
  CHECK(same(out, want), "sortPermute_%s: wrong values", sfx<T>());
  if constexpr (th_traits<T>::kind != TH_KIND_BOOL) {
    if (desc) return;
    // sortMode: the longest run of equal keys (the first on ties), its last element.
    const Layout lr = layout(items, false), lri = layout(items, false);
    std::vector<T> mv = values<T>(lr.extent, false), want_mv = mv;
    std::vector<long long> mi(lri.extent, -7), want_mi = mi;
    each(items, [&](const Dims &it) {
      const long long row = lk.at(it) * P;
      long long best = 0, best_n = 0, run_n = 0;
      for (long long q = 0; q < n; ++q) {
        ++run_n;
        if (q + 1 == n || key_cmp(Ty<T>::num(keys[row + q]), Ty<T>::num(keys[row + q + 1])) != 0) {
          if (run_n > best_n) best = q, best_n = run_n;
          run_n = 0;
        }
      }
      want_mv[lr.at(it)] = keys[row + best], want_mi[lri.at(it)] = pos[row + best];
    });
    run("sortMode", sfx<T>(), items,
        {{mv.data(), lr.strides, 1, 0}, {mi.data(), lri.strides, 1, 0}, {keys.data(), rows, n, 1},
         {pos.data(), rows, n, 1}});
    CHECK(same(mv, want_mv) && mi == want_mi, "sortMode_%s: wrong modes", sfx<T>());
  }
}

// cumsum / cumprod along a dim: small values, so the accreal fold is exact and the reference's
// fold (in long long or double) gives the same values.
template <class T> void scan(bool prod) {
  const Dims s = shape(3, prod ? 6 : 9);
  const size_t d = rnd() % s.size();
  const Layout lo = layout(s, false), lx = layout(s, true);
  std::vector<T> out = values<T>(lo.extent, false), want = out;
  const std::vector<T> x = prod ? values<T>(lx.extent, false, -2, 2) : values<T>(lx.extent, false);
  each(without(s, d), [&](const Dims &it) {
    // Integers wrap in T (from long long); floats fold in double, where a product with zero
    // keeps its IEEE sign (-0.0), as the kernel's accreal does.
    long long acc = prod ? 1 : 0;
    double facc = prod ? 1 : 0;
    for (long long q = 0; q < s[d]; ++q) {
      const Dims ix = with(it, d, q);
      const double v = Ty<T>::num(x[lx.at(ix)]);
      acc = prod ? acc * (long long)v : acc + (long long)v;
      facc = prod ? facc * v : facc + v;
      if constexpr (th_traits<T>::kind == TH_KIND_INT) want[lo.at(ix)] = Ty<T>::make(acc);
      else want[lo.at(ix)] = th_make<T>::from_f64(facc);
    }
  });
  run(prod ? "cumprod" : "cumsum", sfx<T>(), without(s, d),
      {{out.data(), without(lo.strides, d), s[d], lo.strides[d]}, {x.data(), without(lx.strides, d), s[d], lx.strides[d]}});
  CHECK(same(out, want), "%s_%s: wrong values", prod ? "cumprod" : "cumsum", sfx<T>());
}

template <class T> void every_op(int reps) {
  for (int r = 0; r < reps; ++r) {
    gather<T>("indexSelect", false);
    gather<T>("gather", true);
    scatter<T>("indexCopy", SET, false);
    scatter<T>("scatter", SET, true);
    scatter<T>("scatterSorted", SET, rnd() & 1, true);
    scatter<T>("indexFill", FILL, false);
    scatter<T>("scatterFill", FILL, true);
    masked_fill<T, unsigned char>("maskedFill");
    masked_fill<T, th_bool>("maskedFillBool");
    mask_ops<T>();
    sort<T>(false);
    sort<T>(true);
    if constexpr (th_traits<T>::kind != TH_KIND_BOOL) {
      scatter<T>("indexAdd", ADD, false);
      scatter<T>("scatterAdd", ADD, true);
      scatter<T>("scatterAddSorted", ADD, rnd() & 1, true);
      scan<T>(false);
      scan<T>(true);
    }
  }
}

}  // namespace

void data_dependent_kernels() {
  const int reps = 6;
#define TH_EVERY(s, T, ...) every_op<T>(reps);
  TH_ALL_TYPES(TH_EVERY, )
#undef TH_EVERY
  // Every registered data-dependent line kernel ran (both index widths of every dtype).
  std::vector<const char *> all(th_emu_kernel_names(nullptr, 0));
  th_emu_kernel_names(all.data(), all.size());
  size_t want = 0;
  for (const char *k : all) {
    if (!line_kernel(k) || data_independent_line_kernel(k)) continue;
    ++want;
    CHECK(covered().count(k), "%s: not run by test_lines.cpp", k);
  }
  CHECK(covered().size() == want, "%zu kernels run, %zu registered", covered().size(), want);
}
