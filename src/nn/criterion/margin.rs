//! MultiMargin and MultiLabelMargin: hinge losses over the classes of each frame of a 1-D
//! (one frame of `dim` scores) or 2-D (`nframe x dim`) `input`, summed over the classes and
//! divided by `dim`, then divided by `nframe` with `sizeAverage` (PyTorch's
//! `multi_margin_loss` / `multilabel_margin_loss`). Targets are 0-based class indices.

use super::{NnElem, NnReal, block_sum, class_target, device, host_vec, rows_per_block, set_scalar};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::nn::buf::{self, Out};
use crate::nn::{check, native_tensor, native_view};

/// `(nframe, dim)` of a 1-D or 2-D `input` (argument 2).
fn frames<T: Scalar>(input: &View<T>) -> Result<(usize, usize)> {
    check::dims(input, 2, "input", &[1, 2])?;
    Ok(if input.ndim() == 1 {
        (1, input.sizes[0] as usize)
    } else {
        (input.sizes[0] as usize, input.sizes[1] as usize)
    })
}

/// The loss's divisor: `dim`, times `nframe` with `size_average`.
pub(super) fn divisor(nframe: usize, dim: usize, size_average: bool) -> f64 {
    if size_average { (nframe * dim) as f64 } else { dim as f64 }
}

/// MultiMargin's checks: every operand on one engine; `input` (2), `target` (3: one index in
/// [0, dim) for a 1-D input, `nframe` for a 2-D one), `p` (6: 1 or 2), `weights` (7: `dim`
/// elements). Returns `(nframe, dim)` and the targets (on the host).
fn multi_margin_check<T: Scalar>(
    input: &View<T>,
    target: &View<i64>,
    out: &Tensor<T>,
    p: i32,
    weights: Option<&View<T>>,
) -> Result<(usize, usize, Vec<i64>)> {
    let mut devices = vec![input.device(), target.device(), out.with_view(|v| v.device())];
    devices.extend(weights.map(|w| w.device()));
    Backend::of(&devices)?;
    let (nframe, dim) = frames(input)?;
    class_target(input, target)?;
    if p != 1 && p != 2 {
        return Err(check::invalid(6, "p", format_args!("must be 1 or 2, got {p}")));
    }
    if let Some(w) = weights {
        check::numel(w, 7, "weights", dim)?;
    }
    let tg = host_vec(target)?;
    check::indices(&tg, 3, "target", 0, dim as i64, None)?;
    Ok((nframe, dim, tg))
}

/// `MultiMarginCriterion_updateOutput(state, input, target, output, sizeAverage, p, weights,
/// margin)`: for each frame with target `y`, `sum over d != y of w[y] * max(0, margin -
/// input[y] + input[d])^p`, over `dim` (and `nframe` with `sizeAverage`).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn multi_margin_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    output: &Tensor<T>,
    size_average: bool,
    p: i32,
    weights: Option<&View<T>>,
    margin: f64,
) -> Result<()> {
    let (nframe, dim, tg) = multi_margin_check(input, target, output, p, weights)?;
    let sum = if let Device::Cuda(dev) = input.device() {
        device::multi_margin(dev, input, target, weights, (nframe, dim), p, margin)?
    } else {
        let w = weights.map(native_view).transpose()?;
        multi_margin_sum(native_view(input)?, &tg, w, (nframe, dim), p, margin)?
    };
    set_scalar(output, sum / divisor(nframe, dim, size_average))
}

/// MultiMargin's loss summed over the frames, on the host.
fn multi_margin_sum<T: NnReal>(
    input: &View<T>,
    tg: &[i64],
    weights: Option<&View<T>>,
    (nframe, dim): (usize, usize),
    p: i32,
    margin: f64,
) -> Result<f64> {
    let m = T::from_f64(margin);
    let sum = {
        let x = buf::read(input, &[])?;
        let w = weights.map(|w| buf::read(w, &[])).transpose()?;
        let w = w.as_deref();
        let rows = |lo: usize, hi: usize| {
            let mut s = 0.0f64;
            for (row, &t) in x[lo * dim..hi * dim].chunks_exact(dim).zip(&tg[lo..hi]) {
                let t = t as usize;
                let xt = row[t];
                let mut rs = 0.0f64;
                for (d, &xd) in row.iter().enumerate() {
                    let z = m - xt + xd;
                    if d != t && z > T::zero() {
                        let z = z.to_f64();
                        rs += if p == 1 { z } else { z * z };
                    }
                }
                s += rs * w.map_or(1.0, |w| w[t].to_f64());
            }
            s
        };
        // dim = 0 leaves no frame to sum (a target would be out of range).
        if dim == 0 { 0.0 } else { block_sum(nframe, rows_per_block(dim), nframe * dim, rows, |a, b| a + b) }
    };
    Ok(sum)
}

/// `MultiMarginCriterion_updateGradInput(state, input, target, gradInput, sizeAverage, p,
/// weights, margin)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn multi_margin_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    size_average: bool,
    p: i32,
    weights: Option<&View<T>>,
    margin: f64,
) -> Result<()> {
    let (nframe, dim, tg) = multi_margin_check(input, target, grad_input, p, weights)?;
    if let Device::Cuda(dev) = input.device() {
        return device::multi_margin_back(dev, input, target, grad_input, weights, size_average, p, margin);
    }
    let w = weights.map(native_view).transpose()?;
    multi_margin_grad(native_view(input)?, &tg, native_tensor(grad_input)?, w, (nframe, dim), size_average, p, margin)
}

/// MultiMargin's gradient on the host.
#[allow(clippy::too_many_arguments)]
fn multi_margin_grad<T: NnReal>(
    input: &View<T>,
    tg: &[i64],
    grad_input: &Tensor<T>,
    weights: Option<&View<T>>,
    (nframe, dim): (usize, usize),
    size_average: bool,
    p: i32,
    margin: f64,
) -> Result<()> {
    let m = T::from_f64(margin);
    let g = T::from_f64(1.0 / divisor(nframe, dim, size_average));
    let two = T::from_f64(2.0);
    let mut out = Out::new(grad_input, &input.sizes)?;
    let x = buf::read(input, &[out.view()])?;
    let w = weights.map(|w| buf::read(w, &[out.view()])).transpose()?;
    let w = w.as_deref();
    buf::par_chunks(out.as_mut(), dim, nframe * dim, |i, o| {
        let row = &x[i * dim..(i + 1) * dim];
        let t = tg[i] as usize;
        let xt = row[t];
        let wt = w.map_or(T::one(), |w| w[t]);
        let mut gt = T::zero();
        for (d, (o, &xd)) in o.iter_mut().zip(row).enumerate() {
            let z = m - xt + xd;
            *o = if d != t && z > T::zero() {
                let h = if p == 1 { g } else { two * g * z } * wt;
                gt -= h;
                h
            } else {
                T::zero()
            };
        }
        o[t] = gt;
    });
    out.finish()
}

/// MultiLabelMargin's checks: every operand on one engine; `input` (2), `target` (3) of
/// `input`'s shape with values in [-1, dim). Returns `(nframe, dim)` and the targets (on the
/// host).
fn multi_label_check<T: Scalar>(
    input: &View<T>,
    target: &View<i64>,
    tensors: &[&Tensor<T>],
) -> Result<(usize, usize, Vec<i64>)> {
    let mut devices = vec![input.device(), target.device()];
    devices.extend(tensors.iter().map(|t| t.with_view(|v| v.device())));
    Backend::of(&devices)?;
    let (nframe, dim) = frames(input)?;
    check::same_shape(target, 3, "target", input, "input")?;
    let tg = host_vec(target)?;
    check::indices(&tg, 3, "target", -1, dim as i64, None)?;
    Ok((nframe, dim, tg))
}

/// The target classes of a frame: its indices up to the first -1.
fn labels(t: &[i64]) -> impl Iterator<Item = usize> + '_ {
    t.iter().take_while(|&&v| v >= 0).map(|&v| v as usize)
}

/// `MultiLabelMarginCriterion_updateOutput(state, input, target, output, isTarget,
/// sizeAverage)`: each frame's target row lists its classes as 0-based indices, ended by the
/// first -1 (or the row's end); the loss is `sum over listed j, over classes d not listed, of
/// max(0, 1 - input[j] + input[d])`, over `dim` (and `nframe` with `sizeAverage`). `isTarget`
/// is resized to `target`'s shape and set to 1 at the listed classes, 0 elsewhere.
pub fn multi_label_update_output<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    output: &Tensor<T>,
    is_target: &Tensor<T>,
    size_average: bool,
) -> Result<()> {
    let (nframe, dim, tg) = multi_label_check(input, target, &[output, is_target])?;
    let sum = if let Device::Cuda(dev) = input.device() {
        device::multi_label(dev, input, target, is_target, (nframe, dim))?
    } else {
        multi_label_sum(native_view(input)?, &tg, native_tensor(is_target)?, &target.sizes, (nframe, dim))?
    };
    set_scalar(output, sum / divisor(nframe, dim, size_average))
}

/// MultiLabelMargin's loss summed over the frames, and `isTarget` set, on the host.
fn multi_label_sum<T: NnReal>(
    input: &View<T>,
    tg: &[i64],
    is_target: &Tensor<T>,
    target_sizes: &[i64],
    (nframe, dim): (usize, usize),
) -> Result<f64> {
    let sum = {
        let mut ist = Out::new(is_target, target_sizes)?;
        let x = buf::read(input, &[ist.view()])?;
        let it = ist.as_mut();
        let mut sum = 0.0;
        if dim > 0 {
            for (r, t) in it.chunks_exact_mut(dim).zip(tg.chunks_exact(dim)) {
                r.fill(T::zero());
                for j in labels(t) {
                    r[j] = T::one();
                }
            }
            let it: &[T] = it;
            let rows = |lo: usize, hi: usize| {
                let mut s = 0.0f64;
                for i in lo..hi {
                    let (row, r, t) =
                        (&x[i * dim..(i + 1) * dim], &it[i * dim..(i + 1) * dim], &tg[i * dim..(i + 1) * dim]);
                    for j in labels(t) {
                        let xj = row[j];
                        for (&xd, &flag) in row.iter().zip(r) {
                            let z = T::one() - xj + xd;
                            if flag == T::zero() && z > T::zero() {
                                s += z.to_f64();
                            }
                        }
                    }
                }
                s
            };
            sum = block_sum(nframe, rows_per_block(dim), nframe * dim * 4, rows, |a, b| a + b);
        }
        ist.finish()?;
        sum
    };
    Ok(sum)
}

/// `MultiLabelMarginCriterion_updateGradInput(state, input, target, gradInput, isTarget,
/// sizeAverage)`: `isTarget` (argument 5) is the one `updateOutput` set: `target`'s shape,
/// values in [0, 1] (nonzero marks a target class).
pub fn multi_label_update_grad_input<T: NnElem>(
    input: &View<T>,
    target: &View<i64>,
    grad_input: &Tensor<T>,
    is_target: &View<T>,
    size_average: bool,
) -> Result<()> {
    let (nframe, dim, tg) = multi_label_check(input, target, &[grad_input])?;
    Backend::of(&[input.device(), is_target.device()])?;
    check::same_shape(is_target, 5, "isTarget", target, "target")?;
    {
        let it = host_vec(is_target)?;
        if let Some(i) = it.iter().position(|&v| !(v >= T::zero() && v <= T::one())) {
            return Err(check::invalid(
                5,
                "isTarget",
                format_args!("element {i} is {}, expected 0 or 1", it[i].to_f64()),
            ));
        }
    }
    if let Device::Cuda(dev) = input.device() {
        return device::multi_label_back(dev, input, target, grad_input, is_target, size_average);
    }
    multi_label_grad(
        native_view(input)?,
        &tg,
        native_tensor(grad_input)?,
        native_view(is_target)?,
        (nframe, dim),
        size_average,
    )
}

/// MultiLabelMargin's gradient on the host.
fn multi_label_grad<T: NnReal>(
    input: &View<T>,
    tg: &[i64],
    grad_input: &Tensor<T>,
    is_target: &View<T>,
    (nframe, dim): (usize, usize),
    size_average: bool,
) -> Result<()> {
    let g = T::from_f64(1.0 / divisor(nframe, dim, size_average));
    let mut out = Out::new(grad_input, &input.sizes)?;
    let x = buf::read(input, &[out.view()])?;
    let it = buf::read(is_target, &[out.view()])?;
    buf::par_chunks(out.as_mut(), dim, nframe * dim * 4, |i, o| {
        let (row, r, t) = (&x[i * dim..(i + 1) * dim], &it[i * dim..(i + 1) * dim], &tg[i * dim..(i + 1) * dim]);
        o.fill(T::zero());
        for j in labels(t) {
            let xj = row[j];
            let mut count = 0usize;
            for ((o, &xd), &flag) in o.iter_mut().zip(row).zip(r) {
                let z = T::one() - xj + xd;
                if flag == T::zero() && z > T::zero() {
                    *o += g;
                    count += 1;
                }
            }
            o[j] -= g * T::from_f64(count as f64);
        }
    });
    out.finish()
}
