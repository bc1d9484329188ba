//! Index ops (§4.3): indexSelect/Copy/Add/Fill, gather, scatter.

use super::device::{check_indices_on, gather_on, scatter_on};
use super::*;
use crate::ops::temp_like;

/// The backend of a call (every operand on one device) and its index check.
fn indices_checked(be: Backend, idx: &View<i64>, size: i64, dim: usize, arg: u32) -> Result<()> {
    match be {
        Backend::Host => check_indices(idx, size, dim, arg),
        Backend::Cuda(_) => check_indices_on(idx, size, dim, arg),
    }
}

/// `scatter_run`'s engine: the host's, or the device kernel `op` (its fill form takes `value`).
fn scatter_at<T: Scalar>(
    be: Backend,
    op: &'static str,
    (dst, src, value): (&View<T>, Option<&View<T>>, T),
    d: usize,
    idx: &View<i64>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    match be {
        Backend::Host => scatter_run(dst, src, d, idx, f),
        Backend::Cuda(i) => scatter_on(i, op, dst, src, value, d, idx),
    }
}

/// `r` = `src` with `index` selecting entries along `dim` (`r.size(dim) == index.numel()`).
pub fn index_select<T: Scalar>(r: &Tensor<T>, src: &View<T>, dim: i32, index: &View<i64>) -> Result<()> {
    let be = Backend::of(&[r.with_view(|v| v.device()), src.device(), index.device()])?;
    let d = dim_index(dim, src.ndim(), 3)?;
    index_vector(index, 4)?;
    indices_checked(be, index, src.sizes[d], d, 4)?;
    let mut shape = src.sizes.clone();
    shape[d] = index.sizes[0];
    gather_into(be, "indexSelect", r, &shape, src, d, index, &along(index, &shape, d))
}

/// `r` resized to `shape` and filled by `gather_run` from `src` (`idx`: `index` as it walks
/// it), through a temporary when `r` shares memory with `src` or `index` (`op`: the device kernel).
#[allow(clippy::too_many_arguments)]
fn gather_into<T: Scalar>(
    be: Backend,
    op: &'static str,
    r: &Tensor<T>,
    shape: &[i64],
    src: &View<T>,
    d: usize,
    index: &View<i64>,
    idx: &View<i64>,
) -> Result<()> {
    let out = resize_out(r, shape)?;
    let run = |dst: &View<T>| match be {
        Backend::Host => gather_run(dst, src, d, idx),
        Backend::Cuda(i) => gather_on(i, op, dst, src, d, idx),
    };
    if may_overlap(&out, src) || may_overlap(&out, index) {
        let tmp = temp_like(&out, shape)?;
        run(&tmp)?;
        return assign(&out, &tmp);
    }
    run(&out)
}

/// `index` must have `t`'s rank and sizes except along `d` (`what` names `t`; `arg`: the C
/// position of `index`).
fn index_fits<T: Scalar>(index: &View<i64>, t: &View<T>, d: usize, what: &str, arg: u32) -> Result<()> {
    if index.ndim() == t.ndim() && (0..t.ndim()).all(|e| e == d || index.sizes[e] == t.sizes[e]) {
        return Ok(());
    }
    Err(Error::size(format!(
        "index of size {} must have the size of the {what} {} except along dimension {d}",
        size_desc(&index.sizes),
        size_desc(&t.sizes)
    ))
    .at_arg(arg))
}

/// Shared checks of indexCopy/indexAdd: `src` has `t`'s sizes except `src.size(d) == index.numel()`.
fn index_update<T: Scalar>(
    (t, op): (&View<T>, &'static str),
    dim: i32,
    index: &View<i64>,
    src: &View<T>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    let be = Backend::of(&[t.device(), index.device(), src.device()])?;
    let d = dim_index(dim, t.ndim(), 2)?;
    index_vector(index, 3)?;
    let fits = src.ndim() == t.ndim()
        && (0..t.ndim()).all(|e| if e == d { src.sizes[e] == index.sizes[0] } else { src.sizes[e] == t.sizes[e] });
    if !fits {
        return Err(Error::size(format!(
            "source of size {} does not match a tensor of size {} with {} indices along dimension {d}",
            size_desc(&src.sizes),
            size_desc(&t.sizes),
            index.sizes[0]
        ))
        .at_arg(4));
    }
    indices_checked(be, index, t.sizes[d], d, 3)?;
    let (src, index) = (detached(t, src)?, detached(t, index)?);
    scatter_at(be, op, (t, Some(&src), T::default()), d, &along(&index, &src.sizes, d), f)
}

/// `t.select(dim, index[i]) = src.select(dim, i)` (repeated indices: the last wins).
pub fn index_copy<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    index_update((t, "indexCopy"), dim, index, src, |_, s| s)
}

/// `t.select(dim, index[i]) += src.select(dim, i)` (repeated indices accumulate).
pub fn index_add<T: Num>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    index_update((t, "indexAdd"), dim, index, src, |o: T, s: T| o.add(s))
}

/// `t.select(dim, index[i]) = value`.
pub fn index_fill<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, value: T) -> Result<()> {
    let be = Backend::of(&[t.device(), index.device()])?;
    let d = dim_index(dim, t.ndim(), 2)?;
    index_vector(index, 3)?;
    indices_checked(be, index, t.sizes[d], d, 3)?;
    let index = detached(t, index)?;
    let mut shape = t.sizes.clone();
    shape[d] = index.sizes[0];
    scatter_at(be, "indexFill", (t, None, value), d, &along(&index, &shape, d), move |_, _| value)
}

/// `r[p] = src[p with coordinate dim replaced by index[p]]`; `r` is resized like `index`, which
/// must have `src`'s rank and sizes except along `dim`.
pub fn gather<T: Scalar>(r: &Tensor<T>, src: &View<T>, dim: i32, index: &View<i64>) -> Result<()> {
    let be = Backend::of(&[r.with_view(|v| v.device()), src.device(), index.device()])?;
    let d = dim_index(dim, src.ndim(), 3)?;
    index_fits(index, src, d, "source", 4)?;
    indices_checked(be, index, src.sizes[d], d, 4)?;
    gather_into(be, "gather", r, &index.sizes, src, d, index, index)
}

/// Shared checks of the scatter family: `index` has `t`'s rank and sizes except along `dim`;
/// `src` has `index`'s sizes except that it may be longer along `dim`.
fn scatter_update<T: Scalar>(
    (t, op, value): (&View<T>, &'static str, T),
    dim: i32,
    index: &View<i64>,
    src: Option<&View<T>>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    let mut devices = vec![t.device(), index.device()];
    devices.extend(src.map(|s| s.device()));
    let be = Backend::of(&devices)?;
    let d = dim_index(dim, t.ndim(), 2)?;
    index_fits(index, t, d, "tensor", 3)?;
    if let Some(s) = src {
        let fits = s.ndim() == index.ndim()
            && (0..s.ndim()).all(|e| if e == d { s.sizes[e] >= index.sizes[e] } else { s.sizes[e] == index.sizes[e] });
        if !fits {
            return Err(Error::size(format!(
                "source of size {} must have the size of the index {} (or be longer along dimension {d})",
                size_desc(&s.sizes),
                size_desc(&index.sizes)
            ))
            .at_arg(4));
        }
    }
    indices_checked(be, index, t.sizes[d], d, 3)?;
    let index = detached(t, index)?;
    let src = src.map(|s| detached(t, s)).transpose()?;
    scatter_at(be, op, (t, src.as_ref(), value), d, &index, f)
}

/// `t[p with coordinate dim replaced by index[p]] = src[p]` (repeated indices: the last wins).
pub fn scatter<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    scatter_update((t, "scatter", T::default()), dim, index, Some(src), |_, s| s)
}

/// `t[p with coordinate dim replaced by index[p]] += src[p]` (repeated indices accumulate).
pub fn scatter_add<T: Num>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    scatter_update((t, "scatterAdd", T::default()), dim, index, Some(src), |o: T, s: T| o.add(s))
}

/// `t[p with coordinate dim replaced by index[p]] = value`.
pub fn scatter_fill<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, value: T) -> Result<()> {
    scatter_update((t, "scatterFill", value), dim, index, None, move |_, _| value)
}
