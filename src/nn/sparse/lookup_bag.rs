//! LookupTableBag (PyTorch's `F.embedding_bag` in modes `sum` and `mean`; THCUNN only, THNN
//! has no host version): `output[b]` is the sum (mode 0, cunn's `MODE_SUM`) or the mean (mode
//! 1, `MODE_MEAN`) of the rows of `weight` that bag `b`'s positions of `input` name.
//!
//! 0-based: `input` holds rows of `weight` counted from 0, `offsets[b]` is the 0-based position
//! where bag `b` starts (bag `b` runs to `offsets[b + 1]`, the last bag to the end of `input`),
//! and `offset2bag` receives the 0-based bag of every position (torch7/cunn: all 1-based).
//!
//! The indices, offsets and bag numbers are read and checked on the host; the arithmetic runs
//! on the device with th's index ops:
//! - forward: the named rows are gathered (`indexSelect`), widened to f64 and added into their
//!   bag's row with the device's `indexAdd` (positions in order), divided by the bag's size in
//!   mean mode, and rounded once to the output's type;
//! - gradient: each position's bag row of `gradOutput` is gathered, multiplied by its factor
//!   (`scale`, over the row's count with `scaleGradByFreq`, over the bag's size in mean mode;
//!   the product formed in f64 and rounded once) and added into `gradWeight` with `indexAdd`,
//!   which adds repeated rows in position order.

use super::super::check;
use super::super::{NnElem, widened};
use super::device::upload;
use super::lookup::{host_vec, occurrences};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::exec::backend::Backend;
use crate::ops::num::Num;
use crate::ops::{self, index};

/// Mode 0 (sum) or 1 (mean), argument `arg`; true for the mean.
fn mean_mode(mode: i32, arg: u32) -> Result<bool> {
    match mode {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(check::invalid(arg, "mode", format_args!("expected 0 (sum) or 1 (mean), got {mode}"))),
    }
}

/// The bag of every one of `n` positions and the size of every bag, from `offs` (argument 3):
/// non-decreasing starts in `[0, n]`, the first 0 (positions before it would be in no bag).
fn bags(offs: &[i64], n: usize) -> Result<(Vec<i64>, Vec<i64>)> {
    if let Some(&first) = offs.first()
        && first != 0
    {
        return Err(check::index_err(
            3,
            "offsets",
            format_args!("element 0 is {first}: the first bag must start at position 0"),
        ));
    }
    if offs.is_empty() && n > 0 {
        return Err(check::size_err(
            3,
            "offsets",
            format_args!("no bag holds the {n} positions (expected at least one bag)"),
        ));
    }
    let mut of = Vec::with_capacity(n);
    let mut sizes = Vec::with_capacity(offs.len());
    for (b, &start) in offs.iter().enumerate() {
        let end = offs.get(b + 1).copied().unwrap_or(n as i64);
        if end < start || end > n as i64 {
            return Err(check::index_err(
                3,
                "offsets",
                format_args!(
                    "element {} is {end}: expected non-decreasing starts in [0, {n}] (the number of positions)",
                    b + 1
                ),
            ));
        }
        of.extend(std::iter::repeat_n(b as i64, (end - start) as usize));
        sizes.push(end - start);
    }
    Ok((of, sizes))
}

/// `LookupTableBag_updateOutput(state, input, offsets, weight, output, offset2bag, mode,
/// seq_length)`: `output` (resized to numBags x dim, numBags = `offsets`'s size) = per bag the
/// sum (mode 0) or the mean (mode 1) of the rows `weight[input[i]]` of its positions, summed in
/// f64 in position order and rounded once (an empty bag gives zeros in both modes, as PyTorch;
/// cunn's mean divides by 0). `input` (1-D) holds 0-based rows of `weight` (2-D); `offsets`
/// (1-D) the 0-based start of each bag, the first 0. `offset2bag` is resized to the number of
/// positions and set to each one's 0-based bag; `seq_length` (may be NULL) to numBags and the
/// bag sizes (in both modes; cunn writes it in mean mode only).
#[allow(clippy::too_many_arguments)] // cunn's signature
pub fn update_output<T: NnElem>(
    input: &View<i64>,
    offsets: &View<i64>,
    weight: &View<T>,
    output: &Tensor<T>,
    offset2bag: &Tensor<i64>,
    mode: i32,
    seq_length: Option<&Tensor<i64>>,
) -> Result<()> {
    let mut devices =
        vec![input.device(), offsets.device(), weight.device(), output.view().device(), offset2bag.view().device()];
    devices.extend(seq_length.map(|t| t.view().device()));
    Backend::of(&devices)?;
    check::dims(input, 2, "input", &[1])?;
    check::dims(offsets, 3, "offsets", &[1])?;
    check::dims(weight, 4, "weight", &[2])?;
    let mean = mean_mode(mode, 7)?;
    let (numw, dim) = (weight.sizes[0], weight.sizes[1]);
    let idx = host_vec(input)?;
    check::indices(&idx, 2, "input", 0, numw, None)?;
    let (of, sizes) = bags(&host_vec(offsets)?, idx.len())?;
    let (n, nb) = (idx.len() as i64, sizes.len() as i64);

    let out = ops::resize_out(output, &[nb, dim])?;
    let o2b = ops::resize_out(offset2bag, &[n])?;
    ops::copy::copy(&o2b, &View::from_slice(&of, &[n])?)?;
    if let Some(s) = seq_length {
        let sv = ops::resize_out(s, &[nb])?;
        ops::copy::copy(&sv, &View::from_slice(&sizes, &[nb])?)?;
    }
    if nb == 0 || dim == 0 {
        return Ok(());
    }
    let acc = ops::temp_like::<f64, T>(weight, &[nb, dim])?;
    ops::arith::fill_view(&acc, 0.0)?;
    if n > 0 {
        let picked = Tensor::new(ops::temp_like::<T, T>(weight, &[n, dim])?);
        index::index_select(&picked, weight, 0, &upload(weight, &idx)?)?;
        let wide = widened(&picked.view())?.reshape_view(&[n, dim])?;
        index::index_add(&acc, 0, &upload(weight, &of)?, &wide)?;
    }
    if mean {
        // an empty bag's zeros divided by 1 stay zeros
        let div: Vec<f64> = sizes.iter().map(|&s| s.max(1) as f64).collect();
        let d = upload(weight, &div)?.reshape_view(&[nb, 1])?.expand(&[nb, dim])?;
        ops::pointwise2(&Tensor::new(acc.clone()), &acc, &d, Call::new("cdiv"), |a: f64, b: f64| a / b)?;
    }
    ops::copy::copy(&out, &acc)
}

/// `LookupTableBag_accGradParameters(state, input, gradOutput, gradWeight, offset2bag, count,
/// sortedIndices, origIndices, scaleGradByFreq, mode, seq_length, scale)`: for every position
/// `i` of `input` (1-D, 0-based rows of `gradWeight`, nIndex x dim), in bag `b =
/// offset2bag[i]` (0-based, below numBags = `gradOutput`'s first size; `gradOutput` numBags x
/// dim), `gradWeight[input[i]] += scale * gradOutput[b]`, divided by the row's count in `input`
/// with `scaleGradByFreq` and by `seq_length[b]` (the bag's size, positive) in mean mode (mode
/// 1; `seq_length` is unused in sum mode and may then be NULL). With `scaleGradByFreq`, `count`
/// (may be NULL) is resized to nIndex and set to the counts, as LookupTable's. `sortedIndices`
/// and `origIndices` are cunn's sort buffers: unused, may be NULL.
#[allow(clippy::too_many_arguments)] // cunn's signature
pub fn acc_grad_parameters<T: NnElem>(
    input: &View<i64>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    offset2bag: &View<i64>,
    count: Option<&Tensor<i64>>,
    scale_grad_by_freq: bool,
    mode: i32,
    seq_length: Option<&View<i64>>,
    scale: f64,
) -> Result<()> {
    let gw = grad_weight.view();
    let mut devices = vec![input.device(), grad_output.device(), gw.device(), offset2bag.device()];
    devices.extend(count.map(|t| t.view().device()));
    devices.extend(seq_length.map(|t| t.device()));
    Backend::of(&devices)?;
    check::dims(input, 2, "input", &[1])?;
    check::dims(&gw, 4, "gradWeight", &[2])?;
    let (numw, dim) = (gw.sizes[0], gw.sizes[1]);
    check::dims(grad_output, 3, "gradOutput", &[2])?;
    if grad_output.sizes[1] != dim {
        return Err(check::size_err(
            3,
            "gradOutput",
            format_args!("expected {dim} columns (gradWeight's), got {}", grad_output.desc()),
        ));
    }
    let nb = grad_output.sizes[0];
    check::same_numel(offset2bag, 5, "offset2bag", input, "input")?;
    let mean = mean_mode(mode, 10)?;
    let idx = host_vec(input)?;
    check::indices(&idx, 2, "input", 0, numw, None)?;
    let of = host_vec(offset2bag)?;
    check::indices(&of, 5, "offset2bag", 0, nb, None)?;
    let sizes = match (mean, seq_length) {
        (false, _) => None,
        (true, None) => {
            return Err(check::invalid(11, "seq_length", "the bag sizes are needed in mean mode, got NULL"));
        }
        (true, Some(s)) => {
            check::numel(s, 11, "seq_length", nb as usize)?;
            let sz = host_vec(s)?;
            if let Some(&b) = of.iter().find(|&&b| sz[b as usize] <= 0) {
                return Err(check::size_err(
                    11,
                    "seq_length",
                    format_args!("bag {b} has positions but size {}", sz[b as usize]),
                ));
            }
            Some(sz)
        }
    };

    let counts = occurrences(&idx, numw as usize);
    let n = idx.len() as i64;
    if n > 0 && dim > 0 {
        // scale over the count in the compute type (as LookupTable), over the bag size in f64
        let sc = T::R::from_f64(scale);
        let factors: Vec<f64> = (0..idx.len())
            .map(|i| {
                let s = if scale_grad_by_freq {
                    (sc / T::R::from_f64(counts[idx[i] as usize] as f64)).to_f64()
                } else {
                    sc.to_f64()
                };
                match &sizes {
                    Some(sz) => s / sz[of[i] as usize] as f64,
                    None => s,
                }
            })
            .collect();
        let picked = Tensor::new(ops::temp_like::<T, T>(&gw, &[n, dim])?);
        index::index_select(&picked, grad_output, 0, &upload(&gw, &of)?)?;
        let wide = widened(&picked.view())?.reshape_view(&[n, dim])?;
        let f = upload(&gw, &factors)?.reshape_view(&[n, 1])?.expand(&[n, dim])?;
        ops::pointwise2(&Tensor::new(wide.clone()), &wide, &f, Call::new("cmul"), |a: f64, b: f64| a * b)?;
        let terms = picked.view();
        ops::copy::copy(&terms, &wide)?;
        index::index_add(&gw, 0, &upload(&gw, &idx)?, &terms)?;
    }
    if let (true, Some(c)) = (scale_grad_by_freq, count) {
        let cv = ops::resize_out(c, &[numw])?;
        let vals: Vec<i64> = counts.iter().map(|&k| k as i64).collect();
        ops::copy::copy(&cv, &View::from_slice(&vals, &[numw])?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn bags_from_offsets() {
        let (of, sizes) = super::bags(&[0, 2, 2, 3], 5).unwrap();
        assert_eq!(of, vec![0, 0, 2, 3, 3]);
        assert_eq!(sizes, vec![2, 0, 1, 2]);
        assert!(super::bags(&[1, 2], 3).is_err()); // the first bag must start at 0
        assert!(super::bags(&[0, 2, 1], 3).is_err()); // decreasing
        assert!(super::bags(&[0, 4], 3).is_err()); // beyond the positions
        assert_eq!(super::bags(&[], 0).unwrap(), (vec![], vec![]));
        assert!(super::bags(&[], 2).is_err()); // positions in no bag
    }
}
