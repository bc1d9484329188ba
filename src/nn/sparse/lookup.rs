//! LookupTable (`nn.LookupTable`, PyTorch's `F.embedding`): the forward pass is an
//! `index_select` done by the caller; THNN holds the weight gradient (`accGradParameters`) and
//! the max-norm renormalisation of the looked-up rows (`renorm`).
//!
//! 0-based: the input's indices and `paddingValue` are rows of `gradWeight` counted from 0
//! (torch7: from 1, `paddingValue` 0 meaning "none"). Here a `paddingValue` outside
//! `[0, nIndex)` (e.g. -1) means no padding row.

use super::super::NnReal;
use super::super::buf::{self, Out};
use super::super::check;
use super::rows_mut;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};

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
pub fn acc_grad_parameters<T: NnReal>(
    input: &View<i64>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    count: Option<&Tensor<i32>>,
    scale_grad_by_freq: bool,
    padding_value: i64,
    scale: f64,
) -> Result<()> {
    check::dims(input, 2, "input", &[1, 2])?;
    let gw_view = grad_weight.view();
    check::dims(&gw_view, 4, "gradWeight", &[2])?;
    let (numw, dim) = (gw_view.sizes[0] as usize, gw_view.sizes[1] as usize);
    let n = input.numel();
    check::numel(grad_output, 3, "gradOutput", n * dim)?;
    let idx = buf::read(input, &[])?;
    check::indices(&idx, 2, "input", 0, numw as i64, None)?;

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
    gw.finish()?;
    if let (true, Some(c)) = (scale_grad_by_freq, count) {
        let mut cnt = Out::zeros(c, &[numw as i64])?;
        let cs = cnt.as_mut();
        for &k in idx.iter() {
            cs[k as usize] += 1;
        }
        cnt.finish()?;
    }
    Ok(())
}

/// `LookupTable_renorm(state, idx, weight, maxNorm, normType)`: every row of `weight` (2-D)
/// named in `idx` (1-D, 0-based; duplicates count once) whose `normType`-norm exceeds `maxNorm`
/// is scaled by `maxNorm / (norm + 1e-7)`, as `F.embedding(max_norm=)` does. Norms are summed
/// in f64. Unlike torch7, `idx` is left as it was (torch7 sorts and deduplicates it in place).
pub fn renorm<T: NnReal>(idx: &View<i64>, weight: &Tensor<T>, max_norm: f64, norm_type: f64) -> Result<()> {
    check::dims(idx, 2, "idx", &[1])?;
    let w_view = weight.view();
    check::dims(&w_view, 3, "weight", &[2])?;
    if norm_type.is_nan() || norm_type <= 0.0 {
        return Err(check::invalid(5, "normType", format_args!("must be positive, got {norm_type}")));
    }
    let (numw, dim) = (w_view.sizes[0] as usize, w_view.sizes[1] as usize);
    let ix = buf::read(idx, &[])?;
    check::indices(&ix, 2, "idx", 0, numw as i64, None)?;
    let mut rows: Vec<usize> = ix.iter().map(|&k| k as usize).collect();
    rows.sort_unstable();
    rows.dedup();
    let mut w = Out::acc(weight, numw * dim, 3, "weight")?;
    let mut jobs = rows_mut(w.as_mut(), dim, rows.iter().copied());
    buf::par_chunks(&mut jobs, 1, rows.len() * dim, |_, job| {
        let row = &mut *job[0];
        let norm = if norm_type == 1.0 {
            row.iter().map(|&x| x.to_f64().abs()).sum::<f64>()
        } else if norm_type == 2.0 {
            row.iter().map(|&x| x.to_f64() * x.to_f64()).sum::<f64>().sqrt()
        } else {
            row.iter().map(|&x| x.to_f64().abs().powf(norm_type)).sum::<f64>().powf(1.0 / norm_type)
        };
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
