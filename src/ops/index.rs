//! Masks, index ops, gather/scatter, constructors, reshape, sort/top-k, triangles,
//! concatenation, cross products and ranges (`THTensorMath.h` §4.2, 4.3, 4.10 `cross`, 4.12,
//! 4.13, 4.18 `linspace`/`logspace`).
//!
//! Conventions:
//! - Input indices (index tensors, `dim` arguments) are **0-based**; an index outside
//!   `[0, size)` is an error naming the index, its position, the dimension and the size. Every
//!   index (and every mask value) is checked before anything is written, so a failing call
//!   leaves its outputs as they were.
//! - Byte masks must hold 0 or 1 (as in TH); Bool masks take any nonzero byte as true. A mask
//!   is broadcast (numpy rules) to the tensor it selects from, or paired with it element by
//!   element in row-major order when the element counts are equal (TH's rule).
//! - Outputs that TH resizes are resized like `resizeAs` (kept, whatever their strides, when they
//!   already have the right shape). An output may be one of the inputs: when it shares memory
//!   with an input the result is computed through a temporary (or the input is copied first).
//! - The gather-like ops (`indexSelect`, `gather`) run through the pointwise plan (`exec::plan`) with the indexed
//!   dimension's stride taken from the index, so rows along contiguous dims are block copies and
//!   large work is split across threads. The scatter-like ops (`indexCopy`, `indexAdd`,
//!   `indexFill`, `scatter*`) run the indexed dimension serially inside each slice, so with
//!   repeated indices the last write (in index order) wins and additions all accumulate.
//! - `sort` is stable; NaN sorts after every number (first in descending order); -0.0 and 0.0
//!   are equal. `topk` breaks ties by position (lower index first) and always returns its `k`
//!   elements in sorted order.

use super::num::{Float, Num};
use super::{map0, map1, map2, resize_out};
use crate::core::dtype::{Bool, Prim, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::refcount::Rc;
use crate::core::tensor::{Tensor, View, broadcast_shapes, numel, parse_sizes, size_desc};
use crate::exec::overlap::{may_overlap, partial_overlap, self_overlapping};
use crate::exec::parallel;
use crate::exec::plan::Plan;
use crate::ops::copy::copy;
use std::cmp::Ordering;
use std::ptr;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn one<T: Scalar>() -> T {
    T::from_prim(Prim::I(1))
}

/// A contiguous copy of `v` (used to detach an input that shares memory with an output).
fn dense<T: Scalar>(v: &View<T>) -> Result<View<T>> {
    let c = View::contiguous(&v.sizes)?;
    assign(&c, v)?;
    Ok(c)
}

/// Byte address of element 0 of `v` (NULL when it has no elements), after checking the whole
/// view lies inside its storage.
fn base_ptr<T: Scalar>(v: &View<T>) -> Result<*mut u8> {
    Ok(match v.host_ptr()? {
        // SAFETY: the offset is inside the storage (host_ptr checked the whole view).
        Some(p) => unsafe { p.add(v.offset) as *mut u8 },
        None => ptr::null_mut(),
    })
}

/// Calls `f(position, value)` for every element of `v` in row-major order.
fn scan<T: Scalar>(v: &View<T>, mut f: impl FnMut(usize, T) -> Result<()>) -> Result<()> {
    let Some(p) = v.host_ptr()? else { return Ok(()) };
    for (i, o) in Offsets::new(v.offset, &v.sizes, &v.strides, v.numel()).enumerate() {
        // SAFETY: every offset of the view lies inside its storage (host_ptr checked).
        f(i, unsafe { ptr::read(p.add(o)) })?;
    }
    Ok(())
}

fn dim_index(dim: i32, ndim: usize, arg: u32) -> Result<usize> {
    usize::try_from(dim)
        .ok()
        .filter(|&d| d < ndim)
        .ok_or_else(|| Error::index(format!("dimension {dim} out of range of {ndim}D tensor")).at_arg(arg))
}

/// Every value of `idx` must lie in `[0, size)`.
fn check_indices(idx: &View<i64>, size: i64, dim: usize, arg: u32) -> Result<()> {
    scan(idx, |i, v| {
        if v < 0 || v >= size {
            return Err(Error::index(format!(
                "index {v} (at position {i} of the index) is out of range for dimension {dim} with size {size}"
            ))
            .at_arg(arg));
        }
        Ok(())
    })
}

fn index_vector(idx: &View<i64>, arg: u32) -> Result<()> {
    if idx.ndim() != 1 {
        return Err(Error::size(format!("index must be a 1-D tensor, got size {}", size_desc(&idx.sizes))).at_arg(arg));
    }
    Ok(())
}

/// A 1-D index viewed over `shape`: its values along `d`, repeated (stride 0) elsewhere.
fn along(idx: &View<i64>, shape: &[i64], d: usize) -> View<i64> {
    let mut v = idx.clone();
    v.sizes = shape.to_vec();
    v.strides = vec![0; shape.len()];
    v.strides[d] = idx.strides[0];
    v
}

fn without(v: &[i64], d: usize) -> Vec<i64> {
    v.iter().enumerate().filter(|(e, _)| *e != d).map(|(_, &x)| x).collect()
}

/// `r` resized to `shape` and set to `data` (row-major).
fn set_result<T: Scalar>(r: &Tensor<T>, data: &[T], shape: &[i64]) -> Result<()> {
    let out = resize_out(r, shape)?;
    if data.is_empty() {
        return Ok(());
    }
    assign(&out, &View::from_slice(data, shape)?)
}

/// `dst <- src` for same-shaped views through the pointwise plan (`exec::plan`) (vectorized, parallel); through
/// `copy` (which handles shared memory) otherwise.
fn assign<T: Scalar>(dst: &View<T>, src: &View<T>) -> Result<()> {
    if dst.sizes == src.sizes && !may_overlap(dst, src) { map1(dst, src, |x: T| x) } else { copy(dst, src) }
}

/// Copies `n` elements (memmove when both runs are dense).
///
/// # Safety
/// Both pointers must be valid for `n` elements at their strides.
#[inline(always)]
unsafe fn copy_run<T: Copy>(o: *mut T, so: isize, a: *const T, sa: isize, n: usize) {
    // SAFETY: caller contract.
    unsafe {
        if so == 1 && sa == 1 {
            ptr::copy(a, o, n);
        } else {
            for j in 0..n as isize {
                o.offset(j * so).write(a.offset(j * sa).read());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The two index engines
// ---------------------------------------------------------------------------------------------

/// `dst[p] = src[p with coordinate d replaced by idx[p]]` for every position `p` of `dst`.
///
/// Callers guarantee: `idx` has `dst`'s sizes (stride 0 where it repeats), `src` has the same
/// rank and `dst`'s sizes except along `d`, every index lies in `[0, src.sizes[d])`, and `dst`
/// shares memory with neither input.
fn gather_run<T: Scalar>(dst: &View<T>, src: &View<T>, d: usize, idx: &View<i64>) -> Result<()> {
    if dst.numel() == 0 {
        return Ok(());
    }
    let sd = src.strides[d] as isize;
    let mut ss = src.strides.clone();
    ss[d] = 0;
    let plan = Plan::<3>::new(&dst.sizes, [&dst.strides, &ss, &idx.strides]);
    let bases = [base_ptr(dst)?, base_ptr(src)?, base_ptr(idx)?];
    let elem = [size_of::<T>(), size_of::<T>(), size_of::<i64>()];
    // SAFETY: the three views were checked against their storages (base_ptr); `ss` only drops
    // dim d's stride, which is added back as `index * sd` with every index checked to be in
    // `[0, src.sizes[d])`, so every read stays inside src's view; runs write disjoint elements
    // of dst (or run serially when dst overlaps itself), and dst overlaps no input.
    unsafe {
        plan.run(bases, elem, self_overlapping(&dst.sizes, &dst.strides), |p, s, n| {
            let (o, a, ix) = (p[0] as *mut T, p[1] as *const T, p[2] as *const i64);
            if s[2] == 0 {
                let a = a.offset(ix.read() as isize * sd);
                copy_run(o, s[0], a, s[1], n);
            } else {
                for j in 0..n as isize {
                    let v = ix.offset(j * s[2]).read() as isize;
                    o.offset(j * s[0]).write(a.offset(j * s[1] + v * sd).read());
                }
            }
        })
    };
    Ok(())
}

/// For every position `p` of `idx`: `dst[q] = f(dst[q], src[p])` where `q` is `p` with
/// coordinate `d` replaced by `idx[p]` (`src` absent: `f` gets `T::default()`).
///
/// Positions that differ only along `d` run in order on one thread, so with repeated indices
/// the last write wins and additions accumulate. Callers guarantee: `dst` and `src` have
/// `idx`'s rank, `dst` has `idx`'s sizes except along `d`, `src` has `idx`'s sizes except that
/// it may be longer along `d`, every index lies in `[0, dst.sizes[d])`, and `dst` shares memory
/// with no input.
fn scatter_run<T: Scalar>(
    dst: &View<T>,
    d: usize,
    idx: &View<i64>,
    src: Option<&View<T>>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    if idx.numel() == 0 {
        return Ok(());
    }
    let k = idx.sizes[d] as isize;
    let shape = without(&idx.sizes, d);
    let (dd, id) = (dst.strides[d] as isize, idx.strides[d] as isize);
    let (ss, sd, sb) = match src {
        Some(s) => (without(&s.strides, d), s.strides[d] as isize, base_ptr(s)?),
        None => (vec![0; shape.len()], 0, ptr::null_mut()),
    };
    let plan = Plan::<3>::new(&shape, [&without(&dst.strides, d), &ss, &without(&idx.strides, d)]);
    let bases = [base_ptr(dst)?, sb, base_ptr(idx)?];
    let elem = [size_of::<T>(), size_of::<T>(), size_of::<i64>()];
    // SAFETY: the views were checked against their storages (base_ptr); positions walked are
    // those of idx (inside src's view too, src being at least as large); dst is addressed at
    // idx's positions with coordinate d replaced by a checked index in `[0, dst.sizes[d])`.
    // Slices at different positions write disjoint elements of dst unless dst overlaps itself,
    // in which case everything runs serially; dst overlaps no input. src is only read when given.
    unsafe {
        plan.run(bases, elem, self_overlapping(&dst.sizes, &dst.strides), |p, s, n| {
            let (o, a, ix) = (p[0] as *mut T, p[1] as *const T, p[2] as *const i64);
            let step = |j: isize, q: isize| {
                let v = ix.offset(j * s[2] + q * id).read() as isize;
                let slot = o.offset(j * s[0] + v * dd);
                let x = if a.is_null() { T::default() } else { a.offset(j * s[1] + q * sd).read() };
                slot.write(f(slot.read(), x));
            };
            if s[2].unsigned_abs() <= id.unsigned_abs() {
                for q in 0..k {
                    for j in 0..n as isize {
                        step(j, q);
                    }
                }
            } else {
                for j in 0..n as isize {
                    for q in 0..k {
                        step(j, q);
                    }
                }
            }
        })
    };
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Masks and nonzero (§4.2)
// ---------------------------------------------------------------------------------------------

/// A mask element type: Byte (values must be 0 or 1, as in TH) or Bool (any nonzero byte is true).
pub trait MaskElem: Scalar {
    fn valid(self) -> bool;
    fn on(self) -> bool;
}

impl MaskElem for u8 {
    #[inline(always)]
    fn valid(self) -> bool {
        self <= 1
    }
    #[inline(always)]
    fn on(self) -> bool {
        self != 0
    }
}

impl MaskElem for Bool {
    #[inline(always)]
    fn valid(self) -> bool {
        true
    }
    #[inline(always)]
    fn on(self) -> bool {
        self.get()
    }
}

/// `mask` presented at `shape`: as is, broadcast to it, or (equal element counts) paired in
/// row-major order.
fn mask_at<M: Scalar>(mask: &View<M>, shape: &[i64], arg: u32) -> Result<View<M>> {
    if mask.sizes == shape {
        return Ok(mask.clone());
    }
    if mask.ndim() > 0
        && !shape.is_empty()
        && let Ok(v) = mask.expand(shape)
    {
        return Ok(v);
    }
    let n = numel(shape)?;
    if mask.numel() == n && n > 0 {
        let mut m = if mask.is_contiguous() { mask.clone() } else { dense(mask)? };
        m.sizes = shape.to_vec();
        m.strides = crate::core::tensor::fill_strides(shape, None)?;
        return Ok(m);
    }
    Err(Error::size(format!(
        "mask of size {} does not match (broadcast to, or have as many elements as) a tensor of size {}",
        size_desc(&mask.sizes),
        size_desc(shape)
    ))
    .at_arg(arg))
}

/// Checks every mask value and returns how many are set.
fn check_mask<M: MaskElem>(m: &View<M>, arg: u32) -> Result<usize> {
    let mut count = 0;
    scan(m, |i, v| {
        if !v.valid() {
            return Err(Error::invalid(format!(
                "mask tensor can take 0 and 1 values only (found {v:?} at position {i})"
            ))
            .at_arg(arg));
        }
        count += v.on() as usize;
        Ok(())
    })?;
    Ok(count)
}

/// `t[i] = value` where `mask[i]` is set (in place).
pub fn masked_fill<T: Scalar, M: MaskElem>(t: &View<T>, mask: &View<M>, value: T) -> Result<()> {
    let m = mask_at(mask, &t.sizes, 2)?;
    check_mask(&m, 2)?;
    if t.numel() == 0 {
        return Ok(());
    }
    let m = if may_overlap(t, &m) { dense(&m)? } else { m };
    map2(t, t, &m, move |x: T, b: M| if b.on() { value } else { x })
}

/// Where `mask[i]` is set, `t[i]` takes the next element of `src` (row-major); `src` must have
/// at least as many elements as the mask has set values.
pub fn masked_copy<T: Scalar, M: MaskElem>(t: &View<T>, mask: &View<M>, src: &View<T>) -> Result<()> {
    let m = mask_at(mask, &t.sizes, 2)?;
    let count = check_mask(&m, 2)?;
    if src.numel() < count {
        return Err(Error::size(format!(
            "mask has {count} set elements but the source has only {} elements",
            src.numel()
        ))
        .at_arg(3));
    }
    if count == 0 {
        return Ok(());
    }
    let mv = m.to_vec()?;
    let sv = src.to_vec()?;
    let Some(p) = t.host_ptr()? else { return Ok(()) };
    let mut next = sv.into_iter();
    for (o, b) in Offsets::new(t.offset, &t.sizes, &t.strides, t.numel()).zip(mv) {
        if b.on()
            && let Some(x) = next.next()
        {
            // SAFETY: every offset of t lies inside its storage (host_ptr checked).
            unsafe { ptr::write(p.add(o), x) };
        }
    }
    Ok(())
}

/// `src` and `mask` at a common shape: numpy broadcasting, or paired in row-major order.
fn broadcast_pair<T: Scalar, M: Scalar>(src: &View<T>, mask: &View<M>) -> Result<(View<T>, View<M>)> {
    if src.sizes == mask.sizes {
        return Ok((src.clone(), mask.clone()));
    }
    if src.ndim() > 0
        && mask.ndim() > 0
        && let Ok(shape) = broadcast_shapes(&src.sizes, &mask.sizes)
    {
        return Ok((src.expand(&shape)?, mask.expand(&shape)?));
    }
    Ok((src.clone(), mask_at(mask, &src.sizes, 3)?))
}

/// `r` = the elements of `src` where `mask` is set, as a 1-D tensor (row-major order).
pub fn masked_select<T: Scalar, M: MaskElem>(r: &Tensor<T>, src: &View<T>, mask: &View<M>) -> Result<()> {
    let (s, m) = broadcast_pair(src, mask)?;
    let count = check_mask(&m, 3)?;
    let mut out: Vec<T> = crate::core::limits::try_vec(count)?;
    match (s.host_ptr()?, m.host_ptr()?) {
        (Some(sp), Some(mp)) if s.is_contiguous() && m.is_contiguous() => {
            for i in 0..s.numel() {
                // SAFETY: both views are contiguous runs of numel elements from their offsets,
                // inside their storages (host_ptr checked).
                let (x, b) = unsafe { (sp.add(s.offset + i).read(), mp.add(m.offset + i).read()) };
                if b.on() {
                    out.push(x);
                }
            }
        }
        _ => out.extend(s.to_vec()?.into_iter().zip(m.to_vec()?).filter(|(_, b)| b.on()).map(|(x, _)| x)),
    }
    set_result(r, &out, &[out.len() as i64])
}

/// `r` (nnz x ndim) = the subscripts of the nonzero elements of `t`, in row-major order.
pub fn nonzero<T: Scalar>(r: &Tensor<i64>, t: &View<T>) -> Result<()> {
    let nd = t.ndim();
    let zero = T::default();
    let mut subs: Vec<i64> = Vec::new();
    let mut at = vec![0i64; nd];
    scan(t, |_, v| {
        if v != zero {
            subs.try_reserve(nd.max(1) * 64).map_err(|_| Error::alloc("nonzero: out of memory for the subscripts"))?;
            subs.extend_from_slice(&at);
        }
        for e in (0..nd).rev() {
            at[e] += 1;
            if at[e] < t.sizes[e] {
                break;
            }
            at[e] = 0;
        }
        Ok(())
    })?;
    let n = subs.len().checked_div(nd).unwrap_or(0) as i64;
    set_result(r, &subs, &[n, nd as i64])
}

// ---------------------------------------------------------------------------------------------
// Index ops (§4.3)
// ---------------------------------------------------------------------------------------------

/// `r` = `src` with `index` selecting entries along `dim` (`r.size(dim) == index.numel()`).
pub fn index_select<T: Scalar>(r: &Tensor<T>, src: &View<T>, dim: i32, index: &View<i64>) -> Result<()> {
    let d = dim_index(dim, src.ndim(), 3)?;
    index_vector(index, 4)?;
    check_indices(index, src.sizes[d], d, 4)?;
    let mut shape = src.sizes.clone();
    shape[d] = index.sizes[0];
    let out = resize_out(r, &shape)?;
    let idx = along(index, &shape, d);
    if may_overlap(&out, src) || may_overlap(&out, index) {
        let tmp = View::contiguous(&shape)?;
        gather_run(&tmp, src, d, &idx)?;
        return assign(&out, &tmp);
    }
    gather_run(&out, src, d, &idx)
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
    let src = if may_overlap(t, src) { dense(src)? } else { src.clone() };
    let index = if may_overlap(t, index) { dense(index)? } else { index.clone() };
    scatter_run(t, d, &along(&index, &src.sizes, d), Some(&src), f)
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
    let index = if may_overlap(t, index) { dense(index)? } else { index.clone() };
    let mut shape = t.sizes.clone();
    shape[d] = index.sizes[0];
    scatter_run(t, d, &along(&index, &shape, d), None, move |_, _| value)
}

/// `r[p] = src[p with coordinate dim replaced by index[p]]`; `r` is resized like `index`, which
/// must have `src`'s rank and sizes except along `dim`.
pub fn gather<T: Scalar>(r: &Tensor<T>, src: &View<T>, dim: i32, index: &View<i64>) -> Result<()> {
    let d = dim_index(dim, src.ndim(), 3)?;
    let fits = index.ndim() == src.ndim() && (0..src.ndim()).all(|e| e == d || index.sizes[e] == src.sizes[e]);
    if !fits {
        return Err(Error::size(format!(
            "index of size {} must have the size of the source {} except along dimension {d}",
            size_desc(&index.sizes),
            size_desc(&src.sizes)
        ))
        .at_arg(4));
    }
    check_indices(index, src.sizes[d], d, 4)?;
    let out = resize_out(r, &index.sizes)?;
    if may_overlap(&out, src) || may_overlap(&out, index) {
        let tmp = View::contiguous(&index.sizes)?;
        gather_run(&tmp, src, d, index)?;
        return assign(&out, &tmp);
    }
    gather_run(&out, src, d, index)
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
    let fits = index.ndim() == t.ndim() && (0..t.ndim()).all(|e| e == d || index.sizes[e] == t.sizes[e]);
    if !fits {
        return Err(Error::size(format!(
            "index of size {} must have the size of the tensor {} except along dimension {d}",
            size_desc(&index.sizes),
            size_desc(&t.sizes)
        ))
        .at_arg(3));
    }
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
    let index = if may_overlap(t, index) { dense(index)? } else { index.clone() };
    let src = match src {
        Some(s) if may_overlap(t, s) => Some(dense(s)?),
        Some(s) => Some(s.clone()),
        None => None,
    };
    scatter_run(t, d, &index, src.as_ref(), f)
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

// ---------------------------------------------------------------------------------------------
// Constructors (§4.12), reshape
// ---------------------------------------------------------------------------------------------

/// `r` resized to `size` (a TH size list) and filled with `value`.
pub fn fill_sized<T: Scalar>(r: &Tensor<T>, size: &[i64], value: T) -> Result<()> {
    let shape = parse_sizes(size).map_err(|e| e.at_arg(2))?;
    let out = resize_out(r, &shape)?;
    map0(&out, move || value)
}

/// `r` resized like `like` and filled with `value`.
pub fn fill_like<T: Scalar>(r: &Tensor<T>, like: &View<T>, value: T) -> Result<()> {
    let out = resize_out(r, &like.sizes)?;
    map0(&out, move || value)
}

pub fn zeros<T: Scalar>(r: &Tensor<T>, size: &[i64]) -> Result<()> {
    fill_sized(r, size, T::default())
}

pub fn ones<T: Scalar>(r: &Tensor<T>, size: &[i64]) -> Result<()> {
    fill_sized(r, size, one())
}

pub fn zeros_like<T: Scalar>(r: &Tensor<T>, like: &View<T>) -> Result<()> {
    fill_like(r, like, T::default())
}

pub fn ones_like<T: Scalar>(r: &Tensor<T>, like: &View<T>) -> Result<()> {
    fill_like(r, like, one())
}

/// The `k`-th diagonal of a matrix as a 1-D view (None when it is empty).
fn diagonal<T: Scalar>(m: &View<T>, k: i64) -> Option<View<T>> {
    let (rows, cols) = (m.sizes[0], m.sizes[1]);
    let (len, off) = if k >= 0 {
        (rows.min(cols.saturating_sub(k)), k.saturating_mul(m.strides[1]))
    } else {
        (rows.saturating_add(k).min(cols), k.saturating_neg().saturating_mul(m.strides[0]))
    };
    if len <= 0 {
        return None;
    }
    // len >= 2 implies (len-1)*(s0+s1) fits (the view's own extent does), so the sum does too.
    let stride = if len == 1 { 1 } else { m.strides[0] + m.strides[1] };
    Some(View { storage: m.storage.clone(), offset: m.offset + off as usize, sizes: vec![len], strides: vec![stride] })
}

/// `t` 1-D: `r` = the square matrix with `t` on its `k`-th diagonal (zeros elsewhere);
/// `t` 2-D: `r` = the `k`-th diagonal of `t` (empty when `k` is past the matrix).
pub fn diag<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i32) -> Result<()> {
    let k = k as i64;
    match t.ndim() {
        1 => {
            let n = t.sizes[0] + k.abs();
            let out = resize_out(r, &[n, n])?;
            let t = if may_overlap(&out, t) { dense(t)? } else { t.clone() };
            map0(&out, T::default)?;
            match diagonal(&out, k) {
                Some(dv) => assign(&dv, &t),
                None => Err(Error::internal("diag: empty diagonal of a non-empty matrix")),
            }
        }
        2 => match diagonal(t, k) {
            Some(dv) => {
                let out = resize_out(r, &dv.sizes)?;
                assign(&out, &dv)
            }
            None => {
                resize_out(r, &[])?;
                Ok(())
            }
        },
        n => Err(Error::size(format!("diag: a matrix or a vector expected, got a {n}D tensor")).at_arg(2)),
    }
}

/// `r` = the `n` x `m` identity (`m <= 0` means `m = n`).
pub fn eye<T: Scalar>(r: &Tensor<T>, n: i64, m: i64) -> Result<()> {
    if n <= 0 {
        return Err(Error::size(format!("eye: invalid number of rows {n} (must be positive)")).at_arg(2));
    }
    let m = if m <= 0 { n } else { m };
    let out = resize_out(r, &[n, m])?;
    map0(&out, T::default)?;
    match diagonal(&out, 0) {
        Some(dv) => map0(&dv, one::<T>),
        None => Ok(()),
    }
}

/// `r` resized to `size` (a TH size list, no -1 inference) holding `t`'s elements in row-major order.
pub fn reshape<T: Scalar>(r: &Tensor<T>, t: &View<T>, size: &[i64]) -> Result<()> {
    let shape = parse_sizes(size).map_err(|e| e.at_arg(3))?;
    if numel(&shape)? != t.numel() {
        return Err(Error::size(format!(
            "cannot reshape a tensor of size {} ({} elements) to size {}",
            size_desc(&t.sizes),
            t.numel(),
            size_desc(&shape)
        ))
        .at_arg(3));
    }
    let out = resize_out(r, &shape)?;
    copy(&out, t)
}

// ---------------------------------------------------------------------------------------------
// Ranges (§4.12 arange/range, §4.18 linspace/logspace)
// ---------------------------------------------------------------------------------------------

/// `accreal` of the range functions: i64 (integer types and Bool), f64 (Float, Double),
/// f32 (Half, BFloat16).
pub trait RangeAcc: Copy + PartialOrd + std::fmt::Display {
    fn is_finite(self) -> bool;
    fn is_zero(self) -> bool;
    fn positive(self) -> bool;
    /// Number of points of `[xmin, xmax]` (`inclusive`) or `[xmin, xmax)` at `step`
    /// (`step` nonzero, `xmax - xmin` of `step`'s sign or zero).
    fn count(xmin: Self, xmax: Self, step: Self, inclusive: bool) -> Option<u64>;
    /// `xmin + i * step`, computed in this type.
    fn nth(xmin: Self, step: Self, i: u64) -> Prim;
}

impl RangeAcc for i64 {
    fn is_finite(self) -> bool {
        true
    }
    fn is_zero(self) -> bool {
        self == 0
    }
    fn positive(self) -> bool {
        self > 0
    }
    fn count(xmin: i64, xmax: i64, step: i64, inclusive: bool) -> Option<u64> {
        let (diff, step) = (xmax as i128 - xmin as i128, step as i128);
        let q = diff / step;
        let n = if inclusive || diff % step != 0 { q + 1 } else { q };
        u64::try_from(n).ok()
    }
    fn nth(xmin: i64, step: i64, i: u64) -> Prim {
        Prim::I((xmin as i128 + i as i128 * step as i128) as i64)
    }
}

macro_rules! float_range_acc {
    ($($F:ty),*) => {$(
        impl RangeAcc for $F {
            fn is_finite(self) -> bool {
                <$F>::is_finite(self)
            }
            fn is_zero(self) -> bool {
                self == 0.0
            }
            fn positive(self) -> bool {
                self > 0.0
            }
            fn count(xmin: $F, xmax: $F, step: $F, inclusive: bool) -> Option<u64> {
                let q = ((xmax - xmin) / step) as f64;
                let n = if inclusive { q.floor() + 1.0 } else { q.ceil() };
                if !(0.0..9.0e15).contains(&n) {
                    return None;
                }
                Some(n as u64)
            }
            fn nth(xmin: $F, step: $F, i: u64) -> Prim {
                Prim::F((xmin + i as $F * step) as f64)
            }
        }
    )*};
}
float_range_acc!(f32, f64);

/// `r` (resized to 1-D only when its element count differs) = `f(0), f(1), ..., f(n-1)` in
/// row-major order.
fn fill_sequence<T: Scalar>(r: &Tensor<T>, n: u64, f: impl Fn(u64) -> T) -> Result<()> {
    let len = i64::try_from(n).map_err(|_| Error::size(format!("{n} elements do not fit in int64_t")))?;
    let cur = r.with_view(|v| v.numel());
    let out = if cur as u64 == n { r.view() } else { resize_out(r, &[len])? };
    if n == 0 {
        return Ok(());
    }
    let data: Vec<T> = crate::core::limits::try_collect(n as usize, (0..n).map(f))?;
    assign(&out, &View::from_slice(&data, &[len])?)
}

/// TH's `range` (`inclusive`: `[xmin, xmax]`) and `arange` (`[xmin, xmax)`): `xmin + i*step`
/// computed in `accreal`, then cast to the element type. `r` keeps its shape when it already
/// has as many elements as the result.
pub fn range<T: Scalar, A: RangeAcc>(r: &Tensor<T>, xmin: A, xmax: A, step: A, inclusive: bool) -> Result<()> {
    if !xmin.is_finite() || !xmax.is_finite() {
        return Err(Error::invalid(format!("range bounds must be finite, got {xmin} and {xmax}")).at_arg(2));
    }
    if !step.is_finite() || step.is_zero() {
        return Err(Error::invalid(format!("step must be a nonzero finite number, got {step}")).at_arg(4));
    }
    if (step.positive() && xmax < xmin) || (!step.positive() && xmax > xmin) {
        return Err(Error::invalid(format!(
            "upper bound {xmax} and lower bound {xmin} are inconsistent with the sign of step {step}"
        ))
        .at_arg(3));
    }
    let n = A::count(xmin, xmax, step, inclusive)
        .ok_or_else(|| Error::size(format!("range({xmin}, {xmax}, {step}) has too many elements")).at_arg(4))?;
    fill_sequence(r, n, |i| T::from_prim(A::nth(xmin, step, i)))
}

fn check_points<T: Float>(a: T, b: T, n: i64) -> Result<u64> {
    if n > 1 || (n == 1 && a == b) {
        return Ok(n as u64);
    }
    Err(Error::size(format!("invalid number of points {n} (need n > 1, or n == 1 with a == b)")).at_arg(4))
}

/// `n` points from `a` to `b` inclusive: `a + i*(b-a)/(n-1)` (computed in double).
pub fn linspace<T: Float>(r: &Tensor<T>, a: T, b: T, n: i64) -> Result<()> {
    let cnt = check_points(a, b, n)?;
    let (x, y) = (a.to_f64(), b.to_f64());
    let den = (n - 1).max(1) as f64;
    fill_sequence(r, cnt, |i| T::from_f64(x + i as f64 * (y - x) / den))
}

/// `10^linspace(a, b, n)` (computed in double).
pub fn logspace<T: Float>(r: &Tensor<T>, a: T, b: T, n: i64) -> Result<()> {
    let cnt = check_points(a, b, n)?;
    let (x, y) = (a.to_f64(), b.to_f64());
    let den = (n - 1).max(1) as f64;
    fill_sequence(r, cnt, |i| T::from_f64(10f64.powf(x + i as f64 * (y - x) / den)))
}

// ---------------------------------------------------------------------------------------------
// Sort and top-k (§4.13)
// ---------------------------------------------------------------------------------------------

/// A total order on elements: numbers ascending, NaN after every number, -0.0 == 0.0,
/// Bool false < true.
pub trait SortKey: Scalar {
    fn key_cmp(&self, o: &Self) -> Ordering;
}

macro_rules! int_key {
    ($($T:ty),*) => {$(
        impl SortKey for $T {
            #[inline(always)]
            fn key_cmp(&self, o: &Self) -> Ordering {
                self.cmp(o)
            }
        }
    )*};
}
int_key!(u8, i8, i16, i32, i64);

#[inline(always)]
fn nan_last<F: PartialOrd>(a: F, b: F, a_nan: bool, b_nan: bool) -> Ordering {
    match (a_nan, b_nan) {
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

macro_rules! float_key {
    ($($T:ty => |$x:ident| $e:expr),*) => {$(
        impl SortKey for $T {
            #[inline(always)]
            fn key_cmp(&self, o: &Self) -> Ordering {
                let conv = |$x: $T| $e;
                let (a, b) = (conv(*self), conv(*o));
                nan_last(a, b, a.is_nan(), b.is_nan())
            }
        }
    )*};
}
float_key!(f32 => |x| x, f64 => |x| x, half::f16 => |x| x.to_f32(), half::bf16 => |x| x.to_f32());

impl SortKey for Bool {
    #[inline(always)]
    fn key_cmp(&self, o: &Self) -> Ordering {
        self.get().cmp(&o.get())
    }
}

#[derive(Clone, Copy)]
enum Pick {
    /// All elements, stable, ascending or descending.
    Sort { descending: bool },
    /// The `k` largest (or smallest), ties by position, in sorted order.
    Top { k: usize, largest: bool },
}

/// Runs `pick` on every slice of `t` along `d`: values into `rt`, source positions into `ri`.
fn along_sorted<T: SortKey>(rt: &Tensor<T>, ri: &Tensor<i64>, t: &View<T>, d: usize, pick: Pick) -> Result<()> {
    let len = t.sizes[d] as usize;
    let k = match pick {
        Pick::Sort { .. } => len,
        Pick::Top { k, .. } => k,
    };
    let mut shape = t.sizes.clone();
    shape[d] = k as i64;
    // Outputs on one storage (possible for Long, whose indices tensor has the values' type) are
    // refused before either is resized, so that the error leaves both as they were.
    if let (Some(a), Some(b)) = (&rt.view().storage, &ri.view().storage)
        && ptr::eq(Rc::as_ptr(a) as *const u8, Rc::as_ptr(b) as *const u8)
    {
        return Err(Error::invalid("the values and indices outputs share a storage").at_arg(2));
    }
    if k == 0 {
        resize_out(rt, &[])?;
        resize_out(ri, &[])?;
        return Ok(());
    }
    let vo = resize_out(rt, &shape)?;
    let io = resize_out(ri, &shape)?;
    if may_overlap(&vo, &io) {
        return Err(Error::invalid("the values and indices outputs share memory").at_arg(2));
    }
    // Each slice is read whole before it is written, so `rt` may be `t` itself.
    let t = if partial_overlap(&vo, t) || may_overlap(&io, t) { dense(t)? } else { t.clone() };
    let (vd, id, td) = (vo.strides[d] as isize, io.strides[d] as isize, t.strides[d] as isize);
    // Slice starts (storage offsets), one per position of the shape without dim d.
    let (so, si, st) = (slice_starts(&vo, d)?, slice_starts(&io, d)?, slice_starts(&t, d)?);
    // One slice's (value, position) pairs per worker: probe that much memory up front so that
    // a slice longer than memory is an error here rather than an abort in a worker.
    drop(crate::core::limits::try_vec::<(T, i64)>(len)?);
    let (Some(pv), Some(pi), Some(pt)) = (vo.host_ptr()?, io.host_ptr()?, t.host_ptr()?) else {
        return Err(Error::internal("sort: a non-empty tensor without data"));
    };
    let (pv, pi, pt) = (pv as usize, pi as usize, pt as usize);
    let serial = self_overlapping(&vo.sizes, &vo.strides) || self_overlapping(&io.sizes, &io.strides);
    let work = if serial { 0 } else { so.len().saturating_mul(len.max(2)) };
    parallel::for_range(so.len(), work, |a, b| {
        let mut buf: Vec<(T, i64)> = Vec::with_capacity(len);
        for j in a..b {
            // SAFETY: host_ptr checked every view against its storage; a slice start plus
            // q * stride(d) for q < len (t) or q < k (outputs) is an element of that view.
            // Different slices write disjoint output elements unless an output overlaps itself
            // (then this runs on one thread); the outputs share no memory with each other and
            // share memory with t only when vo is t's own view, whose slice is read whole first.
            unsafe {
                let (o, oi, x) = ((pv as *mut T).add(so[j]), (pi as *mut i64).add(si[j]), (pt as *const T).add(st[j]));
                buf.clear();
                buf.extend((0..len).map(|q| (x.offset(q as isize * td).read(), q as i64)));
                match pick {
                    Pick::Sort { descending: false } => buf.sort_by(|x, y| x.0.key_cmp(&y.0)),
                    Pick::Sort { descending: true } => buf.sort_by(|x, y| y.0.key_cmp(&x.0)),
                    Pick::Top { k, largest } => {
                        let cmp = |x: &(T, i64), y: &(T, i64)| {
                            let c = if largest { y.0.key_cmp(&x.0) } else { x.0.key_cmp(&y.0) };
                            c.then(x.1.cmp(&y.1))
                        };
                        if k < len {
                            buf.select_nth_unstable_by(k - 1, cmp);
                            buf.truncate(k);
                        }
                        buf.sort_unstable_by(cmp);
                    }
                }
                for (q, &(v, i)) in buf.iter().take(k).enumerate() {
                    o.offset(q as isize * vd).write(v);
                    oi.offset(q as isize * id).write(i);
                }
            }
        }
    });
    Ok(())
}

/// Storage offsets of the slice starts of `v` along `d` (row-major over the other dims).
fn slice_starts<T: Scalar>(v: &View<T>, d: usize) -> Result<Vec<usize>> {
    let (sz, st) = (without(&v.sizes, d), without(&v.strides, d));
    let n = sz.iter().product::<i64>() as usize;
    crate::core::limits::try_collect(n, Offsets::new(v.offset, &sz, &st, n))
}

/// `rt` = `t` sorted along `dim` (stable; NaN last, first when descending), `ri` = the 0-based
/// source positions.
pub fn sort<T: SortKey>(rt: &Tensor<T>, ri: &Tensor<i64>, t: &View<T>, dim: i32, descending: bool) -> Result<()> {
    let d = dim_index(dim, t.ndim(), 4)?;
    along_sorted(rt, ri, t, d, Pick::Sort { descending })
}

/// The `k` largest (`largest`) or smallest elements along `dim`, in sorted order (descending
/// for largest), ties by position; `k == 0` gives empty outputs.
pub fn topk<T: SortKey>(rt: &Tensor<T>, ri: &Tensor<i64>, t: &View<T>, k: i64, dim: i32, largest: bool) -> Result<()> {
    let d = dim_index(dim, t.ndim(), 5)?;
    if k < 0 || k > t.sizes[d] {
        return Err(Error::index(format!(
            "selected number k = {k} out of range for dimension {d} with size {}",
            t.sizes[d]
        ))
        .at_arg(4));
    }
    along_sorted(rt, ri, t, d, Pick::Top { k: k as usize, largest })
}

// ---------------------------------------------------------------------------------------------
// Triangles, concatenation, cross product (§4.13, §4.10)
// ---------------------------------------------------------------------------------------------

/// `r` = `t` (a matrix) with the elements outside the triangle zeroed: lower keeps `c <= r + k`,
/// upper keeps `c >= r + k`.
pub fn triangle<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i64, upper: bool) -> Result<()> {
    if t.ndim() != 2 {
        return Err(Error::size(format!("expected a matrix, got a tensor of size {}", size_desc(&t.sizes))).at_arg(2));
    }
    let out = resize_out(r, &t.sizes)?;
    assign(&out, t)?;
    let (rows, cols) = (out.sizes[0], out.sizes[1]);
    let Some(p) = out.host_ptr()? else { return Ok(()) };
    let zero = T::default();
    for i in 0..rows {
        let edge = i.saturating_add(k);
        let (lo, hi) = if upper { (0, edge.clamp(0, cols)) } else { (edge.saturating_add(1).clamp(0, cols), cols) };
        for c in lo..hi {
            let o = out.offset + (i * out.strides[0] + c * out.strides[1]) as usize;
            // SAFETY: (i, c) is a position of out, whose elements lie inside its storage (host_ptr).
            unsafe { ptr::write(p.add(o), zero) };
        }
    }
    Ok(())
}

pub fn tril<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i64) -> Result<()> {
    triangle(r, t, k, false)
}

pub fn triu<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i64) -> Result<()> {
    triangle(r, t, k, true)
}

/// TH's `catArray`: the inputs joined along `dim` (-1: the last dimension). Empty inputs are
/// skipped; an input with fewer dims counts as having trailing size-1 dims; `dim` may be one
/// past the largest rank (adding a size-1 dim); every other size must match. All inputs empty:
/// `r` becomes empty.
pub fn cat<T: Scalar>(r: &Tensor<T>, inputs: &[View<T>], dim: i32) -> Result<()> {
    if inputs.is_empty() {
        return Err(Error::size("invalid number of inputs 0").at_arg(3));
    }
    let max_nd = inputs.iter().map(|v| v.ndim()).max().unwrap_or(0);
    let cd = match dim {
        -1 => max_nd.saturating_sub(1),
        d if d >= 0 => d as usize,
        d => return Err(Error::index(format!("invalid dimension {d} (use -1 for the last one)")).at_arg(4)),
    };
    // As in torch7, a dimension past the inputs' adds size-1 dimensions; each costs memory, so a
    // huge one (INT_MAX would need a 16 GiB size list) is an error rather than an allocation.
    if cd >= max_nd.max(crate::core::limits::MAX_NEW_DIMS) {
        return Err(Error::index(format!(
            "dimension {cd} out of range: cat adds dimensions only up to {}",
            crate::core::limits::MAX_NEW_DIMS
        ))
        .at_arg(4));
    }
    let nd = max_nd.max(cd + 1);
    let size_at = |v: &View<T>, i: usize| if i < v.ndim() { v.sizes[i] } else { 1 };
    let live: Vec<(usize, &View<T>)> = inputs.iter().enumerate().filter(|(_, v)| v.ndim() > 0).collect();
    let Some(&(j0, first)) = live.first() else {
        resize_out(r, &[])?;
        return Ok(());
    };
    let mut shape = vec![0i64; nd];
    for (i, s) in shape.iter_mut().enumerate() {
        if i == cd {
            *s = live
                .iter()
                .try_fold(0i64, |acc, (_, v)| acc.checked_add(size_at(v, i)))
                .ok_or_else(|| Error::size("concatenated size overflows int64_t").at_arg(2))?;
            continue;
        }
        *s = size_at(first, i);
        if let Some((j, v)) = live.iter().find(|(_, v)| size_at(v, i) != *s) {
            return Err(Error::size(format!(
                "inconsistent tensor sizes: input {j} of size {} and input {j0} of size {} differ at dimension {i} \
                 (concatenating along dimension {cd})",
                size_desc(&v.sizes),
                size_desc(&first.sizes)
            ))
            .at_arg(2));
        }
    }
    numel(&shape)?;
    let out = resize_out(r, &shape)?;
    let through_tmp = live.iter().any(|(_, v)| may_overlap(&out, v));
    let target = if through_tmp { View::contiguous(&shape)? } else { out.clone() };
    let mut off = 0i64;
    for (_, v) in &live {
        let len = size_at(v, cd);
        // The input with its missing trailing dims added (size 1), shaped like its slot.
        let mut src = (*v).clone();
        src.sizes.resize(nd, 1);
        src.strides.resize(nd, 1);
        assign(&target.narrow(cd as i32, off, len)?, &src)?;
        off += len;
    }
    if through_tmp {
        assign(&out, &target)?;
    }
    Ok(())
}

/// `r` = the cross product of `a` and `b` (broadcast together) along `dim`, which must have
/// size 3; `dim < 0` picks the first dimension of size 3. Floats compute in double.
pub fn cross<T: Num>(r: &Tensor<T>, a: &View<T>, b: &View<T>, dim: i32) -> Result<()> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::size("cross: empty input").at_arg(if a.ndim() == 0 { 2 } else { 3 }));
    }
    let shape = broadcast_shapes(&a.sizes, &b.sizes).map_err(|e| e.at_arg(3))?;
    let d =
        if dim < 0 {
            shape.iter().position(|&s| s == 3).ok_or_else(|| {
                Error::size(format!("cross: no dimension of size 3 in {}", size_desc(&shape))).at_arg(4)
            })?
        } else {
            let d = dim_index(dim, shape.len(), 4)?;
            if shape[d] != 3 {
                return Err(Error::size(format!("cross: dimension {d} of {} does not have size 3", size_desc(&shape)))
                    .at_arg(4));
            }
            d
        };
    let (a, b) = (a.expand(&shape)?, b.expand(&shape)?);
    let out = resize_out(r, &shape)?;
    let through_tmp = may_overlap(&out, &a) || may_overlap(&out, &b);
    let target = if through_tmp { View::contiguous(&shape)? } else { out.clone() };
    let sshape = without(&shape, d);
    let st = [target.strides[d] as isize, a.strides[d] as isize, b.strides[d] as isize];
    let plan =
        Plan::<3>::new(&sshape, [&without(&target.strides, d), &without(&a.strides, d), &without(&b.strides, d)]);
    let bases = [base_ptr(&target)?, base_ptr(&a)?, base_ptr(&b)?];
    let elem = [size_of::<T>(); 3];
    // SAFETY: the views were checked against their storages (base_ptr); each slice touches
    // positions 0..3 along d, inside every view (size 3 there); slices write disjoint elements of
    // target unless it overlaps itself (then serial), and target shares no memory with a or b.
    unsafe {
        plan.run(bases, elem, self_overlapping(&target.sizes, &target.strides), |p, s, n| {
            for j in 0..n as isize {
                let (o, x, y) = (
                    (p[0] as *mut T).offset(j * s[0]),
                    (p[1] as *const T).offset(j * s[1]),
                    (p[2] as *const T).offset(j * s[2]),
                );
                let xa = [x.read(), x.offset(st[1]).read(), x.offset(2 * st[1]).read()];
                let ya = [y.read(), y.offset(st[2]).read(), y.offset(2 * st[2]).read()];
                for c in 0..3 {
                    let (u, v) = ((c + 1) % 3, (c + 2) % 3);
                    let z = if T::IS_FLOAT {
                        T::from_f64(xa[u].to_f64() * ya[v].to_f64() - xa[v].to_f64() * ya[u].to_f64())
                    } else {
                        xa[u].mul(ya[v]).sub(xa[v].mul(ya[u]))
                    };
                    o.offset(c as isize * st[0]).write(z);
                }
            }
        })
    };
    if through_tmp {
        assign(&out, &target)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: a small deterministic generator for the tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: i64) -> i64 {
            (self.next() % n as u64) as i64
        }
        fn shape(&mut self, max_nd: i64) -> Vec<i64> {
            (0..1 + self.below(max_nd)).map(|_| 1 + self.below(4)).collect()
        }
    }

    fn from_vec<T: Scalar>(v: Vec<T>, shape: &[i64]) -> View<T> {
        View::from_slice(&v, shape).unwrap()
    }

    fn randv(rng: &mut Rng, shape: &[i64]) -> View<f64> {
        let n = numel(shape).unwrap();
        from_vec((0..n).map(|_| rng.below(19) as f64 - 9.0).collect(), shape)
    }

    /// The same values as `v`, stored transposed (a non-contiguous view) when `flip`.
    fn maybe_strided(v: &View<f64>, flip: bool) -> View<f64> {
        if !flip || v.ndim() < 2 {
            return v.clone();
        }
        let nd = v.ndim() as i32;
        let t = v.transpose(0, nd - 1).unwrap();
        let c = dense(&t).unwrap();
        c.transpose(0, nd - 1).unwrap()
    }

    /// All multi-indices of `shape` in row-major order.
    fn positions(shape: &[i64]) -> Vec<Vec<i64>> {
        let n = numel(shape).unwrap();
        let mut out = Vec::with_capacity(n);
        let mut at = vec![0i64; shape.len()];
        for _ in 0..n {
            out.push(at.clone());
            for e in (0..shape.len()).rev() {
                at[e] += 1;
                if at[e] < shape[e] {
                    break;
                }
                at[e] = 0;
            }
        }
        out
    }

    fn tensor<T: Scalar>(v: View<T>) -> Rc<Tensor<T>> {
        Tensor::new(v)
    }

    #[test]
    fn gather_scatter_match_naive() {
        let mut rng = Rng(0x1234_5678);
        for case in 0..if cfg!(miri) { 10 } else { 200 } {
            let shape = rng.shape(4);
            let d = rng.below(shape.len() as i64) as usize;
            let src = maybe_strided(&randv(&mut rng, &shape), case % 2 == 0);
            let mut ishape = shape.clone();
            ishape[d] = 1 + rng.below(5);
            let n = numel(&ishape).unwrap();
            let idx = from_vec((0..n).map(|_| rng.below(shape[d])).collect(), &ishape);
            // gather
            let r = tensor(View::<f64>::empty());
            gather(&r, &src, d as i32, &idx).unwrap();
            let got = r.view();
            assert_eq!(got.sizes, ishape);
            for p in positions(&ishape) {
                let mut q = p.clone();
                q[d] = idx.get(&p).unwrap();
                assert_eq!(got.get(&p).unwrap(), src.get(&q).unwrap());
            }
            // scatter / scatterAdd / scatterFill into a copy of `dst` (shape like src except along d)
            let mut dshape = ishape.clone();
            dshape[d] = shape[d];
            let dst0 = randv(&mut rng, &dshape);
            let vals = randv(&mut rng, &ishape);
            for mode in 0..3 {
                let dst = maybe_strided(&dst0, case % 3 == 0);
                let mut want = dst0.to_vec().unwrap();
                let dpos = positions(&dshape);
                let flat = |q: &[i64]| dpos.iter().position(|x| x == q).unwrap();
                for p in positions(&ishape) {
                    let mut q = p.clone();
                    q[d] = idx.get(&p).unwrap();
                    let f = flat(&q);
                    let v = vals.get(&p).unwrap();
                    want[f] = match mode {
                        0 => v,
                        1 => want[f] + v,
                        _ => 7.5,
                    };
                }
                match mode {
                    0 => scatter(&dst, d as i32, &idx, &vals).unwrap(),
                    1 => scatter_add(&dst, d as i32, &idx, &vals).unwrap(),
                    _ => scatter_fill(&dst, d as i32, &idx, 7.5).unwrap(),
                }
                assert_eq!(dst.to_vec().unwrap(), want, "mode {mode} shape {shape:?} d {d}");
            }
        }
    }

    #[test]
    fn index_ops_match_naive() {
        let mut rng = Rng(0xdead_beef);
        for case in 0..if cfg!(miri) { 10 } else { 200 } {
            let shape = rng.shape(4);
            let d = rng.below(shape.len() as i64) as usize;
            let src = maybe_strided(&randv(&mut rng, &shape), case % 2 == 1);
            let k = 1 + rng.below(6);
            let idx = from_vec((0..k).map(|_| rng.below(shape[d])).collect(), &[k]);
            let r = tensor(View::<f64>::empty());
            index_select(&r, &src, d as i32, &idx).unwrap();
            let got = r.view();
            let mut oshape = shape.clone();
            oshape[d] = k;
            assert_eq!(got.sizes, oshape);
            for p in positions(&oshape) {
                let mut q = p.clone();
                q[d] = idx.get(&[p[d]]).unwrap();
                assert_eq!(got.get(&p).unwrap(), src.get(&q).unwrap());
            }
            // indexCopy / indexAdd / indexFill: src of size k along d
            let vals = randv(&mut rng, &oshape);
            for mode in 0..3 {
                let t = maybe_strided(&src, case % 3 == 0);
                let t = dense(&t).unwrap();
                let before = t.to_vec().unwrap();
                let pos = positions(&shape);
                let mut want = before.clone();
                for p in positions(&oshape) {
                    let mut q = p.clone();
                    q[d] = idx.get(&[p[d]]).unwrap();
                    let f = pos.iter().position(|x| *x == q).unwrap();
                    let v = vals.get(&p).unwrap();
                    want[f] = match mode {
                        0 => v,
                        1 => want[f] + v,
                        _ => -1.0,
                    };
                }
                match mode {
                    0 => index_copy(&t, d as i32, &idx, &vals).unwrap(),
                    1 => index_add(&t, d as i32, &idx, &vals).unwrap(),
                    _ => index_fill(&t, d as i32, &idx, -1.0).unwrap(),
                }
                assert_eq!(t.to_vec().unwrap(), want);
            }
        }
    }

    #[test]
    fn bad_indices_leave_outputs_untouched() {
        let src = from_vec((0..12).map(|x| x as f64).collect(), &[3, 4]);
        let idx = from_vec(vec![0i64, 5], &[2]);
        let r = tensor(from_vec(vec![9.0; 2], &[2]));
        let e = index_select(&r, &src, 0, &idx).unwrap_err();
        assert!(e.msg.contains("index 5") && e.msg.contains("size 3"), "{}", e.msg);
        assert_eq!(r.view().sizes, vec![2]);
        assert_eq!(r.view().to_vec().unwrap(), vec![9.0; 2]);
        let t = dense(&src).unwrap();
        let neg = from_vec(vec![1i64, -1], &[2]);
        assert!(index_fill(&t, 1, &neg, 0.0).is_err());
        assert!(index_copy(&t, 0, &idx, &from_vec(vec![0.0; 8], &[2, 4])).is_err());
        let gi = from_vec(vec![0i64, 1, 2, 3, 0, 1, 2, 4, 0, 0, 0, 0], &[3, 4]);
        assert!(scatter(&t, 1, &gi, &src).is_err());
        assert!(scatter_fill(&t, 1, &gi, 1.0).is_err());
        assert_eq!(t.to_vec().unwrap(), src.to_vec().unwrap());
        let g = tensor(View::<f64>::empty());
        assert!(gather(&g, &src, 1, &gi).is_err());
        assert_eq!(g.view().ndim(), 0);
        assert!(gather(&g, &src, 2, &gi).is_err());
    }

    #[test]
    fn aliasing_outputs() {
        // index_select into its own source (a permutation): computed through a temporary.
        let v = from_vec(vec![10.0, 11.0, 12.0, 13.0], &[4]);
        let t = tensor(v.clone());
        let perm = from_vec(vec![3i64, 2, 1, 0], &[4]);
        index_select(&t, &v, 0, &perm).unwrap();
        assert_eq!(t.view().to_vec().unwrap(), vec![13.0, 12.0, 11.0, 10.0]);
        // scatter from a view of the destination itself
        let m = from_vec((0..6).map(|x| x as f64).collect(), &[2, 3]);
        let idx = from_vec(vec![2i64, 1, 0, 2, 1, 0], &[2, 3]);
        scatter(&m, 1, &idx, &m.clone()).unwrap();
        assert_eq!(m.to_vec().unwrap(), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
        // in-place sort
        let s = from_vec(vec![3.0, 1.0, 2.0, 0.0], &[2, 2]);
        let st = tensor(s.clone());
        let si = tensor(View::<i64>::empty());
        sort(&st, &si, &s, 1, false).unwrap();
        assert_eq!(s.to_vec().unwrap(), vec![1.0, 3.0, 0.0, 2.0]);
        assert_eq!(si.view().to_vec().unwrap(), vec![1, 0, 1, 0]);
        // cat with the output as an input
        let a = from_vec(vec![1.0, 2.0], &[2]);
        let ta = tensor(a.clone());
        cat(&ta, &[a.clone(), a.clone()], 0).unwrap();
        assert_eq!(ta.view().to_vec().unwrap(), vec![1.0, 2.0, 1.0, 2.0]);
    }

    #[test]
    fn masks() {
        let t = from_vec((0..6).map(|x| x as f32).collect(), &[2, 3]);
        let m = from_vec(vec![1u8, 0, 1, 0, 1, 0], &[2, 3]);
        masked_fill(&t, &m, -1.0).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![-1.0, 1.0, -1.0, 3.0, -1.0, 5.0]);
        // a row mask broadcast over both rows, Bool with a non-canonical true byte
        let bm = from_vec(vec![Bool(0), Bool(9), Bool(0)], &[3]);
        masked_fill(&t, &bm, 7.0).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![-1.0, 7.0, -1.0, 3.0, 7.0, 5.0]);
        // Byte masks must be 0/1, checked before writing
        let bad = from_vec(vec![1u8, 2, 0, 0, 0, 0], &[2, 3]);
        let before = t.to_vec().unwrap();
        assert!(masked_fill(&t, &bad, 0.0).is_err());
        assert!(masked_copy(&t, &bad, &from_vec(vec![0.0f32; 6], &[6])).is_err());
        assert_eq!(t.to_vec().unwrap(), before);
        // maskedCopy takes successive source elements; too few is an error
        masked_copy(&t, &m, &from_vec(vec![100.0, 200.0, 300.0], &[3])).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![100.0, 7.0, 200.0, 3.0, 300.0, 5.0]);
        assert!(masked_copy(&t, &m, &from_vec(vec![1.0, 2.0], &[2])).is_err());
        // maskedSelect, transposed source
        let r = tensor(View::<f32>::empty());
        masked_select(&r, &t.transpose(0, 1).unwrap(), &from_vec(vec![1u8, 1, 0, 0, 0, 1], &[3, 2])).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![100.0, 3.0, 5.0]);
        masked_select(&r, &t, &from_vec(vec![0u8; 6], &[6])).unwrap();
        assert_eq!(r.view().ndim(), 0);
        // nonzero
        let z = from_vec(vec![0.0f64, f64::NAN, -0.0, 2.0], &[2, 2]);
        let s = tensor(View::<i64>::empty());
        nonzero(&s, &z).unwrap();
        assert_eq!(s.view().sizes, vec![2, 2]);
        assert_eq!(s.view().to_vec().unwrap(), vec![0, 1, 1, 1]);
        nonzero(&s, &from_vec(vec![0i32; 3], &[3])).unwrap();
        assert_eq!(s.view().ndim(), 0);
    }

    #[test]
    fn sort_is_stable_with_nan_last() {
        let v = from_vec(vec![2.0f32, f32::NAN, 1.0, 2.0, -0.0, 0.0, f32::NAN, 1.0], &[8]);
        let (rt, ri) = (tensor(View::<f32>::empty()), tensor(View::<i64>::empty()));
        sort(&rt, &ri, &v, 0, false).unwrap();
        assert_eq!(ri.view().to_vec().unwrap(), vec![4, 5, 2, 7, 0, 3, 1, 6]);
        sort(&rt, &ri, &v, 0, true).unwrap();
        assert_eq!(ri.view().to_vec().unwrap(), vec![1, 6, 0, 3, 2, 7, 4, 5]);
        topk(&rt, &ri, &v, 3, 0, true).unwrap();
        assert_eq!(ri.view().to_vec().unwrap(), vec![1, 6, 0]);
        topk(&rt, &ri, &v, 3, 0, false).unwrap();
        assert_eq!(ri.view().to_vec().unwrap(), vec![4, 5, 2]);
        assert_eq!(rt.view().sizes, vec![3]);
        assert!(topk(&rt, &ri, &v, 9, 0, false).is_err());
        topk(&rt, &ri, &v, 0, 0, false).unwrap();
        assert_eq!(rt.view().ndim(), 0);
        // random 3-D sorts along each dim against a naive stable sort
        let mut rng = Rng(77);
        for _ in 0..50 {
            let shape = rng.shape(3);
            let t = randv(&mut rng, &shape);
            let d = rng.below(shape.len() as i64) as usize;
            let desc = rng.below(2) == 1;
            let k = 1 + rng.below(shape[d]);
            let (vt, it) = (tensor(View::<f64>::empty()), tensor(View::<i64>::empty()));
            sort(&vt, &it, &t, d as i32, desc).unwrap();
            let (kv, ki) = (tensor(View::<f64>::empty()), tensor(View::<i64>::empty()));
            topk(&kv, &ki, &t, k, d as i32, desc).unwrap();
            let mut sshape = shape.clone();
            sshape[d] = 1;
            for p in positions(&sshape) {
                let mut col: Vec<(f64, i64)> = (0..shape[d])
                    .map(|i| {
                        let mut q = p.clone();
                        q[d] = i;
                        (t.get(&q).unwrap(), i)
                    })
                    .collect();
                if desc {
                    col.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
                } else {
                    col.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
                }
                for (i, &(val, pos)) in col.iter().enumerate() {
                    let mut q = p.clone();
                    q[d] = i as i64;
                    assert_eq!(vt.view().get(&q).unwrap(), val);
                    assert_eq!(it.view().get(&q).unwrap(), pos);
                    if (i as i64) < k {
                        assert_eq!(kv.view().get(&q).unwrap(), val);
                        assert_eq!(ki.view().get(&q).unwrap(), pos);
                    }
                }
            }
        }
    }

    #[test]
    fn constructors_and_shapes() {
        let r = tensor(View::<i32>::empty());
        eye(&r, 2, 3).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![1, 0, 0, 0, 1, 0]);
        assert!(eye(&r, 0, 3).is_err());
        diag(&r, &from_vec(vec![1, 2], &[2]), -1).unwrap();
        assert_eq!(r.view().sizes, vec![3, 3]);
        assert_eq!(r.view().to_vec().unwrap(), vec![0, 0, 0, 1, 0, 0, 0, 2, 0]);
        let m = from_vec((0..12).collect::<Vec<i32>>(), &[3, 4]);
        diag(&r, &m, 1).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![1, 6, 11]);
        diag(&r, &m.transpose(0, 1).unwrap(), -2).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![2, 7]);
        diag(&r, &m, 4).unwrap();
        assert_eq!(r.view().ndim(), 0);
        tril(&r, &m, 0).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0]);
        triu(&r, &m, -1).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11]);
        zeros(&r, &[2, 2, -1]).unwrap();
        assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 2], vec![0; 4]));
        ones_like(&r, &m).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![1; 12]);
        reshape(&r, &m.transpose(0, 1).unwrap(), &[2, 6]).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        assert!(reshape(&r, &m, &[5]).is_err());
        // cat: mixed ranks, -1, a dimension one past the last
        let a = from_vec(vec![1, 2], &[2]);
        let b = from_vec(vec![3, 4, 5, 6], &[2, 2]);
        cat(&r, &[a.clone(), b.clone()], 1).unwrap();
        assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 3], vec![1, 3, 4, 2, 5, 6]));
        cat(&r, &[b.clone(), View::empty(), b.clone()], -1).unwrap();
        assert_eq!(r.view().sizes, vec![2, 4]);
        cat(&r, &[a.clone(), a.clone()], 1).unwrap();
        assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 2], vec![1, 1, 2, 2]));
        assert!(cat(&r, &[a.clone(), b.clone()], 0).is_err());
        assert!(cat(&r, &[a, b], -2).is_err());
        // ranges
        range(&r, 0i64, 3, 1, true).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![0, 1, 2, 3]);
        range(&r, 0i64, 3, 1, false).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![0, 1, 2]);
        range(&r, 5i64, -4, -3, false).unwrap();
        assert_eq!(r.view().to_vec().unwrap(), vec![5, 2, -1]);
        assert!(range(&r, 0i64, 3, -1, true).is_err());
        assert!(range(&r, 0i64, 3, 0, true).is_err());
        let q = tensor(from_vec(vec![0.0f64; 4], &[2, 2]));
        range(&q, 0.0f64, 3.0, 1.0, true).unwrap();
        assert_eq!((q.view().sizes, q.view().to_vec().unwrap()), (vec![2, 2], vec![0.0, 1.0, 2.0, 3.0]));
        linspace(&q, 1.0, 2.0, 5).unwrap();
        assert_eq!(q.view().to_vec().unwrap(), vec![1.0, 1.25, 1.5, 1.75, 2.0]);
        logspace(&q, 0.0, 2.0, 3).unwrap();
        // powf's accuracy is the platform libm's (Miri models a few ulp of error): compare
        // within 1e-14 rather than bit for bit.
        for (got, want) in q.view().to_vec().unwrap().into_iter().zip([1.0, 10.0, 100.0]) {
            assert!((got - want).abs() <= 1e-14 * want, "{got} vs {want}");
        }
        assert!(linspace(&q, 0.0, 1.0, 1).is_err());
    }

    #[test]
    fn cross_matches_naive() {
        let mut rng = Rng(5);
        for _ in 0..30 {
            let mut shape = rng.shape(3);
            let d = rng.below(shape.len() as i64) as usize;
            shape[d] = 3;
            let (a, b) = (randv(&mut rng, &shape), randv(&mut rng, &shape));
            let r = tensor(View::<f64>::empty());
            cross(&r, &a, &maybe_strided(&b, true), d as i32).unwrap();
            let mut sshape = shape.clone();
            sshape[d] = 1;
            for p in positions(&sshape) {
                let at = |v: &View<f64>, i: i64| {
                    let mut q = p.clone();
                    q[d] = i;
                    v.get(&q).unwrap()
                };
                let (x, y) = ([at(&a, 0), at(&a, 1), at(&a, 2)], [at(&b, 0), at(&b, 1), at(&b, 2)]);
                let want = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
                for (i, w) in want.iter().enumerate() {
                    assert_eq!(at(&r.view(), i as i64), *w);
                }
            }
        }
        // in place: r == a
        let a = from_vec(vec![1i32, 0, 0], &[3]);
        let ta = tensor(a.clone());
        cross(&ta, &a, &from_vec(vec![0, 1, 0], &[3]), -1).unwrap();
        assert_eq!(ta.view().to_vec().unwrap(), vec![0, 0, 1]);
        assert!(cross(&ta, &from_vec(vec![1i32; 4], &[4]), &from_vec(vec![1; 4], &[4]), -1).is_err());
    }
}
