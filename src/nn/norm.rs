//! BatchNormalization: `output = (input - mean) / sqrt(var + eps) * weight + bias` per feature,
//! the features being dimension 1 of an input of 2 or more dimensions (batch x features x ...).
//!
//! In training mode the mean and (biased) variance are the batch's, over every dimension but
//! the feature one; the running estimates are updated with `momentum` (the variance's with the
//! unbiased estimate), and `save_mean` / `save_std` keep the batch mean and `1 / sqrt(var +
//! eps)` for the backward pass. In evaluation mode the running estimates are used.
//!
//! The work is split over blocks of features for the statistics (sums kept in f64, in a fixed
//! order of lanes, so results never depend on the thread count) and over batch rows or
//! (batch, feature) planes for the elementwise pass. On the device (THCUNN) the same statistics
//! come from th's f64 dimension reductions (`device`).

mod device;
pub mod lrn;

use super::buf::{self, Out};
use super::check;
use super::{NnElem, NnReal, native_tensor, native_view};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use std::ops::Range;

/// The shape facts: `n` (dimension 0), `c` features (dimension 1), `s` elements per (batch,
/// feature) plane (the product of the dimensions after 1).
#[derive(Clone, Copy)]
struct Dims {
    n: usize,
    c: usize,
    s: usize,
}

impl Dims {
    /// Elements per feature.
    fn count(&self) -> usize {
        self.n * self.s
    }
    fn numel(&self) -> usize {
        self.n * self.c * self.s
    }
}

fn dims<T: Scalar>(input: &View<T>) -> Result<Dims> {
    if input.ndim() < 2 {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected a tensor of 2 or more dimensions (batch x features x ...), got {}", input.desc()),
        ));
    }
    let s = input.sizes[2..].iter().map(|&v| v as usize).product();
    Ok(Dims { n: input.sizes[0] as usize, c: input.sizes[1] as usize, s })
}

/// Checks that an optional per-feature tensor holds `c` elements.
fn per_feature<T: Scalar>(v: Option<&View<T>>, arg: u32, name: &str, c: usize) -> Result<()> {
    match v {
        Some(v) => check::numel(v, arg, name, c),
        None => Ok(()),
    }
}

/// A per-feature tensor as f64 values (`dflt` for each feature when absent).
fn values<T: NnReal>(v: Option<&View<T>>, c: usize, dflt: f64) -> Result<Vec<f64>> {
    match v {
        Some(v) => Ok(v.to_vec()?.into_iter().map(|x| x.to_f64()).collect()),
        None => Ok(vec![dflt; c]),
    }
}

/// Lanes of a pair of sums (kept apart so that the loop vectorizes; added in a fixed order).
const LANES: usize = 8;

#[derive(Clone, Copy, Default)]
struct Sums {
    a: [f64; LANES],
    b: [f64; LANES],
}

impl Sums {
    fn total(&self) -> (f64, f64) {
        (self.a.iter().sum(), self.b.iter().sum())
    }

    /// `a += x - k`, `b += (x - k)^2` over `x`.
    #[inline]
    fn shifted<T: NnReal>(&mut self, x: &[T], k: f64) {
        let (chunks, rest) = x.as_chunks::<LANES>();
        for c in chunks {
            for ((v, a), b) in c.iter().zip(&mut self.a).zip(&mut self.b) {
                let d = v.to_f64() - k;
                *a += d;
                *b += d * d;
            }
        }
        for ((v, a), b) in rest.iter().zip(&mut self.a).zip(&mut self.b) {
            let d = v.to_f64() - k;
            *a += d;
            *b += d * d;
        }
    }

    /// `a += g`, `b += (x - m) * g` over `x`, `g` (of one length).
    #[inline]
    fn dot<T: NnReal>(&mut self, x: &[T], g: &[T], m: f64) {
        let (cx, rx) = x.as_chunks::<LANES>();
        let (cg, rg) = g.as_chunks::<LANES>();
        for (xs, gs) in cx.iter().zip(cg) {
            for (((xv, gv), a), b) in xs.iter().zip(gs).zip(&mut self.a).zip(&mut self.b) {
                let gv = gv.to_f64();
                *a += gv;
                *b += (xv.to_f64() - m) * gv;
            }
        }
        for (((xv, gv), a), b) in rx.iter().zip(rg).zip(&mut self.a).zip(&mut self.b) {
            let gv = gv.to_f64();
            *a += gv;
            *b += (xv.to_f64() - m) * gv;
        }
    }
}

/// Features per block of parallel work: enough for a few thousand elements, so that a block's
/// data stays in cache between the statistics and the elementwise pass.
fn block(d: Dims) -> usize {
    4096usize.div_ceil(d.count().max(1)).clamp(1, d.c.max(1))
}

/// The sums of features `f0..f1`: `seg(f, range, sums)` is called for each (batch, feature)
/// plane of feature `f`, in batch order, the planes visited row by row (memory read in order).
fn block_sums(d: Dims, f0: usize, f1: usize, seg: &impl Fn(usize, Range<usize>, &mut Sums)) -> Vec<(f64, f64)> {
    let mut sums = vec![Sums::default(); f1 - f0];
    for i in 0..d.n {
        for (f, s) in (f0..f1).zip(sums.iter_mut()) {
            let off = (i * d.c + f) * d.s;
            seg(f, off..off + d.s, s);
        }
    }
    sums.iter().map(Sums::total).collect()
}

/// Per-feature pairs of sums (see `block_sums`), in parallel over blocks of features.
fn reduce(d: Dims, passes: usize, seg: impl Fn(usize, Range<usize>, &mut Sums) + Sync) -> Vec<(f64, f64)> {
    if d.c == 0 {
        return Vec::new();
    }
    let fb = block(d);
    let mut out = vec![(0.0, 0.0); d.c.div_ceil(fb) * fb];
    buf::par_chunks(&mut out, fb, d.numel() * passes, |blk, o| {
        let f0 = blk * fb;
        o.iter_mut().zip(block_sums(d, f0, (f0 + fb).min(d.c), &seg)).for_each(|(o, s)| *o = s);
    });
    out.truncate(d.c);
    out
}

/// As `reduce`, and each block of features goes on at once (while its data is in cache) with
/// the elementwise pass: `apply(coef(f, sums of f), offset, plane)` for every (batch, feature)
/// plane of `out` (laid out as the input) of feature `f`.
fn reduce_apply<T: NnReal, K>(
    d: Dims,
    passes: usize,
    out: &mut [T],
    seg: impl Fn(usize, Range<usize>, &mut Sums) + Sync,
    coef: impl Fn(usize, (f64, f64)) -> K + Sync,
    apply: impl Fn(&K, usize, &mut [T]) + Sync,
) -> Result<Vec<(f64, f64)>> {
    if out.len() != d.numel() {
        return Err(Error::internal("nn batch norm: output size"));
    }
    if d.c == 0 {
        return Ok(Vec::new());
    }
    let fb = block(d);
    let mut sums = vec![(0.0, 0.0); d.c.div_ceil(fb) * fb];
    let base = buf::SharedPtr(out.as_mut_ptr());
    buf::par_chunks(&mut sums, fb, d.numel() * passes, |blk, o| {
        let f0 = blk * fb;
        let f1 = (f0 + fb).min(d.c);
        let bs = block_sums(d, f0, f1, &seg);
        for (f, s) in (f0..f1).zip(&bs) {
            let k = coef(f, *s);
            for i in 0..d.n {
                let off = (i * d.c + f) * d.s;
                // SAFETY: off + s <= n * c * s == out.len() (checked above), and plane (i, f)
                // belongs to feature f, which only this block (one piece of the loop) visits,
                // so no two slices overlap; `out` outlives the loop.
                let plane = unsafe { std::slice::from_raw_parts_mut(base.offset(off as isize), d.s) };
                apply(&k, off, plane);
            }
        }
        o.iter_mut().zip(bs).for_each(|(o, s)| *o = s);
    });
    sums.truncate(d.c);
    Ok(sums)
}

/// Runs `f(feature, offset, plane)` over the (batch, feature) planes of `out` (laid out as the
/// input), in parallel over planes when they are large, else over batch rows.
fn planes<T: NnReal>(out: &mut [T], d: Dims, passes: usize, f: impl Fn(usize, usize, &mut [T]) + Sync) {
    if d.s == 0 || d.c == 0 {
        return;
    }
    let work = d.numel() * passes;
    if d.s >= 64 {
        buf::par_chunks(out, d.s, work, |i, o| f(i % d.c, i * d.s, o));
    } else {
        let row = d.c * d.s;
        buf::par_chunks(out, row, work, |i, o| {
            for (ch, p) in o.chunks_exact_mut(d.s).enumerate() {
                f(ch, (i * d.c + ch) * d.s, p);
            }
        });
    }
}

/// The mean and `1 / sqrt(var + eps)` used for a feature in evaluation mode.
fn eval_stats(rm: &[f64], rv: &[f64], eps: f64) -> Vec<(f64, f64)> {
    rm.iter().zip(rv).map(|(&m, &v)| (m, 1.0 / (v + eps).sqrt())).collect()
}

/// `BatchNormalization_updateOutput(state, input, output, weight, bias, running_mean,
/// running_var, save_mean, save_std, train, momentum, eps)`.
///
/// `weight`, `bias` may be NULL (1 and 0). Training: `save_mean` / `save_std` (may be NULL: not
/// stored) are resized to the feature count and receive the batch mean and `1 / sqrt(var +
/// eps)` (0 when the variance and `eps` are both 0, as torch7); `running_mean` / `running_var`
/// (may be NULL: not updated) must hold one value per feature and become `momentum * batch +
/// (1 - momentum) * running` (the unbiased variance). A feature needs more than one value
/// (batch x spatial), except for an empty batch, whose output is empty (statistics unchanged,
/// save_* zero). Evaluation: `running_mean` / `running_var` are required and used.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: Option<&View<T>>,
    bias: Option<&View<T>>,
    running_mean: Option<&Tensor<T>>,
    running_var: Option<&Tensor<T>>,
    save_mean: Option<&Tensor<T>>,
    save_std: Option<&Tensor<T>>,
    train: bool,
    momentum: f64,
    eps: f64,
) -> Result<()> {
    let mut devices = vec![input.device(), dev_of(output)];
    devices.extend(weight.iter().chain(bias.iter()).map(|v| v.device()));
    devices.extend([running_mean, running_var, save_mean, save_std].into_iter().flatten().map(dev_of));
    Backend::of(&devices)?;
    let d = check_output(input, weight, bias, running_mean, running_var, train)?;
    if let Device::Cuda(_) = input.device() {
        return device::update_output(
            d,
            input,
            output,
            weight,
            bias,
            running_mean,
            running_var,
            save_mean,
            save_std,
            train,
            momentum,
            eps,
        );
    }
    host_update_output(
        native_view(input)?,
        native_tensor(output)?,
        weight.map(native_view).transpose()?,
        bias.map(native_view).transpose()?,
        nt(running_mean)?,
        nt(running_var)?,
        nt(save_mean)?,
        nt(save_std)?,
        train,
        momentum,
        eps,
    )
}

/// An optional tensor as its compute type's (host layers).
fn nt<T: NnElem>(t: Option<&Tensor<T>>) -> Result<Option<&Tensor<T::R>>> {
    t.map(native_tensor).transpose()
}

fn dev_of<T: Scalar>(t: &Tensor<T>) -> Device {
    t.with_view(|v| v.device())
}

/// `updateOutput`'s checks; the shape facts.
fn check_output<T: Scalar>(
    input: &View<T>,
    weight: Option<&View<T>>,
    bias: Option<&View<T>>,
    running_mean: Option<&Tensor<T>>,
    running_var: Option<&Tensor<T>>,
    train: bool,
) -> Result<Dims> {
    let d = dims(input)?;
    per_feature(weight, 4, "weight", d.c)?;
    per_feature(bias, 5, "bias", d.c)?;
    let rm_view = running_mean.map(|t| t.view());
    let rv_view = running_var.map(|t| t.view());
    per_feature(rm_view.as_ref(), 6, "running_mean", d.c)?;
    per_feature(rv_view.as_ref(), 7, "running_var", d.c)?;
    if !train {
        if running_mean.is_none() {
            return Err(Error::null(6, "running_mean"));
        }
        if running_var.is_none() {
            return Err(Error::null(7, "running_var"));
        }
    } else if d.count() == 1 {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected more than 1 value per feature when training, got {}", input.desc()),
        ));
    }
    Ok(d)
}

#[allow(clippy::too_many_arguments)] // torch7's signature
fn host_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: Option<&View<T>>,
    bias: Option<&View<T>>,
    running_mean: Option<&Tensor<T>>,
    running_var: Option<&Tensor<T>>,
    save_mean: Option<&Tensor<T>>,
    save_std: Option<&Tensor<T>>,
    train: bool,
    momentum: f64,
    eps: f64,
) -> Result<()> {
    let d = dims(input)?;
    let rm_view = running_mean.map(|t| t.view());
    let rv_view = running_var.map(|t| t.view());
    let mut out = Out::new(output, &input.sizes)?;
    let w = values(weight, d.c, 1.0)?;
    let b = values(bias, d.c, 0.0)?;
    let rm = values(rm_view.as_ref(), d.c, 0.0)?;
    let rv = values(rv_view.as_ref(), d.c, 1.0)?;
    let x = buf::read(input, &[out.view()])?;

    if !train {
        // output = (x - mean) * (invstd * w) + b
        let stats = eval_stats(&rm, &rv, eps);
        let coef: Vec<(T, T, T)> = (0..d.c).map(|f| affine(stats[f], w[f], b[f])).collect();
        planes(out.as_mut(), d, 2, |f, off, o| normalize(&coef[f], &x[off..off + o.len()], o));
        return out.finish();
    }

    let count = d.count();
    // each feature's sums are shifted by its first value (robust against a large mean)
    let shift: Vec<f64> = (0..d.c).map(|f| x.get(f * d.s).map_or(0.0, |v| v.to_f64())).collect();
    let stats_of = |f: usize, s: (f64, f64)| batch_stats(count, shift[f], s, eps);
    let sums = reduce_apply(
        d,
        3,
        out.as_mut(),
        |f, r, s| s.shifted(&x[r], shift[f]),
        |f, s| affine(stats_of(f, s), w[f], b[f]),
        |k, off, o| normalize(k, &x[off..off + o.len()], o),
    )?;
    let stats: Vec<(f64, f64)> = (0..d.c).map(|f| stats_of(f, sums[f])).collect();
    if let Some(t) = save_mean {
        let mut o = Out::new(t, &[d.c as i64])?;
        for (o, s) in o.as_mut().iter_mut().zip(&stats) {
            *o = T::from_f64(s.0);
        }
        o.finish()?;
    }
    if let Some(t) = save_std {
        let mut o = Out::new(t, &[d.c as i64])?;
        for (o, s) in o.as_mut().iter_mut().zip(&stats) {
            *o = T::from_f64(s.1);
        }
        o.finish()?;
    }
    if count > 0 {
        let cn = count as f64;
        if let Some(t) = running_mean {
            let mut o = Out::acc(t, d.c, 6, "running_mean")?;
            for ((o, s), r) in o.as_mut().iter_mut().zip(&stats).zip(&rm) {
                *o = T::from_f64(momentum * s.0 + (1.0 - momentum) * r);
            }
            o.finish()?;
        }
        if let Some(t) = running_var {
            let mut o = Out::acc(t, d.c, 7, "running_var")?;
            for (f, (o, r)) in o.as_mut().iter_mut().zip(&rv).enumerate() {
                let (s1, s2) = sums[f];
                let unbiased = (s2 - s1 * s1 / cn).max(0.0) / (cn - 1.0);
                *o = T::from_f64(momentum * unbiased + (1.0 - momentum) * r);
            }
            o.finish()?;
        }
    }
    out.finish()
}

/// A feature's batch (mean, invstd) from its `count` values' sums shifted by `shift`.
fn batch_stats(count: usize, shift: f64, (s1, s2): (f64, f64), eps: f64) -> (f64, f64) {
    if count == 0 {
        return (0.0, 0.0);
    }
    let cn = count as f64;
    let mean = shift + s1 / cn;
    // the sum of squared deviations from the mean, from the shifted sums
    let ss = (s2 - s1 * s1 / cn).max(0.0);
    let invstd = if ss == 0.0 && eps == 0.0 { 0.0 } else { 1.0 / (ss / cn + eps).sqrt() };
    (mean, invstd)
}

/// A feature's (mean, invstd * w, b) in the tensor's type.
fn affine<T: NnReal>((mean, invstd): (f64, f64), w: f64, b: f64) -> (T, T, T) {
    (T::from_f64(mean), T::from_f64(invstd * w), T::from_f64(b))
}

/// `o = (x - mean) * a + b`.
#[inline]
fn normalize<T: NnReal>(&(m, a, b): &(T, T, T), x: &[T], o: &mut [T]) {
    for (o, &v) in o.iter_mut().zip(x) {
        *o = (v - m) * a + b;
    }
}

/// `BatchNormalization_backward(state, input, gradOutput, gradInput, gradWeight, gradBias,
/// weight, running_mean, running_var, save_mean, save_std, train, scale, eps)`.
///
/// The mean and `1 / std` are `save_mean` / `save_std` in training mode (as stored by
/// `updateOutput`) and come from `running_mean` / `running_var` in evaluation mode. With `g =
/// gradOutput`, `xhat = (input - mean) * invstd` and `w` the weight (1 when NULL), per
/// feature: `gradInput = (g - mean(g) - xhat * mean(g * xhat)) * invstd * w` in training,
/// `g * invstd * w` in evaluation; `gradWeight += scale * sum(g * xhat)`, `gradBias += scale *
/// sum(g)`. `gradInput`, `gradWeight`, `gradBias` may each be NULL (not computed).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn backward<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: Option<&Tensor<T>>,
    grad_weight: Option<&Tensor<T>>,
    grad_bias: Option<&Tensor<T>>,
    weight: Option<&View<T>>,
    running_mean: Option<&View<T>>,
    running_var: Option<&View<T>>,
    save_mean: Option<&View<T>>,
    save_std: Option<&View<T>>,
    train: bool,
    scale: f64,
    eps: f64,
) -> Result<()> {
    let mut devices = vec![input.device(), grad_output.device()];
    devices.extend([grad_input, grad_weight, grad_bias].into_iter().flatten().map(dev_of));
    devices.extend([weight, running_mean, running_var, save_mean, save_std].into_iter().flatten().map(|v| v.device()));
    Backend::of(&devices)?;
    let on_device = matches!(input.device(), Device::Cuda(_));
    let values = |v: Option<&View<T>>, c: usize, dflt: f64| -> Result<Vec<f64>> {
        if on_device { device::values(v, c, dflt) } else { values(v.map(native_view).transpose()?, c, dflt) }
    };
    let d = dims(input)?;
    check::same_shape(grad_output, 3, "gradOutput", input, "input")?;
    per_feature(weight, 7, "weight", d.c)?;
    let stats = if train {
        let sm = save_mean.ok_or_else(|| Error::null(10, "save_mean"))?;
        let ss = save_std.ok_or_else(|| Error::null(11, "save_std"))?;
        check::numel(sm, 10, "save_mean", d.c)?;
        check::numel(ss, 11, "save_std", d.c)?;
        let m = values(Some(sm), d.c, 0.0)?;
        let s = values(Some(ss), d.c, 0.0)?;
        m.into_iter().zip(s).collect::<Vec<_>>()
    } else {
        let rm = running_mean.ok_or_else(|| Error::null(8, "running_mean"))?;
        let rv = running_var.ok_or_else(|| Error::null(9, "running_var"))?;
        check::numel(rm, 8, "running_mean", d.c)?;
        check::numel(rv, 9, "running_var", d.c)?;
        eval_stats(&values(Some(rm), d.c, 0.0)?, &values(Some(rv), d.c, 1.0)?, eps)
    };
    for (t, arg, name) in [(grad_weight, 5, "gradWeight"), (grad_bias, 6, "gradBias")] {
        if let Some(t) = t {
            let v = t.view();
            if v.numel() != d.c {
                return Err(check::size_err(
                    arg,
                    name,
                    format_args!("expected {} elements (the parameter's), got {}", d.c, v.desc()),
                ));
            }
        }
    }
    if on_device {
        return device::backward(
            d,
            input,
            grad_output,
            grad_input,
            grad_weight,
            grad_bias,
            weight,
            &stats,
            train,
            scale,
        );
    }
    host_backward(
        d,
        native_view(input)?,
        native_view(grad_output)?,
        nt(grad_input)?,
        nt(grad_weight)?,
        nt(grad_bias)?,
        weight.map(native_view).transpose()?,
        &stats,
        train,
        scale,
    )
}

#[allow(clippy::too_many_arguments)] // torch7's operands
fn host_backward<T: NnReal>(
    d: Dims,
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: Option<&Tensor<T>>,
    grad_weight: Option<&Tensor<T>>,
    grad_bias: Option<&Tensor<T>>,
    weight: Option<&View<T>>,
    stats: &[(f64, f64)],
    train: bool,
    scale: f64,
) -> Result<()> {
    let mut gw = grad_weight.map(|t| Out::acc(t, d.c, 5, "gradWeight")).transpose()?;
    let mut gb = grad_bias.map(|t| Out::acc(t, d.c, 6, "gradBias")).transpose()?;
    let w = values(weight, d.c, 1.0)?;
    // the mean as the forward pass used it (in the tensor's type)
    let mean: Vec<f64> = stats.iter().map(|s| T::from_f64(s.0).to_f64()).collect();

    let mut gi = grad_input.map(|t| Out::new(t, &input.sizes)).transpose()?;
    let outs: Vec<&View<T>> = [gi.as_ref(), gw.as_ref(), gb.as_ref()].into_iter().flatten().map(|o| o.view()).collect();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let seg = |f: usize, r: Range<usize>, s: &mut Sums| s.dot(&x[r.clone()], &g[r], mean[f]);
    let cn = d.count() as f64;
    let sums = match &mut gi {
        // gradInput = (g - mean(g) - (x - mean) * k) * invstd * w, k = mean(g * xhat) * invstd
        Some(gi) if train => reduce_apply(
            d,
            4,
            gi.as_mut(),
            seg,
            |f, (sum, dotp)| {
                let invstd = stats[f].1;
                let k = dotp * invstd * invstd / cn;
                (T::from_f64(mean[f]), T::from_f64(sum / cn), T::from_f64(k), T::from_f64(invstd * w[f]))
            },
            |&(m, gm, k, a), off, o| {
                let xs = &x[off..off + o.len()];
                let gs = &g[off..off + o.len()];
                for ((o, &xv), &gv) in o.iter_mut().zip(xs).zip(gs) {
                    *o = (gv - gm - (xv - m) * k) * a;
                }
            },
        )?,
        // gradInput = g * invstd * w
        Some(gi) => {
            let a: Vec<T> = (0..d.c).map(|f| T::from_f64(stats[f].1 * w[f])).collect();
            planes(gi.as_mut(), d, 2, |f, off, o| {
                let gs = &g[off..off + o.len()];
                for (o, &gv) in o.iter_mut().zip(gs) {
                    *o = gv * a[f];
                }
            });
            if gw.is_some() || gb.is_some() { reduce(d, 2, seg) } else { Vec::new() }
        }
        None if gw.is_some() || gb.is_some() => reduce(d, 2, seg),
        None => Vec::new(),
    };
    if let Some(gw) = &mut gw {
        for (f, o) in gw.as_mut().iter_mut().enumerate() {
            *o = T::from_f64(o.to_f64() + scale * sums[f].1 * stats[f].1);
        }
    }
    if let Some(gb) = &mut gb {
        for (f, o) in gb.as_mut().iter_mut().enumerate() {
            *o = T::from_f64(o.to_f64() + scale * sums[f].0);
        }
    }
    for o in [gi, gw, gb].into_iter().flatten() {
        o.finish()?;
    }
    Ok(())
}
