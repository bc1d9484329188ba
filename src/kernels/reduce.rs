//! Inner loops of the reductions (`exec::reduce` runs them), multiversioned by
//! `kernels::multiversion!`: each body is written once, generically, and compiled plain, with
//! AVX2+FMA and with AVX-512; the instruction set `kernels::isa()` chose is used.
//!
//! Two shapes of loop:
//! - `fold*`: folds one run of elements into a single accumulator. The run is spread over
//!   `LANES` independent accumulators (element `i` goes to lane `i % LANES`), which are then
//!   combined pairwise, so the loop has no serial dependency and LLVM vectorizes it (for sums
//!   this is also a blocked summation: each lane adds `len / LANES` values).
//! - `cols*`: the column-wise (vertical) step: `acc[j] = f(acc[j], x[j])` for a row of `x`.

// `multiversion!` hands every body its instruction-set marker `I`; these bodies need nothing
// from it beyond the target features they are compiled with.
#![allow(clippy::extra_unused_type_parameters)]

use super::multiversion;

/// Independent accumulators in a `fold` (a power of two).
pub(crate) const LANES: usize = 32;
/// Accumulators for runs shorter than `2 * LANES`.
pub(crate) const SMALL_LANES: usize = 8;

/// Combines the lanes pairwise (lane k with lane k + w/2, halving w) into lane 0.
///
/// Deliberately not inlined: seeing this tree, LLVM's SLP vectorizer keeps the lanes of the
/// main loop in 128-bit registers; out of line, the loop gets full-width vectors.
#[inline(never)]
fn combine_lanes<A: Copy, C: Fn(A, A) -> A, const L: usize>(mut acc: [A; L], c: &C) -> A {
    let mut w = L;
    while w > 1 {
        w /= 2;
        for k in 0..w {
            acc[k] = c(acc[k], acc[k + w]);
        }
    }
    acc[0]
}

#[inline(always)]
unsafe fn fold_body<I, T: Copy, A: Copy, F: Fn(A, T) -> A, C: Fn(A, A) -> A>(
    n: usize,
    p: *const T,
    s: isize,
    id: A,
    f: &F,
    c: &C,
) -> A {
    // SAFETY: caller contract (for the whole body): p is valid for n elements at stride s.
    unsafe {
        if n < 2 * LANES {
            // short runs: SMALL_LANES lanes (short rows are common in per-dim reductions)
            let mut r = id;
            let mut i = 0usize;
            if n >= 2 * SMALL_LANES {
                let mut acc = [id; SMALL_LANES];
                while i + SMALL_LANES <= n {
                    let q = p.offset(i as isize * s);
                    for (k, a) in acc.iter_mut().enumerate() {
                        *a = f(*a, q.offset(k as isize * s).read());
                    }
                    i += SMALL_LANES;
                }
                // (inlined: for short runs the call would cost more than the tree)
                let mut w = SMALL_LANES;
                while w > 1 {
                    w /= 2;
                    for k in 0..w {
                        acc[k] = c(acc[k], acc[k + w]);
                    }
                }
                r = acc[0];
            }
            while i < n {
                r = f(r, p.offset(i as isize * s).read());
                i += 1;
            }
            return r;
        }
        let mut acc = [id; LANES];
        if s == 1 {
            let xs = std::slice::from_raw_parts(p, n);
            let mut chunks = xs.chunks_exact(LANES);
            for ch in &mut chunks {
                for (a, &x) in acc.iter_mut().zip(ch) {
                    *a = f(*a, x);
                }
            }
            let mut r = combine_lanes(acc, c);
            for &x in chunks.remainder() {
                r = f(r, x);
            }
            return r;
        }
        let mut i = 0usize;
        while i + LANES <= n {
            let q = p.offset(i as isize * s);
            for (k, a) in acc.iter_mut().enumerate() {
                *a = f(*a, q.offset(k as isize * s).read());
            }
            i += LANES;
        }
        let mut r = combine_lanes(acc, c);
        while i < n {
            r = f(r, p.offset(i as isize * s).read());
            i += 1;
        }
        r
    }
}

/// Runs folded together by `fold_multi`.
pub(crate) const MULTI: usize = 4;
/// Elements of one run folded before `fold_multi` turns to the next (a multiple of `LANES`).
const MULTI_STEP: usize = 128;

#[inline(always)]
unsafe fn fold_multi_body<I, T: Copy, A: Copy, F: Fn(A, T) -> A, C: Fn(A, A) -> A>(
    n: usize,
    p: [*const T; MULTI],
    id: A,
    f: &F,
    c: &C,
) -> [A; MULTI] {
    // SAFETY: caller contract (for the whole body): each p[r] is valid for n elements at
    // stride 1.
    unsafe {
        if n < 2 * LANES {
            return p.map(|q| fold_body::<I, T, A, F, C>(n, q, 1, id, f, c));
        }
        // The same lanes as `fold_body` on a unit-stride run (element i of a run goes to lane
        // i % LANES, the lanes combine pairwise, the tail folds into the result in order), so
        // each result is bit for bit that of `fold`; only the order in which the runs' memory
        // is read differs.
        let mut acc = [[id; LANES]; MULTI];
        let full = n - n % LANES;
        let mut i = 0;
        while i < full {
            let len = MULTI_STEP.min(full - i);
            for (lanes, &q) in acc.iter_mut().zip(&p) {
                let mut a = *lanes; // (a local copy stays in registers through the step)
                for ch in std::slice::from_raw_parts(q.add(i), len).chunks_exact(LANES) {
                    for (a, &x) in a.iter_mut().zip(ch) {
                        *a = f(*a, x);
                    }
                }
                *lanes = a;
            }
            i += len;
        }
        std::array::from_fn(|r| {
            let mut v = combine_lanes(acc[r], c);
            for k in full..n {
                v = f(v, p[r].add(k).read());
            }
            v
        })
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn fold2_body<I, T: Copy, A: Copy, F: Fn(A, T, T) -> A, C: Fn(A, A) -> A>(
    n: usize,
    p: *const T,
    sp: isize,
    q: *const T,
    sq: isize,
    id: A,
    f: &F,
    c: &C,
) -> A {
    // SAFETY: caller contract (for the whole body): p and q are valid for n elements at their
    // strides.
    unsafe {
        // Short runs fold in order from `id`: only the sequential tail loop below runs.
        let (mut i, mut r) = (0usize, id);
        if n >= 2 * LANES {
            let mut acc = [id; LANES];
            if sp == 1 && sq == 1 {
                let (xs, ys) = (std::slice::from_raw_parts(p, n), std::slice::from_raw_parts(q, n));
                let (mut cx, mut cy) = (xs.chunks_exact(LANES), ys.chunks_exact(LANES));
                for (a8, b8) in (&mut cx).zip(&mut cy) {
                    for ((a, &x), &y) in acc.iter_mut().zip(a8).zip(b8) {
                        *a = f(*a, x, y);
                    }
                }
                r = combine_lanes(acc, c);
                for (&x, &y) in cx.remainder().iter().zip(cy.remainder()) {
                    r = f(r, x, y);
                }
                return r;
            }
            while i + LANES <= n {
                let (a0, b0) = (p.offset(i as isize * sp), q.offset(i as isize * sq));
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = f(*a, a0.offset(k as isize * sp).read(), b0.offset(k as isize * sq).read());
                }
                i += LANES;
            }
            r = combine_lanes(acc, c);
        }
        while i < n {
            r = f(r, p.offset(i as isize * sp).read(), q.offset(i as isize * sq).read());
            i += 1;
        }
        r
    }
}

#[inline(always)]
unsafe fn find_body<I, T: Copy, P: Fn(T) -> bool>(n: usize, p: *const T, s: isize, pred: &P) -> Option<usize> {
    // SAFETY: caller contract (for the whole body): p is valid for n elements at stride s.
    unsafe {
        if s == 1 {
            let xs = std::slice::from_raw_parts(p, n);
            for (ci, ch) in xs.chunks(LANES).enumerate() {
                // a branch-free test of the whole chunk first (vectorized), then the position
                let mut any = false;
                for &x in ch {
                    any |= pred(x);
                }
                if any {
                    return ch.iter().position(|&x| pred(x)).map(|i| ci * LANES + i);
                }
            }
            return None;
        }
        (0..n).find(|&i| pred(p.offset(i as isize * s).read()))
    }
}

#[inline(always)]
unsafe fn cols_body<I, T: Copy, A: Copy, F: Fn(A, T) -> A>(acc: &mut [A], p: *const T, s: isize, f: &F) {
    // SAFETY: caller contract (for the whole body): p is valid for acc.len() elements at stride s.
    unsafe {
        if s == 1 {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = f(*a, p.add(j).read());
            }
        } else {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = f(*a, p.offset(j as isize * s).read());
            }
        }
    }
}

/// Rows folded together by `cols_rows` (one pass over the accumulators per `ROWS` rows).
pub(crate) const ROWS: usize = 4;

#[inline(always)]
unsafe fn cols_rows_body<I, T: Copy, A: Copy, G: Fn(T) -> A, C: Fn(A, A) -> A>(
    acc: &mut [A],
    p: *const T,
    s: isize,
    rs: isize,
    g: &G,
    c: &C,
) {
    // SAFETY: caller contract (for the whole body): rows 0..ROWS at p + r * rs are each valid
    // for acc.len() elements at stride s.
    unsafe {
        let row = |q: *const T| {
            let x: [A; ROWS] = std::array::from_fn(|r| g(q.offset(r as isize * rs).read()));
            c(c(x[0], x[1]), c(x[2], x[3]))
        };
        if s == 1 {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = c(*a, row(p.add(j)));
            }
        } else {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = c(*a, row(p.offset(j as isize * s)));
            }
        }
    }
}

#[inline(always)]
unsafe fn cols2_body<I, T: Copy, A: Copy, F: Fn(A, T, T) -> A>(
    acc: &mut [A],
    p: *const T,
    sp: isize,
    q: *const T,
    sq: isize,
    f: &F,
) {
    // SAFETY: caller contract (for the whole body): p and q are valid for acc.len() elements.
    unsafe {
        if sp == 1 && sq == 1 {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = f(*a, p.add(j).read(), q.add(j).read());
            }
        } else {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = f(*a, p.offset(j as isize * sp).read(), q.offset(j as isize * sq).read());
            }
        }
    }
}

multiversion! {
    /// Folds `n` elements at `p` (stride `s`) starting from `id` in `LANES` lanes; `f` adds one
    /// element to an accumulator, `c` combines two accumulators (associative, `id` neutral).
    pub fn fold<T: Copy, A: Copy, F: Fn(A, T) -> A, C: Fn(A, A) -> A>(n: usize, p: *const T, s: isize, id: A, f: &F, c: &C) -> A => fold_body
}
multiversion! {
    /// `fold` of `MULTI` unit-stride runs of `n` elements each, read a few hundred elements of
    /// each in turn: several streams of loads per core read faster from DRAM than one (measured
    /// here: a 40 MB f32 sum on 2 threads, 1.3-1.5x). Each result equals `fold`'s on its run.
    pub fn fold_multi<T: Copy, A: Copy, F: Fn(A, T) -> A, C: Fn(A, A) -> A>(n: usize, p: [*const T; MULTI], id: A, f: &F, c: &C) -> [A; MULTI] => fold_multi_body
}
multiversion! {
    /// `fold` over pairs of elements of two operands.
    pub fn fold2<T: Copy, A: Copy, F: Fn(A, T, T) -> A, C: Fn(A, A) -> A>(n: usize, p: *const T, sp: isize, q: *const T, sq: isize, id: A, f: &F, c: &C) -> A => fold2_body
}
multiversion! {
    /// The position of the first of `n` elements at `p` (stride `s`) that satisfies `pred`.
    pub fn find<T: Copy, P: Fn(T) -> bool>(n: usize, p: *const T, s: isize, pred: &P) -> Option<usize> => find_body
}
multiversion! {
    /// `acc[j] = f(acc[j], p[j * s])` for every `j < acc.len()`.
    pub fn cols<T: Copy, A: Copy, F: Fn(A, T) -> A>(acc: &mut [A], p: *const T, s: isize, f: &F) => cols_body
}
multiversion! {
    /// `acc[j] = c(acc[j], c(c(x0, x1), c(x2, x3)))` with `xr = g(p[j * s + r * rs])`: `ROWS`
    /// rows per pass over the accumulators (a quarter of the accumulator loads and stores).
    pub fn cols_rows<T: Copy, A: Copy, G: Fn(T) -> A, C: Fn(A, A) -> A>(acc: &mut [A], p: *const T, s: isize, rs: isize, g: &G, c: &C) => cols_rows_body
}
multiversion! {
    /// `acc[j] = f(acc[j], p[j * sp], q[j * sq])`.
    pub fn cols2<T: Copy, A: Copy, F: Fn(A, T, T) -> A>(acc: &mut [A], p: *const T, sp: isize, q: *const T, sq: isize, f: &F) => cols2_body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_matches_naive() {
        for n in [0usize, 1, 5, 63, 64, 65, 1000] {
            let v: Vec<f32> = (0..2 * n).map(|i| (i % 7) as f32 - 3.0).collect();
            // SAFETY: v holds 2n elements: n at stride 1 and n at stride 2 fit.
            let (a, b) = unsafe {
                (
                    fold(n, v.as_ptr(), 1, 0f64, &|a, x| a + x as f64, &|a, b| a + b),
                    fold(n, v.as_ptr(), 2, 0f64, &|a, x| a + x as f64, &|a, b| a + b),
                )
            };
            assert_eq!(a, v[..n].iter().map(|&x| x as f64).sum::<f64>());
            assert_eq!(b, v.iter().step_by(2).take(n).map(|&x| x as f64).sum::<f64>());
            // SAFETY: as above.
            let d =
                unsafe { fold2(n, v.as_ptr(), 1, v.as_ptr(), 2, 0i64, &|a, x, y| a + (x * y) as i64, &|a, b| a + b) };
            let want: i64 = (0..n).map(|i| (v[i] * v[2 * i]) as i64).sum();
            assert_eq!(d, want);
        }
        for n in [1usize, 63, 64, 65, 300, 1000] {
            let v: Vec<f32> = (0..MULTI * n).map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 90.0).collect();
            let sum = |a: f64, x: f32| a + x as f64;
            let ps: [*const f32; MULTI] = std::array::from_fn(|r| v[r * n..].as_ptr());
            // SAFETY: run r is v[r*n..(r+1)*n].
            let got = unsafe { fold_multi(n, ps, 0f64, &sum, &|a, b| a + b) };
            for r in 0..MULTI {
                // SAFETY: as above.
                let one = unsafe { fold(n, ps[r], 1, 0f64, &sum, &|a, b| a + b) };
                assert_eq!(got[r].to_bits(), one.to_bits(), "n {n} run {r}");
            }
        }
        let v: Vec<i32> = (0..300).map(|i| i % 97).collect();
        for s in [1isize, 2] {
            // SAFETY: 150 elements at stride <= 2 lie inside v.
            let got = unsafe { find(150, v.as_ptr(), s, &|x| x == 96) };
            assert_eq!(got, (0..150).find(|&i| v[i * s as usize] == 96));
            // SAFETY: as above.
            assert_eq!(unsafe { find(150, v.as_ptr(), s, &|x| x < 0) }, None);
        }
        let v = [1u8, 2, 3, 4, 5, 6];
        let mut acc = [10i64; 3];
        // SAFETY: 3 elements at stride 2 lie inside v.
        unsafe { cols(&mut acc, v.as_ptr(), 2, &|a, x| a + x as i64) };
        assert_eq!(acc, [11, 13, 15]);
        // SAFETY: 3 elements at stride 1 (and 2) lie inside v.
        unsafe { cols2(&mut acc, v.as_ptr(), 1, v.as_ptr(), 2, &|a, x, y| a + (x * y) as i64) };
        assert_eq!(acc, [12, 19, 30]);
    }
}
