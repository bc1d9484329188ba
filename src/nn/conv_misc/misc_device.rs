//! SpatialConvolutionLocal and SpatialSubSampling on the device (THCUNN), over the unfolding
//! of `nn::conv::device` (`th_nnIm2col` into columns `[N, rows, L]`, one row per (plane, tap),
//! one column per output position; `th_nnCol2im` folding back with one owner per image
//! element, no atomics) and strided batched cuBLAS GEMMs in the compute type (Half: f32
//! operands and results, rounded once when stored):
//! - SpatialConvolutionLocal: one GEMM batch per output position `p` (its own weight matrix
//!   `nOut x K`): `out[:, :, p] = W_p @ cols[:, :, p]` over the chunk's samples (the columns'
//!   samples and the output's are `K*L`, `nOut*L` apart: `bmm` stages them through dense
//!   copies where no leading dimension fits), into an output first set to the bias;
//!   gradInput by `W_p^T` and col2im; gradWeight by `gradOutput_p @ cols_p^T` summed over
//!   the samples inside the GEMM, chunks accumulated in order; gradBias by f64 sums.
//! - SpatialSubSampling: per sample and plane `c`, `out_c = (weight[c] * ones(1 x kk)) @
//!   cols_c + bias[c]`; gradInput `cols_c = (weight[c] * ones(kk x 1)) @ gradOutput_c` and
//!   col2im; gradWeight from the window sums `ones @ cols_c` dotted with gradOutput_c (one
//!   GEMM batch per (sample, plane)), summed over samples in f64; gradBias by f64 sums.
//!
//! Chunks of samples hold at most `device::chunk`'s budget of column elements. The caller's
//! buffers (SpatialConvolutionLocal's `finput`, `fgradInput`) are not used on the device.

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::blas::{as_batch, bmm};
use crate::nn::activation::paired;
use crate::nn::conv::ConvElem;
use crate::nn::conv::depthwise_device::{part, sums};
use crate::nn::conv::device::{add_scaled, chunk, col2im, dense, dev_of, im2col, in_r};
use crate::nn::conv::unfold::Geom;
use crate::ops;
use crate::ops::num::Num;

/// `v` (contiguous, `T`) as its compute type: itself, or a new temporary of its shape.
fn out_r<T: ConvElem>(v: &View<T>, shape: &[i64]) -> Result<(View<T::R>, bool)> {
    match (v as &dyn std::any::Any).downcast_ref::<View<T::R>>() {
        Some(r) => Ok((r.reshape_view(shape)?, true)),
        None => Ok((ops::temp_like::<T::R, T>(v, shape)?, false)),
    }
}

/// SpatialConvolutionLocal: `out` (contiguous `[n, nOut, L]`, sharing no storage with the
/// operands, written) = the convolution of `img` (5-D) with `w` (`L*nOut*K`, row-major) plus
/// `bias` (`[nOut, oH, oW]`, any strides; None: zero).
pub(super) fn local_forward<T: ConvElem>(
    g: &Geom,
    n: usize,
    n_out: usize,
    img: &View<T>,
    w: &View<T>,
    bias: Option<&View<T>>,
    out: &View<T>,
) -> Result<()> {
    let (k, l) = (g.rows(), g.cols());
    let dev = dev_of(out)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let (o, native) = out_r(out, &[n as i64, n_out as i64, l as i64])?;
    let beta = if let Some(b) = bias {
        let e = View {
            storage: b.storage.clone(),
            offset: b.offset,
            sizes: vec![n as i64, b.sizes[0], b.sizes[1], b.sizes[2]],
            strides: vec![0, b.strides[0], b.strides[1], b.strides[2]],
        };
        ops::copy::copy(&o.reshape_view(&e.sizes)?, &e)?;
        one
    } else {
        zero
    };
    let wr = in_r(&dense(w)?)?;
    let a = as_batch(&wr, [l as i64, n_out as i64, k as i64], [(n_out * k) as i64, k as i64, 1]);
    let ch = chunk(n, k * l);
    let cols = ops::temp_like::<T::R, T>(out, &[(ch * k * l) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        im2col(dev, g, &part(img, b0, nb), &cols, [(k * l) as i64, l as i64], nb)?;
        let bm = as_batch(&cols, [l as i64, k as i64, nb as i64], [1, l as i64, (k * l) as i64]);
        let mut cm = as_batch(&o, [l as i64, n_out as i64, nb as i64], [1, l as i64, (n_out * l) as i64]);
        cm.offset += b0 * n_out * l;
        bmm(one, &a, &bm, beta, &cm)?;
    }
    if native { Ok(()) } else { ops::copy::copy(&out.reshape_view(&o.sizes)?, &o) }
}

/// SpatialConvolutionLocal: `gin` (5-D image, distinct elements sharing no storage with the
/// operands, written) = the gradient for `go` (`[n, nOut, oH, oW]`, any strides) and `w`.
pub(super) fn local_grad_input<T: ConvElem>(
    g: &Geom,
    n: usize,
    n_out: usize,
    go: &View<T>,
    w: &View<T>,
    gin: &View<T>,
) -> Result<()> {
    let (k, l) = (g.rows(), g.cols());
    let dev = dev_of(gin)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let (gr, wr) = (in_r(&dense(go)?)?, in_r(&dense(w)?)?);
    let a = as_batch(&wr, [l as i64, k as i64, n_out as i64], [(n_out * k) as i64, 1, k as i64]);
    let ch = chunk(n, k * l);
    let cols = ops::temp_like::<T::R, T>(gin, &[(ch * k * l) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        let mut bm = as_batch(&gr, [l as i64, n_out as i64, nb as i64], [1, l as i64, (n_out * l) as i64]);
        bm.offset += b0 * n_out * l;
        let cm = as_batch(&cols, [l as i64, k as i64, nb as i64], [1, l as i64, (k * l) as i64]);
        bmm(one, &a, &bm, zero, &cm)?;
        col2im(dev, g, &cols, [(k * l) as i64, l as i64], &part(gin, b0, nb), None, nb)?;
    }
    Ok(())
}

/// SpatialConvolutionLocal: `gw += scale * dL/dweight` (`L*nOut*K` elements), `gb += scale *
/// dL/dbias` (`nOut*L`) for `img` (5-D) and `go` (as in `local_grad_input`).
#[allow(clippy::too_many_arguments)]
pub(super) fn local_acc<T: ConvElem>(
    g: &Geom,
    n: usize,
    n_out: usize,
    img: &View<T>,
    go: &View<T>,
    gw: &Tensor<T>,
    gb: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let (k, l) = (g.rows(), g.cols());
    let dev = dev_of(img)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let sum = ops::temp_like::<T::R, T>(img, &[(l * n_out * k) as i64])?;
    if n == 0 {
        crate::cuda::ops::fill(dev, &sum, zero)?;
    }
    let gr = in_r(&dense(go)?)?;
    let cm = as_batch(&sum, [l as i64, n_out as i64, k as i64], [(n_out * k) as i64, k as i64, 1]);
    let ch = chunk(n, k * l);
    let cols = ops::temp_like::<T::R, T>(img, &[(ch * k * l) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        im2col(dev, g, &part(img, b0, nb), &cols, [(k * l) as i64, l as i64], nb)?;
        let mut am = as_batch(&gr, [l as i64, n_out as i64, nb as i64], [1, l as i64, (n_out * l) as i64]);
        am.offset += b0 * n_out * l;
        let bm = as_batch(&cols, [l as i64, nb as i64, k as i64], [1, (k * l) as i64, l as i64]);
        bmm(one, &am, &bm, if b0 == 0 { zero } else { one }, &cm)?;
    }
    add_scaled(gw, &sum, l * n_out * k, scale)?;
    if let Some(gb) = gb {
        let s = sums::<T, T>(go, n, n_out * l, 1)?;
        add_scaled(gb, &s, n_out * l, scale)?;
    }
    Ok(())
}

/// SubSampling's per-plane weight repeated over the `kk` taps: `[C, kk]` in the compute type.
fn repeated<T: ConvElem>(w: &View<T>, c: usize, kk: usize) -> Result<View<T::R>> {
    let w = paired(w.clone(), &[c as i64])?;
    let t = ops::temp_like::<T::R, T>(&w, &[c as i64, kk as i64])?;
    let e =
        View { storage: w.storage.clone(), offset: w.offset, sizes: t.sizes.clone(), strides: vec![w.strides[0], 0] };
    ops::copy::copy(&t, &e)?;
    Ok(t)
}

/// SpatialSubSampling: `out` (contiguous `[n, C, L]`, sharing no storage with the operands,
/// written) = `weight[c]` times the window sums of `img` (5-D) plus `bias[c]` (None: zero).
pub(super) fn sub_forward<T: ConvElem>(
    g: &Geom,
    n: usize,
    img: &View<T>,
    w: &View<T>,
    bias: Option<&View<T>>,
    out: &View<T>,
) -> Result<()> {
    let (c, kk, l) = (g.c, g.rows() / g.c.max(1), g.cols());
    let dev = dev_of(out)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let (o, native) = out_r(out, &[n as i64, c as i64, l as i64])?;
    let beta = if let Some(b) = bias {
        let b = paired(b.clone(), &[c as i64])?;
        let e = View {
            storage: b.storage.clone(),
            offset: b.offset,
            sizes: o.sizes.clone(),
            strides: vec![0, b.strides[0], 0],
        };
        ops::copy::copy(&o, &e)?;
        one
    } else {
        zero
    };
    let wr = repeated(w, c, kk)?;
    let a = as_batch(&wr, [c as i64, 1, kk as i64], [kk as i64, kk as i64, 1]);
    let per = c * kk * l;
    let ch = chunk(n, per);
    let cols = ops::temp_like::<T::R, T>(out, &[(ch * per) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        im2col(dev, g, &part(img, b0, nb), &cols, [per as i64, l as i64], nb)?;
        for b in 0..nb {
            let mut bm = as_batch(&cols, [c as i64, kk as i64, l as i64], [(kk * l) as i64, l as i64, 1]);
            bm.offset += b * per;
            let mut cm = as_batch(&o, [c as i64, 1, l as i64], [l as i64, l as i64, 1]);
            cm.offset += (b0 + b) * c * l;
            bmm(one, &a, &bm, beta, &cm)?;
        }
    }
    if native { Ok(()) } else { ops::copy::copy(&out.reshape_view(&o.sizes)?, &o) }
}

/// SpatialSubSampling: `gin` (5-D image, distinct elements sharing no storage with the
/// operands, written) = the gradient for `go` (`[n, C, oH, oW]`, any strides) and `w`.
pub(super) fn sub_grad_input<T: ConvElem>(g: &Geom, n: usize, go: &View<T>, w: &View<T>, gin: &View<T>) -> Result<()> {
    let (c, kk, l) = (g.c, g.rows() / g.c.max(1), g.cols());
    let dev = dev_of(gin)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let gr = in_r(&dense(go)?)?;
    let wr = repeated(w, c, kk)?;
    let a = as_batch(&wr, [c as i64, kk as i64, 1], [kk as i64, 1, 1]);
    let per = c * kk * l;
    let ch = chunk(n, per);
    let cols = ops::temp_like::<T::R, T>(gin, &[(ch * per) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        for b in 0..nb {
            let mut bm = as_batch(&gr, [c as i64, 1, l as i64], [l as i64, l as i64, 1]);
            bm.offset += (b0 + b) * c * l;
            let mut cm = as_batch(&cols, [c as i64, kk as i64, l as i64], [(kk * l) as i64, l as i64, 1]);
            cm.offset += b * per;
            bmm(one, &a, &bm, zero, &cm)?;
        }
        col2im(dev, g, &cols, [per as i64, l as i64], &part(gin, b0, nb), None, nb)?;
    }
    Ok(())
}

/// SpatialSubSampling: `gw += scale * dL/dweight`, `gb += scale * dL/dbias` (`C` elements
/// each) for `img` (5-D) and `go` (as in `sub_grad_input`).
pub(super) fn sub_acc<T: ConvElem>(
    g: &Geom,
    n: usize,
    img: &View<T>,
    go: &View<T>,
    gw: &Tensor<T>,
    gb: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let (c, kk, l) = (g.c, g.rows() / g.c.max(1), g.cols());
    let dev = dev_of(img)?;
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    let gr = in_r(&dense(go)?)?;
    let ones = ops::temp_like::<T::R, T>(img, &[kk as i64])?;
    crate::cuda::ops::fill(dev, &ones, one)?;
    // per (sample, plane): gradOutput . (window sums)
    let dots = ops::temp_like::<T::R, T>(img, &[n as i64, c as i64])?;
    let per = c * kk * l;
    let ch = chunk(n, per + c * l);
    let cols = ops::temp_like::<T::R, T>(img, &[(ch * per) as i64])?;
    let win = ops::temp_like::<T::R, T>(img, &[(ch * c * l) as i64])?;
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        let j = (nb * c) as i64;
        im2col(dev, g, &part(img, b0, nb), &cols, [per as i64, l as i64], nb)?;
        let a = as_batch(&ones, [j, 1, kk as i64], [0, kk as i64, 1]);
        let bm = as_batch(&cols, [j, kk as i64, l as i64], [(kk * l) as i64, l as i64, 1]);
        bmm(one, &a, &bm, zero, &as_batch(&win, [j, 1, l as i64], [l as i64, l as i64, 1]))?;
        let mut am = as_batch(&gr, [j, 1, l as i64], [l as i64, l as i64, 1]);
        am.offset += b0 * c * l;
        let wm = as_batch(&win, [j, l as i64, 1], [l as i64, 1, 1]);
        let mut cm = as_batch(&dots, [j, 1, 1], [1, 1, 1]);
        cm.offset += b0 * c;
        bmm(one, &am, &wm, zero, &cm)?;
    }
    add_scaled(gw, &sums::<T, T::R>(&dots, n, c, 1)?, c, scale)?;
    if let Some(gb) = gb {
        add_scaled(gb, &sums::<T, T>(go, n, c, l)?, c, scale)?;
    }
    Ok(())
}
