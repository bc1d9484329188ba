//! Criterions (losses): a scalar `output` from `input` and `target`, and `gradInput`, the
//! gradient of that scalar with respect to `input` (criterions take no `gradOutput`: it is 1).
//!
//! - Elementwise ([`pointwise`]): Abs, MSE, SmoothL1, SoftMargin, Margin, BCE, DistKLDiv, L1Cost.
//!   `input` and `target` pair their elements in row-major order and must hold as many
//!   elements (their shapes may differ, as in torch7).
//! - Class targets ([`class_nll`]): ClassNLL (1-D or 2-D input) and SpatialClassNLL (N x C x H
//!   x W input).
//! - Margins over classes ([`margin`]): MultiMargin and MultiLabelMargin.
//!
//! Conventions of the family:
//! - `output` (and ClassNLL's `total_weight`) is resized to a 1-element 1-D tensor. Sums are
//!   kept in f64 (torch7's `accreal`), cast to the element type once at the end.
//! - `sizeAverage` divides by the number of elements (by the total weight for ClassNLL, by the
//!   number of frames for the multi-class margins), as PyTorch's `reduction='mean'`; a mean over
//!   nothing is 0/0 = NaN, as in PyTorch.
//! - Class targets are 0-based `THLongTensor`s; a target out of range is an index error naming
//!   the target argument, raised before any output is touched.
//! - `gradInput` is resized to `input`'s shape and every element is written (torch7's ClassNLL
//!   needs the caller to resize and zero it; th does both).
//! - Sums are taken over fixed blocks whose partial sums are added in block order, so results
//!   do not depend on the number of threads.

pub mod class_nll;
mod device;
pub mod margin;
pub mod pointwise;

use super::buf;
use super::check;
use super::{NnElem, NnReal, widened};
use crate::core::allocator::Device;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::ops::num::Num;
use crate::ops::{self, arith};

/// Items (elements or rows) per block of a parallel sum or map.
const BLOCK: usize = 8192;

/// The sum over `[0, n)` of `f(lo, hi)` taken on the fixed blocks `[k * block, (k + 1) * block)`
/// and combined with `add` in block order (so independent of the thread count); blocks run in
/// parallel when `work` (elements touched in all) is large enough.
fn block_sum<A: Copy + Default + Send + Sync>(
    n: usize,
    block: usize,
    work: usize,
    f: impl Fn(usize, usize) -> A + Sync,
    add: impl Fn(A, A) -> A,
) -> A {
    let block = block.max(1);
    let blocks = n.div_ceil(block);
    if blocks <= 1 {
        return f(0, n);
    }
    let mut parts = vec![A::default(); blocks];
    buf::par_chunks(&mut parts, 1, work, |k, p| {
        if let Some(p) = p.first_mut() {
            *p = f(k * block, ((k + 1) * block).min(n));
        }
    });
    parts.into_iter().fold(A::default(), add)
}

/// Rows of `len` items in a block of about `BLOCK` items (at least one row).
fn rows_per_block(len: usize) -> usize {
    BLOCK.checked_div(len).unwrap_or(BLOCK).max(1)
}

/// A plain f64 sum over elements, by [`block_sum`].
fn sum_f64(n: usize, f: impl Fn(usize, usize) -> f64 + Sync) -> f64 {
    block_sum(n, BLOCK, n, f, |a, b| a + b)
}

/// Stores `v` into `output` resized to one element.
/// `output` resized to one element holding `v` rounded to the element type, on the engine where
/// it lives (callers checked that it is where the inputs are).
fn set_scalar<T: Num>(output: &Tensor<T>, v: f64) -> Result<()> {
    ops::resize_out(output, &[1])?;
    arith::fill(output, T::from_f64(v))
}

/// `sum term(x_i, y_i)` (times `w_i` when given; `y_i` = 0 without `y`) in f64 over the
/// elements paired in row-major order, where the operands live. Host: blocks summed in f64.
/// Device: the operands widened to f64 there, the terms by `call`'s kernel (the same
/// expression; one input without `y`), summed by the device reduction (another order: the sums
/// agree within their rounding).
fn pair_sum<T: NnElem>(
    x: &View<T>,
    y: Option<&View<T>>,
    w: Option<&View<T>>,
    call: Call,
    term: impl Fn(f64, f64) -> f64 + Sync,
) -> Result<f64> {
    let n = x.numel();
    if let Device::Cuda(_) = x.device() {
        let terms = Tensor::new(ops::temp_like::<f64, T>(x, &[n as i64])?);
        match y {
            Some(y) => ops::pointwise2(&terms, &widened(x)?, &widened(y)?, call, &term)?,
            None => ops::pointwise1(&terms, &widened(x)?, call, |a: f64| term(a, 0.0))?,
        }
        if let Some(w) = w {
            ops::pointwise2(&terms, &terms.view(), &widened(w)?, Call::new("cmul"), |a: f64, b: f64| a * b)?;
        }
        return ops::reduce::sumall(&terms.view());
    }
    let xs = buf::read(x, &[])?;
    let ys = y.map(|y| buf::read(y, &[])).transpose()?;
    let ws = w.map(|w| buf::read(w, &[])).transpose()?;
    let y_at = |i: usize| ys.as_ref().map_or(0.0, |y| y[i].to_f64());
    Ok(sum_f64(n, |lo, hi| match &ws {
        Some(w) => (lo..hi).map(|i| w[i].to_f64() * term(xs[i].to_f64(), y_at(i))).sum(),
        None => (lo..hi).map(|i| term(xs[i].to_f64(), y_at(i))).sum(),
    }))
}

/// A view's elements in row-major order on the host (copied from the device when there).
pub(super) fn host_vec<T: crate::core::dtype::Scalar>(v: &View<T>) -> Result<Vec<T>> {
    if let Device::Cuda(_) = v.device() {
        let h = View::contiguous(&v.sizes)?;
        ops::copy::copy(&h, v)?;
        return h.to_vec();
    }
    Ok(buf::read(v, &[])?.into_owned())
}

fn average(sum: f64, n: usize, size_average: bool) -> f64 {
    if size_average { sum / n as f64 } else { sum }
}

/// The gradient's scale: `1 / n` when `size_average`, else 1, in the element type.
fn norm<T: Num>(n: usize, size_average: bool) -> T {
    T::from_f64(if size_average { 1.0 / n as f64 } else { 1.0 })
}

/// The class targets (argument 3) of a 1-D or 2-D `input` (dimensions checked by the caller):
/// one class index for a 1-D input (0-D or one element 1-D), one per row of a 2-D one.
fn class_target<T: crate::core::dtype::Scalar>(input: &View<T>, target: &View<i64>) -> Result<()> {
    if input.ndim() == 2 {
        check::shape(target, 3, "target", &input.sizes[..1])
    } else if target.ndim() > 1 || target.numel() != 1 {
        Err(check::size_err(
            3,
            "target",
            format_args!("expected one class index for a 1-D input, got {}", target.desc()),
        ))
    } else {
        Ok(())
    }
}
