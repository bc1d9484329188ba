//! Reductions (`THTensorMath.h` §4.4, 4.10, 4.17, 4.19): whole-tensor and per-dimension
//! reductions, scans, statistics, norms, histograms, and `sumTo` (the reduction that undoes
//! broadcasting). What each folds is a `Reducer` (`reducers`); the plan that runs it over host
//! views, deterministically whatever the thread count, is `exec::reduce`, and the device engine
//! that runs it over device views is `cuda::reduce` (`reduce` picks one).
//!
//! Accumulation is in TH's `accreal` (`Scalar::Acc`: i64 for integers, f64 for Float/Double,
//! f32 for Half/BFloat16) for every sum, product, mean, variance and norm.

mod device;
mod dims;
mod reducers;
mod scan;
mod whole;

pub use device::*;
pub use dims::*;
pub use reducers::*;
pub use scan::*;
pub use whole::*;

use super::num::{Float, Num, Real};
use super::{map2, pointwise2, resize_out};
use crate::core::dtype::{Bool, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::tensor::{Tensor, View, parse_sizes, size_desc};
use crate::cuda::launch::Call;
use crate::exec::parallel::{self, SharedPtr, Sink};
use crate::kernels::reduce as rk;
use crate::ops::copy::copy;
use std::cmp::Ordering;
use std::marker::PhantomData;

use crate::core::geometry::{Dim, Odometer, push_merged};
use crate::exec::backend::Backend;
use crate::exec::reduce::{self as plan, DeviceFold, Geometry, Reducer};

/// Lines scanned together by the tiled cumsum/cumprod.
const SCAN_TILE: usize = 512;

// ---------------------------------------------------------------------------------------------
// Helpers shared by the API functions
// ---------------------------------------------------------------------------------------------

/// Runs `r` over same-shaped views, reducing the dims where `mask` is set: one accumulator
/// per output, in row-major order of the kept dims, on the host plan (`exec::reduce`) or, for
/// device operands, the device engine (`cuda::reduce`). An empty view gives identities.
fn reduce<T: Scalar, R: Reducer<T, N>, const N: usize>(
    views: [&View<T>; N],
    mask: &[bool],
    r: &R,
) -> Result<Vec<R::Acc>> {
    let g = plan::geometry(views, mask)?;
    if views[0].numel() == 0 {
        return crate::core::limits::try_filled(g.m(), r.identity());
    }
    match Backend::of(&views.map(|v| v.device()))? {
        Backend::Host => plan::reduce(&g, views, r),
        Backend::Cuda(i) => crate::cuda::reduce::reduce(i, &g, views, r),
    }
}

fn check_dim(dim: i32, ndim: usize, arg: u32) -> Result<usize> {
    usize::try_from(dim)
        .ok()
        .filter(|&d| d < ndim)
        .ok_or_else(|| Error::index(format!("dimension {dim} out of range of {ndim}D tensor")).at_arg(arg))
}

fn only(ndim: usize, d: usize) -> Vec<bool> {
    (0..ndim).map(|i| i == d).collect()
}

fn all_but(ndim: usize, d: usize) -> Vec<bool> {
    (0..ndim).map(|i| i != d).collect()
}

/// The output shape of a reduction along `d`: size 1 there, removed unless `keepdim` (but a
/// 1-D input keeps its one dim, as TH's `squeeze1d`).
pub fn reduced_shape(sizes: &[i64], d: usize, keepdim: bool) -> Vec<i64> {
    let mut s = sizes.to_vec();
    s[d] = 1;
    if !keepdim && s.len() > 1 {
        s.remove(d);
    }
    s
}

/// Writes `data` (row-major) into `r` resized to `shape` (`resize_out` rules: an output that
/// already has the shape keeps its strides).
fn store<O: Scalar>(r: &Tensor<O>, shape: &[i64], data: &[O]) -> Result<()> {
    let out = resize_out(r, shape)?;
    if out.numel() != data.len() {
        return Err(Error::internal(format!("reduction produced {} values for size {}", data.len(), size_desc(shape))));
    }
    if data.is_empty() {
        return Ok(());
    }
    if let crate::core::allocator::Device::Cuda(_) = out.device() {
        return crate::cuda::copy::copy(&out, &View::from_slice(data, shape)?);
    }
    if out.is_contiguous() {
        let p = out.host_ptr()?.ok_or_else(|| Error::internal("reduction output has no storage"))?;
        // SAFETY: out is contiguous and its data.len() elements lie inside its storage
        // (host_ptr); data is this call's own buffer, so the ranges cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(out.offset), data.len()) };
        return Ok(());
    }
    copy(&out, &View::from_slice(data, shape)?)
}

/// Calls `f` on every element of `v` in row-major order.
fn for_each<T: Scalar>(v: &View<T>, mut f: impl FnMut(T)) -> Result<()> {
    let Some(p) = v.host_ptr()? else { return Ok(()) };
    for o in Offsets::new(v.offset, &v.sizes, &v.strides, v.numel()) {
        // SAFETY: every offset of the view lies inside its storage (host_ptr).
        f(unsafe { p.add(o).read() });
    }
    Ok(())
}

/// `v` with its elements in row-major order as a 1-D view (itself when contiguous, else a
/// contiguous copy).
fn flat<T: Scalar>(v: &View<T>) -> Result<View<T>> {
    let n = v.numel() as i64;
    if n == 0 {
        return Ok(View::empty());
    }
    let src = if v.is_contiguous() {
        v.clone()
    } else {
        let c = crate::ops::temp_like(v, &v.sizes)?;
        copy(&c, v)?;
        c
    };
    Ok(View { sizes: vec![n], strides: vec![1], ..src })
}

/// Two views paired element by element in row-major order (TH: equal element counts, any
/// shapes): the views themselves when their shapes agree, else both flattened.
fn paired<T: Scalar>(a: &View<T>, b: &View<T>, what: &str) -> Result<(View<T>, View<T>)> {
    if a.numel() != b.numel() {
        return Err(Error::size(format!(
            "{what}: inconsistent tensor size: {} has {} elements and {} has {}",
            size_desc(&a.sizes),
            a.numel(),
            size_desc(&b.sizes),
            b.numel()
        ))
        .at_arg(2));
    }
    if a.sizes == b.sizes {
        return Ok((a.clone(), b.clone()));
    }
    Ok((flat(a)?, flat(b)?))
}

fn nonempty<T: Scalar>(t: &View<T>, what: &str) -> Result<()> {
    if t.numel() == 0 {
        return Err(Error::size(format!("{what}: the tensor is empty")).at_arg(1));
    }
    Ok(())
}

// The operations are closures (not `fn` pointers) so the kernels see them statically and
// vectorize.
#[allow(clippy::type_complexity)]
fn sum_reducer<T: NumAcc>()
-> OnDevice<Assoc<T::Acc, impl Fn(T) -> T::Acc + Sync, impl Fn(T::Acc, T::Acc) -> T::Acc + Sync>> {
    on_device(Assoc { id: T::zero().to_acc(), g: |x: T| x.to_acc(), c: |a, b| T::acc_add(a, b) }, DeviceFold::Sum)
}

#[allow(clippy::type_complexity)]
fn prod_reducer<T: NumAcc>()
-> OnDevice<Assoc<T::Acc, impl Fn(T) -> T::Acc + Sync, impl Fn(T::Acc, T::Acc) -> T::Acc + Sync>> {
    on_device(Assoc { id: T::one().to_acc(), g: |x: T| x.to_acc(), c: |a, b| T::acc_mul(a, b) }, DeviceFold::Prod)
}

#[allow(clippy::type_complexity)]
fn count_reducer<T: Elem>() -> OnDevice<Assoc<i64, impl Fn(T) -> i64 + Sync, impl Fn(i64, i64) -> i64 + Sync>> {
    on_device(
        Assoc { id: 0i64, g: |x: T| x.nonzero() as i64, c: |a: i64, b: i64| a.wrapping_add(b) },
        DeviceFold::Count,
    )
}

#[cfg(all(test, feature = "cuda-emulator"))]
mod device_tests;
#[cfg(test)]
mod tests;
