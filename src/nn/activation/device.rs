//! The device halves of the activations that do not run on the pointwise engine alone: SoftMax
//! and LogSoftMax over torch7's dimension, one line kernel per pass (`kernels/nn.cuh`): every
//! line along the normalized dimension walked by one thread (positions of the other dimensions
//! are the items, so over a 3-D/4-D input's h x w neighbouring threads read neighbouring
//! elements), or shared by a block when the lines are rows or few (`threads_per_line`); PReLU's weight gradient (terms in f64, the device's dim reductions).

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::{BLOCK, Call, device_base};
use crate::cuda::lines::{self, LineOperand};
use crate::exec::backend::Backend;
use crate::nn::activation::paired;
use crate::nn::{NnElem, check, widened};
use crate::ops;

/// The normalized dimension of a 1-D to 4-D shape (torch7's rule: 0 for 1-D and 3-D, else 1).
pub(super) fn softmax_dim(ndim: usize) -> usize {
    if ndim == 1 || ndim == 3 { 0 } else { 1 }
}

/// `sizes` or `strides` without dimension `d`.
fn without(v: &[i64], d: usize) -> Vec<i64> {
    v.iter().enumerate().filter(|&(i, _)| i != d).map(|(_, &x)| x).collect()
}

/// `out` (resized to `shape`) on `dev`, or a temporary there when `out` shares storage with one
/// of `inputs` in another layout (the kernels read a line whole before writing it, so only
/// identical views may alias).
fn output<T: NnElem>(out: &View<T>, inputs: &[&View<T>]) -> Result<Option<View<T>>> {
    let aliased = inputs.iter().any(|v| v.same_storage(out) && (v.offset != out.offset || v.strides != out.strides));
    Ok(if aliased { Some(ops::temp_like(out, &out.sizes)?) } else { None })
}

/// Lines at least this long run a block each when they are rows (unit steps) or few.
const ROW_MIN: i64 = 32;
/// "Few" lines: fewer than this many threads would be busy with a thread per line.
const FEW_LINES: i64 = 16384;

/// The threads per block that share each line of `views` along `d` (a power of two, one per
/// element up to `BLOCK`), or None for a thread per line. A thread per line suits the other
/// positions as items when they are many and neighbouring (an `N x C x H x W` input's `H x W`):
/// neighbouring threads read neighbouring elements. Rows (a line's elements adjacent, as for a
/// 2-D input) would be read a row apart by neighbouring threads, and a few long lines leave most
/// of a GPU idle; those get a block per line. The choice depends on the shapes and strides only.
fn threads_per_line<T: NnElem>(views: &[&View<T>], d: usize) -> Option<u32> {
    let len = views[0].sizes[d];
    let lines: i64 = views[0].sizes.iter().enumerate().filter(|&(i, _)| i != d).map(|(_, &s)| s).product();
    let rows = views.iter().all(|v| v.strides[d] == 1);
    (len >= ROW_MIN && (rows || lines < FEW_LINES))
        .then(|| (len as u64).next_power_of_two().min(u64::from(BLOCK)) as u32)
}

/// Runs line op `call` (`row_call` when a block shares each line) with operands `views` (the
/// first written) along dimension `d`.
fn run<T: NnElem>(dev: i32, call: &Call, row_call: &Call, views: &[&View<T>], d: usize) -> Result<()> {
    let shape = without(&views[0].sizes, d);
    let strides: Vec<Vec<i64>> = views.iter().map(|v| without(&v.strides, d)).collect();
    let ops: Vec<LineOperand<'_>> = views
        .iter()
        .zip(&strides)
        .map(|(v, st)| Ok(LineOperand { base: device_base(v)?, strides: st, len: v.sizes[d], step: v.strides[d] }))
        .collect::<Result<_>>()?;
    // SAFETY: every operand's address was checked against its storage on this device by
    // `device_base`; the items and lines span exactly each view's elements (all of one shape).
    unsafe {
        match threads_per_line(views, d) {
            Some(threads) => lines::run_per_block(dev, row_call, T::DTYPE, &shape, &ops, threads),
            None => lines::run(dev, call, T::DTYPE, &shape, &ops),
        }
    }
}

/// The forward pass on device `dev` (input checked 1-D to 4-D by the caller).
pub(super) fn softmax<T: NnElem>(dev: i32, input: &View<T>, output: &Tensor<T>, log: bool) -> Result<()> {
    Backend::of(&[input.device(), output.with_view(|v| v.device())])?;
    let out = ops::resize_out(output, &input.sizes)?;
    let tmp = self::output(&out, &[input])?;
    let o = tmp.as_ref().unwrap_or(&out);
    let (call, rows) = (Call::new("nnSoftMax").value(i64::from(log)), Call::new("nnSoftMaxRows").value(i64::from(log)));
    run(dev, &call, &rows, &[o, input], softmax_dim(input.ndim()))?;
    if let Some(t) = &tmp { ops::copy::copy(&out, t) } else { Ok(()) }
}

/// The backward pass on device `dev` from `y` (output) and `g` (gradOutput), checked to have one
/// 1-D to 4-D shape by the caller.
pub(super) fn softmax_back<T: NnElem>(
    dev: i32,
    y: &View<T>,
    g: &View<T>,
    grad_input: &Tensor<T>,
    log: bool,
) -> Result<()> {
    Backend::of(&[y.device(), g.device(), grad_input.with_view(|v| v.device())])?;
    let out = ops::resize_out(grad_input, &y.sizes)?;
    let tmp = self::output(&out, &[y, g])?;
    let o = tmp.as_ref().unwrap_or(&out);
    let log = i64::from(log);
    let (call, rows) = (Call::new("nnSoftMaxBack").value(log), Call::new("nnSoftMaxRowsBack").value(log));
    run(dev, &call, &rows, &[o, y, g], softmax_dim(y.ndim()))?;
    if let Some(t) = &tmp { ops::copy::copy(&out, t) } else { Ok(()) }
}

/// PReLU's `accGradParameters` on the device: `gradWeight[p] += scale * sum(x * g)` over plane
/// p's elements with `x <= 0` (every element into `gradWeight[0]` without planes). The terms are
/// computed in f64 from f64 copies, summed over each plane by the device reductions (in f64),
/// rounded to the element type and added as the host adds them (`w + scale * s`).
pub(super) fn prelu_acc<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    layout: Option<(usize, usize, usize)>,
    scale: f64,
) -> Result<()> {
    let gw = grad_weight.view();
    Backend::of(&[input.device(), grad_output.device(), gw.device()])?;
    let (batch, planes, ks) = layout.unwrap_or((1, 1, input.numel()));
    check::numel(&gw, 6, "gradWeight", planes)?;
    let n = input.numel() as i64;
    let terms = Tensor::new(ops::temp_like::<f64, T>(input, &[n])?);
    let g = crate::nn::activation::paired(grad_output.clone(), &input.sizes)?;
    ops::pointwise2(&terms, &widened(input)?, &widened(&g)?, Call::new("nnPreluTerm"), |x: f64, g: f64| {
        if x <= 0.0 { x * g } else { 0.0 }
    })?;
    let t3 = terms.view().reshape_view(&[batch as i64, planes as i64, ks as i64])?;
    let by_pos = Tensor::new(ops::temp_like::<f64, T>(input, &[batch as i64, planes as i64])?);
    let sums = Tensor::new(ops::temp_like::<f64, T>(input, &[planes as i64])?);
    ops::reduce::sum(&by_pos, &t3, 2, false)?;
    ops::reduce::sum(&sums, &by_pos.view(), 0, false)?;
    let rounded = Tensor::new(ops::temp_like::<T, T>(&gw, &[planes as i64])?);
    ops::copy::copy(&rounded.view(), &sums.view())?;
    // gradWeight as a vector: itself or a reshaped view (same memory), else a copy written back
    let g = paired(gw.clone(), &[planes as i64])?;
    let sc = T::from_f64(scale);
    ops::pointwise2(&Tensor::new(g.clone()), &g, &rounded.view(), Call::new("cadd").value(sc), move |w: T, s: T| {
        T::from_r(w.to_r() + sc.to_r() * s.to_r())
    })?;
    if g.same_storage(&gw) { Ok(()) } else { ops::copy::copy(&gw, &g) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_rows_and_few_long_lines_get_a_block() {
        let v = |s: &[i64]| View::<f32>::contiguous(s).unwrap();
        // 2-D rows: a block from 32 elements on, the next power of two up to BLOCK threads
        assert_eq!(threads_per_line(&[&v(&[4, 31])], 1), None);
        assert_eq!(threads_per_line(&[&v(&[4, 37])], 1), Some(64));
        assert_eq!(threads_per_line(&[&v(&[2, 3000])], 1), Some(BLOCK));
        // strided lines: a block only while they are few
        assert_eq!(threads_per_line(&[&v(&[2, 40, 3, 4])], 1), Some(64));
        assert_eq!(threads_per_line(&[&v(&[2, 40, 128, 128])], 1), None);
        // every operand must have unit steps to count as rows
        let rows = v(&[20000, 64]);
        let cols = v(&[64, 20000]).transpose(0, 1).unwrap();
        assert_eq!(threads_per_line(&[&rows, &rows], 1), Some(64));
        assert_eq!(threads_per_line(&[&rows, &cols], 1), None);
        // lines a stride apart: few long ones get a block
        assert_eq!(threads_per_line(&[&rows], 0), Some(BLOCK));
    }
}
