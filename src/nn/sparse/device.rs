//! The device halves (THCUNN) of SparseLinear and IndexLinear: the callers have checked every
//! argument and read the small index metadata on the host; here the arithmetic runs on the
//! device with th's index ops (`indexSelect`, `indexAdd`, `indexCopy`, `indexFill`) and
//! pointwise ops, in the compute type (Half's operands converted to f32, every stored result
//! rounded once). The device's `indexAdd` adds repeated indices in position order, so each
//! sum is formed in the host's order.

use super::sparse_linear::Sparse;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::nn::NnElem;
use crate::nn::activation::paired;
use crate::nn::conv::device::in_r;
use crate::ops::num::Num;
use crate::ops::{self, arith, index};

/// `v` (host values) as a new 1-D tensor on `like`'s device.
pub(super) fn upload<U: Scalar, L: Scalar>(like: &View<L>, v: &[U]) -> Result<View<U>> {
    let d = ops::temp_like::<U, L>(like, &[v.len() as i64])?;
    ops::copy::copy(&d, &View::from_slice(v, &[v.len() as i64])?)?;
    Ok(d)
}

/// `v` as 0-based positions on `like`'s device.
fn positions<L: Scalar>(like: &View<L>, v: impl IntoIterator<Item = usize>) -> Result<View<i64>> {
    upload(like, &v.into_iter().map(|x| x as i64).collect::<Vec<_>>())
}

/// Stores the compute-type image `r` of `dst` (from `in_r`) back into `dst`: nothing to do for
/// f32 and f64, whose image is `dst` itself.
fn store<T: NnElem>(dst: &View<T>, r: &View<T::R>) -> Result<()> {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<T::R>() { Ok(()) } else { ops::copy::copy(dst, r) }
}

/// The scalar `x` broadcast to `sizes` on `like`'s device.
fn scalar<R: Scalar, L: Scalar>(like: &View<L>, x: R, sizes: &[i64]) -> Result<View<R>> {
    upload(like, &[x])?.reshape_view(&vec![1; sizes.len()])?.expand(sizes)
}

/// `acc` (a 1-D vector of `od`, compute type) += each row of `rows` (`[n, od]`), in row order:
/// an `indexAdd` onto one row, the host's sequential sum.
fn add_rows<R: Num, L: Scalar>(like: &View<L>, acc: &View<R>, rows: &View<R>) -> Result<()> {
    let n = rows.sizes[0] as usize;
    if n == 0 {
        return Ok(());
    }
    index::index_add(&acc.unsqueeze1d(0)?, 0, &positions(like, std::iter::repeat_n(0, n))?, rows)
}

/// `gradBias += scale * (the sum of the rows of go2)` (`[batch, od]`), rows added in order.
fn bias_grad<T: NnElem>(go2: &View<T>, grad_bias: &View<T>, scale: f64) -> Result<()> {
    let gb = in_r(grad_bias)?;
    let terms = ops::temp_like::<T::R, T>(go2, &go2.sizes)?;
    ops::copy::copy(&terms, go2)?;
    let s = scalar(go2, T::R::from_f64(scale), &go2.sizes)?;
    ops::pointwise2(&Tensor::new(terms.clone()), &s, &terms, Call::new("cmul"), |a: T::R, b: T::R| a * b)?;
    add_rows(go2, &gb, &terms)?;
    store(grad_bias, &gb)
}

/// SparseLinear's forward on the device: `acc` (outputSize x batch) gets, column by column in
/// entry order, `value * weight[:, feature]` (`indexAdd` along the columns), then `output =
/// acc^T + bias`, as the host's row loop.
pub(super) fn sparse_update_output<T: NnElem>(
    sp: &Sparse<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: &View<T>,
) -> Result<()> {
    let (od, batch) = (weight.sizes[0], sp.batch as i64);
    let out = ops::resize_out(output, &[batch, od])?;
    if batch == 0 || od == 0 {
        return Ok(());
    }
    let nz: Vec<_> = sp.non_zero().collect();
    let acc = ops::temp_like::<T::R, T>(weight, &[od, batch])?;
    arith::fill_view(&acc, <T::R as Num>::zero())?;
    if !nz.is_empty() {
        let m = nz.len() as i64;
        let sel = Tensor::new(ops::temp_like::<T, T>(weight, &[od, m])?);
        index::index_select(&sel, weight, 1, &positions(weight, nz.iter().map(|e| e.col))?)?;
        let p = in_r(&sel.view())?;
        let vals: Vec<T::R> = nz.iter().map(|e| e.val.to_r()).collect();
        let v = upload(weight, &vals)?.reshape_view(&[1, m])?.expand(&[od, m])?;
        ops::pointwise2(&Tensor::new(p.clone()), &v, &p, Call::new("cmul"), |a: T::R, b: T::R| a * b)?;
        index::index_add(&acc, 1, &positions(weight, nz.iter().map(|e| e.row))?, &p)?;
    }
    let b = in_r(&paired(bias.clone(), &[od])?)?.unsqueeze1d(0)?.expand(&[batch, od])?;
    let res = ops::temp_like::<T::R, T>(weight, &[batch, od])?;
    arith::cadd(&Tensor::new(res.clone()), &acc.transpose(0, 1)?, <T::R as Num>::one(), &b)?;
    ops::copy::copy(&out, &res)
}

/// SparseLinear's gradient on the device: the entries' `gradOutput` rows gathered, times
/// `scale * value` (formed on the host in the compute type, as the host's factor), added into
/// `gradWeight`'s columns in entry order (`indexAdd`); then `gradWeight += weightDecay *
/// weight`, and the bias gradient's scaled rows added in row order.
pub(super) fn sparse_acc_grad_parameters<T: NnElem>(
    sp: &Sparse<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    weight: &View<T>,
    weight_decay: f64,
    scale: f64,
) -> Result<()> {
    let (od, batch) = (weight.sizes[0], sp.batch as i64);
    let go2 = paired(grad_output.clone(), &[batch, od])?;
    let gwv = grad_weight.view();
    let gw = in_r(&gwv)?;
    let s = T::R::from_f64(scale);
    let nz: Vec<_> = sp.non_zero().collect();
    if !nz.is_empty() && od > 0 {
        let m = nz.len() as i64;
        let g = Tensor::new(ops::temp_like::<T, T>(weight, &[m, od])?);
        index::index_select(&g, &go2, 0, &positions(weight, nz.iter().map(|e| e.row))?)?;
        let gr = in_r(&g.view())?;
        let factors: Vec<T::R> = nz.iter().map(|e| s * e.val.to_r()).collect();
        let f = upload(weight, &factors)?.reshape_view(&[m, 1])?.expand(&[m, od])?;
        ops::pointwise2(&Tensor::new(gr.clone()), &f, &gr, Call::new("cmul"), |a: T::R, b: T::R| a * b)?;
        index::index_add(&gw, 1, &positions(weight, nz.iter().map(|e| e.col))?, &gr.transpose(0, 1)?)?;
    }
    if weight_decay != 0.0 && gw.numel() > 0 {
        arith::cadd(&Tensor::new(gw.clone()), &gw, T::R::from_f64(weight_decay), &in_r(weight)?)?;
    }
    store(&gwv, &gw)?;
    bias_grad(&go2, &grad_bias.view(), scale)
}

/// SparseLinear's zeroGradParameters on the device: `gradBias = 0`, the columns `cols` of
/// `gradWeight` zeroed (`indexFill`).
pub(super) fn sparse_zero_grad_parameters<T: NnElem>(gw: &View<T>, gb: &View<T>, cols: &[usize]) -> Result<()> {
    arith::fill_view(gb, T::zero())?;
    if cols.is_empty() || gw.numel() == 0 {
        return Ok(());
    }
    index::index_fill(gw, 1, &positions(gw, cols.iter().copied())?, T::zero())
}

/// SparseLinear's updateParameters on the device: `bias -= learningRate * gradBias`; the
/// columns `cols` of `weight` gathered, stepped by `learningRate` times their `gradWeight`
/// columns, and put back (`indexCopy`).
pub(super) fn sparse_update_parameters<T: NnElem>(
    w: &View<T>,
    b: &View<T>,
    gw: &View<T>,
    gb: &View<T>,
    cols: &[usize],
    learning_rate: f64,
) -> Result<()> {
    let lr = T::R::from_f64(learning_rate);
    let br = in_r(b)?;
    arith::csub(&Tensor::new(br.clone()), &br, lr, &in_r(gb)?)?;
    store(b, &br)?;
    if cols.is_empty() || w.numel() == 0 {
        return Ok(());
    }
    let (od, k) = (w.sizes[0], cols.len() as i64);
    let ci = positions(w, cols.iter().copied())?;
    let sw = Tensor::new(ops::temp_like::<T, T>(w, &[od, k])?);
    let sg = Tensor::new(ops::temp_like::<T, T>(w, &[od, k])?);
    index::index_select(&sw, w, 1, &ci)?;
    index::index_select(&sg, gw, 1, &ci)?;
    let (swr, sgr) = (in_r(&sw.view())?, in_r(&sg.view())?);
    arith::csub(&Tensor::new(swr.clone()), &swr, lr, &sgr)?;
    store(&sw.view(), &swr)?;
    index::index_copy(w, 1, &ci, &sw.view())
}
