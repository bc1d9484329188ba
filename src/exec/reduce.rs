//! The reduction plan and its driver: how a fold over some dims of one or two views is cut
//! into runs or column tiles, blocks and threads. What is folded (a [`Reducer`]) comes from
//! `ops::reduce`; the inner loops from `kernels::reduce`.
//!
//! Every reduction that folds elements (sum, prod, max/min with indices, norms, moments, dot,
//! equal, ...) is a [`Reducer`] run by [`reduce`] over one or two same-shaped views and a mask
//! of the dims to reduce. [`Geometry`] drops size-1 dims, keeps the output ("kept") dims in
//! row-major order, orders the reduced dims by memory stride and merges dims that are
//! contiguous in every operand, so a dense tensor is one run whatever its rank. Then one of
//! two loop shapes runs:
//!
//! - **runs** (the innermost reduced dim is the fastest in memory, e.g. `sum(dim=1)` of a
//!   row-major matrix, or a whole-tensor reduction): each output folds its reduced elements run
//!   by run with a multi-lane vectorized kernel;
//! - **columns** (a kept dim is faster in memory, e.g. `sum(dim=0)`): a tile of adjacent
//!   outputs is folded together, `acc[j] = f(acc[j], x[r, j])`, one reduced index `r` at a time,
//!   which vectorizes across `j`.
//!
//! **Fixed block structure.** The reduced elements of one output are cut into blocks that
//! depend only on the shape (`BLOCK` elements for runs, `ROW_BLOCK` reduced indices for
//! columns); each block is folded sequentially (runs: in `LANES` interleaved lanes combined
//! pairwise), and the block results are combined in a fixed pairwise tree ([`Cascade`]). Work
//! is split across threads (above `parallel::GRAIN`) by outputs or, when there are few
//! outputs, by blocks whose results are combined in the same tree afterwards. Results are
//! therefore deterministic and do not depend on the thread count, and float sums carry
//! pairwise-summation error (summing 3e7 ones in f32 gives exactly 3e7).
//!
//! Accumulation is in TH's `accreal` (`Scalar::Acc`: i64 for integers, f64 for Float/Double,
//! f32 for Half/BFloat16).
//!
//! This is the host engine. The op layer (`ops::reduce`) runs device operands on the device
//! engine instead, over the same [`Geometry`], when the reducer names its device fold
//! ([`Reducer::device`]); others are refused with an error.

use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::geometry::{Dim, Odometer, push_merged};
use crate::core::tensor::View;
use crate::exec::backend::host_base;
use crate::exec::parallel::{self, SharedPtr, Sink};
use crate::kernels::reduce as rk;

/// Elements of one output folded sequentially (in lanes) before block results are combined.
const BLOCK: usize = 4096;
/// Reduced indices per block in the column-wise loop.
const ROW_BLOCK: usize = 128;
/// Bytes of accumulators for one column tile (about L1).
const TILE_BYTES: usize = 32 * 1024;
/// Bytes of input a strided column tile may span (half of a typical L2).
const L2_BYTES: usize = 256 * 1024;

/// A fold over the reduced elements of one output, for `N` same-shaped operands of type `T`.
pub trait Reducer<T, const N: usize>: Sync {
    type Acc: Copy + Send + Sync;
    /// The accumulator of no elements.
    fn identity(&self) -> Self::Acc;
    /// Folds `len` elements (operand k at `p[k]`, stride `s[k]` elements) into `acc`; `first`
    /// is the reduced index of the first of them (their position along the dim when one dim
    /// is reduced).
    ///
    /// # Safety
    /// Each `p[k]` must be valid for `len` elements at stride `s[k]`.
    unsafe fn fold_run(&self, acc: Self::Acc, p: [*const T; N], s: [isize; N], len: usize, first: usize) -> Self::Acc;
    /// `acc[j] = fold(acc[j], element j)` for the elements at `p[k] + j * s[k]`, which all
    /// have reduced index `ridx`.
    ///
    /// # Safety
    /// Each `p[k]` must be valid for `acc.len()` elements at stride `s[k]`.
    unsafe fn fold_cols(&self, acc: &mut [Self::Acc], p: [*const T; N], s: [isize; N], ridx: usize);
    /// `fold_cols` for the `rows` reduced indices `ridx..ridx + rows`, whose row `i` is at
    /// `p[k] + i * rs[k]`. Row by row by default; associative reducers fold several rows per
    /// pass over `acc`.
    ///
    /// # Safety
    /// Every row must be valid as for `fold_cols`.
    unsafe fn fold_cols_rows(
        &self,
        acc: &mut [Self::Acc],
        p: [*const T; N],
        s: [isize; N],
        rs: [isize; N],
        ridx: usize,
        rows: usize,
    ) {
        for i in 0..rows {
            // SAFETY: forwarded contract (row i).
            unsafe { self.fold_cols(acc, ptrs_at(p, scaled(rs, i)), s, ridx + i) };
        }
    }
    /// `fold_run(identity(), p[r], s, len, first[r])` for each of `rk::MULTI` runs, each
    /// result exactly as that call gives it. Associative reducers read unit-stride runs
    /// interleaved (`rk::fold_multi`), which streams from DRAM faster than one run at a time.
    ///
    /// # Safety
    /// Each run must be valid as for `fold_run`.
    unsafe fn fold_runs(
        &self,
        p: [[*const T; N]; rk::MULTI],
        s: [isize; N],
        len: usize,
        first: [usize; rk::MULTI],
    ) -> [Self::Acc; rk::MULTI] {
        // SAFETY: forwarded contract (run r).
        std::array::from_fn(|r| unsafe { self.fold_run(self.identity(), p[r], s, len, first[r]) })
    }
    /// Combines the result of some elements with the result of the elements after them.
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The device fold that computes the same thing; None: this reduction runs on host tensors
    /// only (device operands are a clear error).
    fn device(&self) -> Option<DeviceFold> {
        None
    }
    /// An accumulator from the bytes of the device's (`DeviceFold::acc_bytes` of them).
    fn device_acc(&self, _raw: &[u8]) -> Option<Self::Acc> {
        None
    }
}

/// What a reducer folds, named for a device engine (`Reducer::device`): each is one of the
/// device's reduction kernels with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceFold {
    /// Sum in accreal (`Scalar::Acc`).
    Sum,
    /// Product in accreal.
    Prod,
    /// Number of non-zero elements (i64).
    Count,
    /// (value, position) of the first maximum; the first NaN wins.
    Max,
    /// (value, position) of the first minimum.
    Min,
    /// (count, mean, M2) in accreal.
    Moments,
    /// The p-norm's accumulation (no root): p == 0 count, 1 sum |x|, 2 sum x^2, inf max |x|,
    /// -inf min |x|, else sum |x|^p.
    Norm(f64),
    /// Sum of products of two operands, in accreal.
    Dot,
    /// Number of pairs that differ (i64).
    Equal,
    /// `Norm(p)` of the differences of two operands (rounded to the element type).
    Dist(f64),
}

/// The merged iteration spaces of a reduction.
#[derive(Debug)]
pub struct Geometry<const N: usize> {
    /// Output dims in row-major order, merged, all of size > 1.
    pub kept: Vec<Dim<N>>,
    /// Reduced dims, outermost (largest stride of operand 0) first, merged; never empty (a
    /// single dim of size 1 when nothing is reduced).
    pub red: Vec<Dim<N>>,
}

impl<const N: usize> Geometry<N> {
    /// `sizes` are the operands' common sizes, `strides[k]` operand k's strides, `reduce[d]`
    /// whether dim d is reduced.
    pub fn new(sizes: &[i64], strides: [&[i64]; N], reduce: &[bool]) -> Self {
        let mut kept = Vec::new();
        let mut red = Vec::new();
        for (d, &n) in sizes.iter().enumerate() {
            if n == 1 {
                continue;
            }
            let dim = Dim::of(n, strides, d);
            if reduce[d] { red.push(dim) } else { push_merged(&mut kept, dim) }
        }
        red.sort_by_key(|d: &Dim<N>| std::cmp::Reverse(d.st[0].unsigned_abs()));
        let mut merged = Vec::new();
        for d in red {
            push_merged(&mut merged, d);
        }
        if merged.is_empty() {
            merged.push(Dim::UNIT);
        }
        Geometry { kept, red: merged }
    }

    /// Number of outputs.
    pub fn m(&self) -> usize {
        self.kept.iter().map(|d| d.size).product()
    }

    /// Number of elements reduced into each output.
    pub fn k(&self) -> usize {
        self.red.iter().map(|d| d.size).product()
    }
}

/// Pairwise combination of a stream of parts: after each push, equal-sized neighbours merge
/// (a binary counter), and `finish` merges what is left right to left. The tree depends only
/// on the number of parts, so a sequential cascade and a parallel "compute all parts, then
/// cascade them" give identical results.
struct Cascade<X> {
    stack: Vec<(u32, X)>,
}

impl<X> Cascade<X> {
    fn new() -> Self {
        Cascade { stack: Vec::new() }
    }

    fn push(&mut self, mut x: X, c: &impl Fn(X, X) -> X) {
        let mut level = 0;
        loop {
            match self.stack.pop() {
                Some((l, a)) if l == level => {
                    x = c(a, x);
                    level += 1;
                }
                Some(other) => {
                    self.stack.push(other);
                    break;
                }
                None => break,
            }
        }
        self.stack.push((level, x));
    }

    fn finish(self, c: &impl Fn(X, X) -> X) -> Option<X> {
        let mut it = self.stack.into_iter().rev();
        let mut acc = it.next()?.1;
        for (_, a) in it {
            acc = c(a, acc);
        }
        Some(acc)
    }
}

/// The pairwise tree of `parts` (as `Cascade`).
fn tree<X>(parts: impl IntoIterator<Item = X>, c: &impl Fn(X, X) -> X) -> Option<X> {
    let mut cas = Cascade::new();
    for p in parts {
        cas.push(p, c);
    }
    cas.finish(c)
}

#[inline(always)]
fn ptrs<T, const N: usize>(addr: [SharedPtr<T>; N], off: [isize; N]) -> [*const T; N] {
    std::array::from_fn(|k| addr[k].offset(off[k]).cast_const())
}

#[inline(always)]
fn ptrs_at<T, const N: usize>(p: [*const T; N], off: [isize; N]) -> [*const T; N] {
    std::array::from_fn(|k| p[k].wrapping_offset(off[k]))
}

#[inline(always)]
fn plus<const N: usize>(a: [isize; N], b: [isize; N]) -> [isize; N] {
    std::array::from_fn(|k| a[k] + b[k])
}

#[inline(always)]
fn scaled<const N: usize>(st: [isize; N], i: usize) -> [isize; N] {
    st.map(|s| s * i as isize)
}

fn threads() -> usize {
    parallel::num_threads().max(1)
}

/// Runs `r` over the geometry: one accumulator per output, in output (row-major) order.
///
/// # Safety
/// For each operand k, every element `base[k] + offset` the geometry reaches must be valid.
/// `out` holds `g.m()` identities (allocated fallibly by the caller).
unsafe fn run<T: Scalar, R: Reducer<T, N>, const N: usize>(
    g: &Geometry<N>,
    base: [*const T; N],
    r: &R,
    mut out: Vec<R::Acc>,
) -> Vec<R::Acc> {
    let (m, k) = (g.m(), g.k());
    if m == 0 || k == 0 {
        return out;
    }
    let addr = base.map(|p| SharedPtr(p.cast_mut()));
    let inner = *g.red.last().unwrap_or(&Dim::UNIT);
    let tile = g.kept.iter().enumerate().min_by_key(|(_, d)| d.st[0].unsigned_abs());
    let columns = tile.is_some_and(|(_, d)| {
        let (sc, si) = (d.st[0].unsigned_abs(), inner.st[0].unsigned_abs());
        (sc < si && inner.size > 1) || (inner.size < 64 && d.size >= 64)
    });
    let sink = Sink(out.as_mut_ptr());
    match tile {
        Some((c, _)) if columns => {
            // SAFETY: forwarded contract; each output index is written once.
            unsafe { run_columns(g, addr, r, c, &sink) }
        }
        // SAFETY: as above.
        _ => unsafe { run_runs(g, addr, r, &sink) },
    }
    out
}

/// The "runs" loop: each output folds its reduced elements run by run.
///
/// # Safety
/// As `run`; `sink` holds `g.m()` elements.
unsafe fn run_runs<T: Scalar, R: Reducer<T, N>, const N: usize>(
    g: &Geometry<N>,
    addr: [SharedPtr<T>; N],
    r: &R,
    sink: &Sink<R::Acc>,
) {
    let (m, k) = (g.m(), g.k());
    let inner = g.red[g.red.len() - 1];
    let outer = &g.red[..g.red.len() - 1];
    let comb = |a, b| r.combine(a, b);
    // Folds reduced elements [lo, hi) of the output whose first element is at p0.
    let fold_range = |p0: [SharedPtr<T>; N], lo: usize, hi: usize| {
        if outer.is_empty() {
            // one run (the common case): no odometer
            let p = ptrs::<T, N>(p0, scaled(inner.st, lo));
            // SAFETY: the run lies inside the reduced space of this output (caller contract).
            return unsafe { r.fold_run(r.identity(), p, inner.st, hi - lo, lo) };
        }
        let mut acc = r.identity();
        let mut o = Odometer::new(outer, lo / inner.size);
        let mut i = lo % inner.size;
        let mut pos = lo;
        while pos < hi {
            let len = (inner.size - i).min(hi - pos);
            let p = ptrs::<T, N>(p0, plus(o.off, scaled(inner.st, i)));
            // SAFETY: the run lies inside the reduced space of this output (caller contract).
            acc = unsafe { r.fold_run(acc, p, inner.st, len, pos) };
            pos += len;
            i = 0;
            if pos < hi {
                o.advance();
            }
        }
        acc
    };
    let nblocks = k.div_ceil(BLOCK);
    let block = |p0, b: usize| fold_range(p0, b * BLOCK, (b * BLOCK + BLOCK).min(k));
    let work = m.saturating_mul(k);
    if m >= 4 * threads() || nblocks == 1 || work < parallel::GRAIN {
        parallel::for_range(m, work, |a, b| {
            let mut o = Odometer::new(&g.kept, a);
            for mi in a..b {
                let p0: [SharedPtr<T>; N] = std::array::from_fn(|q| SharedPtr(addr[q].offset(o.off[q])));
                let acc = if nblocks == 1 {
                    fold_range(p0, 0, k)
                } else {
                    tree((0..nblocks).map(|bi| block(p0, bi)), &comb).unwrap_or(r.identity())
                };
                // SAFETY: mi < m, and this worker alone owns outputs a..b.
                unsafe { sink.put(mi, acc) };
                if mi + 1 < b {
                    o.advance();
                }
            }
        });
        return;
    }
    // Few outputs with many elements each: split each output's blocks across threads.
    let mut o = Odometer::new(&g.kept, 0);
    for mi in 0..m {
        let p0: [SharedPtr<T>; N] = std::array::from_fn(|q| SharedPtr(addr[q].offset(o.off[q])));
        let mut parts = vec![r.identity(); nblocks];
        let ps = Sink(parts.as_mut_ptr());
        parallel::for_range(nblocks, k, |a, b| {
            // A single run: this piece's full blocks go rk::MULTI at a time, one from each
            // quarter of the piece (several distant streams of loads per core).
            let full = b.min(k / BLOCK);
            let q = if outer.is_empty() { full.saturating_sub(a) / rk::MULTI } else { 0 };
            for i in 0..q {
                let bs: [usize; rk::MULTI] = std::array::from_fn(|r| a + r * q + i);
                let p = bs.map(|bi| ptrs::<T, N>(p0, scaled(inner.st, bi * BLOCK)));
                // SAFETY: each block is BLOCK elements of this output's single run.
                let accs = unsafe { r.fold_runs(p, inner.st, BLOCK, bs.map(|bi| bi * BLOCK)) };
                for (bi, acc) in bs.into_iter().zip(accs) {
                    // SAFETY: bi < nblocks, and this worker alone owns blocks a..b.
                    unsafe { ps.put(bi, acc) };
                }
            }
            for bi in a + rk::MULTI * q..b {
                // SAFETY: bi < nblocks, and this worker alone owns blocks a..b.
                unsafe { ps.put(bi, block(p0, bi)) };
            }
        });
        // SAFETY: mi < m; single-threaded here.
        unsafe { sink.put(mi, tree(parts, &comb).unwrap_or(r.identity())) };
        if mi + 1 < m {
            o.advance();
        }
    }
}

/// The "columns" loop: tiles of outputs along kept dim `c` are folded together.
///
/// # Safety
/// As `run`; `sink` holds `g.m()` elements.
unsafe fn run_columns<T: Scalar, R: Reducer<T, N>, const N: usize>(
    g: &Geometry<N>,
    addr: [SharedPtr<T>; N],
    r: &R,
    c: usize,
    sink: &Sink<R::Acc>,
) {
    let (m, k) = (g.m(), g.k());
    let tile = g.kept[c];
    // Output strides of the kept dims (the output is row-major over them).
    let mut ostr = vec![1usize; g.kept.len()];
    for d in (0..g.kept.len().saturating_sub(1)).rev() {
        ostr[d] = ostr[d + 1] * g.kept[d + 1].size;
    }
    let others: Vec<(Dim<N>, usize)> =
        g.kept.iter().zip(&ostr).enumerate().filter(|(d, _)| *d != c).map(|(_, (dim, os))| (*dim, *os)).collect();
    let oc = ostr[c];
    let j = tile.size;
    // Accumulators within TILE_BYTES; for a strided tile also the input span of one row within
    // L2_BYTES, as the same cache lines are read again for the next reduced indices.
    let span = tile.st[0].unsigned_abs().max(1) * size_of::<T>();
    let w = (TILE_BYTES / size_of::<R::Acc>().max(1)).min(L2_BYTES / span).clamp(16, 1 << 16).min(j);
    let ntiles = j.div_ceil(w);
    let items = (m / j) * ntiles;
    // Base pointers, first output index and width of work item `it`.
    let item = |it: usize| {
        let (mut mo, t) = (it / ntiles, it % ntiles);
        let mut off = [0isize; N];
        let mut ob = 0usize;
        for (dim, os) in others.iter().rev() {
            let i = mo % dim.size;
            mo /= dim.size;
            off = plus(off, scaled(dim.st, i));
            ob += i * os;
        }
        let j0 = t * w;
        let off = plus(off, scaled(tile.st, j0));
        let p0: [SharedPtr<T>; N] = std::array::from_fn(|q| SharedPtr(addr[q].offset(off[q])));
        (p0, ob + j0 * oc, w.min(j - j0))
    };
    // Folds reduced indices [lo, hi) into a fresh tile of `wl` accumulators.
    // (run by run of the innermost reduced dim, so that rows of a run go several at a time)
    let (rin, rout) = match g.red.split_last() {
        Some((last, rest)) => (*last, rest),
        None => (Dim::UNIT, &[][..]),
    };
    let fold_tile = |p0: [SharedPtr<T>; N], wl: usize, lo: usize, hi: usize| {
        let mut acc = vec![r.identity(); wl];
        let mut o = Odometer::new(rout, lo / rin.size);
        let (mut pos, mut i) = (lo, lo % rin.size);
        while pos < hi {
            let len = (rin.size - i).min(hi - pos);
            let p = ptrs::<T, N>(p0, plus(o.off, scaled(rin.st, i)));
            // SAFETY: wl elements of this tile at each reduced index pos..pos + len, the rows
            // of one run of the innermost reduced dim (caller contract).
            unsafe { r.fold_cols_rows(&mut acc, p, tile.st, rin.st, pos, len) };
            pos += len;
            i = 0;
            if pos < hi {
                o.advance();
            }
        }
        acc
    };
    let comb = |mut a: Vec<R::Acc>, b: Vec<R::Acc>| {
        for (x, y) in a.iter_mut().zip(b) {
            *x = r.combine(*x, y);
        }
        a
    };
    let nblocks = k.div_ceil(ROW_BLOCK);
    let block = |p0, wl, b: usize| fold_tile(p0, wl, b * ROW_BLOCK, (b * ROW_BLOCK + ROW_BLOCK).min(k));
    let emit = |ob: usize, acc: Vec<R::Acc>| {
        for (jj, x) in acc.into_iter().enumerate() {
            // SAFETY: the outputs of one tile belong to exactly one work item.
            unsafe { sink.put(ob + jj * oc, x) };
        }
    };
    let work = m.saturating_mul(k);
    if items >= 2 * threads() || nblocks == 1 || work < parallel::GRAIN {
        parallel::for_range(items, work, |a, b| {
            for it in a..b {
                let (p0, ob, wl) = item(it);
                let acc = if nblocks == 1 {
                    fold_tile(p0, wl, 0, k)
                } else {
                    tree((0..nblocks).map(|bi| block(p0, wl, bi)), &comb).unwrap_or_default()
                };
                emit(ob, acc);
            }
        });
        return;
    }
    for it in 0..items {
        let (p0, ob, wl) = item(it);
        let mut parts: Vec<Vec<R::Acc>> = vec![Vec::new(); nblocks];
        let ps = Sink(parts.as_mut_ptr());
        parallel::for_range(nblocks, k * wl, |a, b| {
            for bi in a..b {
                // SAFETY: bi < nblocks, and this worker alone owns blocks a..b.
                unsafe { ps.put(bi, block(p0, wl, bi)) };
            }
        });
        emit(ob, tree(parts, &comb).unwrap_or_default());
    }
}

/// The geometry of a reduction of same-shaped `views` over the dims where `mask` is set (an
/// error when the shapes differ).
pub fn geometry<T: Scalar, const N: usize>(views: [&View<T>; N], mask: &[bool]) -> Result<Geometry<N>> {
    let sizes = &views[0].sizes;
    if views.iter().any(|v| v.sizes != *sizes) || mask.len() != sizes.len() {
        return Err(Error::internal("reduce: operands of different shapes"));
    }
    Ok(Geometry::new(sizes, views.map(|v| &v.strides[..]), mask))
}

/// Runs `r` over same-shaped host views of geometry `g` (`geometry`): one accumulator per
/// output, in row-major order of the kept dims. An empty view gives identities.
pub fn reduce<T: Scalar, R: Reducer<T, N>, const N: usize>(
    g: &Geometry<N>,
    views: [&View<T>; N],
    r: &R,
) -> Result<Vec<R::Acc>> {
    if views[0].numel() == 0 {
        return crate::core::limits::try_filled(g.m(), r.identity());
    }
    let mut base = [std::ptr::null::<T>(); N];
    for (b, v) in base.iter_mut().zip(views) {
        *b = host_base(v)? as *const T;
    }
    // SAFETY: host_base checked that every element of each view lies inside its storage (the
    // views have elements, so no base is NULL), and the geometry reaches exactly those elements.
    let out = crate::core::limits::try_filled(g.m(), r.identity())?;
    // SAFETY: as above.
    Ok(unsafe { run(g, base, r, out) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cascade_matches_recursive_pairs() {
        // tree of n parts == split at the largest power of two <= n, recursively
        fn rec(v: &[String]) -> String {
            if v.len() == 1 {
                return v[0].clone();
            }
            let p = 1usize << (usize::BITS - 1 - v.len().leading_zeros());
            let p = if p == v.len() { p / 2 } else { p };
            format!("({}+{})", rec(&v[..p]), rec(&v[p..]))
        }
        for n in 1..40 {
            let parts: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            let got = tree(parts.clone(), &|a: String, b: String| format!("({a}+{b})")).unwrap();
            assert_eq!(got, rec(&parts), "n = {n}");
        }
    }
}
