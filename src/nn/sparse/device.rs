//! The device halves (THCUNN) of SparseLinear and IndexLinear: the callers have checked every
//! argument and read the small index metadata on the host; here the arithmetic runs on the
//! device with th's index ops (`indexSelect`, `indexAdd`, `indexCopy`, `indexFill`) and
//! pointwise ops, in the compute type (Half's operands converted to f32, every stored result
//! rounded once). The device's `indexAdd` adds repeated indices in position order, so each
//! sum is formed in the host's order.

use super::index_linear::{Bag, NORM, Params, normalized};
use super::lookup::host_vec;
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

/// `a * b` (broadcast to `shape`) in a new tensor.
fn mul<R: Num>(a: &View<R>, b: &View<R>, shape: &[i64]) -> Result<View<R>> {
    let r = ops::temp_like::<R, R>(a, shape)?;
    ops::pointwise2(&Tensor::new(r.clone()), a, b, Call::new("cmul"), |x: R, y: R| x.mul(y))?;
    Ok(r)
}

/// `a -= b` in place (`a` may be strided); with the products formed by `mul` first, each
/// step rounds as the host's `a -= x * y`.
fn sub_in<R: Num>(a: &View<R>, b: &View<R>) -> Result<()> {
    arith::csub(&Tensor::new(a.clone()), a, R::one(), b)
}

/// Runs `f` on the compute-type image of the vector `v` (any shape of `n` elements) and
/// stores it back into `v`.
fn on_vector<T: NnElem>(v: &View<T>, n: i64, f: impl FnOnce(&View<T::R>) -> Result<()>) -> Result<()> {
    let flat = paired(v.clone(), &[n])?;
    let r = in_r(&flat)?;
    f(&r)?;
    store(&flat, &r)?;
    if flat.same_storage(v) { Ok(()) } else { ops::copy::copy(v, &flat.reshape_view(&v.sizes)?) }
}

/// `gradBias += scale * (the sum of the rows of go2)` (`[batch, od]`), rows added in order.
fn bias_grad<T: NnElem>(go2: &View<T>, grad_bias: &View<T>, scale: f64) -> Result<()> {
    if go2.numel() == 0 {
        return Ok(());
    }
    on_vector(grad_bias, go2.sizes[1], |gb| {
        let terms = ops::temp_like::<T::R, T>(go2, &go2.sizes)?;
        ops::copy::copy(&terms, go2)?;
        let s = scalar(go2, T::R::from_f64(scale), &go2.sizes)?;
        ops::pointwise2(&Tensor::new(terms.clone()), &s, &terms, Call::new("cmul"), |a: T::R, b: T::R| a * b)?;
        add_rows(go2, gb, &terms)
    })
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
        // the product rounded first, then added (the host's two roundings, no fused multiply-add)
        let d = mul(&scalar(weight, T::R::from_f64(weight_decay), &gw.sizes)?, &in_r(weight)?, &gw.sizes)?;
        arith::cadd(&Tensor::new(gw.clone()), &gw, <T::R as Num>::one(), &d)?;
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
    sub_in(&br, &mul(&scalar(b, lr, &br.sizes)?, &in_r(gb)?, &br.sizes)?)?;
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
    sub_in(&swr, &mul(&scalar(w, lr, &[od, k])?, &sgr, &[od, k])?)?;
    store(&sw.view(), &swr)?;
    index::index_copy(w, 1, &ci, &sw.view())
}

/// The items of `rows` in rounds: round `r` holds, in order, the items that are the `r`-th
/// occurrence of their row, so a round's rows are distinct and a row's items keep their order
/// across rounds (the sequential updates of one row run in the host's order).
fn rounds(rows: &[usize]) -> Vec<Vec<usize>> {
    let mut seen = std::collections::HashMap::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        let c = seen.entry(r).or_insert(0usize);
        if *c == out.len() {
            out.push(Vec::new());
        }
        out[*c].push(i);
        *c += 1;
    }
    out
}

/// The max-normalized values of the pairs (the host's sequential statistics pass, on the
/// touched rows' four statistics copied to the host; with `train` the updated statistics are
/// rounded once and put back into `weight`).
fn normalize<T: NnElem>(b: &Bag, values: &View<T>, w: &View<T>, train: bool) -> Result<Vec<T::R>> {
    let mut uniq = b.rows.clone();
    uniq.sort_unstable();
    uniq.dedup();
    if uniq.is_empty() {
        return Ok(Vec::new());
    }
    let (k, nc) = (uniq.len() as i64, NORM as i64);
    let ui = positions(w, uniq.iter().copied())?;
    let stats = w.narrow(1, 0, nc)?;
    let sel = Tensor::new(ops::temp_like::<T, T>(w, &[k, nc])?);
    index::index_select(&sel, &stats, 0, &ui)?;
    let mut st: Vec<T::R> = host_vec(&sel.view())?.iter().map(|x| x.to_r()).collect();
    let vals = host_vec(values)?;
    let one = <T::R as Num>::one();
    let mut nv = Vec::with_capacity(b.rows.len());
    for (&r, &v) in b.rows.iter().zip(&vals) {
        let at = uniq.binary_search(&r).map_err(|_| crate::core::error::Error::internal("IndexLinear row"))?;
        let s = &mut st[at * NORM..(at + 1) * NORM];
        let v = v.to_r();
        if train {
            let a = Num::abs(v);
            if a > s[0] {
                s[0] = a;
                s[1] = one / a;
            }
            s[2] = one;
        }
        nv.push(normalized(v, s));
    }
    if train {
        let rounded: Vec<T> = st.iter().map(|&x| T::from_r(x)).collect();
        index::index_copy(&stats, 0, &ui, &upload(w, &rounded)?.reshape_view(&[k, nc])?)?;
    }
    Ok(nv)
}

/// IndexLinear's forward on the device: `acc` (batch x outputSize) starts as the bias rows and
/// gets each pair's `weight row * value` added into its sample's row in pair order
/// (`indexAdd`), as the host's loop; max-normalized values come from the host's statistics
/// pass (`normalize`).
#[allow(clippy::too_many_arguments)]
pub(super) fn index_update_output<T: NnElem>(
    p: &Params,
    b: &Bag,
    values: &View<T>,
    output: &Tensor<T>,
    weight: &Tensor<T>,
    bias: &View<T>,
    normalized_values: Option<&Tensor<T>>,
    train: bool,
) -> Result<()> {
    let w = weight.view();
    let (n, od, batch) = (b.rows.len() as i64, p.out_dim as i64, b.batch() as i64);
    let out = ops::resize_out(output, &[batch, od])?;
    let used = if p.norm > 0 {
        let nv = normalize(b, values, &w, train)?;
        let used = upload(&w, &nv)?;
        if let Some(t) = normalized_values {
            ops::copy::copy(&ops::resize_out(t, &[n])?, &used)?;
        }
        used
    } else {
        in_r(&paired(values.clone(), &[n])?)?
    };
    if batch == 0 || od == 0 {
        return Ok(());
    }
    let acc = ops::temp_like::<T::R, T>(&w, &[batch, od])?;
    ops::copy::copy(&acc, &in_r(&paired(bias.clone(), &[od])?)?.unsqueeze1d(0)?.expand(&[batch, od])?)?;
    if n > 0 {
        let sel = Tensor::new(ops::temp_like::<T, T>(&w, &[n, p.wcols as i64])?);
        index::index_select(&sel, &w, 0, &positions(&w, b.rows.iter().copied())?)?;
        let x = in_r(&sel.view().narrow(1, p.norm as i64, od)?)?;
        let prod = mul(&x, &used.unsqueeze1d(1)?, &[n, od])?;
        index::index_add(&acc, 0, &positions(&w, b.sample_of())?, &prod)?;
    }
    ops::copy::copy(&out, &acc)
}

/// IndexLinear's gradient on the device: each pair's `gradOutput` row gathered
/// (`indexSelect`) and scaled (`scale * value`, and `scale` for the key-bias half), written
/// into `gradWeight`'s rows; the bias gradient's scaled rows added in row order.
pub(super) fn index_acc_grad_parameters<T: NnElem>(
    p: &Params,
    b: &Bag,
    values: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: &Tensor<T>,
    scale: f64,
) -> Result<()> {
    let (n, od, batch) = (b.rows.len() as i64, p.out_dim as i64, b.batch() as i64);
    let width = if p.norm > 0 { 2 * od } else { od };
    let gw = ops::resize_out(grad_weight, &[n, width])?;
    let go2 = paired(grad_output.clone(), &[batch, od])?;
    let s = T::R::from_f64(scale);
    if n > 0 && od > 0 {
        let g = Tensor::new(ops::temp_like::<T, T>(&go2, &[n, od])?);
        index::index_select(&g, &go2, 0, &positions(&go2, b.sample_of())?)?;
        let gr = in_r(&g.view())?;
        let v = in_r(&paired(values.clone(), &[n])?)?;
        let vs = mul(&v, &scalar(&go2, s, &[n])?, &[n])?;
        ops::copy::copy(&gw.narrow(1, width - od, od)?, &mul(&vs.unsqueeze1d(1)?, &gr, &[n, od])?)?;
        if p.norm > 0 {
            ops::copy::copy(&gw.narrow(1, 0, od)?, &mul(&gr, &scalar(&go2, s, &[n, od])?, &[n, od])?)?;
        }
    }
    bias_grad(&go2, &grad_bias.view(), scale)
}

/// The weight rows that a sequence of updates touches, gathered once into a compute-type
/// image (so Half rounds each row once, when the image is put back), updated round by round.
struct Rows<T: NnElem> {
    /// The distinct rows, sorted.
    uniq: Vec<usize>,
    /// The gathered rows (`[u, wcols]`) and their compute-type image (the same for f32, f64).
    sel: View<T>,
    img: View<T::R>,
}

impl<T: NnElem> Rows<T> {
    fn gather(p: &Params, w: &View<T>, rows: &[usize]) -> Result<Self> {
        let mut uniq = rows.to_vec();
        uniq.sort_unstable();
        uniq.dedup();
        let sel = Tensor::new(ops::temp_like::<T, T>(w, &[uniq.len() as i64, p.wcols as i64])?);
        index::index_select(&sel, w, 0, &positions(w, uniq.iter().copied())?)?;
        let sel = sel.view();
        let img = in_r(&sel)?;
        Ok(Rows { uniq, sel, img })
    }

    /// The rows `rows` (distinct) gathered from the image, updated by `f` (given them and their
    /// weight columns), and put back into the image.
    fn update(
        &self,
        p: &Params,
        rows: impl Iterator<Item = usize>,
        f: impl FnOnce(&View<T::R>, &View<T::R>) -> Result<()>,
    ) -> Result<()> {
        let slots: Vec<usize> = rows.map(|r| self.uniq.partition_point(|&u| u < r)).collect();
        let si = positions(&self.sel, slots.iter().copied())?;
        let wr = Tensor::new(ops::temp_like::<T::R, T>(&self.sel, &[slots.len() as i64, p.wcols as i64])?);
        index::index_select(&wr, &self.img, 0, &si)?;
        let wr = wr.view();
        f(&wr, &wr.narrow(1, p.norm as i64, p.out_dim as i64)?)?;
        index::index_copy(&self.img, 0, &si, &wr)
    }

    /// Puts the rows back into `w` (rounded once for Half).
    fn finish(self, w: &View<T>) -> Result<()> {
        store(&self.sel, &self.img)?;
        index::index_copy(w, 0, &positions(w, self.uniq.iter().copied())?, &self.sel)
    }
}

/// `keyBias -= sum over the outputs, in order, of terms` (`[k, od]`, already negated): an
/// `indexAdd` of the terms onto the statistics column 3 of the image `wr`.
fn key_bias_step<L: crate::core::dtype::Scalar, R: Num>(
    like: &View<L>,
    wr: &View<R>,
    neg_terms: &View<R>,
) -> Result<()> {
    let od = neg_terms.sizes[1] as usize;
    index::index_add(&wr.narrow(1, 3, 1)?, 1, &positions(like, std::iter::repeat_n(0, od))?, neg_terms)
}

/// IndexLinear's accUpdateGradParameters on the device: `bias -= scale * gradOutput[j]`
/// sample by sample (`indexAdd` of the negated terms in order); the pairs in rounds of
/// distinct rows (`rounds`) on a compute-type image of the touched rows (`Rows`), each round's
/// rows updated at once with the host's operations in the host's order (key bias, decay, step).
#[allow(clippy::too_many_arguments)]
pub(super) fn index_acc_update_grad_parameters<T: NnElem>(
    p: &Params,
    b: &Bag,
    values: &View<T>,
    grad_output: &View<T>,
    w: &View<T>,
    bias: &View<T>,
    weight_decay: f64,
    scale: f64,
) -> Result<()> {
    let (n, od, batch) = (b.rows.len() as i64, p.out_dim as i64, b.batch() as i64);
    let go2 = paired(grad_output.clone(), &[batch, od])?;
    let (s, wd) = (T::R::from_f64(scale), T::R::from_f64(weight_decay));
    let minus = <T::R as Num>::zero().sub(<T::R as Num>::one());
    if batch > 0 && od > 0 {
        on_vector(bias, od, |br| {
            let t = mul(&scalar(&go2, minus.mul(s), &[batch, od])?, &in_r(&go2)?, &[batch, od])?;
            add_rows(&go2, br, &t)
        })?;
    }
    if n == 0 {
        return Ok(());
    }
    let v = in_r(&paired(values.clone(), &[n])?)?;
    let sample = b.sample_of();
    let image = Rows::gather(p, w, &b.rows)?;
    for items in rounds(&b.rows) {
        let k = items.len() as i64;
        let g = Tensor::new(ops::temp_like::<T, T>(w, &[k, od])?);
        index::index_select(&g, &go2, 0, &positions(w, items.iter().map(|&i| sample[i]))?)?;
        let g = in_r(&g.view())?;
        let vk = Tensor::new(ops::temp_like::<T::R, T>(w, &[k])?);
        index::index_select(&vk, &v, 0, &positions(w, items.iter().copied())?)?;
        image.update(p, items.iter().map(|&i| b.rows[i]), |wr, x| {
            let mut val = mul(&vk.view(), &scalar(w, s, &[k])?, &[k])?;
            let mut wdl = scalar(w, wd, &[k])?;
            if p.norm > 0 {
                let lr = wr.select(1, 2)?;
                val = mul(&val, &lr, &[k])?;
                wdl = mul(&wdl, &lr, &[k])?;
                let t = mul(&mul(x, &scalar(w, s, &[k, od])?, &[k, od])?, &g, &[k, od])?;
                let neg_lr = mul(&lr, &scalar(w, minus, &[k])?, &[k])?;
                key_bias_step(w, wr, &mul(&t, &neg_lr.unsqueeze1d(1)?, &[k, od])?)?;
            }
            if weight_decay != 0.0 {
                sub_in(x, &mul(&wdl.unsqueeze1d(1)?, x, &[k, od])?)?;
            }
            sub_in(x, &mul(&val.unsqueeze1d(1)?, &g, &[k, od])?)
        })?;
    }
    image.finish(w)
}

/// IndexLinear's updateParameters on the device: `bias -= gradBias * learningRate`; the keys
/// in rounds of distinct rows (`rounds`) on a compute-type image of the touched rows (`Rows`),
/// each round's rows updated at once with the host's operations in the host's order (key bias,
/// decay, step).
#[allow(clippy::too_many_arguments)]
pub(super) fn index_update_parameters<T: NnElem>(
    p: &Params,
    rows: &[usize],
    grad_weight: &View<T>,
    grad_bias: &View<T>,
    w: &View<T>,
    bias: &View<T>,
    weight_decay: f64,
    learning_rate: f64,
) -> Result<()> {
    let (n, od) = (rows.len() as i64, p.out_dim as i64);
    let width = if p.norm > 0 { 2 * od } else { od };
    let (lr, wd) = (T::R::from_f64(learning_rate), T::R::from_f64(weight_decay));
    let minus = <T::R as Num>::zero().sub(<T::R as Num>::one());
    if od > 0 {
        let g = in_r(&paired(grad_bias.clone(), &[od])?)?;
        on_vector(bias, od, |br| sub_in(br, &mul(&g, &scalar(w, lr, &[od])?, &[od])?))?;
    }
    if n == 0 {
        return Ok(());
    }
    let gw2 = paired(grad_weight.clone(), &[n, width])?;
    let image = Rows::gather(p, w, rows)?;
    for items in rounds(rows) {
        let k = items.len() as i64;
        let gsel = Tensor::new(ops::temp_like::<T, T>(w, &[k, width])?);
        index::index_select(&gsel, &gw2, 0, &positions(w, items.iter().copied())?)?;
        let gr = in_r(&gsel.view())?;
        image.update(p, items.iter().map(|&i| rows[i]), |wr, x| {
            let (mut lrs, mut wds) = (scalar(w, lr, &[k])?, scalar(w, wd, &[k])?);
            if p.norm > 0 {
                let st2 = wr.select(1, 2)?;
                lrs = mul(&lrs, &st2, &[k])?;
                wds = mul(&wds, &st2, &[k])?;
                let t = mul(&gr.narrow(1, 0, od)?, x, &[k, od])?;
                let neg = mul(&lrs, &scalar(w, minus, &[k])?, &[k])?;
                key_bias_step(w, wr, &mul(&t, &neg.unsqueeze1d(1)?, &[k, od])?)?;
            }
            if weight_decay != 0.0 {
                sub_in(x, &mul(&wds.unsqueeze1d(1)?, x, &[k, od])?)?;
            }
            sub_in(x, &mul(&lrs.unsqueeze1d(1)?, &gr.narrow(1, width - od, od)?, &[k, od])?)
        })?;
    }
    image.finish(w)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rounds_keep_each_rows_order_and_are_distinct() {
        let r = super::rounds(&[3, 1, 3, 3, 0, 1]);
        assert_eq!(r, vec![vec![0, 1, 4], vec![2, 5], vec![3]]);
        assert!(super::rounds(&[]).is_empty());
    }
}
