//! SoftMax and LogSoftMax over the dimension torch7 picks from the input's dimensionality:
//! 1-D `(dim)` and 2-D `(frames, dim)` normalize each row; 3-D `(dim, h, w)` and 4-D
//! `(frames, dim, h, w)` normalize over `dim` at every position (`h x w` positions per frame).
//!
//! On the device: `super::device` (one thread per normalized line). On the host, both are stable: the maximum over the normalized dimension is subtracted before `exp`
//! (`exp` from `kernels::vmath`, vectorized in the AVX2 / AVX-512 copies), sums are kept in 16
//! lanes of the element type (rows) or per position (3-D/4-D). Rows (and, for 3-D/4-D, blocks of
//! positions of a frame) are spread over the library's threads; each output element is computed
//! by one piece in a fixed order, so results do not depend on the thread count.

use super::ActReal;
use crate::core::allocator::Device;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::parallel::{self, SharedPtr};
use crate::kernels::vmath::{Fused, Mode, Unfused};
use crate::nn::buf::{self, Out};
use crate::nn::{NnElem, check, native_tensor, native_view};

/// torch7's layout: `frames` blocks of `dim x inner` elements, normalized over `dim`.
#[derive(Clone, Copy)]
struct Geom {
    frames: usize,
    dim: usize,
    inner: usize,
}

/// The layout of a 1-D to 4-D shape (checked by the caller).
fn geom(sizes: &[i64]) -> Geom {
    let s = |i: usize| sizes.get(i).map_or(0, |&v| v as usize);
    match sizes.len() {
        1 => Geom { frames: 1, dim: s(0), inner: 1 },
        2 => Geom { frames: s(0), dim: s(1), inner: 1 },
        3 => Geom { frames: 1, dim: s(0), inner: s(1) * s(2) },
        _ => Geom { frames: s(0), dim: s(1), inner: s(2) * s(3) },
    }
}

/// How a kernel copy evaluates multiply-adds (the marker `multiversion!` passes: fused where
/// the copy has FMA).
trait Fm {
    type M: Mode;
}
impl Fm for crate::kernels::Base {
    type M = Unfused;
}
impl Fm for crate::kernels::Avx2 {
    type M = Fused;
}
impl Fm for crate::kernels::Avx512 {
    type M = Fused;
}

/// Lanes of the row reductions.
const L: usize = 16;
/// Positions per piece of a 3-D/4-D frame.
const W: usize = 256;

#[inline(always)]
fn vexp<I: Fm, T: ActReal>(x: T) -> T {
    x.vexp::<I::M>()
}

#[inline(always)]
fn vln<I: Fm, T: ActReal>(x: T) -> T {
    x.vln::<I::M>()
}

#[inline(always)]
fn neg_inf<T: ActReal>() -> T {
    T::from_f64(f64::NEG_INFINITY)
}

/// The largest element (NaNs skipped, as torch7's `>=` scan does; -inf for an empty row).
#[inline(always)]
fn row_max<T: ActReal>(x: &[T]) -> T {
    let (chunks, rest) = x.as_chunks::<L>();
    let mut m = [neg_inf::<T>(); L];
    for c in chunks {
        for (mj, &v) in m.iter_mut().zip(c) {
            *mj = if v > *mj { v } else { *mj };
        }
    }
    m.iter().chain(rest).fold(neg_inf::<T>(), |r, &v| if v > r { v } else { r })
}

/// `sum_i f(a_i, b_i)` in `L` lanes.
#[inline(always)]
fn lane_sum<T: ActReal>(a: &[T], b: &[T], f: impl Fn(T, T) -> T) -> T {
    let (ac, ar) = a.as_chunks::<L>();
    let (bc, br) = b.as_chunks::<L>();
    let mut s = [T::zero(); L];
    for (ac, bc) in ac.iter().zip(bc) {
        for ((sj, &x), &y) in s.iter_mut().zip(ac).zip(bc) {
            *sj += f(x, y);
        }
    }
    let r = ar.iter().zip(br).fold(T::zero(), |r, (&x, &y)| r + f(x, y));
    s.iter().fold(r, |r, &v| r + v)
}

/// `o = exp(x - m)`, returning the sum (in `L` lanes).
#[inline(always)]
fn exp_store<I: Fm, T: ActReal>(x: &[T], o: &mut [T], m: T) -> T {
    let (xc, xr) = x.as_chunks::<L>();
    let (oc, or) = o.as_chunks_mut::<L>();
    let mut s = [T::zero(); L];
    for (xc, oc) in xc.iter().zip(oc) {
        for ((sj, oj), &v) in s.iter_mut().zip(oc).zip(xc) {
            let e = vexp::<I, T>(v - m);
            *oj = e;
            *sj += e;
        }
    }
    let mut r = T::zero();
    for (oj, &v) in or.iter_mut().zip(xr) {
        let e = vexp::<I, T>(v - m);
        *oj = e;
        r += e;
    }
    s.iter().fold(r, |r, &v| r + v)
}

/// Forward pass over whole rows of length `dim` (`x`, `o`: the same number of rows).
///
/// # Safety
/// None beyond the signature (unsafe for `multiversion!`).
#[inline(always)]
unsafe fn rows_fwd_body<I: Fm, T: ActReal>(x: &[T], o: &mut [T], dim: usize, log: bool) {
    for (xr, or) in x.chunks_exact(dim).zip(o.chunks_exact_mut(dim)) {
        let m = row_max(xr);
        if log {
            let lse = lane_sum(xr, xr, |v, _| vexp::<I, T>(v - m)).ln();
            for (oj, &v) in or.iter_mut().zip(xr) {
                *oj = (v - m) - lse;
            }
        } else {
            let inv = T::one() / exp_store::<I, T>(xr, or, m);
            for oj in or.iter_mut() {
                *oj *= inv;
            }
        }
    }
}
crate::kernels::multiversion!(fn rows_fwd<T: ActReal>(x: &[T], o: &mut [T], dim: usize, log: bool) => rows_fwd_body);

/// Backward pass over whole rows (`y`: the forward's output, `g`: gradOutput, `o`: gradInput).
///
/// # Safety
/// None beyond the signature (unsafe for `multiversion!`).
#[inline(always)]
unsafe fn rows_bwd_body<I: Fm, T: ActReal>(y: &[T], g: &[T], o: &mut [T], dim: usize, log: bool) {
    for ((yr, gr), or) in y.chunks_exact(dim).zip(g.chunks_exact(dim)).zip(o.chunks_exact_mut(dim)) {
        if log {
            let s = lane_sum(gr, gr, |v, _| v);
            for ((oj, &yv), &gv) in or.iter_mut().zip(yr).zip(gr) {
                *oj = gv - vexp::<I, T>(yv) * s;
            }
        } else {
            let d = lane_sum(gr, yr, |a, b| a * b);
            for ((oj, &yv), &gv) in or.iter_mut().zip(yr).zip(gr) {
                *oj = yv * (gv - d);
            }
        }
    }
}
crate::kernels::multiversion!(fn rows_bwd<T: ActReal>(y: &[T], g: &[T], o: &mut [T], dim: usize, log: bool) => rows_bwd_body);

/// Positions `c0..c1` (at most `W`) of one 3-D/4-D frame (`x`: the frame's `dim x inner`
/// elements), forward pass.
///
/// # Safety
/// `o` points to the frame's `dim * inner` output elements, of which no other thread touches
/// positions `c0..c1` meanwhile; `c0 <= c1 <= inner`, `c1 - c0 <= W`, `x.len() == dim * inner`.
#[inline(always)]
unsafe fn cols_fwd_body<I: Fm, T: ActReal>(
    x: &[T],
    o: *mut T,
    dim: usize,
    inner: usize,
    c0: usize,
    c1: usize,
    log: bool,
) {
    let w = c1 - c0;
    let row = |d: usize| &x[d * inner + c0..d * inner + c1];
    // SAFETY: row d's positions c0..c1 of the frame (in bounds by the contract), which this
    // piece alone touches; each slice is dropped before the next is made.
    let out = |d: usize| unsafe { std::slice::from_raw_parts_mut(o.add(d * inner + c0), w) };
    let mut mx = [neg_inf::<T>(); W];
    let mx = &mut mx[..w];
    for d in 0..dim {
        for (m, &v) in mx.iter_mut().zip(row(d)) {
            *m = if v > *m { v } else { *m };
        }
    }
    let mut sm = [T::zero(); W];
    let sm = &mut sm[..w];
    for d in 0..dim {
        if log {
            for ((s, &v), &m) in sm.iter_mut().zip(row(d)).zip(mx.iter()) {
                *s += vexp::<I, T>(v - m);
            }
        } else {
            for (((s, oj), &v), &m) in sm.iter_mut().zip(out(d)).zip(row(d)).zip(mx.iter()) {
                let e = vexp::<I, T>(v - m);
                *oj = e;
                *s += e;
            }
        }
    }
    for s in sm.iter_mut() {
        *s = if log { vln::<I, T>(*s) } else { T::one() / *s };
    }
    for d in 0..dim {
        if log {
            for (((oj, &v), &m), &s) in out(d).iter_mut().zip(row(d)).zip(mx.iter()).zip(sm.iter()) {
                *oj = (v - m) - s;
            }
        } else {
            for (oj, &s) in out(d).iter_mut().zip(sm.iter()) {
                *oj *= s;
            }
        }
    }
}
crate::kernels::multiversion!(fn cols_fwd<T: ActReal>(x: &[T], o: *mut T, dim: usize, inner: usize, c0: usize, c1: usize, log: bool) => cols_fwd_body);

/// Positions `c0..c1` of one 3-D/4-D frame, backward pass (`y`, `g`: the frame's output and
/// gradOutput).
///
/// # Safety
/// As `cols_fwd_body` (`y` and `g` of `dim * inner` elements).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn cols_bwd_body<I: Fm, T: ActReal>(
    y: &[T],
    g: &[T],
    o: *mut T,
    dim: usize,
    inner: usize,
    c0: usize,
    c1: usize,
    log: bool,
) {
    let w = c1 - c0;
    let at = |d: usize| d * inner + c0..d * inner + c1;
    let mut acc = [T::zero(); W];
    let acc = &mut acc[..w];
    for d in 0..dim {
        let gr = &g[at(d)];
        if log {
            for (a, &gv) in acc.iter_mut().zip(gr) {
                *a += gv;
            }
        } else {
            for ((a, &gv), &yv) in acc.iter_mut().zip(gr).zip(&y[at(d)]) {
                *a += gv * yv;
            }
        }
    }
    for d in 0..dim {
        // SAFETY: as in cols_fwd_body.
        let or = unsafe { std::slice::from_raw_parts_mut(o.add(d * inner + c0), w) };
        let (yr, gr) = (&y[at(d)], &g[at(d)]);
        if log {
            for (((oj, &yv), &gv), &a) in or.iter_mut().zip(yr).zip(gr).zip(acc.iter()) {
                *oj = gv - vexp::<I, T>(yv) * a;
            }
        } else {
            for (((oj, &yv), &gv), &a) in or.iter_mut().zip(yr).zip(gr).zip(acc.iter()) {
                *oj = yv * (gv - a);
            }
        }
    }
}
crate::kernels::multiversion!(fn cols_bwd<T: ActReal>(y: &[T], g: &[T], o: *mut T, dim: usize, inner: usize, c0: usize, c1: usize, log: bool) => cols_bwd_body);

/// Elements touched per element, for the threading threshold (`exp` costs several copies).
const COST: usize = 4;

/// Runs `row(first_row, rows)` or `col(frame, c0, c1)` over the pieces of `gm`, in parallel.
fn split(gm: Geom, row: impl Fn(usize, usize) + Sync, col: impl Fn(usize, usize, usize) + Sync) {
    let work = (gm.frames * gm.dim * gm.inner).saturating_mul(COST);
    if gm.inner == 1 {
        parallel::for_range(gm.frames, work, row);
    } else {
        let blocks = gm.inner.div_ceil(W);
        parallel::for_range(gm.frames * blocks, work, |a, b| {
            for p in a..b {
                let c0 = (p % blocks) * W;
                col(p / blocks, c0, (c0 + W).min(gm.inner));
            }
        });
    }
}

/// Forward pass of `x` into `o` (same length, `gm`'s).
fn forward<T: ActReal>(x: &[T], o: &mut [T], gm: Geom, log: bool) {
    if x.is_empty() || gm.dim == 0 || o.len() != x.len() {
        return;
    }
    let (dim, fl) = (gm.dim, gm.dim * gm.inner);
    let op = SharedPtr(o.as_mut_ptr());
    split(
        gm,
        |a, b| {
            // SAFETY: rows a..b of `o` (a < b <= frames, frames * dim == o.len()), disjoint between
            // the pieces of the loop.
            let or = unsafe { std::slice::from_raw_parts_mut(op.offset((a * dim) as isize), (b - a) * dim) };
            // SAFETY: slices only.
            unsafe { rows_fwd(&x[a * dim..b * dim], or, dim, log) }
        },
        |f, c0, c1| {
            // SAFETY: frame f of `o` (f < frames); the loop's pieces take disjoint positions.
            unsafe { cols_fwd(&x[f * fl..(f + 1) * fl], op.offset((f * fl) as isize), dim, gm.inner, c0, c1, log) }
        },
    );
}

/// Backward pass from `y` (output) and `g` (gradOutput) into `o` (all of `gm`'s length).
fn backward<T: ActReal>(y: &[T], g: &[T], o: &mut [T], gm: Geom, log: bool) {
    if y.is_empty() || gm.dim == 0 || o.len() != y.len() || g.len() != y.len() {
        return;
    }
    let (dim, fl) = (gm.dim, gm.dim * gm.inner);
    let op = SharedPtr(o.as_mut_ptr());
    split(
        gm,
        |a, b| {
            // SAFETY: as in `forward`.
            let or = unsafe { std::slice::from_raw_parts_mut(op.offset((a * dim) as isize), (b - a) * dim) };
            let r = a * dim..b * dim;
            // SAFETY: slices only.
            unsafe { rows_bwd(&y[r.clone()], &g[r], or, dim, log) }
        },
        |f, c0, c1| {
            let r = f * fl..(f + 1) * fl;
            // SAFETY: as in `forward`.
            unsafe { cols_bwd(&y[r.clone()], &g[r], op.offset((f * fl) as isize), dim, gm.inner, c0, c1, log) }
        },
    );
}

fn update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, log: bool) -> Result<()> {
    check::dims(input, 2, "input", &[1, 2, 3, 4])?;
    if let Device::Cuda(dev) = input.device() {
        return super::device::softmax(dev, input, output, log);
    }
    let (input, output) = (native_view(input)?, native_tensor(output)?);
    let gm = geom(&input.sizes);
    let mut out = Out::new(output, &input.sizes)?;
    let x = buf::read(input, &[out.view()])?;
    forward(&x, out.as_mut(), gm, log);
    out.finish()
}

fn update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
    log: bool,
) -> Result<()> {
    check::dims(output, 5, "output", &[1, 2, 3, 4])?;
    check::same_shape(grad_output, 3, "gradOutput", output, "output")?;
    check::same_shape(input, 2, "input", grad_output, "gradOutput")?;
    if let Device::Cuda(dev) = output.device() {
        return super::device::softmax_back(dev, output, grad_output, grad_input, log);
    }
    let (output, grad_output, grad_input) =
        (native_view(output)?, native_view(grad_output)?, native_tensor(grad_input)?);
    let gm = geom(&output.sizes);
    let mut gi = Out::new(grad_input, &output.sizes)?;
    let y = buf::read(output, &[gi.view()])?;
    let g = buf::read(grad_output, &[gi.view()])?;
    backward(&y, &g, gi.as_mut(), gm, log);
    gi.finish()
}

/// `SoftMax_updateOutput`: `exp(x - max) / sum(exp(x - max))` over torch7's dimension.
pub fn soft_max_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    update_output(input, output, false)
}

/// `SoftMax_updateGradInput`: `y * (g - sum(g * y))` (`y`: output), shaped like `output`.
pub fn soft_max_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
) -> Result<()> {
    update_grad_input(input, grad_output, grad_input, output, false)
}

/// `LogSoftMax_updateOutput`: `(x - max) - log(sum(exp(x - max)))` over torch7's dimension.
pub fn log_soft_max_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    update_output(input, output, true)
}

/// `LogSoftMax_updateGradInput`: `g - exp(y) * sum(g)` (`y`: output), shaped like `output`.
pub fn log_soft_max_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
) -> Result<()> {
    update_grad_input(input, grad_output, grad_input, output, true)
}
