//! Index ops (§4.3): indexSelect/Copy/Add/Fill, gather, scatter.

use super::*;

/// `r` = `src` with `index` selecting entries along `dim` (`r.size(dim) == index.numel()`).
pub fn index_select<T: Scalar>(r: &Tensor<T>, src: &View<T>, dim: i32, index: &View<i64>) -> Result<()> {
    let d = dim_index(dim, src.ndim(), 3)?;
    index_vector(index, 4)?;
    check_indices(index, src.sizes[d], d, 4)?;
    let mut shape = src.sizes.clone();
    shape[d] = index.sizes[0];
    gather_into(r, &shape, src, d, index, &along(index, &shape, d))
}

/// `r` resized to `shape` and filled by `gather_run` from `src` (`idx`: `index` as it walks
/// it), through a temporary when `r` shares memory with `src` or `index`.
fn gather_into<T: Scalar>(
    r: &Tensor<T>,
    shape: &[i64],
    src: &View<T>,
    d: usize,
    index: &View<i64>,
    idx: &View<i64>,
) -> Result<()> {
    let out = resize_out(r, shape)?;
    if may_overlap(&out, src) || may_overlap(&out, index) {
        let tmp = View::contiguous(shape)?;
        gather_run(&tmp, src, d, idx)?;
        return assign(&out, &tmp);
    }
    gather_run(&out, src, d, idx)
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
    t: &View<T>,
    dim: i32,
    index: &View<i64>,
    src: &View<T>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
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
    check_indices(index, t.sizes[d], d, 3)?;
    let (src, index) = (detached(t, src)?, detached(t, index)?);
    scatter_run(t, Some(&src), d, &along(&index, &src.sizes, d), f)
}

/// `t.select(dim, index[i]) = src.select(dim, i)` (repeated indices: the last wins).
pub fn index_copy<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    index_update(t, dim, index, src, |_, s| s)
}

/// `t.select(dim, index[i]) += src.select(dim, i)` (repeated indices accumulate).
pub fn index_add<T: Num>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    index_update(t, dim, index, src, |o: T, s: T| o.add(s))
}

/// `t.select(dim, index[i]) = value`.
pub fn index_fill<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, value: T) -> Result<()> {
    let d = dim_index(dim, t.ndim(), 2)?;
    index_vector(index, 3)?;
    check_indices(index, t.sizes[d], d, 3)?;
    let index = detached(t, index)?;
    let mut shape = t.sizes.clone();
    shape[d] = index.sizes[0];
    scatter_run(t, None, d, &along(&index, &shape, d), move |_, _| value)
}

/// `r[p] = src[p with coordinate dim replaced by index[p]]`; `r` is resized like `index`, which
/// must have `src`'s rank and sizes except along `dim`.
pub fn gather<T: Scalar>(r: &Tensor<T>, src: &View<T>, dim: i32, index: &View<i64>) -> Result<()> {
    let d = dim_index(dim, src.ndim(), 3)?;
    index_fits(index, src, d, "source", 4)?;
    check_indices(index, src.sizes[d], d, 4)?;
    gather_into(r, &index.sizes, src, d, index, index)
}

/// Shared checks of the scatter family: `index` has `t`'s rank and sizes except along `dim`;
/// `src` has `index`'s sizes except that it may be longer along `dim`.
fn scatter_update<T: Scalar>(
    t: &View<T>,
    dim: i32,
    index: &View<i64>,
    src: Option<&View<T>>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
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
    check_indices(index, t.sizes[d], d, 3)?;
    let index = detached(t, index)?;
    let src = src.map(|s| detached(t, s)).transpose()?;
    scatter_run(t, src.as_ref(), d, &index, f)
}

/// `t[p with coordinate dim replaced by index[p]] = src[p]` (repeated indices: the last wins).
pub fn scatter<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    scatter_update(t, dim, index, Some(src), |_, s| s)
}

/// `t[p with coordinate dim replaced by index[p]] += src[p]` (repeated indices accumulate).
pub fn scatter_add<T: Num>(t: &View<T>, dim: i32, index: &View<i64>, src: &View<T>) -> Result<()> {
    scatter_update(t, dim, index, Some(src), |o: T, s: T| o.add(s))
}

/// `t[p with coordinate dim replaced by index[p]] = value`.
pub fn scatter_fill<T: Scalar>(t: &View<T>, dim: i32, index: &View<i64>, value: T) -> Result<()> {
    scatter_update(t, dim, index, None, move |_, _| value)
}
