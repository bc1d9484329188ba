//! SparseLinear (`nn.SparseLinear`): `output = input @ weight^T + bias` for a sparse input,
//! `weight` being outputSize x inputSize (PyTorch: `torch.sparse.addmm(bias, x, weight.t())`).
//!
//! Two input formats ([`Format`]):
//! - `Coo`: an `nnz x 3` tensor of (batch row, feature, value) triples, the batch row and the
//!   feature 0-based (torch7: both 1-based). Any order is accepted (torch7 needs them sorted by
//!   row for the forward pass and by feature for the gradient; its Lua sorts).
//! - `Legacy`: a `batch x nnz x 2` tensor of (feature, value) pairs per sample, the feature
//!   0-based (torch7: 1-based).
//!
//! Indices are stored as reals: each must be a whole number in range (else an index error).
//! Entries whose value is 0 are skipped by every function (torch7 skips them in most).
//!
//! On the device (THCUNN) the input is read and checked on the host (its indices are reals);
//! the arithmetic runs on the device in the compute type with th's index ops, in the host's
//! order (`super::device`).

use super::super::buf::{self, Out};
use super::super::check;
use super::super::{NnElem, NnReal, native_tensor, native_view};
use super::lookup::host_vec;
use crate::core::allocator::Device;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;

/// The layout of a sparse input (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `nnz x 3` (row, feature, value) triples.
    Coo,
    /// `batch x nnz x 2` (feature, value) pairs.
    Legacy,
}

/// One non-zero: batch row, feature, value.
#[derive(Clone, Copy)]
pub(super) struct Entry<T> {
    pub row: usize,
    pub col: usize,
    pub val: T,
}

/// A checked sparse input.
pub(super) struct Sparse<T> {
    pub entries: Vec<Entry<T>>,
    /// The number of batch rows (given, inferred, or the legacy input's first size).
    pub batch: usize,
}

impl<T: NnElem> Sparse<T> {
    /// The entries with their values in the compute type (the host kernels' type).
    fn native(&self) -> Sparse<T::R> {
        let entries = self.entries.iter().map(|e| Entry { row: e.row, col: e.col, val: e.val.to_r() }).collect();
        Sparse { entries, batch: self.batch }
    }
    /// The entries with a non-zero value, in order.
    pub(super) fn non_zero(&self) -> impl Iterator<Item = &Entry<T>> {
        self.entries.iter().filter(|e| e.val != T::zero())
    }
}

/// `x` as an index in `[0, hi)` (`hi` None: any non-negative whole number).
fn as_index(x: f64, hi: Option<usize>) -> Option<usize> {
    let ok = x.is_finite() && x >= 0.0 && x.fract() == 0.0 && hi.is_none_or(|h| x < h as f64);
    ok.then_some(x as usize)
}

/// Reads `input` (argument `arg`, `name`): the features must lie in `[0, in_dim)`; the COO rows
/// in `[0, batch)` when `batch` is given (else the batch is 1 + the largest row).
fn parse<T: NnElem>(
    input: &View<T>,
    arg: u32,
    name: &str,
    fmt: Format,
    in_dim: usize,
    batch: Option<usize>,
) -> Result<Sparse<T>> {
    let legacy = fmt == Format::Legacy;
    if input.numel() == 0 {
        // TH keeps no shape for an empty tensor: no entries, whatever its sizes.
        let batch = if legacy && input.ndim() == 3 { input.sizes[0] as usize } else { batch.unwrap_or(0) };
        return Ok(Sparse { entries: Vec::new(), batch });
    }
    let shape_ok =
        if legacy { input.ndim() == 3 && input.sizes[2] == 2 } else { input.ndim() == 2 && input.sizes[1] == 3 };
    if !shape_ok {
        let want = if legacy {
            "a batch x nnz x 2 tensor of (feature, value) pairs"
        } else {
            "an nnz x 3 tensor of (row, feature, value) triples"
        };
        return Err(check::size_err(arg, name, format_args!("expected {want}, got {}", input.desc())));
    }
    let x = host_vec(input)?;
    let width = if legacy { 2 } else { 3 };
    let per_row = if legacy { input.sizes[1] as usize } else { 0 };
    let mut entries = Vec::with_capacity(x.len() / width);
    let mut max_row = None;
    for (i, e) in x.chunks_exact(width).enumerate() {
        let (row, col, val) = if legacy {
            (Some(i / per_row.max(1)), e[0], e[1])
        } else {
            let r = as_index(e[0].to_f64(), batch);
            if r.is_none() {
                let range = batch.map_or("a whole number >= 0".to_string(), |b| format!("a row in [0, {b})"));
                return Err(check::index_err(
                    arg,
                    name,
                    format_args!("entry {i}: row {} is not {range}", e[0].to_f64()),
                ));
            }
            (r, e[1], e[2])
        };
        let Some(c) = as_index(col.to_f64(), Some(in_dim)) else {
            return Err(check::index_err(
                arg,
                name,
                format_args!("entry {i}: feature {} is not a whole number in [0, {in_dim})", col.to_f64()),
            ));
        };
        let row = row.unwrap_or(0);
        max_row = max_row.max(Some(row));
        entries.push(Entry { row, col: c, val });
    }
    let batch = match (fmt, batch) {
        (Format::Legacy, _) => input.sizes[0] as usize,
        (Format::Coo, Some(b)) => b,
        (Format::Coo, None) => max_row.map_or(0, |r| r + 1),
    };
    Ok(Sparse { entries, batch })
}

/// Checks `weight` (argument `arg`, 2-D): (outputSize, inputSize).
fn weight_dims<T: crate::core::dtype::Scalar>(weight: &View<T>, arg: u32) -> Result<(usize, usize)> {
    check::dims(weight, arg, "weight", &[2])?;
    Ok((weight.sizes[0] as usize, weight.sizes[1] as usize))
}

/// `SparseLinear_updateOutput` / `SparseLinear_legacyUpdateOutput(state, input, output, weight,
/// bias)`: `output` (batch x outputSize) = `bias` + the sum over the entries (row h, feature c,
/// value v) of `v * weight[:, c]` into row h. COO: the batch is `output`'s first size when
/// `output` is 2-D (torch7 takes it from there; its Lua resizes `output` to (#samples,
/// outputSize) first), else 1 + the largest row of `input`. Legacy: `input`'s first size.
/// The rows are computed in parallel (on the device: `super::device::sparse_update_output`).
pub fn update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: &View<T>,
    fmt: Format,
) -> Result<()> {
    let given = output.view();
    Backend::of(&[input.device(), given.device(), weight.device(), bias.device()])?;
    let (od, id) = weight_dims(weight, 4)?;
    check::shape(bias, 5, "bias", &[od as i64])?;
    let batch = (fmt == Format::Coo && given.ndim() == 2).then(|| given.sizes[0] as usize);
    let sp = parse(input, 2, "input", fmt, id, batch)?;
    if let Device::Cuda(_) = weight.device() {
        return super::device::sparse_update_output(&sp, output, weight, bias);
    }
    host_update_output(&sp.native(), native_tensor(output)?, native_view(weight)?, native_view(bias)?, (od, id))
}

/// `update_output` on the host.
fn host_update_output<T: NnReal>(
    sp: &Sparse<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: &View<T>,
    (od, id): (usize, usize),
) -> Result<()> {
    // entries grouped by row, stably (a counting sort)
    let mut starts = vec![0usize; sp.batch + 1];
    for e in &sp.entries {
        starts[e.row + 1] += 1;
    }
    for h in 0..sp.batch {
        starts[h + 1] += starts[h];
    }
    let mut next = starts.clone();
    let mut order = vec![0usize; sp.entries.len()];
    for (i, e) in sp.entries.iter().enumerate() {
        order[next[e.row]] = i;
        next[e.row] += 1;
    }

    let mut out = Out::new(output, &[sp.batch as i64, od as i64])?;
    let w = buf::read(weight, &[out.view()])?;
    let b = buf::read(bias, &[out.view()])?;
    // The columns of `weight` are strided: with at least as many entries as features, reading
    // them from a transposed copy (inputSize x outputSize) costs less than the strided reads.
    let wt = (sp.entries.len() >= id).then(|| transpose(&w, od, id));
    buf::par_chunks(out.as_mut(), od, sp.entries.len() * od + sp.batch * od, |h, row| {
        row.fill(T::zero());
        for &i in &order[starts[h]..starts[h + 1]] {
            let e = sp.entries[i];
            if e.val == T::zero() {
                continue;
            }
            match &wt {
                Some(wt) => {
                    for (o, &x) in row.iter_mut().zip(&wt[e.col * od..(e.col + 1) * od]) {
                        *o += e.val * x;
                    }
                }
                None => {
                    for (o, &x) in row.iter_mut().zip(w[e.col..].iter().step_by(id)) {
                        *o += e.val * x;
                    }
                }
            }
        }
        for (o, &x) in row.iter_mut().zip(b.iter()) {
            *o += x;
        }
    });
    out.finish()
}

/// `SparseLinear_accGradParameters` / `SparseLinear_legacyAccGradParameters(state, input,
/// gradOutput, gradWeight, gradBias, weight, bias, weightDecay, scale)`: `gradWeight[:, c] +=
/// scale * v * gradOutput[h]` for every entry (h, c, v); `gradBias += scale * (sum over the rows
/// of gradOutput)`; then, when `weightDecay` is non-zero, `gradWeight += weightDecay * weight`.
/// `gradOutput`: COO: batch x outputSize (or a vector, one sample), the entries' rows below its
/// batch; legacy: batch x outputSize elements. `bias` is unused (may be NULL). The rows of
/// `gradWeight` are computed in parallel (on the device:
/// `super::device::sparse_acc_grad_parameters`).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    weight: &View<T>,
    weight_decay: f64,
    scale: f64,
    fmt: Format,
) -> Result<()> {
    Backend::of(&[
        input.device(),
        grad_output.device(),
        grad_weight.view().device(),
        grad_bias.view().device(),
        weight.device(),
    ])?;
    let (od, id) = weight_dims(weight, 6)?;
    check::shape(&grad_weight.view(), 4, "gradWeight", &[od as i64, id as i64])?;
    check::shape(&grad_bias.view(), 5, "gradBias", &[od as i64])?;
    let sp = match fmt {
        Format::Coo => {
            check::dims(grad_output, 3, "gradOutput", &[1, 2])?;
            let batch = if grad_output.ndim() == 2 { grad_output.sizes[0] as usize } else { 1 };
            let want: Vec<i64> = if grad_output.ndim() == 2 { vec![batch as i64, od as i64] } else { vec![od as i64] };
            check::shape(grad_output, 3, "gradOutput", &want)?;
            parse(input, 2, "input", fmt, id, Some(batch))?
        }
        Format::Legacy => {
            let sp = parse(input, 2, "input", fmt, id, None)?;
            check::numel(grad_output, 3, "gradOutput", sp.batch * od)?;
            sp
        }
    };
    if let Device::Cuda(_) = weight.device() {
        return super::device::sparse_acc_grad_parameters(
            &sp,
            grad_output,
            grad_weight,
            grad_bias,
            weight,
            weight_decay,
            scale,
        );
    }
    host_acc_grad_parameters(
        &sp.native(),
        native_view(grad_output)?,
        native_tensor(grad_weight)?,
        native_tensor(grad_bias)?,
        native_view(weight)?,
        (od, id),
        weight_decay,
        scale,
    )
}

/// `acc_grad_parameters` on the host.
#[allow(clippy::too_many_arguments)]
fn host_acc_grad_parameters<T: NnReal>(
    sp: &Sparse<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    weight: &View<T>,
    (od, id): (usize, usize),
    weight_decay: f64,
    scale: f64,
) -> Result<()> {
    let mut gw = Out::acc(grad_weight, od * id, 4, "gradWeight")?;
    let mut gb = Out::acc(grad_bias, od, 5, "gradBias")?;
    let outs = [gw.view(), gb.view()];
    let go = buf::read(grad_output, &outs)?;
    let w = buf::read(weight, &outs)?;
    let (s, wd) = (T::from_f64(scale), T::from_f64(weight_decay));
    let got = transpose(&go, sp.batch, od); // row o: output o's gradient over the batch
    buf::par_chunks(gw.as_mut(), id, sp.entries.len() * od + od * id, |o, row| {
        let g = &got[o * sp.batch..(o + 1) * sp.batch];
        for e in &sp.entries {
            if e.val != T::zero() {
                row[e.col] += s * e.val * g[e.row];
            }
        }
        if weight_decay != 0.0 {
            for (g, &x) in row.iter_mut().zip(&w[o * id..(o + 1) * id]) {
                *g += wd * x;
            }
        }
    });
    let acc = gb.as_mut();
    for g in go.chunks(od.max(1)) {
        for (a, &x) in acc.iter_mut().zip(g) {
            *a += s * x;
        }
    }
    gw.finish()?;
    gb.finish()
}

/// The transpose (cols x rows) of the row-major `rows x cols` matrix `m`.
fn transpose<T: NnReal>(m: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut t = vec![T::zero(); rows * cols];
    for (r, row) in m.chunks_exact(cols.max(1)).take(rows).enumerate() {
        for (c, &x) in row.iter().enumerate() {
            t[c * rows + r] = x;
        }
    }
    t
}

/// The features with a non-zero value in `last` (sorted, once each).
pub(super) fn touched<T: NnElem>(last: &Sparse<T>) -> Vec<usize> {
    let mut cols: Vec<usize> = last.entries.iter().filter(|e| e.val != T::zero()).map(|e| e.col).collect();
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// `SparseLinear_zeroGradParameters` / `SparseLinear_legacyZeroGradParameters(state,
/// gradWeight, gradBias, lastInput)`: zeroes `gradBias` and the columns of `gradWeight`
/// (outputSize x inputSize) of the features with a non-zero value in `lastInput` (the input
/// the gradients were accumulated from), leaving the others alone.
pub fn zero_grad_parameters<T: NnElem>(
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    last_input: &View<T>,
    fmt: Format,
) -> Result<()> {
    let gw_view = grad_weight.view();
    Backend::of(&[gw_view.device(), grad_bias.view().device(), last_input.device()])?;
    check::dims(&gw_view, 2, "gradWeight", &[2])?;
    let (od, id) = (gw_view.sizes[0] as usize, gw_view.sizes[1] as usize);
    check::shape(&grad_bias.view(), 3, "gradBias", &[od as i64])?;
    let last = parse(last_input, 4, "lastInput", fmt, id, None)?;
    let cols = touched(&last);
    if let Device::Cuda(_) = gw_view.device() {
        return super::device::sparse_zero_grad_parameters(&gw_view, &grad_bias.view(), &cols);
    }
    host_zero_grad_parameters(native_tensor(grad_weight)?, native_tensor(grad_bias)?, &cols, (od, id))
}

/// `zero_grad_parameters` on the host.
fn host_zero_grad_parameters<T: NnReal>(
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    cols: &[usize],
    (od, id): (usize, usize),
) -> Result<()> {
    let mut gw = Out::acc(grad_weight, od * id, 2, "gradWeight")?;
    let mut gb = Out::acc(grad_bias, od, 3, "gradBias")?;
    gb.as_mut().fill(T::zero());
    buf::par_chunks(gw.as_mut(), id, cols.len() * od, |_, row| {
        for &c in cols {
            row[c] = T::zero();
        }
    });
    gw.finish()?;
    gb.finish()
}

/// `SparseLinear_updateParameters` / `SparseLinear_legacyUpdateParameters(state, weight, bias,
/// gradWeight, gradBias, lastInput, learningRate)`: `bias -= learningRate * gradBias` and, for
/// the features with a non-zero value in `lastInput`, `weight[:, c] -= learningRate *
/// gradWeight[:, c]` (the other columns are left alone). Difference from torch7: the bias is
/// updated even when `lastInput` has no non-zero value (torch7's COO form returns early, and
/// its legacy form then reads an unset column).
pub fn update_parameters<T: NnElem>(
    weight: &Tensor<T>,
    bias: &Tensor<T>,
    grad_weight: &View<T>,
    grad_bias: &View<T>,
    last_input: &View<T>,
    learning_rate: f64,
    fmt: Format,
) -> Result<()> {
    let w_view = weight.view();
    Backend::of(&[
        w_view.device(),
        bias.view().device(),
        grad_weight.device(),
        grad_bias.device(),
        last_input.device(),
    ])?;
    let (od, id) = weight_dims(&w_view, 2)?;
    check::shape(&bias.view(), 3, "bias", &[od as i64])?;
    check::shape(grad_weight, 4, "gradWeight", &[od as i64, id as i64])?;
    check::shape(grad_bias, 5, "gradBias", &[od as i64])?;
    let last = parse(last_input, 6, "lastInput", fmt, id, None)?;
    let cols = touched(&last);
    if let Device::Cuda(_) = w_view.device() {
        return super::device::sparse_update_parameters(
            &w_view,
            &bias.view(),
            grad_weight,
            grad_bias,
            &cols,
            learning_rate,
        );
    }
    host_update_parameters(
        native_tensor(weight)?,
        native_tensor(bias)?,
        native_view(grad_weight)?,
        native_view(grad_bias)?,
        &cols,
        (od, id),
        learning_rate,
    )
}

/// `update_parameters` on the host.
fn host_update_parameters<T: NnReal>(
    weight: &Tensor<T>,
    bias: &Tensor<T>,
    grad_weight: &View<T>,
    grad_bias: &View<T>,
    cols: &[usize],
    (od, id): (usize, usize),
    learning_rate: f64,
) -> Result<()> {
    let mut w = Out::acc(weight, od * id, 2, "weight")?;
    let mut b = Out::acc(bias, od, 3, "bias")?;
    let outs = [w.view(), b.view()];
    let gw = buf::read(grad_weight, &outs)?;
    let gb = buf::read(grad_bias, &outs)?;
    let lr = T::from_f64(learning_rate);
    for (x, &g) in b.as_mut().iter_mut().zip(gb.iter()) {
        *x -= lr * g;
    }
    buf::par_chunks(w.as_mut(), id, cols.len() * od, |o, row| {
        let g = &gw[o * id..(o + 1) * id];
        for &c in cols {
            row[c] -= lr * g[c];
        }
    });
    w.finish()?;
    b.finish()
}
