//! What the reductions fold: the element traits of order-based reductions, and the `Reducer`s
//! (associative folds, arg-max/min, moments).

use super::*;
use crate::cuda::reduce::DeviceAcc;

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

/// `Elem` for the numeric types; per kind only the NaN test and the neutral elements of
/// max/min differ (`default()` is each type's zero, and `-0.0 != 0.0` is false).
macro_rules! num_elem {
    (|$x:ident| $nan:expr, $lowest:ident, $highest:ident; $($T:ty),*) => {$(
        impl Elem for $T {
            #[inline(always)] fn nan(self) -> bool { let $x = self; $nan }
            #[inline(always)] fn less(self, o: Self) -> bool { self < o }
            #[inline(always)] fn same(self, o: Self) -> bool { self == o }
            #[inline(always)] fn nonzero(self) -> bool { self != <$T>::default() }
            #[inline(always)] fn canon(self) -> Self { self }
            #[inline(always)] fn lowest() -> Self { <$T>::$lowest }
            #[inline(always)] fn highest() -> Self { <$T>::$highest }
        }
    )*};
}
crate::th_dtypes!(num_elem[|_x| false, MIN, MAX;]; int);
crate::th_dtypes!(num_elem[|x| x.is_nan(), NEG_INFINITY, INFINITY;]; float half);

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
pub trait NumAcc: Num + Elem + Scalar<Acc: Send + Sync + DeviceAcc> {}
impl<T: Num + Elem + Scalar<Acc: Send + Sync + DeviceAcc>> NumAcc for T {}

/// A floating-point dtype: its `accreal` (f64, or f32 for Half/BFloat16) is a float type too.
pub trait FloatAcc: Float + NumAcc + Scalar<Acc: Real + Num + Send + Sync> {}
impl<T: Float + NumAcc + Scalar<Acc: Real + Num + Send + Sync>> FloatAcc for T {}

/// The order the selections (kthvalue, median, mode) use: NaN after everything, equal to NaN.
#[inline]
pub(super) fn total<T: Elem>(a: T, b: T) -> Ordering {
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
pub(super) fn nan_max<T: Elem>(a: T, b: T) -> T {
    let m = if a.less(b) { b } else { a };
    if b.nan() { b } else { m }
}

/// min with NaN propagating.
#[inline(always)]
pub(super) fn nan_min<T: Elem>(a: T, b: T) -> T {
    let m = if b.less(a) { b } else { a };
    if b.nan() { b } else { m }
}

// ---------------------------------------------------------------------------------------------
/// An associative fold of `g(x)` (`g(x, y)` over pairs of elements of two operands: dot,
/// equal) with `c`, neutral `id` (sums, products, counts, max, ...).
pub struct Assoc<A, G, C> {
    pub id: A,
    pub g: G,
    pub c: C,
}

/// `Reducer<T, $N>` for `Assoc` with `g: Fn($X, ...) -> A`: the accumulator, identity and
/// combination every arity shares, then the arity's folds (`$fold`).
macro_rules! assoc_reducer {
    ($N:literal, Fn($($X:ident),+), { $($fold:tt)* }) => {
        impl<T, A, G, C> Reducer<T, $N> for Assoc<A, G, C>
        where
            T: Scalar,
            A: Copy + Send + Sync,
            G: Fn($($X),+) -> A + Sync,
            C: Fn(A, A) -> A + Sync,
        {
            type Acc = A;
            fn identity(&self) -> A {
                self.id
            }
            fn combine(&self, a: A, b: A) -> A {
                (self.c)(a, b)
            }
            $($fold)*
        }
    };
}

assoc_reducer!(1, Fn(T), {
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
});

assoc_reducer!(2, Fn(T, T), {
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
});

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
    fn device(&self) -> Option<DeviceFold> {
        Some(if self.max { DeviceFold::Max } else { DeviceFold::Min })
    }
    fn device_acc(&self, raw: &[u8]) -> Option<(T, i64)> {
        <(T, i64)>::read(raw)
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
    fn device(&self) -> Option<DeviceFold> {
        Some(DeviceFold::Moments)
    }
    fn device_acc(&self, raw: &[u8]) -> Option<Self::Acc> {
        <Self::Acc>::read(raw)
    }
}
