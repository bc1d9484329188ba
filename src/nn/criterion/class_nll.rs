//! ClassNLL and SpatialClassNLL: the negative log-likelihood of class targets given
//! log-probabilities, `output = -sum_i w[t_i] * input[i, t_i]`, with `total_weight = sum_i
//! w[t_i]` (`w` = `weights`, or 1 for every class). With `sizeAverage` the output is divided by
//! `total_weight` (PyTorch's `reduction='mean'`): when every target is ignored that is 0/0 =
//! NaN, as in PyTorch (torch7 returns 0). Targets are 0-based; ClassNLL skips the targets equal
//! to `ignore_index`.
//!
//! The gradient is `-w[t_i] / total_weight` (`sizeAverage`) or `-w[t_i]` at each (i, t_i) and 0
//! elsewhere; `total_weight` is the one `updateOutput` stored. torch7 leaves `gradInput` to the
//! caller to resize and zero and returns early when `total_weight <= 0`; th resizes it to
//! `input`'s shape, writes every element, and divides as PyTorch does.

use super::{BLOCK, NnReal, block_sum, class_target, rows_per_block, set_scalar};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;

/// The layout of a call: `n` samples of `c` classes, each class a plane of `hw` positions
/// (`hw` = 1 for ClassNLL); input element (b, k, e) is at `(b * c + k) * hw + e`, target
/// element (b, e) at `b * hw + e`.
#[derive(Clone, Copy)]
struct Layout {
    c: usize,
    hw: usize,
}

/// `(sum of -w[t] * x[t], sum of w[t])` over the targets that are not `ignore`.
fn nll_sums<T: NnReal>(x: &[T], tg: &[i64], w: Option<&[T]>, l: Layout, ignore: Option<i64>) -> (f64, f64) {
    let Layout { c, hw } = l;
    if hw == 0 || c == 0 {
        // No position, or no class (then every target is `ignore`: checked).
        return (0.0, 0.0);
    }
    let n = tg.len() / hw;
    let add = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1 + b.1);
    if hw == 1 {
        // ClassNLL: one target per row of c log-probabilities.
        let rows = |lo: usize, hi: usize| {
            let (mut s, mut tw) = (0.0f64, 0.0f64);
            for (xs, &t) in x[lo * c..hi * c].chunks_exact(c).zip(&tg[lo..hi]) {
                if Some(t) == ignore {
                    continue;
                }
                let t = t as usize;
                let wt = w.map_or(1.0, |w| w[t].to_f64());
                tw += wt;
                s -= xs[t].to_f64() * wt;
            }
            (s, tw)
        };
        return block_sum(n, BLOCK, 4 * n, rows, add);
    }
    let plane = c * hw;
    let rows = |lo: usize, hi: usize| {
        let (mut s, mut tw) = (0.0f64, 0.0f64);
        for b in lo..hi {
            let xs = &x[b * plane..(b + 1) * plane];
            for (e, &t) in tg[b * hw..(b + 1) * hw].iter().enumerate() {
                if Some(t) == ignore {
                    continue;
                }
                let t = t as usize;
                let wt = w.map_or(1.0, |w| w[t].to_f64());
                tw += wt;
                s -= xs[t * hw + e].to_f64() * wt;
            }
        }
        (s, tw)
    };
    block_sum(n, rows_per_block(hw), 4 * n * hw, rows, add)
}

/// Fills `o` (n x c x hw) with the gradient: 0, and `-w[t] / div` at each target not `ignore`.
fn nll_grad<T: NnReal>(o: &mut [T], tg: &[i64], w: Option<&[T]>, l: Layout, ignore: Option<i64>, div: f64) {
    let Layout { c, hw } = l;
    let plane = c * hw;
    let work = o.len();
    buf::par_chunks(o, plane, work, |b, s| {
        s.fill(T::zero());
        for (e, &t) in tg[b * hw..(b + 1) * hw].iter().enumerate() {
            if Some(t) == ignore {
                continue;
            }
            let t = t as usize;
            let wt = w.map_or(1.0, |w| w[t].to_f64());
            s[t * hw + e] = T::from_f64(-wt / div);
        }
    });
}

/// The stored total weight: `total_weight` (argument 7) must hold one element.
fn read_total<T: NnReal>(total_weight: &View<T>) -> Result<f64> {
    check::numel(total_weight, 7, "total_weight", 1)?;
    Ok(total_weight.to_vec()?.first().map_or(0.0, |v| v.to_f64()))
}

/// ClassNLL's checks: `input` (2) 1-D (one sample of C classes) or 2-D (N x C); `target` (3) one
/// class index for a 1-D input (0-D or 1-element 1-D), N indices for a 2-D one; `weights` (6)
/// C elements. Returns the layout.
fn nll_check<T: NnReal>(input: &View<T>, target: &View<i64>, weights: Option<&View<T>>) -> Result<Layout> {
    check::dims(input, 2, "input", &[1, 2])?;
    let c = input.sizes.last().copied().unwrap_or(0) as usize;
    class_target(input, target)?;
    if let Some(w) = weights {
        check::numel(w, 6, "weights", c)?;
    }
    Ok(Layout { c, hw: 1 })
}

/// `ClassNLLCriterion_updateOutput(state, input, target, output, sizeAverage, weights,
/// total_weight, ignore_index)`: `output` and `total_weight` become 1-element tensors.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: NnReal>(
    input: &View<T>,
    target: &View<i64>,
    output: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &Tensor<T>,
    ignore_index: i64,
) -> Result<()> {
    let l = nll_check(input, target, weights)?;
    output_common(input, target, output, size_average, weights, total_weight, l, Some(ignore_index))
}

/// `ClassNLLCriterion_updateGradInput(state, input, target, gradInput, sizeAverage, weights,
/// total_weight, ignore_index)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &View<T>,
    ignore_index: i64,
) -> Result<()> {
    let l = nll_check(input, target, weights)?;
    grad_common(input, target, grad_input, size_average, weights, total_weight, l, Some(ignore_index))
}

/// SpatialClassNLL's checks: `input` (2) N x C x H x W, `target` (3) N x H x W, `weights` (6) C
/// elements.
fn spatial_check<T: NnReal>(input: &View<T>, target: &View<i64>, weights: Option<&View<T>>) -> Result<Layout> {
    check::dims(input, 2, "input", &[4])?;
    check::dims(target, 3, "target", &[3])?;
    let s = &input.sizes;
    check::shape(target, 3, "target", &[s[0], s[2], s[3]])?;
    let c = s[1] as usize;
    if let Some(w) = weights {
        check::numel(w, 6, "weights", c)?;
    }
    Ok(Layout { c, hw: (s[2] * s[3]) as usize })
}

/// `SpatialClassNLLCriterion_updateOutput(state, input, target, output, sizeAverage, weights,
/// total_weight)`: ClassNLL at every position of N x C x H x W log-probabilities (no ignored
/// class).
pub fn spatial_update_output<T: NnReal>(
    input: &View<T>,
    target: &View<i64>,
    output: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &Tensor<T>,
) -> Result<()> {
    let l = spatial_check(input, target, weights)?;
    output_common(input, target, output, size_average, weights, total_weight, l, None)
}

/// `SpatialClassNLLCriterion_updateGradInput(state, input, target, gradInput, sizeAverage,
/// weights, total_weight)`.
pub fn spatial_update_grad_input<T: NnReal>(
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &View<T>,
) -> Result<()> {
    let l = spatial_check(input, target, weights)?;
    grad_common(input, target, grad_input, size_average, weights, total_weight, l, None)
}

/// The forward pass after the shape checks: checks the targets, sums, stores.
#[allow(clippy::too_many_arguments)]
fn output_common<T: NnReal>(
    input: &View<T>,
    target: &View<i64>,
    output: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &Tensor<T>,
    l: Layout,
    ignore: Option<i64>,
) -> Result<()> {
    let (sum, tw) = {
        let tg = buf::read(target, &[])?;
        check::indices(&tg, 3, "target", 0, l.c as i64, ignore)?;
        let x = buf::read(input, &[])?;
        let w = weights.map(|w| buf::read(w, &[])).transpose()?;
        nll_sums(&x, &tg, w.as_deref(), l, ignore)
    };
    set_scalar(output, if size_average { sum / tw } else { sum })?;
    set_scalar(total_weight, tw)
}

/// The backward pass after the shape checks.
#[allow(clippy::too_many_arguments)]
fn grad_common<T: NnReal>(
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &View<T>,
    l: Layout,
    ignore: Option<i64>,
) -> Result<()> {
    let tw = read_total(total_weight)?;
    let tg = buf::read(target, &[])?;
    check::indices(&tg, 3, "target", 0, l.c as i64, ignore)?;
    let mut out = Out::new(grad_input, &input.sizes)?;
    let w = weights.map(|w| buf::read(w, &[out.view()])).transpose()?;
    nll_grad(out.as_mut(), &tg, w.as_deref(), l, ignore, if size_average { tw } else { 1.0 });
    out.finish()
}
