//! TH's `copy`: elements paired in row-major order, converted as C casts, whatever memory each
//! view lives in. Host views run on the host copy engine (`exec::copy`); copies that involve a
//! device, the one call that may span devices, on the device copy engine (`cuda::copy`:
//! transfers and the device copy kernel).

use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::View;

/// `dst <- src` elementwise in each one's row-major order, converting dtypes as C casts
/// (TH's `copy*`: element counts must match, shapes need not). A source that partially overlaps
/// the destination in the same storage is first copied to a temporary.
pub fn copy<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()> {
    if [dst.device(), src.device()].iter().any(|&d| d != Device::Cpu) {
        return crate::cuda::copy::copy(dst, src);
    }
    crate::exec::copy::copy(dst, src)
}

/// The elements of `v` in row-major order, wherever it lives (device views are copied to the host).
pub fn values<T: Scalar>(v: &View<T>) -> Result<Vec<T>> {
    if v.device() == Device::Cpu {
        return v.to_vec();
    }
    let host = View::contiguous(&v.sizes)?;
    copy(&host, v)?;
    host.to_vec()
}
