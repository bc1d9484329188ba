//! The device halves of the activations that do not run on the pointwise engine alone: SoftMax
//! and LogSoftMax over torch7's dimension, one line kernel per pass (`kernels/nn.cuh`), every
//! line along the normalized dimension walked by one thread (positions of the other dimensions
//! are the items, so over a 3-D/4-D input's h x w neighbouring threads read neighbouring
//! elements); PReLU's weight gradient (terms in f64, the device's dim reductions).

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::{Call, device_base};
use crate::cuda::lines::{self, LineOperand};
use crate::exec::backend::Backend;
use crate::nn::activation::paired;
use crate::nn::{NnElem, check, widened};
use crate::ops;

/// The normalized dimension of a 1-D to 4-D shape (torch7's rule: 0 for 1-D and 3-D, else 1).
pub(super) fn softmax_dim(ndim: usize) -> usize {
    if ndim == 1 || ndim == 3 { 0 } else { 1 }
}

/// `sizes` or `strides` without dimension `d`.
fn without(v: &[i64], d: usize) -> Vec<i64> {
    v.iter().enumerate().filter(|&(i, _)| i != d).map(|(_, &x)| x).collect()
}

/// `out` (resized to `shape`) on `dev`, or a temporary there when `out` shares storage with one
/// of `inputs` in another layout (the kernels read a line whole before writing it, so only
/// identical views may alias).
fn output<T: NnElem>(out: &View<T>, inputs: &[&View<T>]) -> Result<Option<View<T>>> {
    let aliased = inputs.iter().any(|v| v.same_storage(out) && (v.offset != out.offset || v.strides != out.strides));
    Ok(if aliased { Some(ops::temp_like(out, &out.sizes)?) } else { None })
}

/// Runs line op `call` with operands `views` (the first written) along dimension `d`.
fn run<T: NnElem>(dev: i32, call: &Call, views: &[&View<T>], d: usize) -> Result<()> {
    let shape = without(&views[0].sizes, d);
    let strides: Vec<Vec<i64>> = views.iter().map(|v| without(&v.strides, d)).collect();
    let ops: Vec<LineOperand<'_>> = views
        .iter()
        .zip(&strides)
        .map(|(v, st)| Ok(LineOperand { base: device_base(v)?, strides: st, len: v.sizes[d], step: v.strides[d] }))
        .collect::<Result<_>>()?;
    // SAFETY: every operand's address was checked against its storage on this device by
    // `device_base`; the items and lines span exactly each view's elements (all of one shape).
    unsafe { lines::run(dev, call, T::DTYPE, &shape, &ops) }
}

/// The forward pass on device `dev` (input checked 1-D to 4-D by the caller).
pub(super) fn softmax<T: NnElem>(dev: i32, input: &View<T>, output: &Tensor<T>, log: bool) -> Result<()> {
    Backend::of(&[input.device(), output.with_view(|v| v.device())])?;
    let out = ops::resize_out(output, &input.sizes)?;
    let tmp = self::output(&out, &[input])?;
    let o = tmp.as_ref().unwrap_or(&out);
    run(dev, &Call::new("nnSoftMax").value(i64::from(log)), &[o, input], softmax_dim(input.ndim()))?;
    if let Some(t) = &tmp { ops::copy::copy(&out, t) } else { Ok(()) }
}

/// The backward pass on device `dev` from `y` (output) and `g` (gradOutput), checked to have one
/// 1-D to 4-D shape by the caller.
pub(super) fn softmax_back<T: NnElem>(
    dev: i32,
    y: &View<T>,
    g: &View<T>,
    grad_input: &Tensor<T>,
    log: bool,
) -> Result<()> {
    Backend::of(&[y.device(), g.device(), grad_input.with_view(|v| v.device())])?;
    let out = ops::resize_out(grad_input, &y.sizes)?;
    let tmp = self::output(&out, &[y, g])?;
    let o = tmp.as_ref().unwrap_or(&out);
    run(dev, &Call::new("nnSoftMaxBack").value(i64::from(log)), &[o, y, g], softmax_dim(y.ndim()))?;
    if let Some(t) = &tmp { ops::copy::copy(&out, t) } else { Ok(()) }
}

/// PReLU's `accGradParameters` on the device: `gradWeight[p] += scale * sum(x * g)` over plane
/// p's elements with `x <= 0` (every element into `gradWeight[0]` without planes). The terms are
/// computed in f64 from f64 copies, summed over each plane by the device reductions (in f64),
/// rounded to the element type and added as the host adds them (`w + scale * s`).
pub(super) fn prelu_acc<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    layout: Option<(usize, usize, usize)>,
    scale: f64,
) -> Result<()> {
    let gw = grad_weight.view();
    Backend::of(&[input.device(), grad_output.device(), gw.device()])?;
    let (batch, planes, ks) = layout.unwrap_or((1, 1, input.numel()));
    check::numel(&gw, 6, "gradWeight", planes)?;
    let n = input.numel() as i64;
    let terms = Tensor::new(ops::temp_like::<f64, T>(input, &[n])?);
    let g = crate::nn::activation::paired(grad_output.clone(), &input.sizes)?;
    ops::pointwise2(&terms, &widened(input)?, &widened(&g)?, Call::new("nnPreluTerm"), |x: f64, g: f64| {
        if x <= 0.0 { x * g } else { 0.0 }
    })?;
    let t3 = terms.view().reshape_view(&[batch as i64, planes as i64, ks as i64])?;
    let by_pos = Tensor::new(ops::temp_like::<f64, T>(input, &[batch as i64, planes as i64])?);
    let sums = Tensor::new(ops::temp_like::<f64, T>(input, &[planes as i64])?);
    ops::reduce::sum(&by_pos, &t3, 2, false)?;
    ops::reduce::sum(&sums, &by_pos.view(), 0, false)?;
    let rounded = Tensor::new(ops::temp_like::<T, T>(&gw, &[planes as i64])?);
    ops::copy::copy(&rounded.view(), &sums.view())?;
    // gradWeight as a vector: itself or a reshaped view (same memory), else a copy written back
    let g = paired(gw.clone(), &[planes as i64])?;
    let sc = T::from_f64(scale);
    ops::pointwise2(&Tensor::new(g.clone()), &g, &rounded.view(), Call::new("cadd").value(sc), move |w: T, s: T| {
        T::from_r(w.to_r() + sc.to_r() * s.to_r())
    })?;
    if g.same_storage(&gw) { Ok(()) } else { ops::copy::copy(&gw, &g) }
}
