//! The iteration plan of the pointwise ops (the `ops::map*` drivers and the index ops that
//! gather or scatter along one operand): one merged walk over an output and its inputs.
//!
//! Given an output shape and N operands (each a base pointer and strides already broadcast to
//! that shape, 0 where an operand is broadcast), a `Plan` drops size-1 dims, orders dims by the
//! output's strides (so the output is written in memory order), merges dims that are contiguous
//! in every operand, and leaves one inner dim walked with constant strides. Work above
//! `parallel::GRAIN` elements is split across the private rayon pool: by rows of the outer dims,
//! or by pieces of the inner run when there is only one dim. The typed kernels in
//! `kernels::pointwise` then pick a contiguous (vectorized) or strided inner loop per run.
//!
//! When an input's unit-stride dim is not the output's inner dim (a transposed operand), the
//! plan walks tiles instead (`tiled`: a few dozen rows along that input's dim by 128 elements
//! along the inner dim): each such input's tile is first copied ("packed") into a small
//! contiguous buffer, reading it along its own unit-stride dim (square blocks transposed in
//! registers for 1-, 2-, 4- and 8-byte elements), then the inner runs of the tile go to the kernel with
//! that operand contiguous. Every operand is then read and written whole cache lines at a time,
//! and the lines of the next tile are fetched while this one is worked on: its rows and columns
//! are page-size strides apart, too far for the hardware prefetchers. Runs may be visited in any
//! order (unless `serial`).

use crate::core::geometry::{Dim, Odometer, push_merged};
use crate::exec::parallel;

mod tiled;

/// A merged iteration space for N operands (operand 0 is the output).
pub struct Plan<const N: usize> {
    /// The dims, outermost first, merged; never empty (a scalar is one dim of size 1).
    dims: Vec<Dim<N>>,
    /// Called on each thread after its share (the kernels' store fence after streaming stores).
    fence: Option<fn()>,
    /// Whether the tiled walk may be used: off unless the kernel is pointwise (`set_tiling`).
    tiling: bool,
}

/// Smallest extent of both tiled dims, and element count, for the tiled walk to pay off.
const TILE_MIN_DIM: usize = 8;
const TILE_MIN_NUMEL: usize = 2048;
/// Largest stride (elements) along which an operand is packed.
const MAX_PACK_STRIDE: isize = 8;

/// A kernel of `Plan::run`: `(pointers, inner strides, len)` of one run.
type Kernel<'a, const N: usize> = dyn Fn([*mut u8; N], [isize; N], usize) + Sync + 'a;

impl<const N: usize> Plan<N> {
    /// `shape` is the output shape; `strides[k]` the strides of operand k for it.
    pub fn new(shape: &[i64], strides: [&[i64]; N]) -> Self {
        let mut dims: Vec<Dim<N>> =
            (0..shape.len()).filter(|&d| shape[d] != 1).map(|d| Dim::of(shape[d], strides, d)).collect();
        // Output memory order: larger output strides outside (stable, so ties keep row-major).
        dims.sort_by(|a, b| b.st[0].unsigned_abs().cmp(&a.st[0].unsigned_abs()));
        let mut merged = Vec::with_capacity(dims.len());
        for d in dims {
            push_merged(&mut merged, d);
        }
        if merged.is_empty() {
            merged.push(Dim::UNIT);
        }
        Plan { dims: merged, fence: None, tiling: false }
    }

    /// Makes every thread that ran part of the plan call `fence` after its share (the kernels'
    /// store fence, needed after non-temporal stores).
    pub fn set_fence(&mut self, fence: Option<fn()>) {
        self.fence = fence;
    }

    /// Allows or forbids the tiled walk (off by default). Only for pointwise kernels: ones that
    /// read each input element only through the pointer and strides they are given, as the
    /// walk hands them a packed copy of a tile in place of an input. A kernel that reads an
    /// input at other offsets (a gather along an index, a cross product's three components)
    /// must not use it.
    pub fn set_tiling(&mut self, on: bool) {
        self.tiling = on;
    }

    /// For the tiled walk: the dim `d` (not the inner one) along which some input has its
    /// smallest stride (at most `MAX_PACK_STRIDE`) while it has a larger one along the inner
    /// dim, and which inputs get packed (those with such a small stride along `d`).
    fn tiling(&self) -> Option<(usize, [bool; N])> {
        let nd = self.dims.len();
        if !self.tiling || nd < 2 || self.dims[nd - 1].size < TILE_MIN_DIM || self.numel() < TILE_MIN_NUMEL {
            return None;
        }
        // Only outputs that write each element once (no zero stride): a kernel that folds a
        // run into one output element (a reduction) keeps its whole runs.
        if self.dims.iter().any(|d| d.st[0] == 0) {
            return None;
        }
        let inner = &self.dims[nd - 1].st;
        // Operand k is better read along d: a small positive stride there, a larger one inside.
        let wants = |k: usize, d: usize| {
            let s = self.dims[d].st[k];
            s > 0 && s <= MAX_PACK_STRIDE && inner[k].unsigned_abs() > s as usize
        };
        for k in 1..N {
            let best = (0..nd - 1).filter(|&d| self.dims[d].st[k] > 0).min_by_key(|&d| self.dims[d].st[k]);
            if let Some(d) = best
                && wants(k, d)
                && self.dims[d].size >= TILE_MIN_DIM
            {
                let mut packed = [false; N];
                for (j, p) in packed.iter_mut().enumerate().skip(1) {
                    *p = wants(j, d);
                }
                return Some((d, packed));
            }
        }
        None
    }

    pub fn numel(&self) -> usize {
        self.dims.iter().map(|d| d.size).product()
    }

    /// Length and strides of the inner run.
    pub fn inner(&self) -> (usize, [isize; N]) {
        let d = self.dims.last().unwrap_or(&Dim::UNIT);
        (d.size, d.st)
    }

    /// Calls `f(pointers, inner strides, len)` for every inner run, in parallel when large.
    /// `bases[k]` points at element 0 of operand k and `elem[k]` is its element size in bytes.
    /// When `serial` is set the runs go in order on this thread (an output that overlaps itself).
    /// Otherwise runs come in any order and may be pieces of an inner run (split across
    /// threads, or cut by the tiled walk, whose runs can also point into packed copies of
    /// inputs), so `f` must be elementwise.
    ///
    /// # Safety
    /// Every element the plan reaches from each base must be valid for the kernel's accesses,
    /// and the kernel must tolerate running concurrently on disjoint runs of the output.
    #[inline]
    pub unsafe fn run<F>(&self, bases: [*mut u8; N], elem: [usize; N], serial: bool, f: F)
    where
        F: Fn([*mut u8; N], [isize; N], usize) + Sync,
    {
        // SAFETY: forwarded contract.
        unsafe { self.run_dyn(bases, elem, serial, &f) }
    }

    /// `run` with the kernel behind a reference: the walk is compiled once per operand count,
    /// not once per kernel (a call through the reference per run costs nothing next to a run).
    ///
    /// # Safety
    /// As for `run`.
    unsafe fn run_dyn(&self, bases: [*mut u8; N], elem: [usize; N], serial: bool, f: &Kernel<'_, N>) {
        let nd = self.dims.len();
        let (inner, ist) = self.inner();
        let rows: usize = self.dims[..nd - 1].iter().map(|d| d.size).product();
        let total = rows * inner;
        let addr = bases.map(parallel::SharedPtr);
        let work = if serial { 0 } else { total };
        let fence = self.fence;
        if !serial && let Some((d, packed)) = self.tiling() {
            // SAFETY: forwarded contract.
            unsafe { self.run_tiled(bases, elem, d, packed, f) };
            return;
        }
        if rows == 1 {
            // One run: split it into pieces.
            parallel::for_range(inner, work, |a, b| {
                let mut p = [std::ptr::null_mut::<u8>(); N];
                for k in 0..N {
                    p[k] = addr[k].offset(a as isize * ist[k] * elem[k] as isize);
                }
                f(p, ist, b - a);
                if let Some(fence) = fence {
                    fence();
                }
            });
            return;
        }
        let outer = &self.dims[..nd - 1];
        parallel::for_range(rows, work, |a, b| {
            let mut o = Odometer::new(outer, a);
            for _ in a..b {
                let p: [*mut u8; N] = std::array::from_fn(|k| addr[k].offset(o.off[k] * elem[k] as isize));
                f(p, ist, inner);
                o.advance();
            }
            if let Some(fence) = fence {
                fence();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn plan_merges_and_orders() {
        let p = Plan::<2>::new(&[4, 5, 6], [&[30, 6, 1], &[30, 6, 1]]);
        let sizes = |p: &Plan<2>| p.dims.iter().map(|d| d.size).collect::<Vec<_>>();
        assert_eq!(sizes(&p), vec![120]);
        // transposed output: iterate in output memory order
        let p = Plan::<2>::new(&[3, 4], [&[1, 3], &[4, 1]]);
        assert_eq!(sizes(&p), vec![4, 3]);
        assert_eq!(p.dims.iter().map(|d| d.st).collect::<Vec<_>>(), vec![[3, 1], [1, 4]]);
        // broadcast operand keeps stride 0
        let p = Plan::<2>::new(&[2, 3], [&[3, 1], &[0, 1]]);
        assert_eq!(sizes(&p), vec![2, 3]);
        let p = Plan::<1>::new(&[1, 1], [&[1, 1]]);
        assert_eq!((p.dims[0].size, p.dims.len(), p.numel()), (1, 1, 1));
    }

    #[test]
    fn run_visits_every_element_once() {
        // Above parallel::GRAIN, so the walk is split across threads (smaller under Miri,
        // which interprets every access, but still above the grain).
        let w: i64 = if cfg!(miri) { 12_000 } else { 70_000 };
        for (shape, st) in [(vec![3, w], vec![w, 1]), (vec![3 * w], vec![1]), (vec![7, 9, 11], vec![1, 7, 63])] {
            let (shape, st) = (&shape[..], &st[..]);
            let n: i64 = shape.iter().product();
            let hits = Mutex::new(vec![0u32; n as usize]);
            let p = Plan::<1>::new(shape, [st]);
            // SAFETY: the kernel only records offsets, never dereferences.
            unsafe {
                p.run([std::ptr::null_mut()], [1], false, |ptr, s, len| {
                    let mut h = hits.lock().unwrap();
                    for i in 0..len {
                        h[ptr[0] as usize + i * s[0] as usize] += 1;
                    }
                })
            };
            assert!(hits.into_inner().unwrap().iter().all(|&c| c == 1));
        }
    }

    /// `o = a + 1000 * b` through the plan (tiled or not) for views given by strides over
    /// separate buffers; returns the output buffer.
    fn add_through_plan(shape: &[i64], st: [&[i64]; 3], lens: [usize; 3], tiled: bool) -> Vec<f64> {
        let mut o = vec![f64::NAN; lens[0]];
        let a: Vec<f64> = (0..lens[1]).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..lens[2]).map(|i| (i % 977) as f64).collect();
        let mut p = Plan::<3>::new(shape, st);
        p.set_tiling(tiled);
        assert_eq!(p.tiling().is_some(), tiled);
        let bases = [o.as_mut_ptr() as *mut u8, a.as_ptr() as *mut u8, b.as_ptr() as *mut u8];
        // SAFETY: every offset the plan reaches is inside the buffers (lens cover the spans).
        unsafe {
            p.run(bases, [8, 8, 8], false, |p, s, n| {
                for i in 0..n as isize {
                    let x = (p[1] as *const f64).offset(i * s[1]).read();
                    let y = (p[2] as *const f64).offset(i * s[2]).read();
                    (p[0] as *mut f64).offset(i * s[0]).write(x + 1000.0 * y);
                }
            })
        };
        o
    }

    #[test]
    fn tiled_walk_matches_plain_walk() {
        // (shape, output strides, a strides, b strides)
        type Case = (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>);
        let cases: Vec<Case> = vec![
            // A.T + B, sizes not multiples of the tile
            (vec![70, 131], vec![131, 1], vec![1, 70], vec![131, 1]),
            (vec![200, 300], vec![300, 1], vec![1, 200], vec![300, 1]),
            // both inputs transposed
            (vec![100, 65], vec![65, 1], vec![1, 100], vec![1, 100]),
            // output transposed, inputs contiguous
            (vec![90, 77], vec![1, 90], vec![77, 1], vec![77, 1]),
            // batch of transposed matrices, plus a broadcast row
            (vec![3, 40, 129], vec![40 * 129, 129, 1], vec![40 * 129, 1, 40], vec![0, 0, 1]),
            // transposed in the outer pair, a middle dim in between
            (vec![33, 5, 70], vec![350, 70, 1], vec![1, 33 * 70, 33], vec![350, 70, 1]),
            // strided (every other element) transposed input
            (vec![64, 64], vec![64, 1], vec![2, 256], vec![64, 1]),
        ];
        for (shape, so, sa, sb) in cases {
            if cfg!(miri) && shape.iter().product::<i64>() > 10_000 {
                continue; // the smaller cases cover the same paths at Miri's speed
            }
            let span = |st: &[i64]| 1 + shape.iter().zip(st).map(|(&n, &s)| (n - 1) * s).sum::<i64>() as usize;
            let lens = [span(&so), span(&sa), span(&sb)];
            let mut p = Plan::<3>::new(&shape, [&so, &sa, &sb]);
            assert!(p.tiling().is_none(), "{shape:?}: only pointwise kernels tile (set_tiling)");
            p.set_tiling(true);
            assert!(p.tiling().is_some(), "{shape:?} should tile");
            let tiled = add_through_plan(&shape, [&so, &sa, &sb], lens, true);
            let plain = add_through_plan(&shape, [&so, &sa, &sb], lens, false);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&tiled), bits(&plain), "{shape:?}");
            // and against direct indexing
            let n: i64 = shape.iter().product();
            for lin in 0..n {
                let (mut r, mut oo, mut ao, mut bo) = (lin, 0, 0, 0);
                for d in (0..shape.len()).rev() {
                    let i = r % shape[d];
                    r /= shape[d];
                    oo += i * so[d];
                    ao += i * sa[d];
                    bo += i * sb[d];
                }
                assert_eq!(tiled[oo as usize], ao as f64 + 1000.0 * ((bo % 977) as f64));
            }
        }
        let pointwise = |shape: &[i64], so: &[i64], sa: &[i64]| {
            let mut p = Plan::<2>::new(shape, [so, sa]);
            p.set_tiling(true);
            p
        };
        // small or non-transposed shapes keep the plain walk
        assert!(pointwise(&[5, 5], &[5, 1], &[1, 5]).tiling().is_none());
        assert!(pointwise(&[100, 100], &[100, 1], &[100, 1]).tiling().is_none());
        assert!(pointwise(&[100, 100], &[100, 1], &[0, 1]).tiling().is_none());
        // a reduction-like output (stride 0 along the transposed input's long dim) is not tiled
        assert!(pointwise(&[100, 100], &[0, 1], &[100, 1]).tiling().is_none());
    }

    #[test]
    fn tiled_copy_moves_every_element_size() {
        // o = a.T (copied bytewise) for element sizes with and without a block transpose, shapes
        // that are not multiples of the tile or of the blocks, and a negative stride.
        for size in [1usize, 2, 3, 4, 8, 16] {
            for (rows, cols, flip) in [(70usize, 131usize, false), (9, 300, false), (257, 33, true)] {
                if cfg!(miri) && rows * cols > 3000 {
                    continue;
                }
                let n = rows * cols;
                let a: Vec<u8> = (0..n * size).map(|i| (i * 7 + i / 251) as u8).collect();
                let mut o = vec![0u8; n * size];
                // a holds the cols x rows matrix; the view a.T is rows x cols (strides 1, rows);
                // with `flip`, the view walks a's rows backwards (stride -rows, from the last row)
                let (base, sc) = if flip { ((cols - 1) * rows, -(rows as i64)) } else { (0, rows as i64) };
                let mut p = Plan::<2>::new(&[rows as i64, cols as i64], [&[cols as i64, 1], &[1, sc]]);
                p.set_tiling(true);
                assert!(p.tiling().is_some(), "{size} {rows}x{cols}");
                let bases = [o.as_mut_ptr(), a.as_ptr().wrapping_add(base * size) as *mut u8];
                // SAFETY: every offset the plan reaches is inside the buffers; the kernel copies
                // whole elements along the strides it is given.
                unsafe {
                    p.run(bases, [size, size], false, |ptr, s, len| {
                        for i in 0..len as isize {
                            std::ptr::copy_nonoverlapping(
                                ptr[1].offset(i * s[1] * size as isize),
                                ptr[0].offset(i * s[0] * size as isize),
                                size,
                            );
                        }
                    })
                };
                for r in 0..rows {
                    for c in 0..cols {
                        let src = if flip { (cols - 1 - c) * rows + r } else { c * rows + r };
                        assert_eq!(o[(r * cols + c) * size..][..size], a[src * size..][..size], "{size} {r} {c}");
                    }
                }
            }
        }
    }
}
