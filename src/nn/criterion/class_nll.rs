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

use super::{BLOCK, NnElem, NnReal, block_sum, class_target, host_vec, rows_per_block, set_scalar};
use crate::core::allocator::Device;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::nn::buf::{self, Out};
use crate::nn::{check, native_tensor, native_view};
use crate::ops::{self, index};

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
fn read_total<T: NnElem>(total_weight: &View<T>) -> Result<f64> {
    check::numel(total_weight, 7, "total_weight", 1)?;
    Ok(host_vec(total_weight)?.first().map_or(0.0, |v| v.to_f64()))
}

/// ClassNLL's checks: `input` (2) 1-D (one sample of C classes) or 2-D (N x C); `target` (3) one
/// class index for a 1-D input (0-D or 1-element 1-D), N indices for a 2-D one; `weights` (6)
/// C elements. Returns the layout.
fn nll_check<T: NnElem>(input: &View<T>, target: &View<i64>, weights: Option<&View<T>>) -> Result<Layout> {
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
pub fn update_output<T: NnElem>(
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
pub fn update_grad_input<T: NnElem>(
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
fn spatial_check<T: NnElem>(input: &View<T>, target: &View<i64>, weights: Option<&View<T>>) -> Result<Layout> {
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
pub fn spatial_update_output<T: NnElem>(
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
pub fn spatial_update_grad_input<T: NnElem>(
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

/// The forward pass after the shape checks: checks the targets, sums, stores. On the device the
/// targets (and the weights) are read on the host, the input elements they pick are gathered
/// on the device and copied over, and the sums run on the host in its order: the results are
/// the host's, and only O(targets) elements cross, not the input.
#[allow(clippy::too_many_arguments)]
fn output_common<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    output: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &Tensor<T>,
    l: Layout,
    ignore: Option<i64>,
) -> Result<()> {
    devices(input, target, weights, &[output, total_weight])?;
    let tg = host_vec(target)?;
    check::indices(&tg, 3, "target", 0, l.c as i64, ignore)?;
    let (sum, tw) = if let Device::Cuda(_) = input.device() {
        let pos = picks(&tg, l, ignore);
        let x = gather(input, &pos)?;
        let w = weights.map(host_vec).transpose()?;
        picked_sums(&x, &tg, w.as_deref(), l, ignore)
    } else {
        let x = buf::read(native_view(input)?, &[])?;
        let w = weights.map(|w| Ok(buf::read(native_view(w)?, &[])?.into_owned())).transpose()?;
        nll_sums(&x, &tg, w.as_deref(), l, ignore)
    };
    set_scalar(output, if size_average { sum / tw } else { sum })?;
    set_scalar(total_weight, tw)
}

/// Every tensor of a call on one device (inputs first, then the outputs).
fn devices<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    weights: Option<&View<T>>,
    outs: &[&Tensor<T>],
) -> Result<()> {
    let mut d = vec![input.device(), target.device()];
    d.extend(weights.map(|w| w.device()));
    d.extend(outs.iter().map(|o| o.with_view(|v| v.device())));
    Backend::of(&d).map(|_| ())
}

/// The row-major positions in the input (n x c x hw) of the counted targets.
fn picks(tg: &[i64], l: Layout, ignore: Option<i64>) -> Vec<i64> {
    let Layout { c, hw } = l;
    let mut pos = Vec::with_capacity(tg.len());
    for (i, &t) in tg.iter().enumerate() {
        if Some(t) != ignore && hw > 0 {
            let (b, e) = (i / hw, i % hw);
            pos.push(((b * c + t as usize) * hw + e) as i64);
        }
    }
    pos
}

/// The input's elements at `pos` (row-major positions), gathered on the device, on the host.
fn gather<T: NnElem>(input: &View<T>, pos: &[i64]) -> Result<Vec<T>> {
    if pos.is_empty() {
        return Ok(Vec::new());
    }
    let flat = crate::nn::activation::paired(input.clone(), &[input.numel() as i64])?;
    let idx = ops::temp_like::<i64, T>(input, &[pos.len() as i64])?;
    ops::copy::copy(&idx, &View::from_slice(pos, &[pos.len() as i64])?)?;
    let got = Tensor::new(ops::temp_like::<T, T>(input, &[pos.len() as i64])?);
    index::index_select(&got, &flat, 0, &idx)?;
    host_vec(&got.view())
}

/// `nll_sums` over the gathered elements `x` (one per counted target, in target order): the
/// same sums in the same order, blocks of rows included, as the host's.
fn picked_sums<T: NnElem>(x: &[T], tg: &[i64], w: Option<&[T]>, l: Layout, ignore: Option<i64>) -> (f64, f64) {
    let rows = if l.hw == 1 { BLOCK } else { rows_per_block(l.hw) };
    let block = (rows * l.hw).max(1);
    let mut k = 0;
    let mut sum_block = |ts: &[i64]| {
        let (mut s, mut tw) = (0.0f64, 0.0f64);
        for &t in ts.iter().filter(|&&t| Some(t) != ignore) {
            let wt = w.map_or(1.0, |w| w[t as usize].to_f64());
            tw += wt;
            s -= x[k].to_f64() * wt;
            k += 1;
        }
        (s, tw)
    };
    if tg.len() <= block {
        return sum_block(tg);
    }
    tg.chunks(block).fold((0.0, 0.0), |a, ts| {
        let b = sum_block(ts);
        (a.0 + b.0, a.1 + b.1)
    })
}

/// The backward pass after the shape checks. On the device: the gradient's nonzero values
/// computed on the host from the targets and weights (as the host computes them), then a zero
/// fill and one indexed copy of them on the device.
#[allow(clippy::too_many_arguments)]
fn grad_common<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    size_average: bool,
    weights: Option<&View<T>>,
    total_weight: &View<T>,
    l: Layout,
    ignore: Option<i64>,
) -> Result<()> {
    devices(input, target, weights, &[grad_input])?;
    Backend::of(&[input.device(), total_weight.device()])?;
    let tw = read_total(total_weight)?;
    let tg = host_vec(target)?;
    check::indices(&tg, 3, "target", 0, l.c as i64, ignore)?;
    let div = if size_average { tw } else { 1.0 };
    if let Device::Cuda(_) = input.device() {
        let w = weights.map(host_vec).transpose()?;
        let pos = picks(&tg, l, ignore);
        let n = pos.len();
        let vals: Vec<T> = tg
            .iter()
            .filter(|&&t| Some(t) != ignore)
            .map(|&t| T::from_f64(-w.as_ref().map_or(1.0, |w| w[t as usize].to_f64()) / div))
            .collect();
        let out = ops::resize_out(grad_input, &input.sizes)?;
        let flat = if out.is_contiguous() {
            out.reshape_view(&[out.numel() as i64])?
        } else {
            ops::temp_like(&out, &[out.numel() as i64])?
        };
        ops::arith::fill_view(&flat, T::from_f64(0.0))?;
        if n > 0 {
            let idx = ops::temp_like::<i64, T>(&flat, &[n as i64])?;
            ops::copy::copy(&idx, &View::from_slice(&pos, &[n as i64])?)?;
            let v = ops::temp_like::<T, T>(&flat, &[n as i64])?;
            ops::copy::copy(&v, &View::from_slice(&vals, &[n as i64])?)?;
            index::index_copy(&flat, 0, &idx, &v)?;
        }
        return if flat.same_storage(&out) { Ok(()) } else { ops::copy::copy(&out, &flat.reshape_view(&out.sizes)?) };
    }
    let (input, grad_input) = (native_view(input)?, native_tensor(grad_input)?);
    let mut out = Out::new(grad_input, &input.sizes)?;
    let w = weights.map(|w| Ok(buf::read(native_view(w)?, &[out.view()])?.into_owned())).transpose()?;
    nll_grad(out.as_mut(), &tg, w.as_deref(), l, ignore, div);
    out.finish()
}
