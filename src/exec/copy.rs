//! The host copy engine: TH's `copy` between two views in host memory, elements paired in
//! row-major order and converted as C casts. `ops::copy` is the entry point for any devices;
//! the device copy engine (`cuda::copy`) uses this one for the host side of its transfers
//! (casts and strided layouts in host memory).

use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::tensor::{View, size_desc};
use crate::exec::overlap::{Alias, alias};
use std::ptr;

/// `dst <- src` for host views, elementwise in each one's row-major order, converting dtypes as
/// C casts (TH's `copy*`: element counts must match, shapes need not). A source that partially
/// overlaps the destination in the same storage is first copied to a temporary.
pub fn copy<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()> {
    let n = dst.numel();
    if n != src.numel() {
        return Err(Error::size(format!(
            "inconsistent tensor size: copying {} elements of size {} into {} elements of size {}",
            src.numel(),
            size_desc(&src.sizes),
            n,
            size_desc(&dst.sizes)
        ))
        .at_arg(2));
    }
    let (Some(dp), Some(sp)) = (dst.host_ptr()?, src.host_ptr()?) else { return Ok(()) };
    // Same dtype copies bytes; Bool goes through `cast` so every stored byte becomes 0 or 1.
    let same_type =
        std::any::TypeId::of::<D>() == std::any::TypeId::of::<S>() && D::DTYPE != crate::core::dtype::DType::Bool;
    match alias(dst, src) {
        Alias::Same => return Ok(()),
        Alias::Partial => {
            let tmp: View<S> = View::from_slice(&src.to_vec()?, &[n as i64])?;
            return copy(dst, &tmp);
        }
        Alias::Disjoint => {}
    }
    if dst.is_contiguous() && src.is_contiguous() {
        // SAFETY: both views are contiguous runs of n elements inside their storages
        // (host_ptr), and they do not partially overlap (checked above).
        unsafe {
            let d = dp.add(dst.offset);
            let s = sp.add(src.offset);
            if same_type {
                ptr::copy(s as *const D, d, n);
            } else {
                for i in 0..n {
                    ptr::write(d.add(i), ptr::read(s.add(i)).cast::<D>());
                }
            }
        }
        return Ok(());
    }
    let di = Offsets::new(dst.offset, &dst.sizes, &dst.strides, n);
    let si = Offsets::new(src.offset, &src.sizes, &src.strides, n);
    if same_type {
        // bit for bit, as the contiguous path (a NaN's payload survives, as in memcpy)
        for (a, b) in di.zip(si) {
            // SAFETY: every offset of both views lies inside its storage (host_ptr); D == S.
            unsafe { ptr::copy(sp.add(b) as *const D, dp.add(a), 1) };
        }
        return Ok(());
    }
    for (a, b) in di.zip(si) {
        // SAFETY: every offset of both views lies inside its storage (host_ptr).
        unsafe { ptr::write(dp.add(a), ptr::read(sp.add(b)).cast::<D>()) };
    }
    Ok(())
}
