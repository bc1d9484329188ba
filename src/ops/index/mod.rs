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

mod construct;
mod device;
mod masks;
mod ranges;
mod select;
mod shape;
mod sort;

pub use construct::*;
pub use masks::*;
pub use ranges::*;
pub use select::*;
pub use shape::*;
pub use sort::*;

use super::num::{Float, Num};
use super::{map1, map2, resize_out};
use crate::core::dtype::{Bool, Prim, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::refcount::Rc;
use crate::core::tensor::{Tensor, View, broadcast_shapes, numel, parse_sizes, size_desc};
use crate::cuda::launch::Call;
use crate::exec::backend::{Backend, host_base};
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

/// A contiguous copy of `v` in its memory (host or device; used to detach an input that shares
/// memory with an output).
fn dense<T: Scalar>(v: &View<T>) -> Result<View<T>> {
    let c = super::temp_like(v, &v.sizes)?;
    assign(&c, v)?;
    Ok(c)
}

/// `v`, or a contiguous copy of it when it shares memory with the output `out`.
fn detached<O: Scalar, T: Scalar>(out: &View<O>, v: &View<T>) -> Result<View<T>> {
    if may_overlap(out, v) { dense(v) } else { Ok(v.clone()) }
}

/// Byte address of element 0 of `v` for the index engine (NULL when it has no elements).
fn base_ptr<T: Scalar>(v: &View<T>) -> Result<*mut u8> {
    Backend::of(&[v.device()])?.host_only("this index function")?;
    host_base(v)
}

/// Calls `f(position, value)` for every element of `v` in row-major order.
fn scan<T: Scalar>(v: &View<T>, mut f: impl FnMut(usize, T) -> Result<()>) -> Result<()> {
    Backend::of(&[v.device()])?.host_only("this index function")?;
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
    if dst.sizes == src.sizes && !may_overlap(dst, src) {
        map1(dst, src, Call::new("copy"), |x: T| x)
    } else {
        copy(dst, src)
    }
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
    src: Option<&View<T>>,
    d: usize,
    idx: &View<i64>,
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

#[cfg(all(test, feature = "cuda-emulator"))]
mod device_tests;
#[cfg(test)]
mod tests;
