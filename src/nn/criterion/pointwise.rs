//! The elementwise criterions: `output` = sum (or mean, with `sizeAverage`) over the pairs
//! (`input[i]`, `target[i]`) of a loss term, `gradInput[i]` its derivative in `input[i]`
//! (divided by the element count with `sizeAverage`). `input` and `target` are paired in
//! row-major order and must hold as many elements; `gradInput` takes `input`'s shape.
//!
//! Both engines: the loss terms are summed in f64 (`pair_sum`; on the device by kernels of the
//! same expressions over f64 copies), the gradients are elementwise in the compute type
//! (`pair_grad`: the pointwise engine, a device kernel beside each closure).

use super::{NnElem, average, norm, pair_sum, set_scalar};
use crate::core::allocator::Device;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::exec::backend::Backend;
use crate::nn::activation::paired;
use crate::nn::{NnReal, check, one, zero};
use crate::ops::num::Num;
use crate::ops::{self, reduce};

/// `output` = the sum (mean with `size_average`) of `term(input[i], target[i])`.
fn pair_loss<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
    call: Call,
    term: impl Fn(f64, f64) -> f64 + Sync,
) -> Result<()> {
    check::same_numel(target, 3, "target", input, "input")?;
    Backend::of(&[input.device(), target.device(), output.with_view(|v| v.device())])?;
    let sum = pair_sum(input, Some(target), None, call, term)?;
    set_scalar(output, average(sum, input.numel(), size_average))
}

/// `gradInput[i] = grad(input[i], target[i])` in the compute type, `gradInput` resized to
/// `input`'s shape.
fn pair_grad<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    call: Call,
    grad: impl Fn(T::R, T::R) -> T::R + Sync,
) -> Result<()> {
    check::same_numel(target, 3, "target", input, "input")?;
    let y = paired(target.clone(), &input.sizes)?;
    ops::pointwise2(grad_input, input, &y, call, move |a: T, b: T| T::from_r(grad(a.to_r(), b.to_r())))
}

/// `1/n` with `sizeAverage` (else 1) as a kernel's value and in the compute type.
fn scale<T: NnElem>(numel: usize, size_average: bool) -> (T, T::R) {
    let n = norm::<T>(numel, size_average);
    (n, n.to_r())
}

/// `d / n`-style sign: `n` for `d > 0`, `-n` for `d < 0`, 0 for `d = 0` (NaN stays NaN).
#[inline(always)]
fn signed<R: NnReal>(d: R, n: R) -> R {
    if d > R::zero() {
        n
    } else if d < R::zero() {
        -n
    } else {
        d * n
    }
}

/// `log(1 + exp(v))` without overflow.
#[inline(always)]
fn softplus(v: f64) -> f64 {
    v.max(0.0) + (-v.abs()).exp().ln_1p()
}

/// `1 / (1 + exp(-v))` without overflow.
#[inline(always)]
fn sigmoid<R: NnReal>(v: R) -> R {
    if v >= R::zero() {
        R::one() / (R::one() + (-v).exp())
    } else {
        let e = v.exp();
        e / (R::one() + e)
    }
}

/// `AbsCriterion_updateOutput`: `|input - target|` summed (averaged).
pub fn abs_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, Call::new("nnAbsCrit"), |a, b| (a - b).abs())
}

/// `AbsCriterion_updateGradInput`: `sign(input - target)` (0 where they are equal), over n
/// with `sizeAverage`.
pub fn abs_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let (k, n) = scale::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, Call::new("nnAbsCritBack").value(k), move |a, b| signed(a - b, n))
}

/// `MSECriterion_updateOutput`: `(input - target)^2` summed (averaged).
pub fn mse_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, Call::new("nnMseCrit"), |a, b| (a - b) * (a - b))
}

/// `MSECriterion_updateGradInput`: `2 (input - target)`, over n with `sizeAverage`.
pub fn mse_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let k = T::from_f64(2.0 * if size_average { 1.0 / input.numel() as f64 } else { 1.0 });
    let n2 = k.to_r();
    pair_grad(input, target, grad_input, Call::new("nnMseCritBack").value(k), move |a, b| n2 * (a - b))
}

/// `SmoothL1Criterion_updateOutput`: with `z = |input - target|`, `z^2 / 2` for `z < 1`, else
/// `z - 1/2`, summed (averaged).
pub fn smooth_l1_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, Call::new("nnSmoothL1Crit"), |a, b| {
        let z = (a - b).abs();
        if z < 1.0 { 0.5 * z * z } else { z - 0.5 }
    })
}

/// `SmoothL1Criterion_updateGradInput`: `input - target` clamped to [-1, 1], over n with
/// `sizeAverage`.
pub fn smooth_l1_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let (k, n) = scale::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, Call::new("nnSmoothL1CritBack").value(k), move |a, b| {
        let d = a - b;
        if d < -one(d) {
            -n
        } else if d > one(d) {
            n
        } else {
            n * d
        }
    })
}

/// `SoftMarginCriterion_updateOutput`: `log(1 + exp(-input * target))` summed (averaged),
/// computed without overflow.
pub fn soft_margin_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, Call::new("nnSoftMarginCrit"), |a, b| softplus(-(a * b)))
}

/// `SoftMarginCriterion_updateGradInput`: `-target * sigmoid(-input * target)`, over n with
/// `sizeAverage`.
pub fn soft_margin_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let (k, n) = scale::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, Call::new("nnSoftMarginCritBack").value(k), move |a, b| {
        -n * b * sigmoid(-(a * b))
    })
}

/// `MarginCriterion_updateOutput`: `max(0, margin - input * target)` summed (averaged);
/// `margin` is rounded to the element type first, as in torch7.
pub fn margin_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
    margin: f64,
) -> Result<()> {
    let m = T::from_f64(margin).to_f64();
    pair_loss(input, target, output, size_average, Call::new("nnMarginCrit").value(m), move |a, b| (m - a * b).max(0.0))
}

/// `MarginCriterion_updateGradInput`: `-target` where `input * target < margin`, else 0, over n
/// with `sizeAverage`.
pub fn margin_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
    margin: f64,
) -> Result<()> {
    let (k, n) = scale::<T>(input.numel(), size_average);
    let mt = T::from_f64(margin);
    let m = mt.to_r();
    let call = Call::new("nnMarginCritBack").value(k).value(mt);
    pair_grad(input, target, grad_input, call, move |a, b| if a * b < m { -n * b } else { zero(a) })
}

/// `DistKLDivCriterion_updateOutput`: `target * (log(target) - input)` where `target > 0`
/// (0 elsewhere), summed (averaged over all elements).
pub fn dist_kl_div_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, Call::new("nnKlDivCrit"), |a, y| {
        if y > 0.0 { y * (y.ln() - a) } else { 0.0 }
    })
}

/// `DistKLDivCriterion_updateGradInput`: `-target` where `target > 0`, else 0, over n with
/// `sizeAverage`.
pub fn dist_kl_div_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let (k, n) = scale::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, Call::new("nnKlDivCritBack").value(k), move |_, b| {
        if b > zero(b) { -n * b } else { zero(b) }
    })
}

/// BCE's checks: `target` (argument 3) and `weights` (argument 6, optional) hold as many
/// elements as `input`.
fn bce_check<T: NnElem>(input: &View<T>, target: &View<T>, weights: Option<&View<T>>) -> Result<()> {
    check::same_numel(target, 3, "target", input, "input")?;
    if let Some(w) = weights {
        check::same_numel(w, 6, "weights", input, "input")?;
    }
    Ok(())
}

/// PyTorch's floor for BCE's logarithms.
const BCE_LOG_MIN: f64 = -100.0;

/// `BCECriterion_updateOutput`: `-w * (target * log(input) + (1 - target) * log(1 - input))`
/// summed (averaged), each logarithm clamped below at -100 as PyTorch does (torch7 adds 1e-12
/// inside them instead). Every `input` must lie in [0, 1] (else an error naming `input`).
pub fn bce_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
) -> Result<()> {
    bce_check(input, target, weights)?;
    let mut devices = vec![input.device(), target.device(), output.with_view(|v| v.device())];
    devices.extend(weights.map(|w| w.device()));
    Backend::of(&devices)?;
    probabilities(input)?;
    let term = |x: f64, y: f64| -(y * x.ln().max(BCE_LOG_MIN) + (1.0 - y) * (-x).ln_1p().max(BCE_LOG_MIN));
    let sum = pair_sum(input, Some(target), weights, Call::new("nnBceCrit"), term)?;
    set_scalar(output, average(sum, input.numel(), size_average))
}

/// BCE's `input` check: every element in [0, 1] (else an error naming the first one that is
/// not). On the device: its min and max reduced there, the elements copied to the host only to
/// word an error.
fn probabilities<T: NnElem>(input: &View<T>) -> Result<()> {
    let bad = |v: f64| !(0.0..=1.0).contains(&v);
    if let Device::Cuda(_) = input.device() {
        if input.numel() == 0 {
            return Ok(());
        }
        let (lo, hi) = (reduce::minall(input)?.to_f64(), reduce::maxall(input)?.to_f64());
        if !bad(lo) && !bad(hi) {
            return Ok(());
        }
    }
    let host = if let Device::Cuda(_) = input.device() {
        let h = View::contiguous(&input.sizes)?;
        ops::copy::copy(&h, input)?;
        h.to_vec()?
    } else {
        crate::nn::buf::read(input, &[])?.into_owned()
    };
    match host.iter().position(|v| bad(v.to_f64())) {
        Some(i) => Err(check::invalid(
            2,
            "input",
            format_args!("element {i} is {}, expected a probability in [0, 1]", host[i].to_f64()),
        )),
        None => Ok(()),
    }
}

/// `BCECriterion_updateGradInput`: `w * (input - target) / max(input * (1 - input), 1e-12)`, over
/// n with `sizeAverage` (PyTorch's formula; torch7 adds 1e-12 to each factor instead).
pub fn bce_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
) -> Result<()> {
    bce_check(input, target, weights)?;
    let (k, n) = scale::<T>(input.numel(), size_average);
    let grad = move |a: T::R, b: T::R| {
        let (d, eps) = ((one(a) - a) * a, T::R::from_f64(1e-12));
        n * (a - b) / if d > eps { d } else { eps }
    };
    let Some(w) = weights else {
        return pair_grad(input, target, grad_input, Call::new("nnBceCritBack").value(k), grad);
    };
    let (y, w) = (paired(target.clone(), &input.sizes)?, paired(w.clone(), &input.sizes)?);
    ops::pointwise3(grad_input, input, &y, &w, Call::new("nnBceCritBackW").value(k), move |a: T, b: T, c: T| {
        T::from_r(c.to_r() * grad(a.to_r(), b.to_r()))
    })
}

/// `L1Cost_updateOutput`: `sum |input|` (no averaging).
pub fn l1_cost_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    Backend::of(&[input.device(), output.with_view(|v| v.device())])?;
    let sum = pair_sum(input, None, None, Call::new("abs"), |a, _| a.abs())?;
    set_scalar(output, sum)
}

/// `L1Cost_updateGradInput`: `sign(input)` (0 at 0). `gradOutput` may be NULL (torch7's Lua
/// passes NULL); when given it must hold as many elements as `input`, and its values are not
/// used (torch7's rule: the criterion's gradient is taken with respect to its scalar output).
pub fn l1_cost_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: Option<&View<T>>,
    grad_input: &Tensor<T>,
) -> Result<()> {
    if let Some(g) = grad_output {
        check::same_numel(g, 3, "gradOutput", input, "input")?;
    }
    ops::pointwise1(grad_input, input, Call::new("nnL1CostBack"), |a: T| {
        let r = a.to_r();
        T::from_r(signed(r, one(r)))
    })
}
