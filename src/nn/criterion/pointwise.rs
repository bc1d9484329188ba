//! The elementwise criterions: `output` = sum (or mean, with `sizeAverage`) over the pairs
//! (`input[i]`, `target[i]`) of a loss term, `gradInput[i]` its derivative in `input[i]`
//! (divided by the element count with `sizeAverage`). `input` and `target` are paired in
//! row-major order and must hold as many elements; `gradInput` takes `input`'s shape.

use super::{NnReal, average, map_chunks, norm, set_scalar, sum_f64};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;

/// `output` = the sum (mean with `size_average`) of `term(input[i], target[i])`.
fn pair_loss<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
    term: impl Fn(T, T) -> f64 + Sync,
) -> Result<()> {
    check::same_numel(target, 3, "target", input, "input")?;
    let n = input.numel();
    let sum = {
        let x = buf::read(input, &[])?;
        let y = buf::read(target, &[])?;
        sum_f64(n, |lo, hi| x[lo..hi].iter().zip(&y[lo..hi]).map(|(&a, &b)| term(a, b)).sum())
    };
    set_scalar(output, average(sum, n, size_average))
}

/// `gradInput[i] = grad(input[i], target[i])`, `gradInput` resized to `input`'s shape.
fn pair_grad<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    grad: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    check::same_numel(target, 3, "target", input, "input")?;
    let mut out = Out::new(grad_input, &input.sizes)?;
    let x = buf::read(input, &[out.view()])?;
    let y = buf::read(target, &[out.view()])?;
    map_chunks(out.as_mut(), |lo, s| {
        for ((o, &a), &b) in s.iter_mut().zip(&x[lo..]).zip(&y[lo..]) {
            *o = grad(a, b);
        }
    });
    out.finish()
}

/// `d / n`-style sign: `n` for `d > 0`, `-n` for `d < 0`, 0 for `d = 0` (NaN stays NaN).
#[inline(always)]
fn signed<T: NnReal>(d: T, n: T) -> T {
    if d > T::zero() {
        n
    } else if d < T::zero() {
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
fn sigmoid<T: NnReal>(v: T) -> T {
    if v >= T::zero() {
        T::one() / (T::one() + (-v).exp())
    } else {
        let e = v.exp();
        e / (T::one() + e)
    }
}

/// `AbsCriterion_updateOutput`: `|input - target|` summed (averaged).
pub fn abs_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, |a, b| (a.to_f64() - b.to_f64()).abs())
}

/// `AbsCriterion_updateGradInput`: `sign(input - target)` (0 where they are equal), over n
/// with `sizeAverage`.
pub fn abs_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let n = norm::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, |a, b| signed(a - b, n))
}

/// `MSECriterion_updateOutput`: `(input - target)^2` summed (averaged).
pub fn mse_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, |a, b| {
        let d = a.to_f64() - b.to_f64();
        d * d
    })
}

/// `MSECriterion_updateGradInput`: `2 (input - target)`, over n with `sizeAverage`.
pub fn mse_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let n2 = T::from_f64(2.0) * norm::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, |a, b| n2 * (a - b))
}

/// `SmoothL1Criterion_updateOutput`: with `z = |input - target|`, `z^2 / 2` for `z < 1`, else
/// `z - 1/2`, summed (averaged).
pub fn smooth_l1_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, |a, b| {
        let z = (a.to_f64() - b.to_f64()).abs();
        if z < 1.0 { 0.5 * z * z } else { z - 0.5 }
    })
}

/// `SmoothL1Criterion_updateGradInput`: `input - target` clamped to [-1, 1], over n with
/// `sizeAverage`.
pub fn smooth_l1_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let n = norm::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, |a, b| {
        let d = a - b;
        if d < -T::one() {
            -n
        } else if d > T::one() {
            n
        } else {
            n * d
        }
    })
}

/// `SoftMarginCriterion_updateOutput`: `log(1 + exp(-input * target))` summed (averaged),
/// computed without overflow.
pub fn soft_margin_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, |a, b| softplus(-(a.to_f64() * b.to_f64())))
}

/// `SoftMarginCriterion_updateGradInput`: `-target * sigmoid(-input * target)`, over n with
/// `sizeAverage`.
pub fn soft_margin_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let n = norm::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, |a, b| -n * b * sigmoid(-(a * b)))
}

/// `MarginCriterion_updateOutput`: `max(0, margin - input * target)` summed (averaged);
/// `margin` is rounded to the element type first, as in torch7.
pub fn margin_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
    margin: f64,
) -> Result<()> {
    let m = T::from_f64(margin).to_f64();
    pair_loss(input, target, output, size_average, |a, b| (m - a.to_f64() * b.to_f64()).max(0.0))
}

/// `MarginCriterion_updateGradInput`: `-target` where `input * target < margin`, else 0, over n
/// with `sizeAverage`.
pub fn margin_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
    margin: f64,
) -> Result<()> {
    let n = norm::<T>(input.numel(), size_average);
    let m = T::from_f64(margin);
    pair_grad(input, target, grad_input, |a, b| if a * b < m { -n * b } else { T::zero() })
}

/// `DistKLDivCriterion_updateOutput`: `target * (log(target) - input)` where `target > 0`
/// (0 elsewhere), summed (averaged over all elements).
pub fn dist_kl_div_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    pair_loss(input, target, output, size_average, |a, b| {
        let y = b.to_f64();
        if y > 0.0 { y * (y.ln() - a.to_f64()) } else { 0.0 }
    })
}

/// `DistKLDivCriterion_updateGradInput`: `-target` where `target > 0`, else 0, over n with
/// `sizeAverage`.
pub fn dist_kl_div_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let n = norm::<T>(input.numel(), size_average);
    pair_grad(input, target, grad_input, |_, b| if b > T::zero() { -n * b } else { T::zero() })
}

/// BCE's checks: `target` (argument 3) and `weights` (argument 6, optional) hold as many
/// elements as `input`.
fn bce_check<T: NnReal>(input: &View<T>, target: &View<T>, weights: Option<&View<T>>) -> Result<()> {
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
pub fn bce_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    output: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
) -> Result<()> {
    bce_check(input, target, weights)?;
    let n = input.numel();
    let sum = {
        let x = buf::read(input, &[])?;
        if let Some(i) = x.iter().position(|&v| !(v >= T::zero() && v <= T::one())) {
            return Err(check::invalid(
                2,
                "input",
                format_args!("element {i} is {}, expected a probability in [0, 1]", x[i].to_f64()),
            ));
        }
        let y = buf::read(target, &[])?;
        let w = weights.map(|w| buf::read(w, &[])).transpose()?;
        let term = |a: T, b: T| {
            let (x, y) = (a.to_f64(), b.to_f64());
            -(y * x.ln().max(BCE_LOG_MIN) + (1.0 - y) * (-x).ln_1p().max(BCE_LOG_MIN))
        };
        sum_f64(n, |lo, hi| {
            let xy = x[lo..hi].iter().zip(&y[lo..hi]);
            match &w {
                Some(w) => xy.zip(&w[lo..hi]).map(|((&a, &b), &c)| c.to_f64() * term(a, b)).sum(),
                None => xy.map(|(&a, &b)| term(a, b)).sum(),
            }
        })
    };
    set_scalar(output, average(sum, n, size_average))
}

/// `BCECriterion_updateGradInput`: `w * (input - target) / max(input * (1 - input), 1e-12)`, over
/// n with `sizeAverage` (PyTorch's formula; torch7 adds 1e-12 to each factor instead).
pub fn bce_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<T>,
    grad_input: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
) -> Result<()> {
    bce_check(input, target, weights)?;
    let n = norm::<T>(input.numel(), size_average);
    let eps = T::from_f64(1e-12);
    let mut out = Out::new(grad_input, &input.sizes)?;
    let x = buf::read(input, &[out.view()])?;
    let y = buf::read(target, &[out.view()])?;
    let w = weights.map(|w| buf::read(w, &[out.view()])).transpose()?;
    let grad = |a: T, b: T| {
        let d = (T::one() - a) * a;
        n * (a - b) / if d > eps { d } else { eps }
    };
    map_chunks(out.as_mut(), |lo, s| {
        let xy = x[lo..].iter().zip(&y[lo..]);
        match &w {
            Some(w) => {
                for ((o, (&a, &b)), &c) in s.iter_mut().zip(xy).zip(&w[lo..]) {
                    *o = c * grad(a, b);
                }
            }
            None => {
                for (o, (&a, &b)) in s.iter_mut().zip(xy) {
                    *o = grad(a, b);
                }
            }
        }
    });
    out.finish()
}

/// `L1Cost_updateOutput`: `sum |input|` (no averaging).
pub fn l1_cost_update_output<T: NnReal>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    let n = input.numel();
    let sum = {
        let x = buf::read(input, &[])?;
        sum_f64(n, |lo, hi| x[lo..hi].iter().map(|&a| a.to_f64().abs()).sum())
    };
    set_scalar(output, sum)
}

/// `L1Cost_updateGradInput`: `sign(input)` (0 at 0). `gradOutput` may be NULL (torch7's Lua
/// passes NULL); when given it must hold as many elements as `input`, and its values are not
/// used (torch7's rule: the criterion's gradient is taken with respect to its scalar output).
pub fn l1_cost_update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: Option<&View<T>>,
    grad_input: &Tensor<T>,
) -> Result<()> {
    if let Some(g) = grad_output {
        check::same_numel(g, 3, "gradOutput", input, "input")?;
    }
    let mut out = Out::new(grad_input, &input.sizes)?;
    let x = buf::read(input, &[out.view()])?;
    map_chunks(out.as_mut(), |lo, s| {
        for (o, &a) in s.iter_mut().zip(&x[lo..]) {
            *o = signed(a, T::one());
        }
    });
    out.finish()
}
