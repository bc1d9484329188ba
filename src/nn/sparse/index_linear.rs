//! IndexLinear (`nn.IndexLinear`): a linear layer whose input is a batch of (key, value) lists,
//! `output[j] = bias + sum over the pairs (k, v) of sample j of v * weight[k + keysOffset]`
//! (PyTorch: `F.embedding_bag(mode='sum', per_sample_weights=)` + bias).
//!
//! The batch arrives flattened: `keys` and `values` (1-D, the pairs of all samples one after the
//! other), `sizes` (the number of pairs of each sample) and `cumSumSizes` (their running sums,
//! checked). Keys are 0-based: `key + keysOffset` is the 0-based row of `weight` (torch7's Lua
//! passes 1-based keys with `keysOffset = -1`; the C arithmetic is the same).
//!
//! `weight` is `inputSize x outputSize`, or `inputSize x (4 + outputSize)` in max-normalized
//! mode (torch7's `normalize`): there each row starts with four per-key statistics (the largest
//! |value| seen, its inverse, a learning-rate scale, a per-key bias added to the normalized
//! value), and a value is used as `clamp(v / maxAbs) + keyBias`.
//!
//! On the device (THCUNN) the keys, sizes and running sums are read and checked on the host
//! (and the values in max-normalized `updateOutput`, whose statistics pass is sequential);
//! the arithmetic on the weights and gradients runs on the device (`super::device`).

use super::super::buf::{self, Out};
use super::super::check;
use super::super::{NnElem, NnReal, native_tensor, native_view};
use super::lookup::host_vec;
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use std::borrow::Cow;

/// The statistics columns of a max-normalized weight row.
pub(super) const NORM: usize = 4;

/// The layer's sizes: rows of `weight`, outputs, columns of `weight`, statistics columns (0 or 4).
pub(super) struct Params {
    pub in_size: usize,
    pub out_dim: usize,
    pub wcols: usize,
    pub norm: usize,
}

/// Checks `weight` (argument `w_arg`) against `bias` (`b_arg`).
fn params<T: Scalar>(weight: &View<T>, w_arg: u32, bias: &View<T>, b_arg: u32) -> Result<Params> {
    check::dims(weight, w_arg, "weight", &[2])?;
    check::dims(bias, b_arg, "bias", &[1])?;
    let (in_size, wcols, out_dim) = (weight.sizes[0] as usize, weight.sizes[1] as usize, bias.sizes[0] as usize);
    let norm = wcols.wrapping_sub(out_dim);
    if norm != 0 && norm != NORM {
        return Err(check::size_err(
            w_arg,
            "weight",
            format_args!(
                "expected {out_dim} columns (bias has {out_dim} outputs) or {} (max-normalized), got {}",
                out_dim + NORM,
                weight.desc()
            ),
        ));
    }
    Ok(Params { in_size, out_dim, wcols, norm })
}

/// The 0-based weight rows `key + keysOffset` of `keys` (argument `arg`, `name`), all in `[0, in_size)`.
fn key_rows(keys: &View<i64>, arg: u32, name: &str, offset: i64, in_size: usize) -> Result<Vec<usize>> {
    check::dims(keys, arg, name, &[1])?;
    let k = host_vec(keys)?;
    let mut rows = Vec::with_capacity(k.len());
    for (i, &key) in k.iter().enumerate() {
        let r = key.checked_add(offset).filter(|r| (0..in_size as i64).contains(r));
        let Some(r) = r else {
            return Err(check::index_err(
                arg,
                name,
                format_args!("element {i} is {key}: key + keysOffset ({offset}) is out of range [0, {in_size})"),
            ));
        };
        rows.push(r as usize);
    }
    Ok(rows)
}

/// A checked flattened batch: the weight row of each pair and where each sample's pairs start.
pub(super) struct Bag {
    pub rows: Vec<usize>,
    /// `starts[j]..starts[j + 1]` are the pairs of sample `j` (batch + 1 entries).
    pub starts: Vec<usize>,
}

impl Bag {
    pub(super) fn batch(&self) -> usize {
        self.starts.len() - 1
    }
    /// The sample of every pair.
    pub(super) fn sample_of(&self) -> Vec<usize> {
        let mut s = Vec::with_capacity(self.rows.len());
        for (j, w) in self.starts.windows(2).enumerate() {
            s.extend(std::iter::repeat_n(j, w[1] - w[0]));
        }
        s
    }
}

/// Checks `keys` (2), `values` (4), `sizes` (5) and `cumSumSizes` (6).
fn bag<T: Scalar>(
    keys: &View<i64>,
    keys_offset: i64,
    values: &View<T>,
    sizes: &View<i64>,
    cum_sum_sizes: &View<i64>,
    p: &Params,
) -> Result<Bag> {
    let rows = key_rows(keys, 2, "keys", keys_offset, p.in_size)?;
    check::dims(values, 4, "values", &[1])?;
    check::same_numel(values, 4, "values", keys, "keys")?;
    check::dims(sizes, 5, "sizes", &[1])?;
    check::dims(cum_sum_sizes, 6, "cumSumSizes", &[1])?;
    check::same_numel(cum_sum_sizes, 6, "cumSumSizes", sizes, "sizes")?;
    let sz = host_vec(sizes)?;
    let cum = host_vec(cum_sum_sizes)?;
    let mut starts = Vec::with_capacity(sz.len() + 1);
    starts.push(0usize);
    let mut total: i64 = 0;
    for (j, (&s, &c)) in sz.iter().zip(cum.iter()).enumerate() {
        if s < 0 {
            return Err(check::size_err(5, "sizes", format_args!("element {j} is {s}, expected a size >= 0")));
        }
        total = total.saturating_add(s);
        if c != total {
            return Err(check::size_err(
                6,
                "cumSumSizes",
                format_args!("element {j} is {c}, expected the running sum of sizes ({total})"),
            ));
        }
        if total > rows.len() as i64 {
            break;
        }
        starts.push(total as usize);
    }
    if total != rows.len() as i64 {
        return Err(check::size_err(
            5,
            "sizes",
            format_args!("sums to {total}, expected the number of keys ({})", rows.len()),
        ));
    }
    Ok(Bag { rows, starts })
}

/// torch7's sign: -1, 0 or 1.
fn sign<T: Num + PartialOrd>(v: T) -> T {
    if v < T::zero() {
        T::zero().sub(T::one())
    } else if v > T::zero() {
        T::one()
    } else {
        T::zero()
    }
}

/// A value normalized by the statistics `w` (a weight row's first four columns).
pub(super) fn normalized<T: Num + PartialOrd>(v: T, w: &[T]) -> T {
    let a = Num::abs(v);
    (if a > w[0] { sign(v) } else { v.mul(w[1]) }).add(w[3])
}
use crate::ops::num::Num;

/// `IndexLinear_updateOutput(state, keys, keysOffset, values, sizes, cumSumSizes, output,
/// weight, bias, normalizedValues, train)`: `output` (batch x outputSize) as in the module docs.
///
/// Max-normalized mode: the pairs are taken in order; with `train` (non-zero) each one first
/// updates its weight row's statistics (maxAbs and its inverse when |v| exceeds it, the
/// learning-rate scale set to 1), then its value is normalized with the row's current
/// statistics. The normalized values are stored in `normalizedValues` (resized to the number
/// of keys; may be NULL, then they are not kept), which `accGradParameters` and
/// `accUpdateGradParameters` take as their `values`. Without max-normalization
/// `normalizedValues` is ignored and `weight` is only read.
///
/// The samples are computed in parallel (the statistics pass is sequential).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: NnElem>(
    keys: &View<i64>,
    keys_offset: i64,
    values: &View<T>,
    sizes: &View<i64>,
    cum_sum_sizes: &View<i64>,
    output: &Tensor<T>,
    weight: &Tensor<T>,
    bias: &View<T>,
    normalized_values: Option<&Tensor<T>>,
    train: bool,
) -> Result<()> {
    let w_view = weight.view();
    let mut devices =
        vec![keys.device(), values.device(), sizes.device(), cum_sum_sizes.device(), output.view().device()];
    devices.extend([w_view.device(), bias.device()]);
    devices.extend(normalized_values.map(|t| t.view().device()));
    Backend::of(&devices)?;
    let p = params(&w_view, 8, bias, 9)?;
    let b = bag(keys, keys_offset, values, sizes, cum_sum_sizes, &p)?;
    if let Device::Cuda(_) = w_view.device() {
        return super::device::index_update_output(&p, &b, values, output, weight, bias, normalized_values, train);
    }
    host_update_output(
        &p,
        &b,
        native_view(values)?,
        native_tensor(output)?,
        native_tensor(weight)?,
        native_view(bias)?,
        normalized_values.map(native_tensor).transpose()?,
        train,
    )
}

/// `update_output` on the host.
#[allow(clippy::too_many_arguments)]
fn host_update_output<T: NnReal>(
    p: &Params,
    b: &Bag,
    values: &View<T>,
    output: &Tensor<T>,
    weight: &Tensor<T>,
    bias: &View<T>,
    normalized_values: Option<&Tensor<T>>,
    train: bool,
) -> Result<()> {
    let w_view = weight.view();
    let n = b.rows.len();

    let mut out = Out::new(output, &[b.batch() as i64, p.out_dim as i64])?;
    let mut w_out = if p.norm > 0 && train { Some(Out::acc(weight, p.in_size * p.wcols, 8, "weight")?) } else { None };
    let mut nv_out = match normalized_values {
        Some(t) if p.norm > 0 => Some(Out::new(t, &[n as i64])?),
        _ => None,
    };
    let outs: Vec<&View<T>> = [Some(out.view()), w_out.as_ref().map(|o| o.view()), nv_out.as_ref().map(|o| o.view())]
        .into_iter()
        .flatten()
        .collect();
    let vals = buf::read(values, &outs)?;
    let bias = buf::read(bias, &outs)?;
    let w_read: Cow<[T]> = if w_out.is_some() { Cow::Borrowed(&[]) } else { buf::read(&w_view, &outs)? };
    drop(outs);

    let (w, used): (&[T], Cow<[T]>) = match &mut w_out {
        Some(wo) => {
            // train in max-normalized mode: update the statistics pair by pair.
            let ws = wo.as_mut();
            let mut nv = Vec::with_capacity(n);
            for (&r, &v) in b.rows.iter().zip(vals.iter()) {
                let st = &mut ws[r * p.wcols..r * p.wcols + NORM];
                let a = Num::abs(v);
                if a > st[0] {
                    st[0] = a;
                    st[1] = T::one() / a;
                }
                st[2] = T::one();
                nv.push(normalized(v, st));
            }
            (&*ws, Cow::Owned(nv))
        }
        None if p.norm > 0 => {
            let nv = b.rows.iter().zip(vals.iter()).map(|(&r, &v)| normalized(v, &w_read[r * p.wcols..])).collect();
            (&w_read[..], Cow::Owned(nv))
        }
        None => (&w_read[..], vals.clone()),
    };
    let od = p.out_dim;
    buf::par_chunks(out.as_mut(), od, n * od, |j, row| {
        row.copy_from_slice(&bias);
        for i in b.starts[j]..b.starts[j + 1] {
            let base = b.rows[i] * p.wcols + p.norm;
            let val = used[i];
            for (o, &x) in row.iter_mut().zip(&w[base..base + od]) {
                *o += x * val;
            }
        }
    });
    if let Some(nv) = &mut nv_out {
        nv.as_mut().copy_from_slice(&used);
    }
    out.finish()?;
    if let Some(wo) = w_out {
        wo.finish()?;
    }
    if let Some(nv) = nv_out {
        nv.finish()?;
    }
    Ok(())
}

/// `IndexLinear_accGradParameters(state, keys, keysOffset, values, sizes, cumSumSizes,
/// gradOutput, gradWeight, gradBias, weight, bias, valuesBuffer, weightDecay, scale)`: the
/// gradient of the weight rows the batch touched, kept dense per pair (as torch7 does):
/// `gradWeight` is resized to `nKeys x outputSize` and row `i` set to `scale * value_i *
/// gradOutput[sample of i]`; in max-normalized mode it is `nKeys x 2*outputSize`, row `i` being
/// `[scale * gradOutput[j], scale * value_i * gradOutput[j]]` (the gradient of the key's bias,
/// then of its weights). `gradBias += scale * (sum over the batch of gradOutput)`. `values` are
/// the normalized values in max-normalized mode. `gradOutput` holds batch x outputSize
/// elements. `weight` and `bias` only give the sizes; `valuesBuffer` (may be NULL) and
/// `weightDecay` are unused, as in torch7 (the decay is applied by `updateParameters`).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: NnElem>(
    keys: &View<i64>,
    keys_offset: i64,
    values: &View<T>,
    sizes: &View<i64>,
    cum_sum_sizes: &View<i64>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    weight: &View<T>,
    bias: &View<T>,
    scale: f64,
) -> Result<()> {
    let mut devices =
        vec![keys.device(), values.device(), sizes.device(), cum_sum_sizes.device(), grad_output.device()];
    devices.extend([grad_weight.view().device(), grad_bias.view().device(), weight.device(), bias.device()]);
    Backend::of(&devices)?;
    let p = params(weight, 10, bias, 11)?;
    let b = bag(keys, keys_offset, values, sizes, cum_sum_sizes, &p)?;
    let od = p.out_dim;
    check::numel(grad_output, 7, "gradOutput", b.batch() * od)?;
    check::numel(&grad_bias.view(), 9, "gradBias", od)?;
    if let Device::Cuda(_) = weight.device() {
        return super::device::index_acc_grad_parameters(&p, &b, values, grad_output, grad_weight, grad_bias, scale);
    }
    host_acc_grad_parameters(
        &p,
        &b,
        native_view(values)?,
        native_view(grad_output)?,
        native_tensor(grad_weight)?,
        native_tensor(grad_bias)?,
        scale,
    )
}

/// `acc_grad_parameters` on the host.
fn host_acc_grad_parameters<T: NnReal>(
    p: &Params,
    b: &Bag,
    values: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    scale: f64,
) -> Result<()> {
    let od = p.out_dim;
    let width = if p.norm > 0 { 2 * od } else { od };
    let n = b.rows.len();

    let mut gw = Out::new(grad_weight, &[n as i64, width as i64])?;
    let mut gb = Out::acc(grad_bias, od, 9, "gradBias")?;
    let outs = [gw.view(), gb.view()];
    let go = buf::read(grad_output, &outs)?;
    let vals = buf::read(values, &outs)?;
    let s = T::from_f64(scale);
    let sample = b.sample_of();
    buf::par_chunks(gw.as_mut(), width, n * width, |i, row| {
        let g = &go[sample[i] * od..(sample[i] + 1) * od];
        let (head, tail) = row.split_at_mut(width - od);
        for (r, &x) in head.iter_mut().zip(g) {
            *r = x * s;
        }
        let val = vals[i] * s;
        for (r, &x) in tail.iter_mut().zip(g) {
            *r = val * x;
        }
    });
    let acc = gb.as_mut();
    for g in go.chunks(od.max(1)) {
        for (a, &x) in acc.iter_mut().zip(g) {
            *a += x * s;
        }
    }
    gw.finish()?;
    gb.finish()
}

/// `IndexLinear_accUpdateGradParameters(state, keys, keysOffset, values, sizes, cumSumSizes,
/// gradOutput, weight, bias, weightDecay, scale)`: the gradient step applied directly, pair by
/// pair in order: `bias -= scale * gradOutput[j]` for every sample; for every pair (k, v) of
/// sample `j`, `w = weight[k + keysOffset]` is decayed (`w -= weightDecay * w`, when
/// `weightDecay` is non-zero) then `w -= scale * v * gradOutput[j]`. In max-normalized mode
/// both the step and the decay are multiplied by the row's learning-rate scale `lr`, and first
/// the key's bias takes its step, `keyBias -= lr * scale * (w . gradOutput[j])`.
///
/// Differences from torch7 (its outputSize == 1 max-normalized branch): the decay shrinks the
/// weight there too (torch7 adds it, a sign error), and the learning-rate scales are left as
/// they are (torch7 zeroes them in that branch only, code its other branch has commented out).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_update_grad_parameters<T: NnElem>(
    keys: &View<i64>,
    keys_offset: i64,
    values: &View<T>,
    sizes: &View<i64>,
    cum_sum_sizes: &View<i64>,
    grad_output: &View<T>,
    weight: &Tensor<T>,
    bias: &Tensor<T>,
    weight_decay: f64,
    scale: f64,
) -> Result<()> {
    let mut devices =
        vec![keys.device(), values.device(), sizes.device(), cum_sum_sizes.device(), grad_output.device()];
    devices.extend([weight.view().device(), bias.view().device()]);
    Backend::of(&devices)?;
    let p = params(&weight.view(), 8, &bias.view(), 9)?;
    let b = bag(keys, keys_offset, values, sizes, cum_sum_sizes, &p)?;
    let od = p.out_dim;
    check::numel(grad_output, 7, "gradOutput", b.batch() * od)?;
    if let Device::Cuda(_) = grad_output.device() {
        return super::device::index_acc_update_grad_parameters(
            &p,
            &b,
            values,
            grad_output,
            &weight.view(),
            &bias.view(),
            weight_decay,
            scale,
        );
    }
    host_acc_update_grad_parameters(
        &p,
        &b,
        native_view(values)?,
        native_view(grad_output)?,
        native_tensor(weight)?,
        native_tensor(bias)?,
        weight_decay,
        scale,
    )
}

/// `acc_update_grad_parameters` on the host.
#[allow(clippy::too_many_arguments)]
fn host_acc_update_grad_parameters<T: NnReal>(
    p: &Params,
    b: &Bag,
    values: &View<T>,
    grad_output: &View<T>,
    weight: &Tensor<T>,
    bias: &Tensor<T>,
    weight_decay: f64,
    scale: f64,
) -> Result<()> {
    let od = p.out_dim;

    let mut w_out = Out::acc(weight, p.in_size * p.wcols, 8, "weight")?;
    let mut b_out = Out::acc(bias, od, 9, "bias")?;
    let outs = [w_out.view(), b_out.view()];
    let go = buf::read(grad_output, &outs)?;
    let vals = buf::read(values, &outs)?;
    let (s, wd) = (T::from_f64(scale), T::from_f64(weight_decay));
    let w = w_out.as_mut();
    let bs = b_out.as_mut();
    for j in 0..b.batch() {
        let g = &go[j * od..(j + 1) * od];
        for (x, &y) in bs.iter_mut().zip(g) {
            *x -= y * s;
        }
        for i in b.starts[j]..b.starts[j + 1] {
            let row = &mut w[b.rows[i] * p.wcols..(b.rows[i] + 1) * p.wcols];
            let (st, wr) = row.split_at_mut(p.norm);
            let mut val = vals[i] * s;
            let mut wdl = wd;
            if p.norm > 0 {
                let lr = st[2];
                val *= lr;
                wdl *= lr;
                for (&x, &y) in wr.iter().zip(g) {
                    st[3] -= x * s * y * lr;
                }
            }
            step(wr, g, val, wdl, weight_decay != 0.0);
        }
    }
    w_out.finish()?;
    b_out.finish()
}

/// `w = w - wd * w` (when `decay`), then `w -= val * g`.
fn step<T: NnReal>(w: &mut [T], g: &[T], val: T, wd: T, decay: bool) {
    if decay {
        for x in w.iter_mut() {
            *x -= wd * *x;
        }
    }
    for (x, &y) in w.iter_mut().zip(g) {
        *x -= val * y;
    }
}

/// `IndexLinear_updateParameters(state, gradWeight, gradBias, weight, bias, runningKeys,
/// cumSumSizes, keysOffset, weightDecay, learningRate)`: applies the dense per-key gradient
/// `accGradParameters` built (`gradWeight`, one row per key of `runningKeys`, 1-D 0-based
/// keys), key by key in order: `bias -= learningRate * gradBias`; for key `k`, `w =
/// weight[k + keysOffset]` is decayed (`w -= weightDecay * w`, when non-zero) then `w -=
/// learningRate * gradWeight[i]`. In max-normalized mode the rate and decay are multiplied by
/// the row's learning-rate scale, and first `keyBias -= rate * (gradWeight[i][:outputSize] .
/// w)`. `cumSumSizes` is unused (may be NULL), as in torch7.
///
/// Difference from torch7: in its outputSize == 1 max-normalized branch the decay is added to
/// the weight (a sign error); here it shrinks it, as in every other branch.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_parameters<T: NnElem>(
    grad_weight: &View<T>,
    grad_bias: &View<T>,
    weight: &Tensor<T>,
    bias: &Tensor<T>,
    running_keys: &View<i64>,
    keys_offset: i64,
    weight_decay: f64,
    learning_rate: f64,
) -> Result<()> {
    let devices = [grad_weight.device(), grad_bias.device(), weight.view().device(), bias.view().device()];
    Backend::of(&[&devices[..], &[running_keys.device()]].concat())?;
    let p = params(&weight.view(), 4, &bias.view(), 5)?;
    let rows = key_rows(running_keys, 6, "runningKeys", keys_offset, p.in_size)?;
    let od = p.out_dim;
    let width = if p.norm > 0 { 2 * od } else { od };
    check::numel(grad_weight, 2, "gradWeight", rows.len() * width)?;
    check::numel(grad_bias, 3, "gradBias", od)?;
    if let Device::Cuda(_) = grad_weight.device() {
        return super::device::index_update_parameters(
            &p,
            &rows,
            grad_weight,
            grad_bias,
            &weight.view(),
            &bias.view(),
            weight_decay,
            learning_rate,
        );
    }
    host_update_parameters(
        &p,
        &rows,
        native_view(grad_weight)?,
        native_view(grad_bias)?,
        native_tensor(weight)?,
        native_tensor(bias)?,
        weight_decay,
        learning_rate,
    )
}

/// `update_parameters` on the host.
#[allow(clippy::too_many_arguments)]
fn host_update_parameters<T: NnReal>(
    p: &Params,
    rows: &[usize],
    grad_weight: &View<T>,
    grad_bias: &View<T>,
    weight: &Tensor<T>,
    bias: &Tensor<T>,
    weight_decay: f64,
    learning_rate: f64,
) -> Result<()> {
    let od = p.out_dim;
    let width = if p.norm > 0 { 2 * od } else { od };

    let mut w_out = Out::acc(weight, p.in_size * p.wcols, 4, "weight")?;
    let mut b_out = Out::acc(bias, od, 5, "bias")?;
    let outs = [w_out.view(), b_out.view()];
    let gw = buf::read(grad_weight, &outs)?;
    let gb = buf::read(grad_bias, &outs)?;
    let (lr, wd) = (T::from_f64(learning_rate), T::from_f64(weight_decay));
    for (x, &y) in b_out.as_mut().iter_mut().zip(gb.iter()) {
        *x -= y * lr;
    }
    let w = w_out.as_mut();
    for (i, &r) in rows.iter().enumerate() {
        let g = &gw[i * width..(i + 1) * width];
        let row = &mut w[r * p.wcols..(r + 1) * p.wcols];
        let (st, wr) = row.split_at_mut(p.norm);
        let (mut lrs, mut wds) = (lr, wd);
        if p.norm > 0 {
            lrs *= st[2];
            wds *= st[2];
            for (&gk, &x) in g[..od].iter().zip(wr.iter()) {
                st[3] -= gk * x * lrs;
            }
        }
        step(wr, &g[width - od..], lrs, wds, weight_decay != 0.0);
    }
    w_out.finish()?;
    b_out.finish()
}
