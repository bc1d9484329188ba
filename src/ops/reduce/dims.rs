//! Per-dimension reductions (§4.10, 4.17).

use super::*;
use crate::cuda::launch::device_base;
use crate::cuda::reduce::{Finish, reduce_into};

/// `r = op(t)` along `dim` through accumulators mapped by `fin` (`dim` is C argument `arg`); on
/// a device, `how` is `fin`'s device form.
#[allow(clippy::too_many_arguments)]
fn along<T: Scalar, R: Reducer<T, 1>>(
    r: &Tensor<T>,
    t: &View<T>,
    dim: i32,
    keepdim: bool,
    arg: u32,
    red: &R,
    how: Finish,
    fin: impl Fn(R::Acc) -> T,
) -> Result<()> {
    let d = check_dim(dim, t.ndim(), arg)?;
    one_device(&[r.with_view(|v| v.device()), t.device()])?;
    if let Some(fold) = red.device()
        && finished_on_device(t, d, keepdim, fold, how, r, None)?
    {
        return Ok(());
    }
    let acc = reduce([t], &only(t.ndim(), d), red)?;
    let data: Vec<T> = acc.into_iter().map(fin).collect();
    store(r, &reduced_shape(&t.sizes, d, keepdim), &data)
}

/// `r_ = sum of t along dim` (accumulated in `accreal`).
pub fn sum<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    along(r, t, dim, keepdim, 3, &sum_reducer::<T>(), Finish::Cast, T::from_acc)
}

/// `r_ = product of t along dim` (accumulated in `accreal`).
pub fn prod<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    along(r, t, dim, keepdim, 3, &prod_reducer::<T>(), Finish::Cast, T::from_acc)
}

/// `r_ = mean of t along dim`.
pub fn mean<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let size = t.sizes.get(dim.max(0) as usize).copied().unwrap_or(1) as f64;
    let n = <T::Acc as Num>::from_f64(size);
    along(r, t, dim, keepdim, 3, &sum_reducer::<T>(), Finish::Mean(size), |s| T::from_acc(s.div(n)))
}

/// `r_ = mean of t along dim` for an integer type (THC has it; TH does not): the sum in
/// `accreal` (i64) divided by the dim's size with C division, then cast.
pub fn mean_int<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()>
where
    T::Acc: Num,
{
    let size = t.sizes.get(dim.max(0) as usize).copied().unwrap_or(1).max(1) as f64;
    let n = <T::Acc as Num>::from_f64(size);
    along(r, t, dim, keepdim, 3, &sum_reducer::<T>(), Finish::Mean(size), |s| T::from_acc(s.div(n)))
}

/// `r_ = var of t along dim` (`/n` when `biased`, else `/(n-1)`).
pub fn var<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, biased: bool, keepdim: bool) -> Result<()> {
    let how = Finish::Var { biased, root: false };
    along(r, t, dim, keepdim, 3, &Moments::<T>::new(), how, |a| T::from_acc(var_of(a, biased)))
}

/// `r_ = std of t along dim`.
pub fn std<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, biased: bool, keepdim: bool) -> Result<()> {
    let how = Finish::Var { biased, root: true };
    along(r, t, dim, keepdim, 3, &Moments::<T>::new(), how, |a| T::from_acc(var_of(a, biased).sqrt()))
}

/// `r_ = p-norm of t along dim` (see `pnorm`).
pub fn norm<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, p: T, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    one_device(&[r.with_view(|v| v.device()), t.device()])?;
    if finished_on_device(t, d, keepdim, DeviceFold::Norm(p.to_f64()), Finish::Root, r, None)? {
        return Ok(());
    }
    let data: Vec<T> = pnorm(t, &only(t.ndim(), d), p.to_f64())?.into_iter().map(T::from_acc).collect();
    store(r, &reduced_shape(&t.sizes, d, keepdim), &data)
}

/// The device arm of a reduction along `d`: `fold` of `t` finished by `how` straight into
/// `values` (and `indices`) on the device, when `t` is a device tensor with elements and the
/// resized outputs are contiguous and apart from `t`; false when it did not run (the caller
/// then reduces to host accumulators and stores them).
fn finished_on_device<T: Scalar>(
    t: &View<T>,
    d: usize,
    keepdim: bool,
    fold: DeviceFold,
    how: Finish,
    values: &Tensor<T>,
    indices: Option<&Tensor<i64>>,
) -> Result<bool> {
    let crate::core::allocator::Device::Cuda(dev) = t.device() else { return Ok(false) };
    if t.numel() == 0 {
        return Ok(false);
    }
    let shape = reduced_shape(&t.sizes, d, keepdim);
    let outs = || -> Result<Option<[u64; 2]>> {
        let vo = resize_out(values, &shape)?;
        let io = indices.map(|i| resize_out(i, &shape)).transpose()?;
        let fits = vo.is_contiguous() && !vo.same_storage(t) && io.as_ref().is_none_or(|i| i.is_contiguous());
        if !fits {
            return Ok(None);
        }
        let ib = io.as_ref().map(device_base).transpose()?.unwrap_or(0);
        Ok(Some([device_base(&vo)?, ib]))
    };
    reduce_into(dev, t, &only(t.ndim(), d), fold, how, outs)
}

/// THC's rule: the outputs and the input of a reduction are on one device (checked before
/// any output is resized).
fn one_device(devices: &[crate::core::allocator::Device]) -> Result<()> {
    crate::exec::backend::Backend::of(devices).map(|_| ())
}

/// The device of a call whose operands are all on one device, None on the host.
fn device_of(devices: &[crate::core::allocator::Device]) -> Result<Option<i32>> {
    Ok(match crate::exec::backend::Backend::of(devices)? {
        crate::exec::backend::Backend::Cuda(i) => Some(i),
        _ => None,
    })
}

/// A selection along an empty dimension of a tensor with slices has nothing to pick.
fn nonempty_dim<T: Scalar>(t: &View<T>, d: usize, what: &str) -> Result<()> {
    if t.sizes[d] == 0 && t.sizes.iter().enumerate().all(|(i, &s)| i == d || s != 0) {
        return Err(Error::size(format!("{what}: dimension {d} of size {} is empty", size_desc(&t.sizes))).at_arg(3));
    }
    Ok(())
}

/// kthvalue (`pick` = the 0-based rank), median, mode (`pick` None) of a device tensor: every
/// line sorted ascending on the device, then the picked element (or the mode's run) copied to
/// the outputs.
fn select_on_device<T: Elem>(
    dev: i32,
    values: &Tensor<T>,
    indices: &Tensor<i64>,
    t: &View<T>,
    d: usize,
    keepdim: bool,
    pick: Option<i64>,
) -> Result<()> {
    use crate::cuda::sort::{Line, Sorted, check_output};
    let shape = reduced_shape(&t.sizes, d, keepdim);
    let (vo, io) = (resize_out(values, &shape)?, resize_out(indices, &shape)?);
    let what = if pick.is_some() { "kthvalue" } else { "mode" };
    check_output(what, &vo)?;
    check_output(what, &io)?;
    if vo.numel() == 0 {
        return Ok(());
    }
    let sorted = Sorted::new(dev, t, d, false)?;
    let items = t.ndim() - 1;
    let (lv, li) = (Line::reduced(&vo, d, items)?, Line::reduced(&io, d, items)?);
    match pick {
        Some(k) => sorted.copy(k, &lv, &li),
        None => sorted.mode(&lv, &li),
    }
}

/// `values_`, `indices_` (each of `shape`) = the (value, index) pairs `pairs`.
fn store_pairs<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, shape: &[i64], pairs: &[(T, i64)]) -> Result<()> {
    store(values, shape, &pairs.iter().map(|x| x.0).collect::<Vec<_>>())?;
    store(indices, shape, &pairs.iter().map(|x| x.1).collect::<Vec<_>>())
}

/// The max (or min) of every slice of `t` along `d` and the index of its first occurrence.
fn arg_best<T: Elem>(t: &View<T>, d: usize, max: bool) -> Result<Vec<(T, i64)>> {
    let acc = reduce([t], &only(t.ndim(), d), &ArgBest::<T>::new(max))?;
    Ok(acc.iter().map(|a| (a.0.canon(), a.1.max(0))).collect())
}

/// `values_, indices_ = max of t along dim` (index of the first occurrence, 0-based; the
/// first NaN wins).
pub fn max<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    one_device(&[values.with_view(|v| v.device()), indices.with_view(|v| v.device()), t.device()])?;
    if finished_on_device(t, d, keepdim, DeviceFold::Max, Finish::Best, values, Some(indices))? {
        return Ok(());
    }
    store_pairs(values, indices, &reduced_shape(&t.sizes, d, keepdim), &arg_best(t, d, true)?)
}

/// `values_, indices_ = min of t along dim`.
pub fn min<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    one_device(&[values.with_view(|v| v.device()), indices.with_view(|v| v.device()), t.device()])?;
    if finished_on_device(t, d, keepdim, DeviceFold::Min, Finish::Best, values, Some(indices))? {
        return Ok(());
    }
    store_pairs(values, indices, &reduced_shape(&t.sizes, d, keepdim), &arg_best(t, d, false)?)
}

/// `f(slice)` for every slice of `t` along `d` (each as (value, position) pairs), in output
/// order, in parallel.
fn per_slice<T: Elem, X: Copy + Default + Send>(
    t: &View<T>,
    d: usize,
    f: impl Fn(&mut Vec<(T, i64)>) -> X + Sync,
) -> Result<Vec<X>> {
    let g = Geometry::<1>::new(&t.sizes, [&t.strides], &only(t.ndim(), d));
    let (m, k) = (g.m(), g.k());
    let mut out = crate::core::limits::try_filled(m, X::default())?;
    // One slice's (value, position) pairs per worker: probe that much memory up front so that
    // a slice longer than memory is an error here rather than an abort in a worker.
    drop(crate::core::limits::try_vec::<(T, i64)>(k)?);
    let Some(p) = t.host_ptr()? else { return Ok(out) };
    let addr = SharedPtr(p.wrapping_add(t.offset));
    let step = g.red[0].st[0];
    let sink = Sink(out.as_mut_ptr());
    parallel::for_range(m, m.saturating_mul(k), |a, b| {
        let mut buf = Vec::with_capacity(k);
        let mut o = Odometer::new(&g.kept, a);
        for mi in a..b {
            buf.clear();
            let q = addr.offset(o.off[0]).cast_const();
            for i in 0..k {
                // SAFETY: element i of this slice lies inside the view (host_ptr).
                buf.push((unsafe { q.offset(i as isize * step).read() }, i as i64));
            }
            // SAFETY: mi < m, and this worker alone owns outputs a..b.
            unsafe { sink.put(mi, f(&mut buf)) };
            if mi + 1 < b {
                o.advance();
            }
        }
    });
    Ok(out)
}

/// Orders (value, position) pairs by value (NaN last), then position: a total order, so a
/// selection gives the same element as a stable sort.
pub(super) fn by_value_then_pos<T: Elem>(a: &(T, i64), b: &(T, i64)) -> Ordering {
    total(a.0, b.0).then(a.1.cmp(&b.1))
}

/// The k-th smallest (k 1-based) along `dim` and its position; among equal values, positions
/// count in order (as a stable sort); NaN sorts last.
pub fn kthvalue<T: Elem>(
    values: &Tensor<T>,
    indices: &Tensor<i64>,
    t: &View<T>,
    k: i64,
    dim: i32,
    keepdim: bool,
) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 5)?;
    let n = t.sizes[d];
    if k < 1 || k > n {
        return Err(Error::index(format!("kthvalue: k = {k} is out of range for a dimension of size {n}")).at_arg(4));
    }
    if let Some(dev) = device_of(&[values.with_view(|v| v.device()), indices.with_view(|v| v.device()), t.device()])? {
        return select_on_device(dev, values, indices, t, d, keepdim, Some(k - 1));
    }
    let k = (k - 1) as usize;
    let picked = per_slice(t, d, |s| *s.select_nth_unstable_by(k, by_value_then_pos).1)?;
    store_pairs(values, indices, &reduced_shape(&t.sizes, d, keepdim), &picked)
}

/// The lower median along `dim` (`kthvalue` with k = (n-1)/2 + 1).
pub fn median<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    one_device(&[values.with_view(|v| v.device()), indices.with_view(|v| v.device()), t.device()])?;
    nonempty_dim(t, d, "median")?;
    if let Some(dev) = device_of(&[t.device()])? {
        return select_on_device(dev, values, indices, t, d, keepdim, Some((t.sizes[d] - 1) / 2));
    }
    let k = (t.sizes[d] as usize - 1) / 2;
    let picked = per_slice(t, d, |s| *s.select_nth_unstable_by(k, by_value_then_pos).1)?;
    store_pairs(values, indices, &reduced_shape(&t.sizes, d, keepdim), &picked)
}

/// The most frequent value along `dim` (ties: the smallest value; NaNs count as one value)
/// and the position of its last occurrence.
pub fn mode<T: Elem>(values: &Tensor<T>, indices: &Tensor<i64>, t: &View<T>, dim: i32, keepdim: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 4)?;
    one_device(&[values.with_view(|v| v.device()), indices.with_view(|v| v.device()), t.device()])?;
    nonempty_dim(t, d, "mode")?;
    if let Some(dev) = device_of(&[t.device()])? {
        return select_on_device(dev, values, indices, t, d, keepdim, None);
    }
    let picked = per_slice(t, d, |s| {
        s.sort_unstable_by(by_value_then_pos);
        let (mut best, mut best_n, mut run) = (s[0], 0usize, 0usize);
        for i in 0..s.len() {
            run += 1;
            if i + 1 == s.len() || total(s[i].0, s[i + 1].0) != Ordering::Equal {
                if run > best_n {
                    best = s[i];
                    best_n = run;
                }
                run = 0;
            }
        }
        best
    })?;
    store_pairs(values, indices, &reduced_shape(&t.sizes, d, keepdim), &picked)
}
