//! The device halves of MultiMargin and MultiLabelMargin (`super::margin` checks and reads the
//! targets on the host first): one thread per frame, the line kernels of `kernels/nn.cuh`
//! (each frame's `dim` scores are its line). The loss of each frame is computed in f64 as the
//! host computes it, and the frames' losses are summed by the device reduction (the host sums
//! blocks of frames: the totals agree within their rounding); the gradients are the host's
//! element by element.

use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::{Call, device_base};
use crate::cuda::lines::{self, LineOperand};
use crate::nn::NnElem;
use crate::nn::activation::paired;
use crate::ops;

/// A line operand over the frames: `v` as `[frames, len]` rows (its first stride walks the
/// frames, its second the line), or one element per frame for a 1-D `v` (`len` 0).
struct Rows {
    base: u64,
    stride: [i64; 1],
    len: i64,
    step: i64,
}

impl Rows {
    fn of<T: Scalar>(v: &View<T>) -> Result<Rows> {
        let base = device_base(v)?;
        Ok(match v.ndim() {
            2 => Rows { base, stride: [v.strides[0]], len: v.sizes[1], step: v.strides[1] },
            _ => Rows { base, stride: [v.strides.first().copied().unwrap_or(0)], len: 0, step: 0 },
        })
    }

    /// A line shared by every frame (the weights).
    fn shared<T: Scalar>(v: &View<T>) -> Result<Rows> {
        Ok(Rows { base: device_base(v)?, stride: [0], len: v.sizes[0], step: v.strides[0] })
    }

    fn operand(&self) -> LineOperand<'_> {
        LineOperand { base: self.base, strides: &self.stride, len: self.len, step: self.step }
    }
}

/// `v` (1-D: one frame; 2-D: frames) as 2-D rows.
fn frames<T: Scalar>(v: &View<T>) -> Result<View<T>> {
    if v.ndim() == 1 { v.unsqueeze1d(0) } else { Ok(v.clone()) }
}

/// Runs line op `call` over `n` frames with `operands` (the first written).
fn run<T: NnElem>(dev: i32, call: &Call, n: usize, operands: &[&Rows]) -> Result<()> {
    let ops: Vec<LineOperand<'_>> = operands.iter().map(|r| r.operand()).collect();
    // SAFETY: every base was checked against its storage on this device by `device_base`; the
    // frames and lines span exactly each view's elements (`n` frames of each operand's line,
    // a one-element-per-frame operand read at its frame's position).
    unsafe { lines::run(dev, call, T::DTYPE, &[n as i64], &ops) }
}

/// `out` resized to `sizes` on its device, or a temporary there when it shares storage with
/// one of `inputs` (the kernels read a frame's inputs while writing its outputs), and whether a
/// copy back is due.
fn written<T: NnElem>(out: &Tensor<T>, sizes: &[i64], inputs: &[&View<T>]) -> Result<(View<T>, View<T>)> {
    let o = ops::resize_out(out, sizes)?;
    let t = if inputs.iter().any(|v| v.same_storage(&o)) { ops::temp_like(&o, sizes)? } else { o.clone() };
    Ok((o, t))
}

fn copy_back<T: NnElem>(o: &View<T>, t: &View<T>) -> Result<()> {
    if o.same_storage(t) && o.offset == t.offset { Ok(()) } else { ops::copy::copy(o, t) }
}

/// `(p == 2, weighted, sizeAverage)` as the kernels' flags.
fn flags(p: i32, weighted: bool, size_average: bool) -> i64 {
    i64::from(p == 2) | (i64::from(weighted) << 1) | (i64::from(size_average) << 2)
}

/// A contiguous `[dim]` view of the weights (torch7 reads them flat).
fn weight_line<T: NnElem>(w: Option<&View<T>>, dim: usize) -> Result<Option<View<T>>> {
    w.map(|w| paired(w.clone(), &[dim as i64])).transpose()
}

/// MultiMargin's loss summed over the frames (checked by the caller: `(nframe, dim)`, targets
/// in range, weights of `dim` elements).
pub(super) fn multi_margin<T: NnElem>(
    dev: i32,
    input: &View<T>,
    target: &View<i64>,
    weights: Option<&View<T>>,
    (nframe, dim): (usize, usize),
    p: i32,
    margin: f64,
) -> Result<f64> {
    if nframe == 0 || dim == 0 {
        return Ok(0.0);
    }
    let x = frames(input)?;
    let t = target.reshape_view(&[nframe as i64])?;
    let w = weight_line(weights, dim)?;
    let loss = ops::temp_like::<f64, T>(input, &[nframe as i64])?;
    let (l, xr, tr) = (Rows::of(&loss)?, Rows::of(&x)?, Rows::of(&t)?);
    let wr = match &w {
        Some(w) => Rows::shared(w)?,
        None => Rows::shared(&x.select(0, 0)?)?,
    };
    let call = Call::new("nnMultiMargin").value(margin).value(flags(p, w.is_some(), false));
    run::<T>(dev, &call, nframe, &[&l, &xr, &tr, &wr])?;
    ops::reduce::sumall(&loss)
}

/// MultiMargin's gradient into `grad_input` (resized to `input`'s shape).
#[allow(clippy::too_many_arguments)] // torch7's arguments
pub(super) fn multi_margin_back<T: NnElem>(
    dev: i32,
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    weights: Option<&View<T>>,
    size_average: bool,
    p: i32,
    margin: f64,
) -> Result<()> {
    let x = frames(input)?;
    let (nframe, dim) = (x.sizes[0] as usize, x.sizes[1] as usize);
    let mut inputs = vec![input];
    inputs.extend(weights);
    let (o, tmp) = written(grad_input, &input.sizes, &inputs)?;
    if nframe == 0 || dim == 0 {
        return Ok(());
    }
    let t = target.reshape_view(&[nframe as i64])?;
    let w = weight_line(weights, dim)?;
    let (or, xr, tr) = (Rows::of(&frames(&tmp)?)?, Rows::of(&x)?, Rows::of(&t)?);
    let wr = match &w {
        Some(w) => Rows::shared(w)?,
        None => Rows::shared(&x.select(0, 0)?)?,
    };
    let call = Call::new("nnMultiMarginBack").value(margin).value(flags(p, w.is_some(), size_average));
    run::<T>(dev, &call, nframe, &[&or, &xr, &tr, &wr])?;
    copy_back(&o, &tmp)
}

/// MultiLabelMargin's loss summed over the frames; `is_target` set to the 0/1 mask of listed
/// classes (resized to `target`'s shape, which is `input`'s).
pub(super) fn multi_label<T: NnElem>(
    dev: i32,
    input: &View<T>,
    target: &View<i64>,
    is_target: &Tensor<T>,
    (nframe, dim): (usize, usize),
) -> Result<f64> {
    let (o, tmp) = written(is_target, &target.sizes, &[input])?;
    if nframe == 0 || dim == 0 {
        return Ok(0.0);
    }
    let loss = ops::temp_like::<f64, T>(input, &[nframe as i64])?;
    let (l, ir) = (Rows::of(&loss)?, Rows::of(&frames(&tmp)?)?);
    let (xr, tr) = (Rows::of(&frames(input)?)?, Rows::of(&frames(target)?)?);
    run::<T>(dev, &Call::new("nnMultiLabel"), nframe, &[&l, &ir, &xr, &tr])?;
    copy_back(&o, &tmp)?;
    ops::reduce::sumall(&loss)
}

/// MultiLabelMargin's gradient into `grad_input` (resized to `input`'s shape) from the mask
/// `is_target` (checked by the caller: `target`'s shape, values in [0, 1]).
pub(super) fn multi_label_back<T: NnElem>(
    dev: i32,
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    is_target: &View<T>,
    size_average: bool,
) -> Result<()> {
    let (o, tmp) = written(grad_input, &input.sizes, &[input, is_target])?;
    let x = frames(input)?;
    if x.sizes[0] == 0 || x.sizes[1] == 0 {
        return Ok(());
    }
    let (or, xr) = (Rows::of(&frames(&tmp)?)?, Rows::of(&x)?);
    let (ir, tr) = (Rows::of(&frames(is_target)?)?, Rows::of(&frames(target)?)?);
    let call = Call::new("nnMultiLabelBack").value(i64::from(size_average));
    run::<T>(dev, &call, x.sizes[0] as usize, &[&or, &xr, &ir, &tr])?;
    copy_back(&o, &tmp)
}
