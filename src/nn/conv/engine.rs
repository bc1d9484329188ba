//! The three products every GEMM convolution is made of, over a batch of samples:
//! - `unfold_mm`: `dst_b = W @ im2col(src_b)` (+ bias): a convolution's forward, a transposed
//!   convolution's input gradient;
//! - `mm_fold`: `dst_b = col2im(W^T @ src_b)` (+ bias): a convolution's input gradient, a
//!   transposed convolution's forward;
//! - `acc`: `gW += scale * sum_b A_b @ im2col(src_b)^T`: the weight gradient of both.
//!
//! Samples run in parallel on the library's pool, each piece with its own columns in the
//! scratch buffer and its GEMMs on its own thread; a single sample unfolds in parallel and
//! leaves the GEMM to thread itself. A 1x1 kernel with stride 1 and no padding skips the
//! unfolding (the image is its own column matrix). Every output element is computed by one
//! piece in a fixed order, and the weight gradient is summed over a number of slots that
//! depends on the shapes only, so results never depend on the thread count.

use super::super::NnReal;
use super::super::buf::{self, Mat, Out};
use super::unfold::{Geom, col2im, im2col};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::parallel;
use std::sync::Mutex;

/// Most slots the weight gradient is split into (each a partial sum over a block of samples).
const MAX_SLOTS: usize = 8;
/// Elements of slot buffers (partial gradients and columns) above which fewer slots are used
/// (never fewer than two for two samples or more: the forward's scratch on two threads).
const SLOT_BUDGET: usize = 1 << 23;

/// Working memory: the caller's buffer tensor (resized) or, where it is NULL or shares storage
/// with an operand, a private vector.
pub enum Scratch<T: NnReal> {
    Buf(Out<T>),
    Own(Vec<T>),
}

impl<T: NnReal> Scratch<T> {
    /// `len` elements (`buf` resized to `[pieces, len / pieces]`; 0 elements leave it alone).
    pub fn new(buf: Option<&Tensor<T>>, pieces: usize, len: usize, avoid: &[&View<T>]) -> Result<Self> {
        match buf {
            Some(b) if len > 0 && !avoid.iter().any(|v| v.numel() > 0 && b.view().same_storage(v)) => {
                Ok(Scratch::Buf(Out::new(b, &[pieces as i64, (len / pieces.max(1)) as i64])?))
            }
            _ => Ok(Scratch::Own(crate::core::limits::try_filled(len, T::zero())?)),
        }
    }

    /// The elements.
    pub fn slice(&mut self) -> &mut [T] {
        match self {
            Scratch::Buf(o) => o.as_mut(),
            Scratch::Own(v) => v,
        }
    }
}

/// Pieces a batch of `n` samples is cut into: one per thread (at most one per sample).
pub fn pieces(n: usize) -> usize {
    n.clamp(1, parallel::num_threads().max(1))
}

/// Slots of the weight gradient for `n` samples, `per` elements each: a function of the shapes.
pub fn slots(n: usize, per: usize) -> usize {
    let mut s = n.clamp(1, MAX_SLOTS);
    while s > 2 && s * per > SLOT_BUDGET {
        s -= 1;
    }
    s
}

/// Samples `[lo, hi)` of block `i` of `p` over `n` samples.
fn block(n: usize, p: usize, i: usize) -> (usize, usize) {
    (i * n / p, (i + 1) * n / p)
}

/// Runs `f` on every part, in parallel when `work` is large enough; the first error wins.
fn run_parts<P: Send>(parts: &[Mutex<P>], work: usize, f: impl Fn(&mut P) -> Result<()> + Sync) -> Result<()> {
    let err = Mutex::new(None);
    parallel::for_range(parts.len(), work, |a, b| {
        for (i, part) in parts.iter().enumerate().take(b).skip(a) {
            let mut g = part.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = f(&mut g) {
                let mut slot = err.lock().unwrap_or_else(|e| e.into_inner());
                if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                    *slot = Some((i, e));
                }
            }
        }
    });
    match err.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Cuts `dst` (`n` samples of `per` elements) and `scratch` (`p` parts of `sp`) into `p`
/// parts: (first sample, samples' elements, scratch).
#[allow(clippy::type_complexity)] // a tuple of slices
fn split<'a, T>(
    n: usize,
    p: usize,
    mut dst: &'a mut [T],
    per: usize,
    mut scratch: &'a mut [T],
    sp: usize,
) -> Vec<Mutex<(usize, &'a mut [T], &'a mut [T])>> {
    let mut parts = Vec::with_capacity(p);
    for i in 0..p {
        let (lo, hi) = block(n, p, i);
        let (d, rest) = std::mem::take(&mut dst).split_at_mut((hi - lo) * per);
        dst = rest;
        let (s, rest) = std::mem::take(&mut scratch).split_at_mut(sp);
        scratch = rest;
        parts.push(Mutex::new((lo, d, s)));
    }
    parts
}

/// Elements of columns a piece needs: one block's (none for an identity unfolding).
fn col_len(g: &Geom) -> usize {
    if g.identity() { 0 } else { g.block_len() }
}

/// Elements of scratch `unfold_mm` / `mm_fold` need for `n` samples.
pub fn mm_scratch(g: &Geom, n: usize) -> usize {
    pieces(n) * col_len(g)
}

/// Sets each of the `m` rows (`len` elements) of `out` to its bias (returns GEMM's beta: 1),
/// or returns 0 (GEMM overwrites).
pub(super) fn bias_rows<T: NnReal>(out: &mut [T], bias: Option<&[T]>, len: usize) -> T {
    match bias {
        Some(b) => {
            for (row, &v) in out.chunks_mut(len).zip(b) {
                row.fill(v);
            }
            T::one()
        }
        None => T::zero(),
    }
}

/// For each of `n` samples: `dst_b` (`m x g.cols()`) = `w` (`m x g.rows()`) @ im2col(`src_b`)
/// (+ `bias`, one value per row). `scratch`: `mm_scratch(g, n)` elements.
#[allow(clippy::too_many_arguments)]
pub fn unfold_mm<T: NnReal>(
    g: &Geom,
    n: usize,
    m: usize,
    w: &[T],
    src: &[T],
    dst: &mut [T],
    bias: Option<&[T]>,
    scratch: &mut [T],
) -> Result<()> {
    if super::implicit::forward(g, n, m, w, src, dst, bias)? {
        return Ok(());
    }
    let (kk, nn, il) = (g.rows(), g.cols(), g.img());
    let ident = g.identity();
    let parts = split(n, pieces(n), dst, m * nn, scratch, col_len(g));
    run_parts(&parts, n * (m + 1) * kk * nn, |(lo, d, s)| {
        for (b, out) in (*lo..).zip(d.chunks_mut(m * nn)) {
            let x = &src[b * il..(b + 1) * il];
            let beta = bias_rows(out, bias, nn);
            if ident {
                buf::gemm(m, nn, kk, T::one(), Mat::n(w, kk), Mat::n(x, nn), beta, out, nn)?;
                continue;
            }
            for (sub, c0, nc) in g.blocks() {
                im2col(&sub, x, s);
                buf::gemm(m, nc, kk, T::one(), Mat::n(w, kk), Mat::n(s, nc), beta, &mut out[c0..], nn)?;
            }
        }
        Ok(())
    })
}

/// For each of `n` samples: `dst_b` (`g.img()`) = col2im(`w`^T @ `src_b`) (`w`: `m x
/// g.rows()`, `src_b`: `m x g.cols()`) (+ `bias`, one value per image plane).
#[allow(clippy::too_many_arguments)]
pub fn mm_fold<T: NnReal>(
    g: &Geom,
    n: usize,
    m: usize,
    w: &[T],
    src: &[T],
    dst: &mut [T],
    bias: Option<&[T]>,
    scratch: &mut [T],
) -> Result<()> {
    let (kk, nn, il, plane) = (g.rows(), g.cols(), g.img(), g.plane());
    let ident = g.identity();
    let parts = split(n, pieces(n), dst, il, scratch, col_len(g));
    run_parts(&parts, n * (m + 1) * kk * nn, |(lo, d, s)| {
        for (b, img) in (*lo..).zip(d.chunks_mut(il)) {
            let y = &src[b * m * nn..(b + 1) * m * nn];
            if ident {
                buf::gemm(kk, nn, m, T::one(), Mat::t(w, kk), Mat::n(y, nn), T::zero(), img, nn)?;
            } else {
                img.fill(T::zero());
                for (sub, c0, nc) in g.blocks() {
                    buf::gemm(kk, nc, m, T::one(), Mat::t(w, kk), Mat::n(&y[c0..], nn), T::zero(), s, nc)?;
                    col2im(&sub, s, img);
                }
            }
            if let Some(bias) = bias {
                for (pl, &v) in img.chunks_mut(plane).zip(bias) {
                    pl.iter_mut().for_each(|e| *e += v);
                }
            }
        }
        Ok(())
    })
}

/// Elements of scratch `acc` needs for `n` samples (its slots' columns).
pub fn acc_scratch(g: &Geom, n: usize, m: usize) -> usize {
    let cols = col_len(g);
    let s = slots(n, cols + m * g.rows());
    s * cols
}

/// `gw` (`m x g.rows()`) += `scale` * sum over `n` samples of `a_b` (`m x g.cols()`) @
/// im2col(`src_b`)^T. `scratch`: `acc_scratch(g, n, m)` elements.
#[allow(clippy::too_many_arguments)]
pub fn acc<T: NnReal>(
    g: &Geom,
    n: usize,
    m: usize,
    a: &[T],
    src: &[T],
    gw: &mut [T],
    scale: T,
    scratch: &mut [T],
) -> Result<()> {
    let (kk, nn, il) = (g.rows(), g.cols(), g.img());
    let ident = g.identity();
    let cols = col_len(g);
    let s = slots(n, cols + m * kk);
    let one_sample = |b: usize, col: &mut [T], alpha: T, out: &mut [T]| -> Result<()> {
        let x = &src[b * il..(b + 1) * il];
        let ab = &a[b * m * nn..(b + 1) * m * nn];
        if ident {
            return buf::gemm(m, kk, nn, alpha, Mat::n(ab, nn), Mat::t(x, nn), T::one(), out, kk);
        }
        for (sub, c0, nc) in g.blocks() {
            im2col(&sub, x, col);
            buf::gemm(m, kk, nc, alpha, Mat::n(&ab[c0..], nn), Mat::t(col, nc), T::one(), out, kk)?;
        }
        Ok(())
    };
    if s == 1 {
        for b in 0..n {
            one_sample(b, scratch, scale, gw)?;
        }
        return Ok(());
    }
    let mut partial = crate::core::limits::try_filled(s * m * kk, T::zero())?;
    let parts = split(s, s, &mut partial, m * kk, scratch, cols);
    run_parts(&parts, n * m * kk * nn, |(slot, part, col)| {
        let (lo, hi) = block(n, s, *slot);
        for b in lo..hi {
            one_sample(b, col, T::one(), part)?;
        }
        Ok(())
    })?;
    drop(parts);
    let (first, rest) = partial.split_at_mut(m * kk);
    for other in rest.chunks(m * kk) {
        for (x, &y) in first.iter_mut().zip(other) {
            *x += y;
        }
    }
    for (x, &y) in gw.iter_mut().zip(first.iter()) {
        *x += scale * y;
    }
    Ok(())
}

/// The sum of `x` in a fixed order (eight running sums, which the compiler vectorizes).
pub fn sum<T: NnReal>(x: &[T]) -> T {
    let mut acc = [T::zero(); 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    let mut s = T::zero();
    for &v in chunks.remainder() {
        s += v;
    }
    for a in acc {
        s += a;
    }
    s
}

/// `gb[c] += scale * sum over samples and positions of gout[b, c, :]` (`n` samples of
/// `gb.len()` planes of `plane` elements).
pub fn bias_grad<T: NnReal>(gout: &[T], n: usize, plane: usize, gb: &mut [T], scale: T) {
    let c = gb.len();
    for (ch, g) in gb.iter_mut().enumerate() {
        let mut s = T::zero();
        for b in 0..n {
            let at = (b * c + ch) * plane;
            s += sum(&gout[at..at + plane]);
        }
        *g += scale * s;
    }
}
