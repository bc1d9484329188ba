//! The device engine of the GEMM convolutions (THCUNN): the three products of [`super::engine`]
//! on device tensors.
//! - `unfold_mm`: the image is unfolded by `th_nnIm2col` (`kernels/nn_conv.cuh`, one column
//!   element per thread, the image read through its strides) and multiplied by the weight with
//!   one strided batched cuBLAS GEMM (`cuda::blas::bmm`) per chunk of samples, into an output
//!   first set to the bias (as the host does: `out = bias; out += W @ cols`).
//! - `mm_fold`: `cols = W^T @ src` by one batched GEMM per chunk, then `th_nnCol2im` folds the
//!   columns back, one thread per image element summing the entries that map to it in a fixed
//!   order (no atomics) and adding its plane's bias.
//! - `acc`: the columns of a chunk of samples are laid out side by side (`K x nb*N`) and the
//!   chunk's `A` permuted to `m x nb*N`, so one GEMM sums over the chunk's samples and
//!   positions; chunks accumulate into one `m x K` sum, added to `gradWeight` as
//!   `gw + scale * sum`.
//! - The bias gradient: gradOutput's sums per plane in f64 (the device reductions), rounded to
//!   the element type and added as `gb + scale * sum`.
//!
//! Chunks hold at most `COL_BUDGET` column elements (fixed by the shapes, so results do not
//! depend on anything but them). The caller's buffers (finput, columns, ...) are not used on
//! the device: the columns are temporaries of each call. Half computes in f32 (cuBLAS's
//! f32-accumulating half GEMM, the kernels' `R`) and rounds once per stored value.

use super::unfold::Geom;
use super::{ConvElem, Plan};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::blas::{as_batch, bmm};
use crate::cuda::launch::{Call, device_base};
use crate::cuda::nn::conv::{THNNConv, launch};
use crate::cuda::runtime::{self, Device as Dev};
use crate::nn::activation::paired;
use crate::nn::{NnElem, widened};
use crate::ops;
use crate::ops::num::Num;

/// Most column elements one chunk of samples unfolds at a time.
const COL_BUDGET: usize = 1 << 24;

/// Samples per chunk for `per` column elements per sample (at least one).
pub(crate) fn chunk(n: usize, per: usize) -> usize {
    (COL_BUDGET / per.max(1)).clamp(1, n.max(1))
}

/// Largest element offset of `sizes`/`strides`.
fn reach(sizes: &[i64], strides: &[i64]) -> i64 {
    sizes.iter().zip(strides).map(|(&n, &s)| (n - 1).max(0).saturating_mul(s.abs())).fold(0i64, i64::saturating_add)
}

/// An image operand: `nb` samples of `c x t x h x w` from sample `b0` of `v` (a batched or
/// unbatched `nd`-d view), as a 5-D view (sample, plane, t, h, w).
fn image<T: NnElem>(v: &View<T>, pl: &Plan, c: usize, sz: &[usize; 3], b0: usize, nb: usize) -> View<T> {
    let (st, c0) = (&v.strides, pl.batched as usize);
    let bs = if pl.batched { st[0] } else { 0 };
    let (t, h, w) = if pl.nd == 2 { (0, st[c0 + 1], st[c0 + 2]) } else { (st[c0 + 1], st[c0 + 2], st[c0 + 3]) };
    View {
        storage: v.storage.clone(),
        offset: (v.offset as i64 + b0 as i64 * bs) as usize,
        sizes: vec![nb as i64, c as i64, sz[0] as i64, sz[1] as i64, sz[2] as i64],
        strides: vec![bs, st[c0], t, h, w],
    }
}

/// `v` contiguous: itself, or a device copy.
pub(crate) fn dense<T: NnElem>(v: &View<T>) -> Result<View<T>> {
    if v.is_contiguous() {
        return Ok(v.clone());
    }
    let c = ops::temp_like(v, &v.sizes)?;
    ops::copy::copy(&c, v)?;
    Ok(c)
}

/// `v` in the compute type: itself (f32, f64) or a converted device copy (Half).
pub(crate) fn in_r<T: NnElem>(v: &View<T>) -> Result<View<T::R>> {
    if let Some(r) = (v as &dyn std::any::Any).downcast_ref::<View<T::R>>() {
        return Ok(r.clone());
    }
    let c = ops::temp_like::<T::R, T>(v, &v.sizes)?;
    ops::copy::copy(&c, v)?;
    Ok(c)
}

/// The kernel parameter of geometry `g` for `nb` samples of image `img` and columns `cols`
/// (strides `cs`).
fn param<T: NnElem, C: Scalar>(g: &Geom, img: &View<T>, cols: &View<C>, cs: [i64; 2], nb: usize) -> Result<THNNConv> {
    let a = |x: [usize; 3]| x.map(|v| v as i64);
    Ok(THNNConv {
        img: device_base(img)?,
        col: device_base(cols)?,
        nb: nb as i64,
        c: g.c as i64,
        i: a(g.i),
        o: a(g.o),
        k: a(g.k),
        s: a(g.s),
        p: g.p.map(|v| v as i64),
        d: a(g.d),
        is: [img.strides[0], img.strides[1], img.strides[2], img.strides[3], img.strides[4]],
        cs,
        ..THNNConv::default()
    })
}

/// The columns (`cols`, strides `cs`) of the `nb` samples of `img` (5-D).
pub(crate) fn im2col<T: NnElem>(
    dev: &Dev,
    g: &Geom,
    img: &View<T>,
    cols: &View<T::R>,
    cs: [i64; 2],
    nb: usize,
) -> Result<()> {
    let mut p = param(g, img, cols, cs, nb)?;
    p.n = (nb * g.rows() * g.cols()) as i64;
    let last = [nb as i64, g.rows() as i64, g.cols() as i64];
    let fits =
        reach(&img.sizes, &img.strides) <= i32::MAX as i64 && reach(&last, &[cs[0], cs[1], 1]) <= i32::MAX as i64;
    // SAFETY: `img` and `cols` were checked against their storages on this device
    // (device_base); the kernel reads `img` inside its 5-D sizes (checked per element) and
    // writes `nb x rows x cols` column elements at the strides `cs` inside the columns' buffer,
    // a temporary distinct from the image.
    unsafe { launch::<T>(dev, "nnIm2col", p, fits) }
}

/// `img` (5-D, `nb` samples, written) = the columns (in the compute type) folded back (+
/// `bias`, one value per plane).
pub(crate) fn col2im<T: NnElem>(
    dev: &Dev,
    g: &Geom,
    cols: &View<T::R>,
    cs: [i64; 2],
    img: &View<T>,
    bias: Option<&View<T>>,
    nb: usize,
) -> Result<()> {
    let mut p = param(g, img, cols, cs, nb)?;
    p.n = (nb * g.img()) as i64;
    if let Some(b) = bias {
        p.bias = device_base(b)?;
        p.bs = b.strides[0];
    }
    let last = [nb as i64, g.rows() as i64, g.cols() as i64];
    let fits = reach(&img.sizes, &img.strides) <= i32::MAX as i64
        && reach(&last, &[cs[0], cs[1], 1]) <= i32::MAX as i64
        && bias.is_none_or(|b| reach(&b.sizes, &b.strides) <= i32::MAX as i64);
    // SAFETY: every address was checked against its storage on this device (device_base); the
    // kernel reads the columns inside `nb x rows x cols` at the strides `cs`, the bias inside
    // its `c` elements, and writes each image element once (the caller's image has distinct
    // elements and shares no storage with the columns or the bias).
    unsafe { launch::<T>(dev, "nnCol2im", p, fits) }
}

/// The device a plan's operands live on.
pub(crate) fn dev_of<T: NnElem>(v: &View<T>) -> Result<&'static Dev> {
    match v.device() {
        crate::core::allocator::Device::Cuda(i) => runtime::device(i),
        crate::core::allocator::Device::Cpu => Err(crate::core::error::Error::internal("nn::conv::device on host")),
    }
}

/// `dst_b` (`[n, m, N]`, contiguous) = `w` (`m x K`) @ im2col(`src_b`) (+ `bias`), the
/// product in the compute type (Half: into an f32 temporary, rounded once when copied out).
fn unfold_mm<T: ConvElem>(
    pl: &Plan,
    src: &View<T>,
    src_c: usize,
    src_sz: &[usize; 3],
    w: &View<T>,
    dst: &View<T>,
    bias: Option<&View<T>>,
) -> Result<()> {
    let (g, n, m) = (&pl.g, pl.n, pl.m());
    let dev = dev_of(dst)?;
    let (kk, nn) = (g.rows(), g.cols());
    let shape = [n as i64, m as i64, nn as i64];
    let native = (dst as &dyn std::any::Any).downcast_ref::<View<T::R>>().cloned();
    let out = match &native {
        Some(d) => d.reshape_view(&shape)?,
        None => ops::temp_like::<T::R, T>(dst, &shape)?,
    };
    let beta = if let Some(b) = bias {
        let e = View {
            storage: b.storage.clone(),
            offset: b.offset,
            sizes: shape.to_vec(),
            strides: vec![0, b.strides[0], 0],
        };
        ops::copy::copy(&out, &e)?;
        <T::R as Num>::one()
    } else {
        <T::R as Num>::zero()
    };
    let ch = chunk(n, kk * nn);
    let cols = ops::temp_like::<T::R, T>(dst, &[(ch * kk * nn) as i64])?;
    let w = in_r(w)?;
    let a = as_batch(&w, [1, m as i64, kk as i64], [0, kk as i64, 1]);
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        im2col(dev, g, &image(src, pl, src_c, src_sz, b0, nb), &cols, [(kk * nn) as i64, nn as i64], nb)?;
        let bm = as_batch(&cols, [nb as i64, kk as i64, nn as i64], [(kk * nn) as i64, nn as i64, 1]);
        let mut c = as_batch(&out, [nb as i64, m as i64, nn as i64], [(m * nn) as i64, nn as i64, 1]);
        c.offset += b0 * m * nn;
        bmm(<T::R as Num>::one(), &a, &bm, beta, &c)?;
    }
    if native.is_none() { ops::copy::copy(&dst.reshape_view(&shape)?, &out) } else { Ok(()) }
}

/// `dst_b` (image, any non-overlapping strides) = col2im(`w`^T @ `src_b`) (+ `bias`); `src`
/// contiguous `[n, m, N]`. The product is computed in the compute type (Half's operands
/// converted to f32 first), so the columns are not rounded before they are summed.
#[allow(clippy::too_many_arguments)]
fn mm_fold<T: ConvElem>(
    pl: &Plan,
    w: &View<T>,
    src: &View<T>,
    dst: &View<T>,
    dst_c: usize,
    dst_sz: &[usize; 3],
    bias: Option<&View<T>>,
) -> Result<()> {
    let (g, n, m) = (&pl.g, pl.n, pl.m());
    let dev = dev_of(dst)?;
    let (kk, nn) = (g.rows(), g.cols());
    let ch = chunk(n, kk * nn);
    let cols = ops::temp_like::<T::R, T>(dst, &[(ch * kk * nn) as i64])?;
    let (w, src) = (in_r(w)?, in_r(src)?);
    let a = as_batch(&w, [1, kk as i64, m as i64], [0, 1, kk as i64]);
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        let mut bm = as_batch(&src, [nb as i64, m as i64, nn as i64], [(m * nn) as i64, nn as i64, 1]);
        bm.offset += b0 * m * nn;
        let c = as_batch(&cols, [nb as i64, kk as i64, nn as i64], [(kk * nn) as i64, nn as i64, 1]);
        bmm(<T::R as Num>::one(), &a, &bm, <T::R as Num>::zero(), &c)?;
        let img = image(dst, pl, dst_c, dst_sz, b0, nb);
        col2im(dev, g, &cols, [(kk * nn) as i64, nn as i64], &img, bias, nb)?;
    }
    Ok(())
}

/// `sum` (`m x K`, contiguous, written) = sum over samples of `a_b` (`[n, m, N]` contiguous) @
/// im2col(`src_b`)^T, in the compute type.
fn acc<T: ConvElem>(
    pl: &Plan,
    a: &View<T>,
    src: &View<T>,
    src_c: usize,
    src_sz: &[usize; 3],
    sum: &View<T::R>,
) -> Result<()> {
    let (g, n, m) = (&pl.g, pl.n, pl.m());
    let dev = dev_of(src)?;
    let (kk, nn) = (g.rows(), g.cols());
    let (zero, one) = (<T::R as Num>::zero(), <T::R as Num>::one());
    if n == 0 {
        return crate::cuda::ops::fill(dev, sum, zero);
    }
    let ch = chunk(n, kk * nn + m * nn);
    let cols = ops::temp_like::<T::R, T>(src, &[(ch * kk * nn) as i64])?;
    let perm = if ch > 1 && m > 1 { Some(ops::temp_like::<T::R, T>(src, &[(m * ch * nn) as i64])?) } else { None };
    let a = in_r(a)?;
    let c = as_batch(sum, [1, m as i64, kk as i64], [0, kk as i64, 1]);
    for b0 in (0..n).step_by(ch) {
        let nb = ch.min(n - b0);
        let w = (nb * nn) as i64;
        im2col(dev, g, &image(src, pl, src_c, src_sz, b0, nb), &cols, [nn as i64, w], nb)?;
        // the chunk's a as m x (nb*N): a view when it is one sample (or one row), else a copy
        let mut ab = as_batch(&a, [nb as i64, m as i64, nn as i64], [(m * nn) as i64, nn as i64, 1]);
        ab.offset += b0 * m * nn;
        let am = match &perm {
            Some(p) if nb > 1 => {
                let dst = View {
                    storage: p.storage.clone(),
                    offset: p.offset,
                    sizes: ab.sizes.clone(),
                    strides: vec![nn as i64, w, 1],
                };
                ops::copy::copy(&dst, &ab)?;
                as_batch(p, [1, m as i64, w], [0, w, 1])
            }
            // one sample (rows N apart), or one row (its samples adjacent)
            _ => as_batch(&ab, [1, m as i64, w], [0, nn as i64, 1]),
        };
        let bm = as_batch(&cols, [1, w, kk as i64], [0, 1, w]);
        bmm(one, &am, &bm, if b0 == 0 { zero } else { one }, &c)?;
    }
    Ok(())
}

/// `g` (a parameter gradient of `len` elements, any shape) `+= scale * s` (`s`: `len`
/// elements in the compute type, contiguous), as the host adds (`g + scale * s` in the compute
/// type, rounded once).
pub(crate) fn add_scaled<T: ConvElem>(g: &Tensor<T>, s: &View<T::R>, len: usize, scale: f64) -> Result<()> {
    let gv = g.view();
    let flat = paired(gv.clone(), &[len as i64])?;
    let fr = in_r(&flat)?;
    let sc = <T::R as Num>::from_f64(scale);
    ops::pointwise2(&Tensor::new(fr.clone()), &fr, s, Call::new("cadd").value(sc), move |w: T::R, s: T::R| w + sc * s)?;
    if std::any::TypeId::of::<T>() != std::any::TypeId::of::<T::R>() {
        ops::copy::copy(&flat, &fr)?;
    }
    if flat.same_storage(&gv) { Ok(()) } else { ops::copy::copy(&gv, &flat.reshape_view(&gv.sizes)?) }
}

/// The output of a call: `out` itself when it is contiguous and shares no storage with
/// `inputs`, else a contiguous temporary (copied into `out` by `finish`).
pub(crate) fn target<T: NnElem>(out: &View<T>, inputs: &[&View<T>]) -> Result<(View<T>, bool)> {
    if out.is_contiguous() && !inputs.iter().any(|v| v.numel() > 0 && v.same_storage(out)) {
        return Ok((out.clone(), false));
    }
    Ok((ops::temp_like(out, &out.sizes)?, true))
}

pub(crate) fn finish<T: NnElem>(out: &View<T>, (t, temp): (View<T>, bool)) -> Result<()> {
    if temp { ops::copy::copy(out, &t) } else { Ok(()) }
}

/// The bias as a flat view of `c` elements.
fn flat_bias<T: NnElem>(b: Option<&View<T>>, c: usize) -> Result<Option<View<T>>> {
    b.map(|b| paired(b.clone(), &[c as i64])).transpose()
}

/// `updateOutput` on the device (checked by the caller).
pub(super) fn update_output<T: ConvElem>(
    transposed: bool,
    pl: &Plan,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
) -> Result<()> {
    let out = ops::resize_out(output, &pl.out_shape())?;
    let mut inputs = vec![input, weight];
    inputs.extend(bias);
    let tgt = target(&out, &inputs)?;
    let w = dense(weight)?;
    let b = flat_bias(bias, pl.cout)?;
    if transposed {
        let x = dense(input)?;
        mm_fold(pl, &w, &x, &tgt.0, pl.cout, &pl.osz, b.as_ref())?;
    } else {
        unfold_mm(pl, input, pl.cin, &pl.isz, &w, &tgt.0, b.as_ref())?;
    }
    finish(&out, tgt)
}

/// `updateGradInput` on the device (checked by the caller).
pub(super) fn update_grad_input<T: ConvElem>(
    transposed: bool,
    pl: &Plan,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
) -> Result<()> {
    let gin = ops::resize_out(grad_input, &pl.in_shape())?;
    let tgt = target(&gin, &[grad_output, weight])?;
    let w = dense(weight)?;
    if transposed {
        unfold_mm(pl, grad_output, pl.cout, &pl.osz, &w, &tgt.0, None)?;
    } else {
        let go = dense(grad_output)?;
        mm_fold(pl, &w, &go, &tgt.0, pl.cin, &pl.isz, None)?;
    }
    finish(&gin, tgt)
}

/// `accGradParameters` on the device (checked by the caller, gradWeight holding `nw`
/// elements and gradBias `cout`).
#[allow(clippy::too_many_arguments)] // torch7's arguments, checked
pub(super) fn acc_grad_parameters<T: ConvElem>(
    transposed: bool,
    pl: &Plan,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    nw: usize,
    scale: f64,
) -> Result<()> {
    let sum = ops::temp_like::<T::R, T>(input, &[nw as i64])?;
    if transposed {
        let x = dense(input)?;
        acc(pl, &x, grad_output, pl.cout, &pl.osz, &sum)?;
    } else {
        let go = dense(grad_output)?;
        acc(pl, &go, input, pl.cin, &pl.isz, &sum)?;
    }
    add_scaled(grad_weight, &sum, nw, scale)?;
    if let Some(gb) = grad_bias {
        let plane: usize = pl.osz.iter().product();
        let (n, c) = (pl.n as i64, pl.cout as i64);
        let wide = widened(grad_output)?.reshape_view(&[n, c, plane as i64])?;
        let by_sample = Tensor::new(ops::temp_like::<f64, T>(input, &[n, c])?);
        let sums = Tensor::new(ops::temp_like::<f64, T>(input, &[c])?);
        ops::reduce::sum(&by_sample, &wide, 2, false)?;
        ops::reduce::sum(&sums, &by_sample.view(), 0, false)?;
        let narrowed = ops::temp_like::<T::R, T>(input, &[c])?;
        ops::copy::copy(&narrowed, &sums.view())?;
        add_scaled(gb, &narrowed, pl.cout, scale)?;
    }
    Ok(())
}
