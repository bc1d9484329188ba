//! The device engines: the kernels of `kernels` launched over views with the shared geometry.

use super::copy::device_base;
use super::runtime::{self, Device as Dev};
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::View;

/// `dst = src` elementwise on one device (same element count; casts as the host's).
pub fn copy_kernel<D: Scalar, S: Scalar>(dev: &Dev, dst: &View<D>, src: &View<S>) -> Result<()> {
    if dst.numel() == 0 {
        return Ok(());
    }
    if D::DTYPE == S::DTYPE && dst.is_contiguous() && src.is_contiguous() {
        let (d, s) = (device_base(dst)?, device_base(src)?);
        let bytes = (dst.numel() * size_of::<D>()) as u64;
        if d == s {
            return Ok(());
        }
        if d + bytes <= s || s + bytes <= d {
            // SAFETY: two disjoint runs of `bytes` inside their storages (device_base checked).
            return unsafe { dev.gpu.dtod(d, s, bytes as usize, runtime::stream(dev.ordinal)) };
        }
    }
    Err(Error::internal("strided device copy: the copy kernel is not wired yet"))
}

/// `v[i] = x` for every element of a device view.
pub fn fill<T: Scalar>(_dev: &Dev, v: &View<T>, x: T) -> Result<()> {
    let n = v.numel();
    if n == 0 {
        return Ok(());
    }
    let src = View::from_slice(&vec![x; n], &v.sizes)?;
    super::copy::copy(v, &src)
}
