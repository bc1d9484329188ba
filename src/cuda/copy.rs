//! Copies that involve a device, and element access to device views.
//!
//! TH's copy semantics hold whatever the devices: element counts must match, elements pair in
//! row-major order, values convert as the host's casts do, overlapping views are handled.
//! Host-to-device and device-to-host transfers move contiguous runs of the source dtype or the
//! destination dtype; casts and strided layouts are handled on the side where they are cheap (the
//! host copy engine, `exec::copy`, for host memory, the copy kernel for device memory). Pageable
//! host memory is transferred synchronously (the stream is synchronized before returning), as
//! cudaMemcpy does.

use super::launch::device_base;
use super::ops::copy_kernel;
use super::runtime::{self, Device as Dev};
use super::storage;
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{View, size_desc};
use crate::exec::copy::copy as host_copy;

/// The device of a view's storage (None for host memory or no storage).
pub fn device_of<T: Scalar>(v: &View<T>) -> Result<Option<&'static Dev>> {
    match v.device() {
        Device::Cpu => Ok(None),
        Device::Cuda(i) => runtime::device(i).map(Some),
    }
}

/// Pointer to `v`'s first element (TH's `data()`): a device address for device views.
pub fn data_ptr<T: Scalar>(v: &View<T>) -> Result<*mut T> {
    let Some(s) = &v.storage else { return Ok(std::ptr::null_mut()) };
    let (p, len) = s.raw_parts();
    if p.is_null() || v.offset > len {
        return Ok(std::ptr::null_mut());
    }
    Ok((p as u64 + (v.offset * size_of::<T>()) as u64) as *mut T)
}

/// `v[idx]` of a device view (a one-element transfer).
pub fn get<T: Scalar>(dev: &Dev, v: &View<T>, idx: &[i64]) -> Result<T> {
    let off = v.offset_of(idx, 2)?;
    let base = storage_base(v, off)?;
    let mut x = T::default();
    let stream = runtime::stream(dev.ordinal);
    // SAFETY: `base` is an element inside the storage (checked); x is one element.
    unsafe { dev.gpu.dtoh(&mut x as *mut T as *mut u8, base, size_of::<T>(), stream)? };
    dev.gpu.stream_sync(stream)?;
    Ok(x)
}

/// `v[idx] = x` on a device view.
pub fn set<T: Scalar>(dev: &Dev, v: &View<T>, idx: &[i64], x: T) -> Result<()> {
    let off = v.offset_of(idx, 2)?;
    let base = storage_base(v, off)?;
    let stream = runtime::stream(dev.ordinal);
    // SAFETY: as in get; the source is a local that outlives the synchronized copy.
    unsafe { dev.gpu.htod(base, &x as *const T as *const u8, size_of::<T>(), stream)? };
    dev.gpu.stream_sync(stream)
}

/// The device address of element `off` of `v`'s storage, checked against its length.
fn storage_base<T: Scalar>(v: &View<T>, off: usize) -> Result<u64> {
    let s = v.storage.as_ref().ok_or_else(|| Error::index("tensor has no storage"))?;
    let (p, len) = s.raw_parts();
    if off >= len {
        return Err(Error::index(format!("element {off} is outside the storage of {len} elements")));
    }
    Ok(p as u64 + (off * size_of::<T>()) as u64)
}

fn same_type<D: Scalar, S: Scalar>() -> bool {
    D::DTYPE == S::DTYPE
}

/// A contiguous device copy of `v` (or `v` itself when already contiguous).
pub fn contiguous_on<T: Scalar>(dev: &Dev, v: &View<T>) -> Result<View<T>> {
    if v.is_contiguous() {
        return Ok(v.clone());
    }
    let t = empty_like(dev, &v.sizes)?;
    copy_kernel(dev, &t, v)?;
    Ok(t)
}

/// A fresh contiguous device view of `sizes` on `dev`.
pub fn empty_like<T: Scalar>(dev: &Dev, sizes: &[i64]) -> Result<View<T>> {
    View::on_storage(Some(storage::new::<T>(dev.ordinal, 0)?), 0, sizes, None)
}

fn check_counts<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()> {
    if dst.numel() != src.numel() {
        return Err(Error::size(format!(
            "inconsistent tensor size: copying {} elements of size {} into {} elements of size {}",
            src.numel(),
            size_desc(&src.sizes),
            dst.numel(),
            size_desc(&dst.sizes)
        ))
        .at_arg(2));
    }
    Ok(())
}

/// TH's copy between any two views, host or device.
pub fn copy<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()> {
    check_counts(dst, src)?;
    match (device_of(dst)?, device_of(src)?) {
        (None, None) => host_copy(dst, src),
        (Some(d), None) => to_device(d, dst, src),
        (None, Some(s)) => to_host(s, dst, src),
        (Some(d), Some(s)) if d.ordinal == s.ordinal => copy_kernel(d, dst, src),
        // Across devices: through the host (no peer access is assumed).
        (Some(_), Some(s)) => {
            let tmp = View::<S>::contiguous(&src.sizes)?;
            to_host(s, &tmp, src)?;
            copy(dst, &tmp)
        }
    }
}

/// Host `src` into device `dst`.
fn to_device<D: Scalar, S: Scalar>(dev: &Dev, dst: &View<D>, src: &View<S>) -> Result<()> {
    if dst.numel() == 0 {
        return Ok(());
    }
    // A contiguous host run of D to transfer: `src` itself when it already is one.
    let staged;
    let host: &View<D> = if same_type::<D, S>() && src.is_contiguous() {
        // SAFETY: D and S are the same type (same DType), so the view reinterprets nothing.
        unsafe { &*(src as *const View<S> as *const View<D>) }
    } else {
        staged = View::<D>::contiguous(&src.sizes)?;
        host_copy(&staged, src)?;
        &staged
    };
    let hp = crate::exec::backend::host_base(host)?;
    let bytes = dst.numel() * size_of::<D>();
    let stream = runtime::stream(dev.ordinal);
    if dst.is_contiguous() {
        // SAFETY: both hold numel contiguous elements (checked views); synchronized below.
        unsafe { dev.gpu.htod(device_base(dst)?, hp, bytes, stream)? };
        return dev.gpu.stream_sync(stream);
    }
    let tmp = empty_like::<D>(dev, &dst.sizes)?;
    // SAFETY: as above, into the fresh contiguous temporary.
    unsafe { dev.gpu.htod(device_base(&tmp)?, hp, bytes, stream)? };
    dev.gpu.stream_sync(stream)?;
    copy_kernel(dev, dst, &tmp)
}

/// Device `src` into host `dst`.
fn to_host<D: Scalar, S: Scalar>(dev: &Dev, dst: &View<D>, src: &View<S>) -> Result<()> {
    if dst.numel() == 0 {
        return Ok(());
    }
    let src = contiguous_on(dev, src)?;
    let bytes = src.numel() * size_of::<S>();
    let stream = runtime::stream(dev.ordinal);
    if same_type::<D, S>() && dst.is_contiguous() {
        let hp = crate::exec::backend::host_base(dst)?;
        // SAFETY: both are contiguous runs of numel elements of the same type.
        unsafe { dev.gpu.dtoh(hp, device_base(&src)?, bytes, stream)? };
        return dev.gpu.stream_sync(stream);
    }
    let tmp = View::<S>::contiguous(&src.sizes)?;
    let hp = crate::exec::backend::host_base(&tmp)?;
    // SAFETY: as above, into the fresh host temporary.
    unsafe { dev.gpu.dtoh(hp, device_base(&src)?, bytes, stream)? };
    dev.gpu.stream_sync(stream)?;
    host_copy(dst, &tmp)
}
