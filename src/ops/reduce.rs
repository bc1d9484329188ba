//! Reductions (`THTensorMath.h` §4.4, 4.10, 4.17, 4.19): whole-tensor and per-dimension
//! reductions, scans, statistics, norms, histograms, and `sumTo` (the reduction that undoes
//! broadcasting).
//!
//! # The engine
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
//! f32 for Half/BFloat16) for every sum, product, mean, variance and norm.

use super::num::{Float, Num, Real};
use super::{map2, pointwise2, resize_out};
use crate::core::dtype::{Bool, Scalar};
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View, copy, parse_sizes, size_desc};
use crate::exec::iter::Offsets;
use crate::exec::parallel::{self, SharedPtr};
use crate::kernels::reduce as rk;
use half::{bf16, f16};
use std::cmp::Ordering;
use std::marker::PhantomData;

/// Elements of one output folded sequentially (in lanes) before block results are combined.
const BLOCK: usize = 4096;
/// Reduced indices per block in the column-wise loop.
const ROW_BLOCK: usize = 128;
/// Bytes of accumulators for one column tile (about L1).
const TILE_BYTES: usize = 32 * 1024;
/// Bytes of input a strided column tile may span (half of a typical L2).
const L2_BYTES: usize = 256 * 1024;
/// Lines scanned together by the tiled cumsum/cumprod.
const SCAN_TILE: usize = 512;

// ---------------------------------------------------------------------------------------------
// Element traits
// ---------------------------------------------------------------------------------------------

/// What order-based reductions need of an element type (every dtype, Bool included).
pub trait Elem: Scalar {
    fn nan(self) -> bool;
    /// `self < o` (Bool: false < true).
    fn less(self, o: Self) -> bool;
    /// Equal as values (Bool: same truth value; NaN is not equal to itself).
    fn same(self, o: Self) -> bool;
    fn nonzero(self) -> bool;
    /// The value as a write stores it (Bool: 0 or 1).
    fn canon(self) -> Self;
    /// Neutral element of max (-inf, the type's minimum, false).
    fn lowest() -> Self;
    /// Neutral element of min.
    fn highest() -> Self;
}

macro_rules! int_elem {
    ($($T:ty),*) => {$(
        impl Elem for $T {
            #[inline(always)] fn nan(self) -> bool { false }
            #[inline(always)] fn less(self, o: Self) -> bool { self < o }
            #[inline(always)] fn same(self, o: Self) -> bool { self == o }
            #[inline(always)] fn nonzero(self) -> bool { self != 0 }
            #[inline(always)] fn canon(self) -> Self { self }
            #[inline(always)] fn lowest() -> Self { <$T>::MIN }
            #[inline(always)] fn highest() -> Self { <$T>::MAX }
        }
    )*};
}
int_elem!(u8, i8, i16, i32, i64);

macro_rules! float_elem {
    ($($T:ty),*) => {$(
        impl Elem for $T {
            #[inline(always)] fn nan(self) -> bool { self.is_nan() }
            #[inline(always)] fn less(self, o: Self) -> bool { self < o }
            #[inline(always)] fn same(self, o: Self) -> bool { self == o }
            #[inline(always)] fn nonzero(self) -> bool { self != 0.0 }
            #[inline(always)] fn canon(self) -> Self { self }
            #[inline(always)] fn lowest() -> Self { <$T>::NEG_INFINITY }
            #[inline(always)] fn highest() -> Self { <$T>::INFINITY }
        }
    )*};
}
float_elem!(f32, f64);
macro_rules! half_elem {
    ($($T:ty),*) => {$(
        impl Elem for $T {
            #[inline(always)] fn nan(self) -> bool { self.is_nan() }
            #[inline(always)] fn less(self, o: Self) -> bool { self < o }
            #[inline(always)] fn same(self, o: Self) -> bool { self == o }
            #[inline(always)] fn nonzero(self) -> bool { self != <$T>::ZERO }
            #[inline(always)] fn canon(self) -> Self { self }
            #[inline(always)] fn lowest() -> Self { <$T>::NEG_INFINITY }
            #[inline(always)] fn highest() -> Self { <$T>::INFINITY }
        }
    )*};
}
half_elem!(f16, bf16);

impl Elem for Bool {
    #[inline(always)]
    fn nan(self) -> bool {
        false
    }
    #[inline(always)]
    fn less(self, o: Self) -> bool {
        !self.get() && o.get()
    }
    #[inline(always)]
    fn same(self, o: Self) -> bool {
        self.get() == o.get()
    }
    #[inline(always)]
    fn nonzero(self) -> bool {
        self.get()
    }
    #[inline(always)]
    fn canon(self) -> Self {
        Bool::from(self.get())
    }
    #[inline(always)]
    fn lowest() -> Self {
        Bool(0)
    }
    #[inline(always)]
    fn highest() -> Self {
        Bool(1)
    }
}

/// A numeric dtype (not Bool) with a thread-safe accumulator.
pub trait NumAcc: Num + Elem + Scalar<Acc: Send + Sync> {}
impl<T: Num + Elem + Scalar<Acc: Send + Sync>> NumAcc for T {}

/// A floating-point dtype: its `accreal` (f64, or f32 for Half/BFloat16) is a float type too.
pub trait FloatAcc: Float + NumAcc + Scalar<Acc: Real + Num + Send + Sync> {}
impl<T: Float + NumAcc + Scalar<Acc: Real + Num + Send + Sync>> FloatAcc for T {}

/// The order the selections (kthvalue, median, mode) use: NaN after everything, equal to NaN.
#[inline]
fn total<T: Elem>(a: T, b: T) -> Ordering {
    match (a.nan(), b.nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ if a.less(b) => Ordering::Less,
        _ if b.less(a) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// max with NaN propagating (written as two selects, so folds of it vectorize).
#[inline(always)]
fn nan_max<T: Elem>(a: T, b: T) -> T {
    let m = if a.less(b) { b } else { a };
    if b.nan() { b } else { m }
}

/// min with NaN propagating.
#[inline(always)]
fn nan_min<T: Elem>(a: T, b: T) -> T {
    let m = if b.less(a) { b } else { a };
    if b.nan() { b } else { m }
}

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

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
}

/// An associative fold of `g(x)` with `c`, neutral `id` (sums, products, counts, max, ...).
pub struct Assoc<A, G, C> {
    pub id: A,
    pub g: G,
    pub c: C,
}

impl<T, A, G, C> Reducer<T, 1> for Assoc<A, G, C>
where
    T: Scalar,
    A: Copy + Send + Sync,
    G: Fn(T) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    type Acc = A;
    fn identity(&self) -> A {
        self.id
    }
    #[inline]
    unsafe fn fold_run(&self, acc: A, p: [*const T; 1], s: [isize; 1], len: usize, _first: usize) -> A {
        let (g, c) = (&self.g, &self.c);
        // SAFETY: forwarded contract.
        let r = unsafe { rk::fold(len, p[0], s[0], self.id, &|a, x| c(a, g(x)), c) };
        c(acc, r)
    }
    #[inline]
    unsafe fn fold_cols(&self, acc: &mut [A], p: [*const T; 1], s: [isize; 1], _ridx: usize) {
        let (g, c) = (&self.g, &self.c);
        // SAFETY: forwarded contract.
        unsafe { rk::cols(acc, p[0], s[0], &|a, x| c(a, g(x))) }
    }
    unsafe fn fold_cols_rows(
        &self,
        acc: &mut [A],
        p: [*const T; 1],
        s: [isize; 1],
        rs: [isize; 1],
        _ridx: usize,
        rows: usize,
    ) {
        let (g, c) = (&self.g, &self.c);
        let mut i = 0;
        while i + rk::ROWS <= rows {
            // SAFETY: forwarded contract (rows i..i + ROWS).
            unsafe { rk::cols_rows(acc, p[0].wrapping_offset(i as isize * rs[0]), s[0], rs[0], g, c) };
            i += rk::ROWS;
        }
        for i in i..rows {
            // SAFETY: forwarded contract (row i).
            unsafe { rk::cols(acc, p[0].wrapping_offset(i as isize * rs[0]), s[0], &|a, x| c(a, g(x))) };
        }
    }
    unsafe fn fold_runs(
        &self,
        p: [[*const T; 1]; rk::MULTI],
        s: [isize; 1],
        len: usize,
        _first: [usize; rk::MULTI],
    ) -> [A; rk::MULTI] {
        let (g, c) = (&self.g, &self.c);
        if s[0] != 1 {
            // SAFETY: forwarded contract (run r).
            return std::array::from_fn(|r| unsafe { self.fold_run(self.id, p[r], s, len, 0) });
        }
        // SAFETY: forwarded contract; the same fold as `fold_run`'s, combined with the identity
        // as it does.
        let rs = unsafe { rk::fold_multi(len, p.map(|q| q[0]), self.id, &|a, x| c(a, g(x)), c) };
        rs.map(|r| c(self.id, r))
    }
    fn combine(&self, a: A, b: A) -> A {
        (self.c)(a, b)
    }
}

/// `Assoc` over pairs of elements of two operands (dot, equal).
pub struct Assoc2<A, G, C> {
    pub id: A,
    pub g: G,
    pub c: C,
}

impl<T, A, G, C> Reducer<T, 2> for Assoc2<A, G, C>
where
    T: Scalar,
    A: Copy + Send + Sync,
    G: Fn(T, T) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    type Acc = A;
    fn identity(&self) -> A {
        self.id
    }
    #[inline]
    unsafe fn fold_run(&self, acc: A, p: [*const T; 2], s: [isize; 2], len: usize, _first: usize) -> A {
        let (g, c) = (&self.g, &self.c);
        // SAFETY: forwarded contract.
        let r = unsafe { rk::fold2(len, p[0], s[0], p[1], s[1], self.id, &|a, x, y| c(a, g(x, y)), c) };
        c(acc, r)
    }
    #[inline]
    unsafe fn fold_cols(&self, acc: &mut [A], p: [*const T; 2], s: [isize; 2], _ridx: usize) {
        let (g, c) = (&self.g, &self.c);
        // SAFETY: forwarded contract.
        unsafe { rk::cols2(acc, p[0], s[0], p[1], s[1], &|a, x, y| c(a, g(x, y))) }
    }
    fn combine(&self, a: A, b: A) -> A {
        (self.c)(a, b)
    }
}

/// max or min with the index of the first occurrence; the first NaN wins (and stops the scan).
/// The accumulator is (value, index), index -1 for "no element yet".
pub struct ArgBest<T> {
    max: bool,
    _t: PhantomData<T>,
}

impl<T: Elem> ArgBest<T> {
    pub fn new(max: bool) -> Self {
        ArgBest { max, _t: PhantomData }
    }
    /// Whether a later `x` replaces the current best `cur`.
    #[inline(always)]
    fn better(&self, x: T, cur: T) -> bool {
        !cur.nan() && (x.nan() || if self.max { cur.less(x) } else { x.less(cur) })
    }
}

impl<T: Elem> Reducer<T, 1> for ArgBest<T> {
    type Acc = (T, i64);
    fn identity(&self) -> (T, i64) {
        (T::default(), -1)
    }
    /// Two vectorized passes over the run: its extreme value (NaN if any), then the position
    /// of the first element equal to it (the first NaN).
    unsafe fn fold_run(&self, acc: (T, i64), p: [*const T; 1], s: [isize; 1], len: usize, first: usize) -> (T, i64) {
        if len == 0 || (acc.1 >= 0 && acc.0.nan()) {
            return acc;
        }
        let (p, s) = (p[0], s[0]);
        // SAFETY: forwarded contract.
        let ext = unsafe {
            if self.max {
                rk::fold(len, p, s, T::lowest(), &nan_max::<T>, &nan_max::<T>)
            } else {
                rk::fold(len, p, s, T::highest(), &nan_min::<T>, &nan_min::<T>)
            }
        };
        // SAFETY: as above.
        let pos = unsafe {
            if ext.nan() { rk::find(len, p, s, &|x: T| x.nan()) } else { rk::find(len, p, s, &|x: T| x.same(ext)) }
        }
        .unwrap_or(0);
        // SAFETY: pos < len.
        let v = unsafe { p.offset(pos as isize * s).read() };
        self.combine(acc, (v, (first + pos) as i64))
    }
    unsafe fn fold_cols(&self, acc: &mut [(T, i64)], p: [*const T; 1], s: [isize; 1], ridx: usize) {
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: forwarded contract: j < acc.len().
            let x = unsafe { p[0].offset(j as isize * s[0]).read() };
            if a.1 < 0 || self.better(x, a.0) {
                *a = (x, ridx as i64);
            }
        }
    }
    fn combine(&self, a: (T, i64), b: (T, i64)) -> (T, i64) {
        if a.1 < 0 || (b.1 >= 0 && self.better(b.0, a.0)) { b } else { a }
    }
}

/// Count, mean and sum of squared deviations (M2), in `accreal`: runs are folded two-pass
/// (mean, then squared deviations from it), columns with Welford's update, and parts are
/// combined with Chan's formula. Numerically stable; never negative.
pub struct Moments<T>(PhantomData<T>);

impl<T: FloatAcc> Moments<T> {
    pub fn new() -> Self {
        Moments(PhantomData)
    }
}

impl<T: FloatAcc> Default for Moments<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: FloatAcc> Reducer<T, 1> for Moments<T> {
    type Acc = (T::Acc, T::Acc, T::Acc);
    fn identity(&self) -> Self::Acc {
        let z = <T::Acc as Num>::zero();
        (z, z, z)
    }
    unsafe fn fold_run(&self, acc: Self::Acc, p: [*const T; 1], s: [isize; 1], len: usize, _first: usize) -> Self::Acc {
        if len == 0 {
            return acc;
        }
        let z = <T::Acc as Num>::zero();
        let add = |a: T::Acc, b: T::Acc| a.add(b);
        let n = <T::Acc as Num>::from_f64(len as f64);
        // SAFETY: forwarded contract.
        let sum = unsafe { rk::fold(len, p[0], s[0], z, &|a, x: T| a.add(x.to_acc()), &add) };
        let mean = sum.div(n);
        // SAFETY: forwarded contract.
        let m2 = unsafe {
            rk::fold(
                len,
                p[0],
                s[0],
                z,
                &|a, x: T| {
                    let d = x.to_acc().sub(mean);
                    a.add(d.mul(d))
                },
                &add,
            )
        };
        self.combine(acc, (n, mean, m2))
    }
    unsafe fn fold_cols(&self, acc: &mut [Self::Acc], p: [*const T; 1], s: [isize; 1], _ridx: usize) {
        let one = <T::Acc as Num>::one();
        let welford = |(n, mean, m2): Self::Acc, x: T| {
            let x = x.to_acc();
            let n1 = n.add(one);
            let d = x.sub(mean);
            let mean1 = mean.add(d.div(n1));
            (n1, mean1, m2.add(d.mul(x.sub(mean1))))
        };
        // SAFETY: forwarded contract.
        unsafe { rk::cols(acc, p[0], s[0], &welford) }
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        let z = <T::Acc as Num>::zero();
        if a.0 == z {
            return b;
        }
        if b.0 == z {
            return a;
        }
        let n = a.0.add(b.0);
        let d = b.1.sub(a.1);
        let mean = a.1.add(d.mul(b.0).div(n));
        let m2 = a.2.add(b.2).add(d.mul(d).mul(a.0).mul(b.0).div(n));
        (n, mean, m2)
    }
}

/// One dim of a reduction: its size and the stride of each operand (in elements).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Dim<const N: usize> {
    size: usize,
    st: [isize; N],
}

/// Appends `d` after `v`'s last dim, merging them when `d` continues it in every operand.
fn push_merged<const N: usize>(v: &mut Vec<Dim<N>>, d: Dim<N>) {
    if let Some(l) = v.last_mut()
        && (0..N).all(|k| l.st[k] == d.st[k] * d.size as isize)
    {
        l.size *= d.size;
        l.st = d.st;
        return;
    }
    v.push(d);
}

/// Row-major walk over `dims` (last fastest) tracking each operand's element offset.
struct Odometer<'a, const N: usize> {
    dims: &'a [Dim<N>],
    idx: Vec<usize>,
    off: [isize; N],
}

impl<'a, const N: usize> Odometer<'a, N> {
    /// Positioned at linear index `start`.
    fn new(dims: &'a [Dim<N>], start: usize) -> Self {
        let mut idx = vec![0; dims.len()];
        let mut off = [0isize; N];
        let mut r = start;
        for (d, dim) in dims.iter().enumerate().rev() {
            idx[d] = r % dim.size;
            r /= dim.size;
            for (o, s) in off.iter_mut().zip(dim.st) {
                *o += idx[d] as isize * s;
            }
        }
        Odometer { dims, idx, off }
    }

    fn advance(&mut self) {
        for d in (0..self.dims.len()).rev() {
            let dim = &self.dims[d];
            self.idx[d] += 1;
            for k in 0..N {
                self.off[k] += dim.st[k];
            }
            if self.idx[d] < dim.size {
                return;
            }
            for k in 0..N {
                self.off[k] -= dim.st[k] * dim.size as isize;
            }
            self.idx[d] = 0;
        }
    }
}

/// The merged iteration spaces of a reduction.
#[derive(Debug)]
pub struct Geometry<const N: usize> {
    /// Output dims in row-major order, merged, all of size > 1.
    kept: Vec<Dim<N>>,
    /// Reduced dims, outermost (largest stride of operand 0) first, merged; never empty (a
    /// single dim of size 1 when nothing is reduced).
    red: Vec<Dim<N>>,
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
            let dim = Dim { size: n as usize, st: std::array::from_fn(|k| strides[k][d] as isize) };
            if reduce[d] { red.push(dim) } else { push_merged(&mut kept, dim) }
        }
        red.sort_by_key(|d: &Dim<N>| std::cmp::Reverse(d.st[0].unsigned_abs()));
        let mut merged = Vec::new();
        for d in red {
            push_merged(&mut merged, d);
        }
        if merged.is_empty() {
            merged.push(Dim { size: 1, st: [0; N] });
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

/// A raw array written by workers at disjoint indices.
struct Sink<X>(*mut X);
// SAFETY: the workers sharing a Sink write disjoint elements while its owner waits for them.
unsafe impl<X: Send> Send for Sink<X> {}
// SAFETY: as above.
unsafe impl<X: Send> Sync for Sink<X> {}

impl<X> Sink<X> {
    /// # Safety
    /// `i` must be in bounds and no other thread may access element `i` meanwhile.
    unsafe fn put(&self, i: usize, x: X) {
        // SAFETY: caller contract.
        unsafe { *self.0.add(i) = x }
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
    crate::ffi::general::num_threads().max(1)
}

/// Runs `f(start, end)` over `[0, n)` with `parallel::for_range`: in one call when `work`
/// (elements touched) is below `parallel::GRAIN`, else in several pieces per thread that the
/// calling thread starts on at once and the pool's workers join as they wake (a sleeping worker
/// can take a while to get a core back, so the caller does not wait for one to begin). Which
/// thread runs a piece never changes a result: see the module docs.
fn par_for(n: usize, work: usize, f: impl Fn(usize, usize) + Sync) {
    parallel::for_range(n, work, f)
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
    let inner = *g.red.last().unwrap_or(&Dim { size: 1, st: [0; N] });
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
        par_for(m, work, |a, b| {
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
        par_for(nblocks, k, |a, b| {
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
        None => (Dim { size: 1, st: [0; N] }, &[][..]),
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
        par_for(items, work, |a, b| {
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
        par_for(nblocks, k * wl, |a, b| {
            for bi in a..b {
                // SAFETY: bi < nblocks, and this worker alone owns blocks a..b.
                unsafe { ps.put(bi, block(p0, wl, bi)) };
            }
        });
        emit(ob, tree(parts, &comb).unwrap_or_default());
    }
}

/// Runs `r` over same-shaped views, reducing the dims where `mask` is set: one accumulator
/// per output, in row-major order of the kept dims. An empty view gives identities.
pub fn reduce<T: Scalar, R: Reducer<T, N>, const N: usize>(
    views: [&View<T>; N],
    mask: &[bool],
    r: &R,
) -> Result<Vec<R::Acc>> {
    let sizes = &views[0].sizes;
    if views.iter().any(|v| v.sizes != *sizes) || mask.len() != sizes.len() {
        return Err(Error::internal("reduce: operands of different shapes"));
    }
    let g = Geometry::new(sizes, views.map(|v| &v.strides[..]), mask);
    if views[0].numel() == 0 {
        return crate::core::limits::try_filled(g.m(), r.identity());
    }
    let mut base = [std::ptr::null::<T>(); N];
    for (b, v) in base.iter_mut().zip(views) {
        let p = v.host_ptr()?.ok_or_else(|| Error::internal("reduce: a view with elements has no storage"))?;
        *b = p.wrapping_add(v.offset);
    }
    // SAFETY: host_ptr checked that every element of each view lies inside its storage, and
    // the geometry reaches exactly the elements of the views.
    let out = crate::core::limits::try_filled(g.m(), r.identity())?;
    // SAFETY: as above.
    Ok(unsafe { run(&g, base, r, out) })
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the API functions
// ---------------------------------------------------------------------------------------------

fn check_dim(dim: i32, ndim: usize, arg: u32) -> Result<usize> {
    usize::try_from(dim)
        .ok()
        .filter(|&d| d < ndim)
        .ok_or_else(|| Error::index(format!("dimension {dim} out of range of {ndim}D tensor")).at_arg(arg))
}

fn only(ndim: usize, d: usize) -> Vec<bool> {
    (0..ndim).map(|i| i == d).collect()
}

fn all_but(ndim: usize, d: usize) -> Vec<bool> {
    (0..ndim).map(|i| i != d).collect()
}

/// The output shape of a reduction along `d`: size 1 there, removed unless `keepdim` (but a
/// 1-D input keeps its one dim, as TH's `squeeze1d`).
pub fn reduced_shape(sizes: &[i64], d: usize, keepdim: bool) -> Vec<i64> {
    let mut s = sizes.to_vec();
    s[d] = 1;
    if !keepdim && s.len() > 1 {
        s.remove(d);
    }
    s
}

/// Writes `data` (row-major) into `r` resized to `shape` (`resize_out` rules: an output that
/// already has the shape keeps its strides).
fn store<O: Scalar>(r: &Tensor<O>, shape: &[i64], data: &[O]) -> Result<()> {
    let out = resize_out(r, shape)?;
    if out.numel() != data.len() {
        return Err(Error::internal(format!("reduction produced {} values for size {}", data.len(), size_desc(shape))));
    }
    if data.is_empty() {
        return Ok(());
    }
    if out.is_contiguous() {
        let p = out.host_ptr()?.ok_or_else(|| Error::internal("reduction output has no storage"))?;
        // SAFETY: out is contiguous and its data.len() elements lie inside its storage
        // (host_ptr); data is this call's own buffer, so the ranges cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(out.offset), data.len()) };
        return Ok(());
    }
    copy(&out, &View::from_slice(data, shape)?)
}

/// Calls `f` on every element of `v` in row-major order.
fn for_each<T: Scalar>(v: &View<T>, mut f: impl FnMut(T)) -> Result<()> {
    let Some(p) = v.host_ptr()? else { return Ok(()) };
    for o in Offsets::new(v.offset, &v.sizes, &v.strides, v.numel()) {
        // SAFETY: every offset of the view lies inside its storage (host_ptr).
        f(unsafe { p.add(o).read() });
    }
    Ok(())
}

/// `v` with its elements in row-major order as a 1-D view (itself when contiguous, else a
/// contiguous copy).
fn flat<T: Scalar>(v: &View<T>) -> Result<View<T>> {
    let n = v.numel() as i64;
    if n == 0 {
        return Ok(View::empty());
    }
    let src = if v.is_contiguous() {
        v.clone()
    } else {
        let c = View::contiguous(&v.sizes)?;
        copy(&c, v)?;
        c
    };
    Ok(View { sizes: vec![n], strides: vec![1], ..src })
}

/// Two views paired element by element in row-major order (TH: equal element counts, any
/// shapes): the views themselves when their shapes agree, else both flattened.
fn paired<T: Scalar>(a: &View<T>, b: &View<T>, what: &str) -> Result<(View<T>, View<T>)> {
    if a.numel() != b.numel() {
        return Err(Error::size(format!(
            "{what}: inconsistent tensor size: {} has {} elements and {} has {}",
            size_desc(&a.sizes),
            a.numel(),
            size_desc(&b.sizes),
            b.numel()
        ))
        .at_arg(2));
    }
    if a.sizes == b.sizes {
        return Ok((a.clone(), b.clone()));
    }
    Ok((flat(a)?, flat(b)?))
}

fn nonempty<T: Scalar>(t: &View<T>, what: &str) -> Result<()> {
    if t.numel() == 0 {
        return Err(Error::size(format!("{what}: the tensor is empty")).at_arg(1));
    }
    Ok(())
}

// The operations are closures (not `fn` pointers) so the kernels see them statically and
// vectorize.
#[allow(clippy::type_complexity)]
fn sum_reducer<T: NumAcc>() -> Assoc<T::Acc, impl Fn(T) -> T::Acc + Sync, impl Fn(T::Acc, T::Acc) -> T::Acc + Sync> {
    Assoc { id: T::zero().to_acc(), g: |x: T| x.to_acc(), c: |a, b| T::acc_add(a, b) }
}

#[allow(clippy::type_complexity)]
fn prod_reducer<T: NumAcc>() -> Assoc<T::Acc, impl Fn(T) -> T::Acc + Sync, impl Fn(T::Acc, T::Acc) -> T::Acc + Sync> {
    Assoc { id: T::one().to_acc(), g: |x: T| x.to_acc(), c: |a, b| T::acc_mul(a, b) }
}

fn count_reducer<T: Elem>() -> Assoc<i64, impl Fn(T) -> i64 + Sync, impl Fn(i64, i64) -> i64 + Sync> {
    Assoc { id: 0i64, g: |x: T| x.nonzero() as i64, c: |a: i64, b: i64| a.wrapping_add(b) }
}

// ---------------------------------------------------------------------------------------------
// Whole-tensor reductions (§4.4, 4.17, 4.19)
// ---------------------------------------------------------------------------------------------

/// Number of elements (TH's `numel`).
pub fn numel<T: Scalar>(t: &View<T>) -> usize {
    t.numel()
}

/// Sum of all elements in `accreal` (0 for an empty tensor).
pub fn sumall<T: NumAcc>(t: &View<T>) -> Result<T::Acc> {
    Ok(reduce([t], &vec![true; t.ndim()], &sum_reducer::<T>())?[0])
}

/// Product of all elements in `accreal` (1 for an empty tensor).
pub fn prodall<T: NumAcc>(t: &View<T>) -> Result<T::Acc> {
    Ok(reduce([t], &vec![true; t.ndim()], &prod_reducer::<T>())?[0])
}

/// Number of non-zero (true) elements.
pub fn count_nonzero<T: Elem>(t: &View<T>) -> Result<i64> {
    Ok(reduce([t], &vec![true; t.ndim()], &count_reducer::<T>())?[0])
}

/// `sum(t[i] * src[i])` in `accreal` over elements paired in row-major order.
pub fn dot<T: NumAcc>(t: &View<T>, src: &View<T>) -> Result<T::Acc> {
    let (a, b) = paired(t, src, "dot")?;
    let r = Assoc2 { id: T::zero().to_acc(), g: |x: T, y: T| T::acc_mul(x.to_acc(), y.to_acc()), c: T::acc_add };
    Ok(reduce([&a, &b], &vec![true; a.ndim()], &r)?[0])
}

/// The largest element; NaN propagates. An empty tensor is an error.
pub fn maxall<T: Elem>(t: &View<T>) -> Result<T> {
    nonempty(t, "maxall")?;
    let r = Assoc { id: T::lowest(), g: |x: T| x, c: nan_max::<T> };
    Ok(reduce([t], &vec![true; t.ndim()], &r)?[0].canon())
}

/// The smallest element; NaN propagates. An empty tensor is an error.
pub fn minall<T: Elem>(t: &View<T>) -> Result<T> {
    nonempty(t, "minall")?;
    let r = Assoc { id: T::highest(), g: |x: T| x, c: nan_min::<T> };
    Ok(reduce([t], &vec![true; t.ndim()], &r)?[0].canon())
}

/// The lower median: element `(n-1)/2` of the sorted elements (NaN sorts last).
pub fn medianall<T: Elem>(t: &View<T>) -> Result<T> {
    nonempty(t, "medianall")?;
    let mut v = t.to_vec()?;
    let k = (v.len() - 1) / 2;
    Ok(*v.select_nth_unstable_by(k, |a, b| total(*a, *b)).1)
}

/// 1 when `ta` and `tb` have the same sizes and equal elements (NaN is not equal to itself).
pub fn equal<T: Elem>(ta: &View<T>, tb: &View<T>) -> Result<bool> {
    if ta.sizes != tb.sizes {
        return Ok(false);
    }
    let r = Assoc2 { id: 0u64, g: |x: T, y: T| (!x.same(y)) as u64, c: u64::wrapping_add };
    Ok(reduce([ta, tb], &vec![true; ta.ndim()], &r)?[0] == 0)
}

/// Sum of the main diagonal of a 2-D tensor (need not be square), in `accreal`.
pub fn trace<T: NumAcc>(t: &View<T>) -> Result<T::Acc> {
    if t.ndim() != 2 {
        return Err(Error::size(format!("trace: expected a 2-D tensor, got size {}", size_desc(&t.sizes))).at_arg(1));
    }
    let diag =
        View { sizes: vec![t.sizes[0].min(t.sizes[1])], strides: vec![t.strides[0] + t.strides[1]], ..t.clone() };
    sumall(&diag)
}

/// 1 when every element is non-zero (Byte, Bool). An empty tensor is an error (as TH).
pub fn logicalall<T: Elem>(t: &View<T>) -> Result<bool> {
    nonempty(t, "logicalall")?;
    Ok(count_nonzero(t)? as usize == t.numel())
}

/// 1 when some element is non-zero (0 for an empty tensor).
pub fn logicalany<T: Elem>(t: &View<T>) -> Result<bool> {
    Ok(count_nonzero(t)? > 0)
}

/// Mean of all elements in `accreal`. An empty tensor is an error.
pub fn meanall<T: FloatAcc>(t: &View<T>) -> Result<T::Acc> {
    nonempty(t, "meanall")?;
    Ok(sumall(t)?.div(<T::Acc as Num>::from_f64(t.numel() as f64)))
}

fn var_of<A: Real + Num>((n, _, m2): (A, A, A), biased: bool) -> A {
    m2.div(if biased { n } else { n.sub(A::one()) })
}

/// Variance of all elements (divided by n when `biased`, else n-1; n == 1 unbiased is NaN).
pub fn varall<T: FloatAcc>(t: &View<T>, biased: bool) -> Result<T::Acc> {
    nonempty(t, "varall")?;
    Ok(var_of(reduce([t], &vec![true; t.ndim()], &Moments::<T>::new())?[0], biased))
}

/// `sqrt(varall)`.
pub fn stdall<T: FloatAcc>(t: &View<T>, biased: bool) -> Result<T::Acc> {
    Ok(varall(t, biased)?.sqrt())
}

/// The p-norms of `t` over the dims in `mask`, in `accreal`: p == 0 counts non-zeros, p == inf
/// is max |x| and p == -inf min |x| (NaN propagates), otherwise `(sum |x|^p)^(1/p)`.
fn pnorm<T: FloatAcc>(t: &View<T>, mask: &[bool], p: f64) -> Result<Vec<T::Acc>> {
    let zero = <T::Acc as Num>::zero();
    let one = <T::Acc as Num>::one();
    let add = |a: T::Acc, b: T::Acc| a.add(b);
    Ok(if p == 0.0 {
        reduce([t], mask, &Assoc { id: zero, g: |x: T| if x.nonzero() { one } else { zero }, c: add })?
    } else if p == 1.0 {
        reduce([t], mask, &Assoc { id: zero, g: |x: T| x.to_acc().abs(), c: add })?
    } else if p == 2.0 {
        let r = Assoc {
            id: zero,
            g: |x: T| {
                let y = x.to_acc();
                y.mul(y)
            },
            c: add,
        };
        reduce([t], mask, &r)?.into_iter().map(|s| s.sqrt()).collect()
    } else if p == f64::INFINITY {
        reduce([t], mask, &Assoc { id: zero, g: |x: T| x.to_acc().abs(), c: |a: T::Acc, b| a.max_nan(b) })?
    } else if p == f64::NEG_INFINITY {
        let inf = <T::Acc as Num>::from_f64(f64::INFINITY);
        reduce([t], mask, &Assoc { id: inf, g: |x: T| x.to_acc().abs(), c: |a: T::Acc, b| a.min_nan(b) })?
    } else {
        let pa = <T::Acc as Num>::from_f64(p);
        let inv = one.div(pa);
        let r = Assoc { id: zero, g: |x: T| x.to_acc().abs().powf(pa), c: add };
        reduce([t], mask, &r)?.into_iter().map(|s| s.powf(inv)).collect()
    })
}

/// The p-norm of all elements (see `pnorm`; 0 for an empty tensor with p > 0).
pub fn normall<T: FloatAcc>(t: &View<T>, p: T) -> Result<T::Acc> {
    Ok(pnorm(t, &vec![true; t.ndim()], p.to_f64())?[0])
}

/// The p-norm of `a - b` (differences computed in the element type, as TH; elements paired in
/// row-major order).
pub fn dist<T: FloatAcc>(a: &View<T>, b: &View<T>, p: T) -> Result<T::Acc> {
    let (a, b) = paired(a, b, "dist")?;
    let d = if a.numel() == 0 { View::empty() } else { View::contiguous(&a.sizes)? };
    map2(&d, &a, &b, |x: T, y: T| x.sub(y))?;
    normall(&d, p)
}

// ---------------------------------------------------------------------------------------------
// Per-dimension reductions (§4.10, 4.17)
// ---------------------------------------------------------------------------------------------

/// `r = op(t)` along `dim` through accumulators mapped by `fin` (`dim` is C argument `arg`).
fn along<T: Scalar, R: Reducer<T, 1>>(
    r: &Tensor<T>,
    t: &View<T>,
    dim: i32,
    keepdim: bool,
    arg: u32,
    red: &R,
    fin: impl Fn(R::Acc) -> T,
) -> Result<()> {
    let d = check_dim(dim, t.ndim(), arg)?;
    let acc = reduce([t], &only(t.ndim(), d), red)?;
    let data: Vec<T> = acc.into_iter().map(fin).collect();
    store(r, &reduced_shape(&t.sizes, d, keepdim), &data)
}

/// `r_ = sum of t along dim` (accumulated in `accreal`).
pub fn sum<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    along(r, t, dim, keepdim, 3, &sum_reducer::<T>(), T::from_acc)
}

/// `r_ = product of t along dim` (accumulated in `accreal`).
pub fn prod<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    along(r, t, dim, keepdim, 3, &prod_reducer::<T>(), T::from_acc)
}

/// `r_ = mean of t along dim`.
pub fn mean<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let n = <T::Acc as Num>::from_f64(t.sizes.get(dim.max(0) as usize).copied().unwrap_or(1) as f64);
    along(r, t, dim, keepdim, 3, &sum_reducer::<T>(), |s| T::from_acc(s.div(n)))
}

/// `r_ = var of t along dim` (`/n` when `biased`, else `/(n-1)`).
pub fn var<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, biased: bool, keepdim: bool) -> Result<()> {
    along(r, t, dim, keepdim, 3, &Moments::<T>::new(), |a| T::from_acc(var_of(a, biased)))
}

/// `r_ = std of t along dim`.
pub fn std<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, biased: bool, keepdim: bool) -> Result<()> {
    along(r, t, dim, keepdim, 3, &Moments::<T>::new(), |a| T::from_acc(var_of(a, biased).sqrt()))
}

/// `r_ = p-norm of t along dim` (see `pnorm`).
pub fn norm<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, p: T, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    let data: Vec<T> = pnorm(t, &only(t.ndim(), d), p.to_f64())?.into_iter().map(T::from_acc).collect();
    store(r, &reduced_shape(&t.sizes, d, keepdim), &data)
}

fn arg_reduce<T: Elem>(
    values: &Tensor<T>,
    indices: &Tensor<i64>,
    t: &View<T>,
    dim: i32,
    keepdim: bool,
    max: bool,
) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    let acc = reduce([t], &only(t.ndim(), d), &ArgBest::<T>::new(max))?;
    let vals: Vec<T> = acc.iter().map(|a| a.0.canon()).collect();
    let idx: Vec<i64> = acc.iter().map(|a| a.1.max(0)).collect();
    let shape = reduced_shape(&t.sizes, d, keepdim);
    store(values, &shape, &vals)?;
    store(indices, &shape, &idx)
}

/// `values_, indices_ = max of t along dim` (index of the first occurrence, 0-based; the
/// first NaN wins).
pub fn max<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    arg_reduce(values, indices, t, dim, keepdim, true)
}

/// `values_, indices_ = min of t along dim`.
pub fn min<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    arg_reduce(values, indices, t, dim, keepdim, false)
}

/// `f(slice)` for every slice of `t` along `d` (each as (value, position) pairs), in output
/// order, in parallel.
fn per_slice<T: Elem, X: Copy + Default + Send>(
    t: &View<T>,
    d: usize,
    f: impl Fn(&mut Vec<(T, i64)>) -> X + Sync,
) -> Result<Vec<X>> {
    let g = Geometry::<1>::new(&t.sizes, [&t.strides], &only(t.ndim(), d));
    let (m, k) = (g.m(), g.k());
    let mut out = crate::core::limits::try_filled(m, X::default())?;
    // One slice's (value, position) pairs per worker: probe that much memory up front so that
    // a slice longer than memory is an error here rather than an abort in a worker.
    drop(crate::core::limits::try_vec::<(T, i64)>(k)?);
    let Some(p) = t.host_ptr()? else { return Ok(out) };
    let addr = SharedPtr(p.wrapping_add(t.offset));
    let step = g.red[0].st[0];
    let sink = Sink(out.as_mut_ptr());
    par_for(m, m.saturating_mul(k), |a, b| {
        let mut buf = Vec::with_capacity(k);
        let mut o = Odometer::new(&g.kept, a);
        for mi in a..b {
            buf.clear();
            let q = addr.offset(o.off[0]).cast_const();
            for i in 0..k {
                // SAFETY: element i of this slice lies inside the view (host_ptr).
                buf.push((unsafe { q.offset(i as isize * step).read() }, i as i64));
            }
            // SAFETY: mi < m, and this worker alone owns outputs a..b.
            unsafe { sink.put(mi, f(&mut buf)) };
            if mi + 1 < b {
                o.advance();
            }
        }
    });
    Ok(out)
}

/// Orders (value, position) pairs by value (NaN last), then position: a total order, so a
/// selection gives the same element as a stable sort.
fn by_value_then_pos<T: Elem>(a: &(T, i64), b: &(T, i64)) -> Ordering {
    total(a.0, b.0).then(a.1.cmp(&b.1))
}

fn select_along<T: Elem>(
    values: &Tensor<T>,
    indices: &Tensor<i64>,
    t: &View<T>,
    d: usize,
    keepdim: bool,
    pick: impl Fn(&mut Vec<(T, i64)>) -> (T, i64) + Sync,
) -> Result<()> {
    let res = per_slice(t, d, pick)?;
    let shape = reduced_shape(&t.sizes, d, keepdim);
    store(values, &shape, &res.iter().map(|x| x.0).collect::<Vec<_>>())?;
    store(indices, &shape, &res.iter().map(|x| x.1).collect::<Vec<_>>())
}

/// The k-th smallest (k 1-based) along `dim` and its position; among equal values, positions
/// count in order (as a stable sort); NaN sorts last.
pub fn kthvalue<T: Elem>(
    values: &Tensor<T>,
    indices: &Tensor<i64>,
    t: &View<T>,
    k: i64,
    dim: i32,
    keepdim: bool,
) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 5)?;
    let n = t.sizes[d];
    if k < 1 || k > n {
        return Err(Error::index(format!("kthvalue: k = {k} is out of range for a dimension of size {n}")).at_arg(4));
    }
    let k = (k - 1) as usize;
    select_along(values, indices, t, d, keepdim, |s| *s.select_nth_unstable_by(k, by_value_then_pos).1)
}

/// The lower median along `dim` (`kthvalue` with k = (n-1)/2 + 1).
pub fn median<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    let k = (t.sizes[d] as usize - 1) / 2;
    select_along(values, indices, t, d, keepdim, |s| *s.select_nth_unstable_by(k, by_value_then_pos).1)
}

/// The most frequent value along `dim` (ties: the smallest value; NaNs count as one value)
/// and the position of its last occurrence.
pub fn mode<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    select_along(values, indices, t, d, keepdim, |s| {
        s.sort_unstable_by(by_value_then_pos);
        let (mut best, mut best_n, mut run) = (s[0], 0usize, 0usize);
        for i in 0..s.len() {
            run += 1;
            if i + 1 == s.len() || total(s[i].0, s[i + 1].0) != Ordering::Equal {
                if run > best_n {
                    best = s[i];
                    best_n = run;
                }
                run = 0;
            }
        }
        best
    })
}

// ---------------------------------------------------------------------------------------------
// Scans, sumTo, renorm, histograms
// ---------------------------------------------------------------------------------------------

fn scan<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, prod: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 3)?;
    let shape = t.sizes.clone();
    let n = t.numel();
    let k = shape[d] as usize;
    let inner: usize = shape[d + 1..].iter().product::<i64>() as usize;
    // The lines: every dim but d, with (input stride, output stride) of the row-major output.
    let mut lines: Vec<Dim<2>> = Vec::new();
    let mut ostride = n;
    for (i, (&sz, &st)) in shape.iter().zip(&t.strides).enumerate() {
        ostride /= sz as usize;
        if i != d && sz > 1 {
            push_merged(&mut lines, Dim { size: sz as usize, st: [st as isize, ostride as isize] });
        }
    }
    let mut out = crate::core::limits::try_filled(n, T::default())?;
    let p = t.host_ptr()?.ok_or_else(|| Error::internal("scan: a view with elements has no storage"))?;
    let addr = SharedPtr(p.wrapping_add(t.offset));
    let step = t.strides[d] as isize;
    let sink = Sink(out.as_mut_ptr());
    let id = if prod { T::one().to_acc() } else { T::zero().to_acc() };
    let op = |a: T::Acc, x: T| if prod { T::acc_mul(a, x.to_acc()) } else { T::acc_add(a, x.to_acc()) };
    // When the lines' innermost dim is closer in memory than the scan dim (e.g. dim 0 of a
    // row-major matrix), scan a tile of adjacent lines together, walking memory in order.
    let tiled = lines.last().is_some_and(|l| l.size >= 8 && l.st[0].unsigned_abs() < step.unsigned_abs());
    if tiled {
        let tile = lines.pop().unwrap_or(Dim { size: 1, st: [0, 0] });
        let w = tile.size.min(SCAN_TILE);
        let ntiles = tile.size.div_ceil(w);
        let items = (n / k / tile.size) * ntiles;
        par_for(items, n, |a, b| {
            let mut acc = vec![id; w];
            for it in a..b {
                let (mo, t0) = (it / ntiles, it % ntiles);
                let o = Odometer::new(&lines, mo);
                let j0 = t0 * w;
                let wl = w.min(tile.size - j0);
                acc[..wl].fill(id);
                for i in 0..k {
                    let q = addr.offset(o.off[0] + i as isize * step + j0 as isize * tile.st[0]).cast_const();
                    let ob = o.off[1] as usize + i * inner + j0 * tile.st[1] as usize;
                    for (j, a) in acc[..wl].iter_mut().enumerate() {
                        // SAFETY: element (i, j0 + j) of this tile lies inside the view (host_ptr).
                        *a = op(*a, unsafe { q.offset(j as isize * tile.st[0]).read() });
                        // SAFETY: each output position belongs to exactly one tile, owned by
                        // this worker.
                        unsafe { sink.put(ob + j * tile.st[1] as usize, T::from_acc(*a)) };
                    }
                }
            }
        });
        return store(r, &shape, &out);
    }
    let m = n / k;
    par_for(m, n, |a, b| {
        let mut o = Odometer::new(&lines, a);
        for mi in a..b {
            let q = addr.offset(o.off[0]).cast_const();
            let mut acc = id;
            for i in 0..k {
                // SAFETY: element i of this line lies inside the view (host_ptr).
                acc = op(acc, unsafe { q.offset(i as isize * step).read() });
                // SAFETY: each output position belongs to exactly one line, owned by this worker.
                unsafe { sink.put(o.off[1] as usize + i * inner, T::from_acc(acc)) };
            }
            if mi + 1 < b {
                o.advance();
            }
        }
    });
    store(r, &shape, &out)
}

/// `r_ = cumulative sum of t along dim` (in `accreal`), `r_` resized like `t`.
pub fn cumsum<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32) -> Result<()> {
    scan(r, t, dim, false)
}

/// `r_ = cumulative product of t along dim` (in `accreal`).
pub fn cumprod<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32) -> Result<()> {
    scan(r, t, dim, true)
}

/// `r = t` summed down to `shape` (numpy broadcasting undone): `t`'s extra leading dims and
/// the dims where `shape` has 1 are summed (in `accreal`); `r` gets `shape`. `t`'s shape
/// must broadcast from `shape`.
pub fn sum_to<T: NumAcc>(r: &Tensor<T>, t: &View<T>, shape: &[i64]) -> Result<()> {
    let shape = parse_sizes(shape).map_err(|e| e.at_arg(3))?;
    let nd = t.ndim();
    let fits = !shape.is_empty()
        && shape.len() <= nd
        && shape.iter().zip(&t.sizes[nd - shape.len()..]).all(|(&s, &n)| s == n || s == 1);
    if !fits {
        return Err(Error::size(format!(
            "sumTo: size {} of the tensor does not broadcast from size {}",
            size_desc(&t.sizes),
            size_desc(&shape)
        ))
        .at_arg(3));
    }
    let lead = nd - shape.len();
    let mask: Vec<bool> = (0..nd).map(|i| i < lead || (shape[i - lead] == 1 && t.sizes[i] != 1)).collect();
    let data: Vec<T> = reduce([t], &mask, &sum_reducer::<T>())?.into_iter().map(T::from_acc).collect();
    store(r, &shape, &data)
}

/// `r_ = t` with every slice along `dim` whose p-norm exceeds `maxnorm` scaled by
/// `maxnorm / (norm + 1e-7)` (the norm in `accreal`, the scaling in the element type).
pub fn renorm<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, p: T, dim: i32, maxnorm: T) -> Result<()> {
    let pv = p.to_f64();
    if pv.is_nan() || pv <= 0.0 {
        return Err(Error::invalid(format!("renorm: the norm order must be positive, got {pv}")).at_arg(3));
    }
    let d = check_dim(dim, t.ndim(), 4)?;
    if t.ndim() < 2 {
        return Err(
            Error::size(format!("renorm: need at least 2 dimensions, got size {}", size_desc(&t.sizes))).at_arg(2)
        );
    }
    let mx = maxnorm.to_acc();
    let eps = <T::Acc as Num>::from_f64(1e-7);
    let factors: Vec<T> = pnorm(t, &all_but(t.ndim(), d), pv)?
        .into_iter()
        .map(|nrm| if nrm > mx { T::from_acc(mx.div(nrm.add(eps))) } else { T::one() })
        .collect();
    let mut fshape = vec![1i64; t.ndim()];
    fshape[d] = t.sizes[d];
    let f = View::from_slice(&factors, &fshape)?.expand(&t.sizes)?;
    pointwise2(r, t, &f, |x: T, s: T| x.mul(s))
}

/// The histogram range: `[lo, hi]` as given, or the data's min and max when they are equal
/// (then widened by 1 each way if still equal). Must be finite with lo <= hi.
fn hist_range<T: FloatAcc>(t: &View<T>, lo: T, hi: T) -> Result<(T::R, T::R)> {
    let (mut a, mut b) = (lo.to_r(), hi.to_r());
    let finite = |x: T::R| x.to_f64().is_finite();
    if !finite(a) || !finite(b) {
        return Err(Error::invalid(format!("histc: range [{}, {}] is not finite", a.to_f64(), b.to_f64())).at_arg(4));
    }
    if a > b {
        return Err(Error::invalid(format!("histc: max {} is smaller than min {}", b.to_f64(), a.to_f64())).at_arg(5));
    }
    if a == b && t.numel() > 0 {
        a = minall(t)?.to_r();
        b = maxall(t)?.to_r();
        if !finite(a) || !finite(b) {
            return Err(Error::invalid(format!(
                "histc: the data range [{}, {}] is not finite",
                a.to_f64(),
                b.to_f64()
            ))
            .at_arg(2));
        }
    }
    if a == b {
        let one = <T::R as Num>::one();
        a = a.sub(one);
        b = b.add(one);
    }
    Ok((a, b))
}

/// Adds the elements of `v` into `counts` (TH's bin formula, in the element's compute type).
fn count_bins<T: FloatAcc>(v: &View<T>, lo: T::R, hi: T::R, counts: &mut [i64]) -> Result<()> {
    let nb = counts.len();
    let nbr = <T::R as Num>::from_f64(nb as f64);
    let width = hi.sub(lo);
    for_each(v, |x| {
        let x = x.to_r();
        if x >= lo && x <= hi {
            let bin = (x.sub(lo).div(width).mul(nbr).to_f64() as usize).min(nb - 1);
            counts[bin] += 1;
        }
    })
}

fn check_nbins(nbins: i64) -> Result<usize> {
    usize::try_from(nbins)
        .ok()
        .filter(|&n| n > 0 && n <= i64::MAX as usize / 8)
        .ok_or_else(|| Error::size(format!("histc: the number of bins must be positive, got {nbins}")).at_arg(3))
}

/// `hist` (resized to `nbins`) = histogram of `t` over `[minvalue, maxvalue]` (equal bounds:
/// the data's range); values outside are ignored, `maxvalue` goes to the last bin.
pub fn histc<T: FloatAcc>(hist: &Tensor<T>, t: &View<T>, nbins: i64, minvalue: T, maxvalue: T) -> Result<()> {
    let nb = check_nbins(nbins)?;
    let (lo, hi) = hist_range(t, minvalue, maxvalue)?;
    let mut counts = crate::core::limits::try_filled(nb, 0i64)?;
    count_bins(t, lo, hi, &mut counts)?;
    let data: Vec<T> = counts.iter().map(|&c| T::from_f64(c as f64)).collect();
    store(hist, &[nbins], &data)
}

/// Row-wise `histc` of a 2-D tensor: `hist` resized to rows x nbins; the range (when the
/// bounds are equal) comes from the whole tensor.
pub fn bhistc<T: FloatAcc>(hist: &Tensor<T>, t: &View<T>, nbins: i64, minvalue: T, maxvalue: T) -> Result<()> {
    let nb = check_nbins(nbins)?;
    if t.ndim() != 2 {
        return Err(Error::size(format!("bhistc: expected a 2-D tensor, got size {}", size_desc(&t.sizes))).at_arg(2));
    }
    let (lo, hi) = hist_range(t, minvalue, maxvalue)?;
    let rows = t.sizes[0] as usize;
    let cells = rows.checked_mul(nb).ok_or_else(|| Error::size(format!("bhistc: {rows} x {nb} bins overflow")))?;
    let mut counts = crate::core::limits::try_filled(cells, 0i64)?;
    for (i, c) in counts.chunks_mut(nb).enumerate() {
        let row = View {
            sizes: vec![t.sizes[1]],
            strides: vec![t.strides[1]],
            offset: t.offset + i * t.strides[0] as usize,
            ..t.clone()
        };
        count_bins(&row, lo, hi, c)?;
    }
    let data: Vec<T> = counts.iter().map(|&c| T::from_f64(c as f64)).collect();
    store(hist, &[t.sizes[0], nbins], &data)
}

// ---------------------------------------------------------------------------------------------
// Tests (naive loops as the reference)
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn arange<T: Scalar>(sizes: &[i64], f: impl Fn(usize) -> T) -> View<T> {
        let n: i64 = sizes.iter().product();
        View::from_slice(&(0..n as usize).map(f).collect::<Vec<_>>(), sizes).unwrap()
    }

    /// Row-major multi-indices of `sizes`.
    fn indices(sizes: &[i64]) -> Vec<Vec<i64>> {
        let n: i64 = sizes.iter().product();
        (0..n)
            .map(|mut i| {
                let mut idx = vec![0; sizes.len()];
                for d in (0..sizes.len()).rev() {
                    idx[d] = i % sizes[d];
                    i /= sizes[d];
                }
                idx
            })
            .collect()
    }

    /// Naive reduction along `d`: for each output (row-major over the other dims), the slice.
    fn slices<T: Scalar>(v: &View<T>, d: usize) -> Vec<Vec<T>> {
        let mut osz = v.sizes.clone();
        osz[d] = 1;
        indices(&osz)
            .into_iter()
            .map(|mut idx| {
                (0..v.sizes[d])
                    .map(|i| {
                        idx[d] = i;
                        v.get(&idx).unwrap()
                    })
                    .collect()
            })
            .collect()
    }

    fn random_view(rng: &mut Lcg, nd: usize) -> View<f64> {
        let sizes: Vec<i64> = (0..nd).map(|_| 1 + rng.below(7) as i64).collect();
        let base = arange(&sizes, |i| ((i * 37 % 23) as f64) - 11.0 + (i % 3) as f64 * 0.25);
        // a random permutation of dims, viewed back: a non-contiguous view of the same values
        let mut v = base;
        for _ in 0..nd {
            let (a, b) = (rng.below(nd as u64) as i32, rng.below(nd as u64) as i32);
            v = v.transpose(a, b).unwrap();
        }
        v
    }

    fn out<T: Scalar>() -> crate::core::refcount::Rc<Tensor<T>> {
        Tensor::new(View::empty())
    }

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

    #[test]
    fn dim_reductions_match_naive() {
        let mut rng = Lcg(7);
        for case in 0..if cfg!(miri) { 5 } else { 300 } {
            let v = random_view(&mut rng, 1 + case % 5);
            let d = rng.below(v.ndim() as u64) as usize;
            let keep = case % 2 == 0;
            let sl = slices(&v, d);
            let shape = reduced_shape(&v.sizes, d, keep);
            let r = out::<f64>();
            sum(&r, &v, d as i32, keep).unwrap();
            assert_eq!(r.view().sizes, shape);
            let want: Vec<f64> = sl.iter().map(|s| s.iter().sum()).collect();
            for (g, w) in r.view().to_vec().unwrap().iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "sum {g} vs {w}");
            }
            prod(&r, &v, d as i32, keep).unwrap();
            let want: Vec<f64> = sl.iter().map(|s| s.iter().product()).collect();
            for (g, w) in r.view().to_vec().unwrap().iter().zip(&want) {
                assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "prod {g} vs {w}");
            }
            let idx = out::<i64>();
            max(&r, &idx, &v, d as i32, keep).unwrap();
            let (vals, ids) = (r.view().to_vec().unwrap(), idx.view().to_vec().unwrap());
            for (s, (g, i)) in sl.iter().zip(vals.iter().zip(&ids)) {
                let best = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(*g, best);
                assert_eq!(*i as usize, s.iter().position(|&x| x == best).unwrap());
            }
            min(&r, &idx, &v, d as i32, keep).unwrap();
            let (vals, ids) = (r.view().to_vec().unwrap(), idx.view().to_vec().unwrap());
            for (s, (g, i)) in sl.iter().zip(vals.iter().zip(&ids)) {
                let best = s.iter().cloned().fold(f64::INFINITY, f64::min);
                assert_eq!(*g, best);
                assert_eq!(*i as usize, s.iter().position(|&x| x == best).unwrap());
            }
            var(&r, &v, d as i32, false, keep).unwrap();
            for (s, g) in sl.iter().zip(r.view().to_vec().unwrap()) {
                let n = s.len() as f64;
                let m = s.iter().sum::<f64>() / n;
                let w = s.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
                assert!((g - w).abs() < 1e-9 * w.abs().max(1.0) || (g.is_nan() && w.is_nan()), "var {g} vs {w}");
            }
            median(&r, &idx, &v, d as i32, keep).unwrap();
            for (s, g) in sl.iter().zip(r.view().to_vec().unwrap()) {
                let mut t = s.clone();
                t.sort_by(|a, b| a.partial_cmp(b).unwrap());
                assert_eq!(g, t[(t.len() - 1) / 2]);
            }
            cumsum(&r, &v, d as i32).unwrap();
            assert_eq!(r.view().sizes, v.sizes);
            for idx in indices(&v.sizes) {
                let mut j = idx.clone();
                let w: f64 = (0..=idx[d])
                    .map(|i| {
                        j[d] = i;
                        v.get(&j).unwrap()
                    })
                    .sum();
                assert!((r.view().get(&idx).unwrap() - w).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn whole_reductions_match_naive() {
        let mut rng = Lcg(11);
        for case in 0..if cfg!(miri) { 8 } else { 100 } {
            let v = random_view(&mut rng, 1 + case % 5);
            let all = v.to_vec().unwrap();
            assert!((sumall(&v).unwrap() - all.iter().sum::<f64>()).abs() < 1e-9);
            assert_eq!(maxall(&v).unwrap(), all.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
            assert_eq!(minall(&v).unwrap(), all.iter().cloned().fold(f64::INFINITY, f64::min));
            let l2 = all.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((normall(&v, 2.0).unwrap() - l2).abs() < 1e-9);
            assert_eq!(normall(&v, 0.0).unwrap(), all.iter().filter(|&&x| x != 0.0).count() as f64);
            let l3 = all.iter().map(|x| x.abs().powf(3.0)).sum::<f64>().powf(1.0 / 3.0);
            assert!((normall(&v, 3.0).unwrap() - l3).abs() < 1e-9 * l3.max(1.0));
            let contiguous = View::from_slice(&all, &[all.len() as i64]).unwrap();
            assert!((dot(&v, &contiguous).unwrap() - all.iter().map(|x| x * x).sum::<f64>()).abs() < 1e-9);
            assert!(equal(&v, &v).unwrap());
            assert_eq!(dist(&v, &contiguous, 2.0).unwrap(), 0.0);
        }
    }

    #[test]
    fn float_sums_are_exact_and_thread_independent() {
        // (60 000 under Miri: still many blocks, and above the parallel grain)
        let n = if cfg!(miri) { 60_000usize } else { 3_000_000 };
        let ones = View::from_slice(&vec![1f32; n], &[n as i64]).unwrap();
        assert_eq!(sumall(&ones).unwrap(), n as f64);
        let h = View::from_slice(&vec![f16::ONE; n], &[n as i64]).unwrap();
        assert_eq!(sumall(&h).unwrap(), n as f32);
        let b = View::from_slice(&vec![bf16::ONE; n], &[1000, (n / 1000) as i64]).unwrap();
        assert_eq!(sumall(&b).unwrap(), n as f32);
        // columns of ones: each column sums n / 30 ones exactly
        let r = out::<f32>();
        let cols = View::from_slice(&vec![1f32; n], &[(n / 30) as i64, 30]).unwrap();
        sum(&r, &cols, 0, false).unwrap();
        assert!(r.view().to_vec().unwrap().iter().all(|&x| x == (n / 30) as f32));
        // thread independence: same bits for 1 and 2 threads on awkward values
        let vals: Vec<f32> = (0..n).map(|i| ((i * 7919 % 10007) as f32).sin() * 1e3).collect();
        let v = View::from_slice(&vals, &[n as i64]).unwrap();
        let m = View::from_slice(&vals, &[(n / 1000) as i64, 1000]).unwrap();
        let old = crate::ffi::general::num_threads();
        let mut results = Vec::new();
        for t in [1, 2, 3] {
            // SAFETY: a plain C function without pointer arguments.
            unsafe { crate::ffi::general::THSetNumThreads(t) };
            let r0 = out::<f32>();
            let r1 = out::<f32>();
            sum(&r0, &m, 0, false).unwrap();
            sum(&r1, &m.transpose(0, 1).unwrap(), 0, false).unwrap();
            results.push((sumall(&v).unwrap(), r0.view().to_vec().unwrap(), r1.view().to_vec().unwrap()));
        }
        // SAFETY: as above.
        unsafe { crate::ffi::general::THSetNumThreads(old as std::ffi::c_int) };
        assert!(results.windows(2).all(|w| w[0] == w[1]));
        let exact: f64 = vals.iter().map(|&x| x as f64).sum();
        assert!((results[0].0 - exact).abs() < 1e-6 * exact.abs().max(1.0));
    }

    #[test]
    fn large_shapes_take_the_blocked_and_tiled_paths() {
        // sizes beyond BLOCK, ROW_BLOCK, SCAN_TILE and the small-run lanes, through views
        // (under Miri a smaller matrix that still passes every one of those sizes, one view)
        let shape: [i64; 2] = if cfg!(miri) { [130, 520] } else { [300, 700] };
        let m = arange(&shape, |i| ((i * 31 % 17) as i64) - 8);
        let views = [m.clone(), m.transpose(0, 1).unwrap(), m.narrow(1, 3, shape[1] - 50).unwrap()];
        for v in views.into_iter().take(if cfg!(miri) { 1 } else { 3 }) {
            for d in 0..2 {
                let sl = slices(&v, d);
                let r = out::<i64>();
                sum(&r, &v, d as i32, false).unwrap();
                assert_eq!(r.view().to_vec().unwrap(), sl.iter().map(|s| s.iter().sum()).collect::<Vec<i64>>());
                let idx = out::<i64>();
                min(&r, &idx, &v, d as i32, false).unwrap();
                let want: Vec<i64> =
                    sl.iter().map(|s| s.iter().position(|x| x == s.iter().min().unwrap()).unwrap() as i64).collect();
                assert_eq!(idx.view().to_vec().unwrap(), want);
                cumsum(&r, &v, d as i32).unwrap();
                for (s, got) in sl.iter().zip(slices(&r.view(), d)) {
                    let want: Vec<i64> = s.iter().scan(0, |acc, x| Some(*acc + x).inspect(|&y| *acc = y)).collect();
                    assert_eq!(got, want);
                }
            }
            assert_eq!(sumall(&v).unwrap(), v.to_vec().unwrap().iter().sum::<i64>());
        }
    }

    #[test]
    fn keepdim_and_errors() {
        let v = arange(&[3], |i| i as i32);
        let r = out::<i32>();
        sum(&r, &v, 0, false).unwrap();
        assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![1], vec![3]));
        let m = arange(&[2, 3, 4], |i| i as i32);
        sum(&r, &m, 1, true).unwrap();
        assert_eq!(r.view().sizes, vec![2, 1, 4]);
        sum(&r, &m, 1, false).unwrap();
        assert_eq!(r.view().sizes, vec![2, 4]);
        assert_eq!(sum(&r, &m, 3, false).unwrap_err().arg, Some(3));
        let idx = out::<i64>();
        assert!(kthvalue(&r, &idx, &m, 0, 0, false).is_err());
        assert!(kthvalue(&r, &idx, &m, 3, 0, false).is_err());
        kthvalue(&r, &idx, &m, 2, 0, false).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), (12..24).collect::<Vec<_>>());
        assert!(maxall(&View::<f32>::empty()).is_err());
        assert_eq!(sumall(&View::<f32>::empty()).unwrap(), 0.0);
        assert_eq!(prodall(&View::<i8>::empty()).unwrap(), 1);
    }

    #[test]
    fn nan_and_ties() {
        let v = View::from_slice(&[1.0f32, f32::NAN, 3.0, f32::NAN, 3.0], &[5]).unwrap();
        assert!(maxall(&v).unwrap().is_nan() && minall(&v).unwrap().is_nan());
        let (r, idx) = (out::<f32>(), out::<i64>());
        max(&r, &idx, &v, 0, false).unwrap();
        assert!(r.view().to_vec().unwrap()[0].is_nan());
        assert_eq!(idx.view().to_vec().unwrap(), vec![1]);
        let t = View::from_slice(&[2i16, 5, 5, 1, 5, 1, 1], &[7]).unwrap();
        let (r, idx) = (out::<i16>(), out::<i64>());
        max(&r, &idx, &t, 0, true).unwrap();
        assert_eq!((r.view().to_vec().unwrap(), idx.view().to_vec().unwrap()), (vec![5], vec![1]));
        mode(&r, &idx, &t, 0, false).unwrap();
        // 5 and 1 both appear 3 times: the smaller value wins; last occurrence
        assert_eq!((r.view().to_vec().unwrap(), idx.view().to_vec().unwrap()), (vec![1], vec![6]));
        kthvalue(&r, &idx, &t, 5, 0, false).unwrap();
        assert_eq!((r.view().to_vec().unwrap(), idx.view().to_vec().unwrap()), (vec![5], vec![1]));
        let b = View::from_slice(&[Bool(0), Bool(7), Bool(1)], &[3]).unwrap();
        assert_eq!(count_nonzero(&b).unwrap(), 2);
        assert_eq!(maxall(&b).unwrap(), Bool(1));
        assert!(!logicalall(&b).unwrap() && logicalany(&b).unwrap());
        assert!(equal(&b, &View::from_slice(&[Bool(0), Bool(1), Bool(1)], &[3]).unwrap()).unwrap());
    }

    #[test]
    fn sum_to_undoes_broadcast() {
        let t = arange(&[2, 3, 4], |i| i as i64);
        let r = out::<i64>();
        sum_to(&r, &t, &[3, 1]).unwrap();
        assert_eq!(r.view().sizes, vec![3, 1]);
        let want: Vec<i64> =
            (0..3).map(|j| (0..2).flat_map(|i| (0..4).map(move |k| i * 12 + j * 4 + k)).sum()).collect();
        assert_eq!(r.view().to_vec().unwrap(), want);
        sum_to(&r, &t, &[4]).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), (0..4).map(|k| (0..6).map(|i| i * 4 + k).sum()).collect::<Vec<i64>>());
        sum_to(&r, &t, &[2, 3, 4]).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), t.to_vec().unwrap());
        assert!(sum_to(&r, &t, &[2, 4]).is_err());
        assert!(sum_to(&r, &t, &[1, 2, 3, 4]).is_err());
    }

    #[test]
    fn stats_histograms_renorm() {
        let v = View::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(meanall(&v).unwrap(), 2.5);
        assert!((varall(&v, false).unwrap() - 5.0 / 3.0).abs() < 1e-12);
        assert!((varall(&v, true).unwrap() - 1.25).abs() < 1e-12);
        assert!(varall(&View::from_slice(&[1.0f64], &[1]).unwrap(), false).unwrap().is_nan());
        assert_eq!(trace(&v).unwrap(), 5.0);
        assert_eq!(trace(&v.transpose(0, 1).unwrap()).unwrap(), 5.0);
        let h = out::<f64>();
        histc(&h, &v, 3, 0.0, 0.0).unwrap();
        assert_eq!(h.view().to_vec().unwrap(), vec![1.0, 1.0, 2.0]);
        histc(&h, &v, 4, 2.0, 3.0).unwrap();
        assert_eq!(h.view().to_vec().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
        bhistc(&h, &v, 2, 0.0, 4.0).unwrap();
        assert_eq!((h.view().sizes, h.view().to_vec().unwrap()), (vec![2, 2], vec![1.0, 1.0, 0.0, 2.0]));
        assert!(histc(&h, &v, 0, 0.0, 1.0).is_err());
        assert!(histc(&h, &v, 3, 2.0, 1.0).is_err());
        let r = out::<f64>();
        renorm(&r, &v, 2.0, 0, 3.0).unwrap();
        let got = r.view().to_vec().unwrap();
        assert_eq!(&got[..2], &[1.0, 2.0]);
        let f = 3.0 / (5.0 + 1e-7);
        assert!((got[2] - 3.0 * f).abs() < 1e-12 && (got[3] - 4.0 * f).abs() < 1e-12);
        norm(&r, &v, f64::INFINITY, 1, false).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![2.0, 4.0]);
        std(&r, &v, 0, true, false).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![1.0, 1.0]);
        mean(&r, &v, 1, true).unwrap();
        assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 1], vec![1.5, 3.5]));
    }
}
