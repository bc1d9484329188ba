//! The device half of the depthwise convolutions (THCUNN's SpatialDepthWiseConvolution, and
//! TemporalRowConvolution as its 1-D case with one kernel per plane), with helpers the other
//! unfolding layers of `nn::conv_misc` share.
//!
//! Each plane `ch` of a sample has `M` kernels of its own, so the products are batched GEMMs
//! with one batch per plane over the columns of `th_nnIm2col` (`nn::conv::device`, one
//! `(plane, tap)` row per kernel tap, one column per output position):
//! - forward: per sample, `out[ch*M + m] = W_ch (M x kk) @ cols_ch (kk x L)` into an output
//!   first set to the bias (`W_ch[m] = weight[m][ch]`, rows `C*kk` apart);
//! - gradInput: per sample, `cols_ch = W_ch^T @ gradOutput_ch`, folded back by the owner-per-
//!   element `th_nnCol2im` (each image element sums its taps in a fixed order, no atomics);
//! - gradWeight: per sample, `sum_ch += gradOutput_ch @ cols_ch^T`, accumulated sample after
//!   sample in the GEMM's output (`M x kk` matrices `C*kk` apart: the weight's own layout), then
//!   `gradWeight + scale * sum`; gradBias from the f64 device sums of gradOutput per plane.
//!
//! The products run in the compute type (Half: f32 operands and results, rounded once when
//! stored). Chunks of samples hold at most `device::chunk`'s budget of column elements.

use super::ConvElem;
use super::device::{add_scaled, chunk, col2im, dense, dev_of, im2col, in_r};
use super::unfold::Geom;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::blas::{as_batch, bmm};
use crate::nn::activation::paired;
use crate::nn::widened;
use crate::ops;
use crate::ops::num::Num;

/// A depthwise call: `n` samples of `c` planes, `mult` kernels per plane, the unfolding
/// geometry `g` (`g.c == c`; its grid is an output plane).
pub(crate) struct Dg {
    pub n: usize,
    pub c: usize,
    pub mult: usize,
    pub g: Geom,
}

impl Dg {
    fn kk(&self) -> usize {
        self.g.k.iter().product()
    }
    fn l(&self) -> usize {
        self.g.cols()
    }
}

/// The 2-D geometry (depth 1) of planes `i`, grid `o`, kernel `k`, strides `s`, padding `p`
/// (each (h, w)), no dilation.
pub(crate) fn geom2(c: usize, i: [usize; 2], o: [usize; 2], k: [usize; 2], s: [usize; 2], p: [usize; 2]) -> Geom {
    Geom {
        c,
        i: [1, i[0], i[1]],
        o: [1, o[0], o[1]],
        k: [1, k[0], k[1]],
        s: [1, s[0], s[1]],
        p: [0, p[0] as isize, p[1] as isize],
        d: [1; 3],
    }
}

/// A `[N,] C, H, W` view (4-D when `batched`) as the 5-D image `[N, C, 1, H, W]` of
/// im2col/col2im (an unbatched view is one sample).
pub(crate) fn planes5<T: Scalar>(v: &View<T>, batched: bool) -> View<T> {
    let (z, s, o) = (&v.sizes, &v.strides, batched as usize);
    let (n, bs) = if batched { (z[0], s[0]) } else { (1, 0) };
    View {
        storage: v.storage.clone(),
        offset: v.offset,
        sizes: vec![n, z[o], 1, z[o + 1], z[o + 2]],
        strides: vec![bs, s[o], 0, s[o + 1], s[o + 2]],
    }
}

/// Samples `b0..b0+nb` of the 5-D image `img`.
pub(crate) fn part<T: Scalar>(img: &View<T>, b0: usize, nb: usize) -> View<T> {
    let mut v = img.clone();
    v.offset = (v.offset as i64 + b0 as i64 * v.strides[0]) as usize;
    v.sizes[0] = nb as i64;
    v
}

/// `v`'s `a * b * c` elements (row-major) as `[a, b, c]`, summed in f64 over `a` and `c` on
/// the device and rounded to the compute type: `b` contiguous values.
pub(crate) fn sums<T: ConvElem, U: Scalar>(v: &View<U>, a: usize, b: usize, c: usize) -> Result<View<T::R>> {
    let wide = widened(v)?.reshape_view(&[a as i64, b as i64, c as i64])?;
    let by_row = Tensor::new(ops::temp_like::<f64, U>(v, &[a as i64, b as i64])?);
    let total = Tensor::new(ops::temp_like::<f64, U>(v, &[b as i64])?);
    ops::reduce::sum(&by_row, &wide, 2, false)?;
    ops::reduce::sum(&total, &by_row.view(), 0, false)?;
    let narrowed = ops::temp_like::<T::R, U>(v, &[b as i64])?;
    ops::copy::copy(&narrowed, &total.view())?;
    Ok(narrowed)
}

/// `out` (contiguous `[n, C*M, L]`, sharing no storage with the operands, written) = the
/// depthwise convolution of `img` (5-D) with `w` (`M*C*kk` elements, row-major `[M, C, kk]`)
/// plus `bias` (`M*C` elements, `[M, C]`; None: zero).
pub(crate) fn forward<T: ConvElem>(
    d: &Dg,
    img: &View<T>,
    w: &View<T>,
    bias: Option<&View<T>>,
    out: &View<T>,
) -> Result<()> {
    let (n, c, m, kk, l) = (d.n, d.c, d.mult, d.kk(), d.l());
    let dev = dev_of(out)?;
    let shape = [n as i64, (c * m) as i64, l as i64];
    let native = (out as &dyn std::any::Any).downcast_ref::<View<T::R>>().cloned();
    let o = match &native {
        Some(v) => v.reshape_view(&shape)?,
        None => ops::temp_like::<T::R, T>(out, &shape)?,
    };
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let beta = if let Some(b) = bias {
        // output plane ch*M + m starts at bias[m][ch]
        let b = paired(b.clone(), &[(m * c) as i64])?;
        let e = View {
            storage: b.storage.clone(),
            offset: b.offset,
            sizes: vec![n as i64, c as i64, m as i64, l as i64],
            strides: vec![0, b.strides[0], c as i64 * b.strides[0], 0],
        };
        ops::copy::copy(&o.reshape_view(&e.sizes)?, &e)?;
        one
    } else {
        zero
    };
    let wr = in_r(&dense(w)?)?;
    let a = as_batch(&wr, [c as i64, m as i64, kk as i64], [kk as i64, (c * kk) as i64, 1]);
    let per = c * kk * l;
    let ch = chunk(n, per);
    let cols = ops::temp_like::<T::R, T>(out, &[(ch * per) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        im2col(dev, &d.g, &part(img, b0, nb), &cols, [per as i64, l as i64], nb)?;
        for b in 0..nb {
            let mut bm = as_batch(&cols, [c as i64, kk as i64, l as i64], [(kk * l) as i64, l as i64, 1]);
            bm.offset += b * per;
            let mut cm = as_batch(&o, [c as i64, m as i64, l as i64], [(m * l) as i64, l as i64, 1]);
            cm.offset += (b0 + b) * c * m * l;
            bmm(one, &a, &bm, beta, &cm)?;
        }
    }
    if native.is_none() { ops::copy::copy(&out.reshape_view(&shape)?, &o) } else { Ok(()) }
}

/// `gin` (5-D image, distinct elements sharing no storage with the operands, written) = the
/// gradient of the depthwise convolution for `go` (`n*C*M*L` elements, row-major `[n, C, M,
/// L]`, any strides) and the weight `w` (as in `forward`).
pub(crate) fn grad_input<T: ConvElem>(d: &Dg, go: &View<T>, w: &View<T>, gin: &View<T>) -> Result<()> {
    let (n, c, m, kk, l) = (d.n, d.c, d.mult, d.kk(), d.l());
    let dev = dev_of(gin)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let (gr, wr) = (in_r(&dense(go)?)?, in_r(&dense(w)?)?);
    let a = as_batch(&wr, [c as i64, kk as i64, m as i64], [kk as i64, 1, (c * kk) as i64]);
    let per = c * kk * l;
    let ch = chunk(n, per);
    let cols = ops::temp_like::<T::R, T>(gin, &[(ch * per) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        for b in 0..nb {
            let mut bm = as_batch(&gr, [c as i64, m as i64, l as i64], [(m * l) as i64, l as i64, 1]);
            bm.offset += (b0 + b) * c * m * l;
            let mut cm = as_batch(&cols, [c as i64, kk as i64, l as i64], [(kk * l) as i64, l as i64, 1]);
            cm.offset += b * per;
            bmm(one, &a, &bm, zero, &cm)?;
        }
        col2im(dev, &d.g, &cols, [per as i64, l as i64], &part(gin, b0, nb), None, nb)?;
    }
    Ok(())
}

/// `gw += scale * dL/dweight` (`M*C*kk` elements), `gb += scale * dL/dbias` (`M*C`) for input
/// `img` (5-D) and `go` (as in `grad_input`).
pub(crate) fn acc<T: ConvElem>(
    d: &Dg,
    img: &View<T>,
    go: &View<T>,
    gw: &Tensor<T>,
    gb: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let (n, c, m, kk, l) = (d.n, d.c, d.mult, d.kk(), d.l());
    let dev = dev_of(img)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let sum = ops::temp_like::<T::R, T>(img, &[(m * c * kk) as i64])?;
    if n == 0 {
        crate::cuda::ops::fill(dev, &sum, zero)?;
    }
    let gr = in_r(&dense(go)?)?;
    // plane ch's M x kk sum at [0][ch][0] of the weight's [M, C, kk] layout
    let cm = as_batch(&sum, [c as i64, m as i64, kk as i64], [kk as i64, (c * kk) as i64, 1]);
    let per = c * kk * l;
    let ch = chunk(n, per);
    let cols = ops::temp_like::<T::R, T>(img, &[(ch * per) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        im2col(dev, &d.g, &part(img, b0, nb), &cols, [per as i64, l as i64], nb)?;
        for b in 0..nb {
            let mut am = as_batch(&gr, [c as i64, m as i64, l as i64], [(m * l) as i64, l as i64, 1]);
            am.offset += (b0 + b) * c * m * l;
            let mut bm = as_batch(&cols, [c as i64, l as i64, kk as i64], [(kk * l) as i64, 1, l as i64]);
            bm.offset += b * per;
            bmm(one, &am, &bm, if b0 + b == 0 { zero } else { one }, &cm)?;
        }
    }
    add_scaled(gw, &sum, m * c * kk, scale)?;
    if let Some(gb) = gb {
        // per plane ch*M + m, then reordered to the bias's [M, C]
        let s = sums::<T, T>(go, n, c * m, l)?;
        let t = ops::temp_like::<T::R, T>(img, &[m as i64, c as i64])?;
        let st =
            View { storage: s.storage.clone(), offset: s.offset, sizes: t.sizes.clone(), strides: vec![1, m as i64] };
        ops::copy::copy(&t, &st)?;
        add_scaled(gb, &t, m * c, scale)?;
    }
    Ok(())
}
