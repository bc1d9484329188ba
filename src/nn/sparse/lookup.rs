//! LookupTable (`nn.LookupTable`, PyTorch's `F.embedding`): the forward pass is an
//! `index_select` done by the caller; THNN holds the weight gradient (`accGradParameters`) and
//! the max-norm renormalisation of the looked-up rows (`renorm`).
//!
//! 0-based: the input's indices and `paddingValue` are rows of `gradWeight` counted from 0
//! (torch7: from 1, `paddingValue` 0 meaning "none"). Here a `paddingValue` outside
//! `[0, nIndex)` (e.g. -1) means no padding row.
//!
//! On the device (THCUNN) both run on th's index ops, with the indices read and checked on the
//! host: the gradient gathers the non-padding positions' gradOutput rows, scales them (the
//! products formed exactly in f64 from the compute type's factors and rounded once) and adds
//! them with the device's `indexAdd`, which adds repeated rows in position order, as the host
//! does; `renorm` copies the named rows to the host, computes their norms and factors there in
//! the host's order, and scales them on the device.

use super::super::buf::{self, Out};
use super::super::check;
use super::super::{NnElem, NnReal, native_tensor};
use super::rows_mut;
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::ops::num::Num;
use crate::ops::{self, index};

/// A gradient row and the (row, position) pairs that add into it.
type Job<'a, T> = (&'a mut [T], &'a [(usize, usize)]);

/// `LookupTable_accGradParameters(state, input, gradOutput, gradWeight, count, sorted, indices,
/// scaleGradByFreq, paddingValue, scale)`: for every position `i` of `input` (1-D or 2-D, 0-based
/// rows of `gradWeight`, nIndex x dim) whose index `k` is not `paddingValue`,
/// `gradWeight[k] += scale * gradOutput[i]` (`gradOutput` holds `input.numel() * dim` elements,
/// read as rows of `dim`). With `scaleGradByFreq` the term is divided by the number of times `k`
/// occurs in `input`, and `count` (may be NULL) is resized to nIndex and set to those
/// occurrence counts (0 for rows that do not occur; torch7 leaves those unspecified). `sorted`
/// and `indices` are CUDA-only buffers: ignored, may be NULL.
///
/// The rows are updated in parallel, each by one piece in the order of the input positions, so
/// the result does not depend on the thread count.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: NnElem, C: Num>(
    input: &View<i64>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    count: Option<&Tensor<C>>,
    scale_grad_by_freq: bool,
    padding_value: i64,
    scale: f64,
) -> Result<()> {
    let gw_view = grad_weight.view();
    let mut devices = vec![input.device(), grad_output.device(), gw_view.device()];
    devices.extend(count.map(|c| c.with_view(|v| v.device())));
    Backend::of(&devices)?;
    check::dims(input, 2, "input", &[1, 2])?;
    check::dims(&gw_view, 4, "gradWeight", &[2])?;
    let (numw, dim) = (gw_view.sizes[0] as usize, gw_view.sizes[1] as usize);
    let n = input.numel();
    check::numel(grad_output, 3, "gradOutput", n * dim)?;
    let idx = host_vec(input)?;
    check::indices(&idx, 2, "input", 0, numw as i64, None)?;
    if let Device::Cuda(_) = gw_view.device() {
        device_acc(&idx, grad_output, &gw_view, (numw, dim), scale_grad_by_freq, padding_value, scale)?;
    } else {
        host_acc(
            &idx,
            native_view(grad_output)?,
            native_tensor(grad_weight)?,
            (numw, dim),
            scale_grad_by_freq,
            padding_value,
            scale,
        )?;
    }
    if let (true, Some(c)) = (scale_grad_by_freq, count) {
        let counts = occurrences(&idx, numw);
        let cv = ops::resize_out(c, &[numw as i64])?;
        let vals: Vec<C> = counts.iter().map(|&k| C::from_f64(k as f64)).collect();
        ops::copy::copy(&cv, &View::from_slice(&vals, &[numw as i64])?)?;
    }
    Ok(())
}

/// How many times each of the `numw` rows occurs in `idx`.
pub(super) fn occurrences(idx: &[i64], numw: usize) -> Vec<usize> {
    let mut c = vec![0usize; numw];
    for &k in idx {
        c[k as usize] += 1;
    }
    c
}

/// A view's elements in row-major order on the host (copied from the device when there).
pub(super) fn host_vec<T: Scalar>(v: &View<T>) -> Result<Vec<T>> {
    if let Device::Cuda(_) = v.device() {
        let h = View::contiguous(&v.sizes)?;
        ops::copy::copy(&h, v)?;
        return h.to_vec();
    }
    Ok(buf::read(v, &[])?.into_owned())
}

fn native_view<T: NnElem>(v: &View<T>) -> Result<&View<T::R>> {
    super::super::native_view(v)
}

/// The gradient on the device: `gradWeight[k] += s_i * gradOutput[i]` for the non-padding
/// positions `i` in order (`s_i` the scale, over `k`'s count with `scale_grad_by_freq`, in the
/// compute type as the host forms it).
fn device_acc<T: NnElem>(
    idx: &[i64],
    grad_output: &View<T>,
    gw: &View<T>,
    (numw, dim): (usize, usize),
    by_freq: bool,
    padding: i64,
    scale: f64,
) -> Result<()> {
    let pos: Vec<i64> = (0..idx.len()).filter(|&i| idx[i] != padding).map(|i| i as i64).collect();
    if pos.is_empty() || dim == 0 {
        return Ok(());
    }
    let counts = occurrences(idx, numw);
    let sc = T::R::from_f64(scale);
    let factors: Vec<f64> = pos
        .iter()
        .map(|&i| {
            if by_freq { (sc / T::R::from_f64(counts[idx[i as usize] as usize] as f64)).to_f64() } else { sc.to_f64() }
        })
        .collect();
    let rows: Vec<i64> = pos.iter().map(|&i| idx[i as usize]).collect();
    let m = pos.len() as i64;
    let on_dev = |v: &[i64]| -> Result<View<i64>> {
        let d = ops::temp_like::<i64, T>(gw, &[v.len() as i64])?;
        ops::copy::copy(&d, &View::from_slice(v, &[v.len() as i64])?)?;
        Ok(d)
    };
    let go = crate::nn::activation::paired(grad_output.clone(), &[idx.len() as i64, dim as i64])?;
    let picked = Tensor::new(ops::temp_like::<T, T>(gw, &[m, dim as i64])?);
    index::index_select(&picked, &go, 0, &on_dev(&pos)?)?;
    // the products in f64 (exact for f32 and half operands) rounded once to T
    let wide = crate::nn::widened(&picked.view())?.reshape_view(&[m, dim as i64])?;
    let f = ops::temp_like::<f64, T>(gw, &[m])?;
    ops::copy::copy(&f, &View::from_slice(&factors, &[m])?)?;
    let f = f.reshape_view(&[m, 1])?.expand(&[m, dim as i64])?;
    ops::pointwise2(
        &Tensor::new(wide.clone()),
        &wide,
        &f,
        crate::cuda::launch::Call::new("cmul"),
        |a: f64, b: f64| a * b,
    )?;
    let terms = picked.view();
    ops::copy::copy(&terms, &wide)?;
    index::index_add(gw, 0, &on_dev(&rows)?, &terms)
}

/// The gradient on the host: each row's positions in order, rows in parallel.
fn host_acc<T: NnReal>(
    idx: &[i64],
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    (numw, dim): (usize, usize),
    scale_grad_by_freq: bool,
    padding_value: i64,
    scale: f64,
) -> Result<()> {
    let n = idx.len();
    let mut gw = Out::acc(grad_weight, numw * dim, 4, "gradWeight")?;
    let go = buf::read(grad_output, &[gw.view()])?;
    // (row, position) pairs of the non-padding positions, grouped by row in position order.
    let mut pairs: Vec<(usize, usize)> =
        idx.iter().enumerate().filter(|&(_, &k)| k != padding_value).map(|(i, &k)| (k as usize, i)).collect();
    pairs.sort_unstable();
    let mut groups: Vec<&[(usize, usize)]> = pairs.chunk_by(|a, b| a.0 == b.0).collect();
    let rows = rows_mut(gw.as_mut(), dim, groups.iter().map(|g| g[0].0));
    let mut jobs: Vec<Job<T>> = rows.into_iter().zip(groups.drain(..)).collect();
    let scale = T::from_f64(scale);
    buf::par_chunks(&mut jobs, 1, n * dim, |_, job| {
        let (row, group) = &mut job[0];
        let s = if scale_grad_by_freq { scale / T::from_f64(group.len() as f64) } else { scale };
        for &(_, pos) in group.iter() {
            let g = &go[pos * dim..(pos + 1) * dim];
            for (w, &x) in row.iter_mut().zip(g) {
                *w += s * x;
            }
        }
    });
    drop(jobs);
    gw.finish()
}

/// `LookupTable_renorm(state, idx, weight, maxNorm, normType)`: every row of `weight` (2-D)
/// named in `idx` (1-D, 0-based; duplicates count once) whose `normType`-norm exceeds `maxNorm`
/// is scaled by `maxNorm / (norm + 1e-7)`, as `F.embedding(max_norm=)` does. Norms are summed
/// in f64. Unlike torch7, `idx` is left as it was (torch7 sorts and deduplicates it in place).
pub fn renorm<T: NnElem>(idx: &View<i64>, weight: &Tensor<T>, max_norm: f64, norm_type: f64) -> Result<()> {
    let w_view = weight.view();
    Backend::of(&[idx.device(), w_view.device()])?;
    check::dims(idx, 2, "idx", &[1])?;
    check::dims(&w_view, 3, "weight", &[2])?;
    if norm_type.is_nan() || norm_type <= 0.0 {
        return Err(check::invalid(5, "normType", format_args!("must be positive, got {norm_type}")));
    }
    let (numw, dim) = (w_view.sizes[0] as usize, w_view.sizes[1] as usize);
    let ix = host_vec(idx)?;
    check::indices(&ix, 2, "idx", 0, numw as i64, None)?;
    let mut rows: Vec<usize> = ix.iter().map(|&k| k as usize).collect();
    rows.sort_unstable();
    rows.dedup();
    if let Device::Cuda(_) = w_view.device() {
        return device_renorm(&w_view, &rows, dim, max_norm, norm_type);
    }
    host_renorm(native_tensor(weight)?, &rows, (numw, dim), max_norm, norm_type)
}

/// The `normType`-norm of a row, summed in f64 in the row's order.
fn row_norm<T: Num>(row: &[T], norm_type: f64) -> f64 {
    if norm_type == 1.0 {
        row.iter().map(|&x| x.to_f64().abs()).sum::<f64>()
    } else if norm_type == 2.0 {
        row.iter().map(|&x| x.to_f64() * x.to_f64()).sum::<f64>().sqrt()
    } else {
        row.iter().map(|&x| x.to_f64().abs().powf(norm_type)).sum::<f64>().powf(1.0 / norm_type)
    }
}

/// `renorm` on the device: the named rows copied to the host for their norms, the rows over
/// `max_norm` scaled on the device by their factor (in the compute type, rounded once).
fn device_renorm<T: NnElem>(w: &View<T>, rows: &[usize], dim: usize, max_norm: f64, norm_type: f64) -> Result<()> {
    if rows.is_empty() || dim == 0 {
        return Ok(());
    }
    let all: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
    let dev_idx = |v: &[i64]| -> Result<View<i64>> {
        let d = ops::temp_like::<i64, T>(w, &[v.len() as i64])?;
        ops::copy::copy(&d, &View::from_slice(v, &[v.len() as i64])?)?;
        Ok(d)
    };
    let picked = Tensor::new(ops::temp_like::<T, T>(w, &[all.len() as i64, dim as i64])?);
    index::index_select(&picked, w, 0, &dev_idx(&all)?)?;
    let vals = host_vec(&picked.view())?;
    let (mut over, mut factors) = (Vec::new(), Vec::new());
    for (k, row) in vals.chunks_exact(dim).enumerate() {
        let norm = row_norm(row, norm_type);
        if norm > max_norm {
            over.push(k as i64);
            factors.push(T::from_f64(max_norm / (norm + 1e-7)));
        }
    }
    if over.is_empty() {
        return Ok(());
    }
    let m = over.len() as i64;
    let sel = Tensor::new(ops::temp_like::<T, T>(w, &[m, dim as i64])?);
    index::index_select(&sel, &picked.view(), 0, &dev_idx(&over)?)?;
    let f = ops::temp_like::<T, T>(w, &[m])?;
    ops::copy::copy(&f, &View::from_slice(&factors, &[m])?)?;
    let f = f.reshape_view(&[m, 1])?.expand(&[m, dim as i64])?;
    let s = sel.view();
    ops::pointwise2(&sel, &s, &f, crate::cuda::launch::Call::new("cmul"), |a: T, b: T| T::from_r(a.to_r() * b.to_r()))?;
    let rows_over: Vec<i64> = over.iter().map(|&k| all[k as usize]).collect();
    index::index_copy(w, 0, &dev_idx(&rows_over)?, &sel.view())
}

/// `renorm` on the host, rows in parallel.
fn host_renorm<T: NnReal>(
    weight: &Tensor<T>,
    rows: &[usize],
    (numw, dim): (usize, usize),
    max_norm: f64,
    norm_type: f64,
) -> Result<()> {
    let mut w = Out::acc(weight, numw * dim, 3, "weight")?;
    let mut jobs = rows_mut(w.as_mut(), dim, rows.iter().copied());
    buf::par_chunks(&mut jobs, 1, rows.len() * dim, |_, job| {
        let row = &mut *job[0];
        let norm = row_norm(row, norm_type);
        if norm > max_norm {
            let f = T::from_f64(max_norm / (norm + 1e-7));
            for x in row.iter_mut() {
                *x *= f;
            }
        }
    });
    drop(jobs);
    w.finish()
}
